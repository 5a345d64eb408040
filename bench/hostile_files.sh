#!/usr/bin/env bash
# Hostile inputs to the tools that parse: time and peak memory of one whole `slmcode` process
# tree per case (the parser process included), and how it ended (answered, refused, killed by a signal, or stopped by the bench's own
# timeout). Every case is a file a repository can ship or a query a model can send; none may end
# the process, and each should answer in seconds with flat memory.
#
#   yaml-300-deep        ws_outline of a YAML mapping 300 levels deep (45 KB)
#   yaml-300-deep-edit   ws_read then ws_edit of it (the background parse, then the syntax check)
#   python-600-deep      ws_outline of Python nested 600 blocks deep with an f-string inside
#   js-36k-functions     ws_outline of 36,000 nested JavaScript functions
#   java-60k-classes     ws_outline of 60,000 nested Java classes
#   oneline-1mb-outline  ws_outline of a 1 MB one-line JavaScript file
#   oneline-1mb-edit     ws_read then ws_edit of it (the syntax check after the edit)
#   oneline-1mb-symbols  ws_symbols over a project holding it (the symbol index)
#   symbols-80k-query    ws_symbols with an 80,000-character query over 10,000 definitions
#   future-mtime-x10     ten ws_symbols calls in one session; one file is dated in 2100 (1 MB)
#   present-mtime-x10    the same with the file dated now, for comparison
#
# Usage: bench/hostile_files.sh
# Environment:
#   SLMCODE_BIN=PATH   measure this binary instead of building target/release/slmcode
#   BENCH_TIMEOUT=S    seconds before a case is stopped (default 300)
#   BENCH_KEEP=1       keep the temp dir with the inputs
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$SCRIPT_DIR/.." && pwd)
TIMEOUT=${BENCH_TIMEOUT:-300}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/slmcode-hostile.XXXXXX")
cleanup() {
    local rc=$?
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then
        echo "bench: kept $TMP (BENCH_KEEP=1)" >&2
    else
        rm -rf -- "$TMP"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v python3 >/dev/null || die "python3 is needed to generate the inputs and to measure"
[[ -r /proc/self/status ]] || die "the memory of a process tree is read from /proc (Linux)"

if [[ -n ${SLMCODE_BIN:-} ]]; then
    SLM=$SLMCODE_BIN
else
    say "building slmcode (release)"
    (cd "$REPO" && cargo build --release -p slmcode) || die "cargo build --release -p slmcode failed"
    SLM=$REPO/target/release/slmcode
fi
[[ -x $SLM ]] || die "no slmcode binary at $SLM"

# ---- inputs ------------------------------------------------------------------------------
say "generating inputs in $TMP"
python3 - "$TMP" <<'EOF'
import os, sys
root = sys.argv[1]

def project(name, files):
    d = os.path.join(root, name)
    os.makedirs(d, exist_ok=True)
    for path, text in files.items():
        p = os.path.join(d, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)

deep_yaml = "\n".join(" " * i + f"k{i}:" for i in range(300)) + " v\n"
deep_py = "\n".join(" " * i + "if x:" for i in range(600)) + "\n" + " " * 600 + 'y = f"""{x}"""\n'
nested_fn = "".join(f"function f{i}(){{" for i in range(36000)) + "}" * 36000 + "\n"
nested_cls = "".join(f"class C{i}{{" for i in range(60000)) + "}" * 60000 + "\n"
parts, n, i = [], 0, 0
while n < 1_000_000:
    p = f"function f{i}(){{return {i}}}"
    parts.append(p); n += len(p); i += 1
one_line = "".join(parts) + "\n"
# 200 files of 50 functions: 10,000 definitions.
many = {f"src/m{k}.py": "".join(f"def handler_{k}_{j}(x):\n    return x\n\n" for j in range(50)) for k in range(200)}

project("yaml", {"deep.yaml": deep_yaml})
project("python", {"deep.py": deep_py})
project("js", {"nested.js": nested_fn})
project("java", {"Nested.java": nested_cls})
project("oneline", {"min.js": one_line})
project("many", many)
project("future", {**{k: v for k, v in list(many.items())[:20]}, "big.js": one_line})
project("present", {**{k: v for k, v in list(many.items())[:20]}, "big.js": one_line})
with open(os.path.join(root, "query.txt"), "w") as f:
    f.write("a" * 80000)
EOF
touch -d '2100-01-01' "$TMP/future/big.js"

# ---- running -----------------------------------------------------------------------------
# The parse runs in a child process of slmcode (the parser process), which /usr/bin/time would
# not count: this runs a command and samples its whole process tree every few milliseconds,
# summing each process's own peak (VmHWM). Prints "seconds peak_kib exit" (exit: the status, or
# -N for a signal N, or "timeout").
cat >"$TMP/tree-peak.py" <<'PY'
import os, subprocess, sys, time
timeout, cmd = float(sys.argv[1]), sys.argv[2:]
def children():
    kids = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(pid))
            except (OSError, ValueError, IndexError):
                pass
    return kids
def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
start = time.monotonic()
proc = subprocess.Popen(cmd, stdin=sys.stdin, stdout=sys.stdout, stderr=sys.stderr)
peaks, status = {}, None
while status is None:
    kids, todo = children(), [proc.pid]
    while todo:
        pid = todo.pop()
        peaks[pid] = max(peaks.get(pid, 0), hwm(pid))
        todo.extend(kids.get(pid, []))
    status = proc.poll()
    if status is None and time.monotonic() - start > timeout:
        proc.kill(); proc.wait(); status = "timeout"
    time.sleep(0.005)
print(f"{time.monotonic() - start:.2f} {sum(peaks.values())} {status}", file=open(os.environ["TREE_PEAK_OUT"], "w"))
PY

printf '%-22s %9s %11s  %s\n' case seconds "peak MiB" outcome
# run_case NAME PROJECT -- ARGS...: runs `slmcode ARGS` in PROJECT with stdin from $STDIN (or
# nothing), prints seconds, the process tree's peak memory and how it ended.
run_case() {
    local name=$1 dir=$TMP/$2
    shift 3
    local out=$TMP/$name.out stats=$TMP/$name.stats
    (cd "$dir" && TREE_PEAK_OUT=$stats python3 "$TMP/tree-peak.py" "$TIMEOUT" "$SLM" "$@" \
        <"${STDIN:-/dev/null}" >"$out" 2>&1) || true
    local secs kib status outcome
    read -r secs kib status <"$stats"
    if [[ $status == timeout ]]; then
        outcome="stopped after ${TIMEOUT}s"
    elif ((status < 0)); then
        outcome="CRASHED (signal $((-status))): $(grep -m1 -o 'Assertion.*' "$out" | cut -c1-60)"
    elif grep -q '"is_error":true' "$out" || ((status == 1)); then
        outcome="answered with an error: $(grep -v '^$' "$out" | tail -1 | cut -c1-90)"
    else
        outcome="answered: $(grep -v '^$' "$out" | tail -1 | cut -c1-90)"
    fi
    printf '%-22s %9s %11s  %s\n' "$name" "$secs" "$((kib / 1024))" "$outcome"
}

calls() { # JSON Lines for `slmcode session`, one per argument
    printf '%s\n' "$@" >"$TMP/calls.jsonl"
    echo "$TMP/calls.jsonl"
}

run_case yaml-300-deep yaml -- tool ws_outline '{"path":"deep.yaml"}'
STDIN=$(calls '{"tool":"ws_read","args":{"path":"deep.yaml","limit":5}}' \
    '{"tool":"ws_edit","args":{"path":"deep.yaml","old_str":"k0:","new_str":"key0:"}}' \
    '{"tool":"ws_list","args":{}}') \
    run_case yaml-300-deep-edit yaml -- session
run_case python-600-deep python -- tool ws_outline '{"path":"deep.py"}'
run_case js-36k-functions js -- tool ws_outline '{"path":"nested.js"}'
run_case java-60k-classes java -- tool ws_outline '{"path":"Nested.java"}'
run_case oneline-1mb-outline oneline -- tool ws_outline '{"path":"min.js"}'
STDIN=$(calls '{"tool":"ws_read","args":{"path":"min.js","limit":1}}' \
    '{"tool":"ws_edit","args":{"path":"min.js","old_str":"function f0(){return 0}","new_str":"function f0(){return 1}"}}') \
    run_case oneline-1mb-edit oneline -- session
rm -rf "$TMP/oneline/.slmcode"
run_case oneline-1mb-symbols oneline -- tool ws_symbols '{"query":"f77"}'
STDIN=$(calls '{"tool":"ws_symbols","args":{"query":"warm"}}' \
    "{\"tool\":\"ws_symbols\",\"args\":{\"query\":\"$(cat "$TMP/query.txt")\"}}") \
    run_case symbols-80k-query many -- session
for when in future present; do
    "$SLM" tool ws_symbols '{"query":"warm"}' --root "$TMP/$when" >/dev/null 2>&1 || true
    lines=()
    # Different names each time: the loop guard answers a repeated identical call itself.
    for i in $(seq 10); do lines+=("{\"tool\":\"ws_symbols\",\"args\":{\"query\":\"handler_1_$i\"}}"); done
    STDIN=$(calls "${lines[@]}") run_case "$when-mtime-x10" "$when" -- session
done

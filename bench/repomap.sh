#!/usr/bin/env bash
# Times slmcode's symbol index and task-ranked repo map against aider's repo map on one large
# real tree (the crates.io sources cargo has downloaded: ~25K files, ~780 MB, mostly Rust),
# side by side, and counts the tokens of each map with the same cl100k_base counter.
#
# What is measured (slmcode with hyperfine, each a whole process; aider in-process by
# bench/repomap_aider.py, imports not counted, the file list given to it as git ls-files would be):
#   index cold   slmcode: `slmcode map TASK1` with <tree>/.slmcode/cache/ removed (builds the
#                symbol index, then the map). aider: the first map of a session with no
#                .aider.tags.cache.v* (its "Initial repo scan", then the map). Same task, budget.
#   index warm   the cheapest call that opens the warm index: slmcode: `ws_symbols` for a name
#                that occurs nowhere; aider: RepoMap.get_tags for every file (the tag loading and
#                mtime check each aider map does).
#   map time     per task, the map on a warm index: `slmcode map --tokens N TASK` / a new aider
#                RepoMap and aider's own Coder.get_repo_map for the task as the user message.
#   map tokens   cl100k_base tokens of what is printed / what aider puts in the prompt (its
#                "Here are summaries of some files..." prefix included).
#   named        how many of the code identifiers the task names (RegexBuilder, size_limit, ...)
#                occur in the map at all: a rough check that the map is about the task.
#   ws_outline   of the code file whose line count is closest to 5,000; ws_symbols for a couple
#                of names; warm index, tokens of the result.
# The maps, outline and symbol results are saved under target/bench-repomap/ (slmcode-N.md,
# aider-N.md, tasks.txt, ...) to compare by eye; the table also goes to results.md there.
#
# Usage: bench/repomap.sh
# Takes ~30 min on 2 cores, nearly all of it aider's: on the full tree (aider 0.86.2) its cold
# map took ~10 min, each warm map ~2.5-3 min, peak RSS ~9 GiB; REPOMAP_SKIP_AIDER=1 for ours only.
# Environment:
#   REPOMAP_TREE=DIR         tree to copy and measure (default: the crates.io registry sources
#                            under $CARGO_HOME/registry/src); it is hard-link copied (cp -al; a
#                            plain copy across file systems) into REPOMAP_WORK/tree, so
#                            both caches are written there, never into DIR. Only read-only calls
#                            run on the copy.
#   REPOMAP_WORK=DIR         scratch and results dir (default target/bench-repomap). Under target/
#                            the repo's .gitignore ("target/") also applies inside the copy, to
#                            both tools alike: the registry's cc-*/src/target/ (4 files) is unseen.
#   REPOMAP_TOKENS=N         map budget for both tools (default 1024)
#   REPOMAP_TASKS=TEXT       tasks, one per line (default: three naming serde/regex/tokio items);
#                            "named" then counts the words with an underscore or a capital inside
#   REPOMAP_SYMBOLS="A B"    names for ws_symbols (default "RegexBuilder spawn_blocking")
#   REPOMAP_OUTLINE=PATH     file for ws_outline, relative to the tree (default: closest to 5,000 lines)
#   REPOMAP_RUNS=N           hyperfine timed runs of the warm calls (default 5; warmup 1)
#   REPOMAP_COLD_RUNS=N      hyperfine runs of the cold index build (default 2)
#   REPOMAP_AIDER_RUNS=N     runs of each warm aider measurement (default 2; cold is run once;
#                            on the full tree each aider map takes minutes)
#   REPOMAP_AIDER_TIMEOUT=S  give up on an aider run after S seconds (default 5400)
#   REPOMAP_SUBSET="GLOBS"   also measure both maps on a subset: the tree's top-level directories
#                            matching these globs (default "regex* serde* tokio*", the crates the
#                            default tasks are about, ~1.8K files: a repo the size aider is used
#                            on); empty: no subset
#   REPOMAP_SKIP_AIDER=1     measure slmcode only (the venv is still made, for the token counter)
#   REPOMAP_AIDER_SPEC=SPEC  what pip installs (default aider-chat==0.86.2, the version tested)
#   REPOMAP_PYTHON=PY        python 3.10-3.12 for the aider venv (default: the first one on PATH)
#   CARGO_HOME               where the registry sources are (default ~/.cargo)
# Offline: aider is installed from PyPI into target/aider-venv; tiktoken's cl100k_base is taken
# from the tiktoken-rs crate's sources (TIKTOKEN_CACHE_DIR, file named by the sha1 of its URL)
# and LITELLM_LOCAL_MODEL_COST_MAP=True keeps litellm from fetching its model list.
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
# Single-quotes one word for hyperfine's --shell=none command splitting (POSIX rules).
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$SCRIPT_DIR/.." && pwd)
[[ -f $REPO/Cargo.toml && -d $REPO/crates/cli ]] || die "cannot find the repo root (expected $REPO/Cargo.toml and crates/cli)"
[[ -f $SCRIPT_DIR/repomap_aider.py ]] || die "missing $SCRIPT_DIR/repomap_aider.py"

TOKENS=${REPOMAP_TOKENS:-1024}
RUNS=${REPOMAP_RUNS:-5}
COLD_RUNS=${REPOMAP_COLD_RUNS:-2}
AIDER_RUNS=${REPOMAP_AIDER_RUNS:-2}
AIDER_TIMEOUT=${REPOMAP_AIDER_TIMEOUT:-5400}
read -r -a SUBSET <<<"${REPOMAP_SUBSET-regex* serde* tokio*}"
AIDER_SPEC=${REPOMAP_AIDER_SPEC:-aider-chat==0.86.2}
read -r -a SYMBOLS <<<"${REPOMAP_SYMBOLS:-RegexBuilder spawn_blocking}"
NEVER='zqxjNeverOccurs42'
for n in TOKENS RUNS COLD_RUNS AIDER_RUNS AIDER_TIMEOUT; do
    [[ ${!n} =~ ^[0-9]+$ ]] || die "REPOMAP_$n must be a number, not '${!n}'"
done
((RUNS >= 1 && COLD_RUNS >= 1 && AIDER_RUNS >= 1)) || die "run counts must be at least 1"
((${#SYMBOLS[@]})) || die "REPOMAP_SYMBOLS is empty"

# Default tasks name real items of the tree; each is checked against the tree (CHECKS, text
# that must occur in some .rs file) so a registry without the crate fails loudly, not quietly.
if [[ -n ${REPOMAP_TASKS:-} ]]; then
    mapfile -t TASKS < <(grep -v '^[[:space:]]*$' <<<"$REPOMAP_TASKS")
    CHECKS=()
    IDENTS=()
else
    TASKS=(
        "Make RegexBuilder reject patterns longer than size_limit before compiling them"
        "Fix the Deserializer in serde_json so deserialize_struct reports the name of a missing field"
        "Make tokio's spawn_blocking return a JoinHandle that can be aborted before the task starts"
    )
    CHECKS=('pub struct RegexBuilder' 'fn deserialize_struct' 'pub fn spawn_blocking')
    IDENTS=('RegexBuilder size_limit' 'Deserializer deserialize_struct' 'spawn_blocking JoinHandle')
fi
((${#TASKS[@]})) || die "no tasks"

# ---- tools -------------------------------------------------------------------------------
need_install=()
command -v rg >/dev/null || need_install+=(ripgrep)
command -v hyperfine >/dev/null || need_install+=(hyperfine)
command -v timeout >/dev/null || need_install+=(coreutils)
apt_install ${need_install[@]+"${need_install[@]}"}
RG=$(command -v rg) || die "rg not found after install"
command -v hyperfine >/dev/null || die "hyperfine not found after install"
command -v cargo >/dev/null || die "cargo not found"
command -v python3 >/dev/null || die "python3 not found"

# ---- build -------------------------------------------------------------------------------
say "building slmcode (release)"
(cd "$REPO" && cargo build --release -p slmcode --locked) || die "cargo build --release -p slmcode --locked failed"
TARGET_DIR=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])') || TARGET_DIR=$REPO/target
SLM=$TARGET_DIR/release/slmcode
[[ -x $SLM ]] || die "built binary not found at $SLM"
"$SLM" map --help >/dev/null 2>&1 || die "$SLM has no 'map' subcommand (slmcode map --root DIR [--tokens N] TASK); is the repo-map work merged?"

OUT=${REPOMAP_WORK:-$TARGET_DIR/bench-repomap}
mkdir -p -- "$OUT" || die "cannot make $OUT"
OUT=$(cd -- "$OUT" && pwd)
TREE=$OUT/tree
RAW=$OUT/raw        # hyperfine JSON, logs
mkdir -p -- "$OUT" "$RAW"
rm -f -- "$OUT"/slmcode-* "$OUT"/aider-*.md "$OUT"/aider.json "$OUT"/results.md "$RAW"/*

# ---- aider venv, offline switches -------------------------------------------------------
VENV=$TARGET_DIR/aider-venv
PY=$VENV/bin/python
pick_python() {
    local c
    for c in ${REPOMAP_PYTHON:-} python3.12 python3.11 python3.10 python3; do
        command -v "$c" >/dev/null || continue
        "$c" -c 'import sys, venv; sys.exit(not (3, 10) <= sys.version_info[:2] < (3, 13))' 2>/dev/null \
            && { command -v "$c"; return 0; }
    done
    return 1
}
want_version=${AIDER_SPEC#*==}
[[ $want_version == "$AIDER_SPEC" ]] && want_version=
have_version=$("$PY" -c 'import aider; print(aider.__version__)' 2>/dev/null) || have_version=
if [[ -z $have_version || (-n $want_version && $have_version != "$want_version") ]]; then
    BASE_PY=$(pick_python) || die "aider needs python 3.10-3.12 with the venv module (apt-get install python3-venv, or set REPOMAP_PYTHON)"
    say "installing $AIDER_SPEC into $VENV (with $BASE_PY, $("$BASE_PY" --version))"
    rm -rf -- "$VENV"
    "$BASE_PY" -m venv "$VENV" || die "python -m venv $VENV failed (Debian: apt-get install python3-venv)"
    "$PY" -m pip install -q --disable-pip-version-check "$AIDER_SPEC" >"$RAW/pip.log" 2>&1 \
        || { tail -20 "$RAW/pip.log" >&2; die "pip install $AIDER_SPEC failed (log: $RAW/pip.log)"; }
    have_version=$("$PY" -c 'import aider; print(aider.__version__)') || die "aider does not import after install"
fi
say "aider $have_version in $VENV"

# tiktoken downloads cl100k_base from a URL and caches it under sha1(URL); the same file ships
# in the tiktoken-rs crate, so the cache is filled from there (its sha256 is checked by tiktoken).
export TIKTOKEN_CACHE_DIR=$OUT/tiktoken
export LITELLM_LOCAL_MODEL_COST_MAP=True
CL100K_KEY=9b5ad71b2ce5302211f9c61530b329a4922fc6a4  # sha1 of .../encodings/cl100k_base.tiktoken
REG=${CARGO_HOME:-$HOME/.cargo}/registry/src
if [[ ! -s $TIKTOKEN_CACHE_DIR/$CL100K_KEY ]]; then
    shopt -s nullglob
    cands=("$REG"/*/tiktoken-rs-*/assets/cl100k_base.tiktoken)
    shopt -u nullglob
    ((${#cands[@]})) || die "no tiktoken-rs sources with assets/cl100k_base.tiktoken under $REG (cargo fetch in a project that uses tiktoken-rs)"
    mkdir -p -- "$TIKTOKEN_CACHE_DIR"
    cp -- "${cands[-1]}" "$TIKTOKEN_CACHE_DIR/$CL100K_KEY"
fi
"$PY" -c 'import tiktoken; tiktoken.get_encoding("cl100k_base").encode("ok")' \
    || die "tiktoken cannot load cl100k_base from $TIKTOKEN_CACHE_DIR"

# ---- the tree ----------------------------------------------------------------------------
if [[ -n ${REPOMAP_TREE:-} ]]; then
    SRC=$REPOMAP_TREE
else
    shopt -s nullglob
    srcs=("$REG"/index.crates.io-*/)
    shopt -u nullglob
    ((${#srcs[@]} == 1)) || die "expected one crates.io source dir under $REG, found ${#srcs[@]}; set REPOMAP_TREE"
    SRC=${srcs[0]}
fi
[[ -d $SRC ]] || die "tree $SRC is not a directory"
SRC=$(cd -- "$SRC" && pwd)
say "copying $SRC into $TREE (hard links)"
rm -rf -- "$TREE"
mkdir -p -- "$TREE"
if ! cp -al -- "$SRC"/. "$TREE"/ 2>"$RAW/cp.log"; then
    say "hard links failed ($(head -1 "$RAW/cp.log")), copying"
    rm -rf -- "$TREE" && mkdir -p -- "$TREE"
    cp -a -- "$SRC"/. "$TREE"/ || die "cp -a $SRC $TREE failed"
fi
# The file list for aider: what slmcode's walker sees (ripgrep's ignore rules, .gitignore
# honoured outside git, hidden entries such as the two caches skipped).
(cd "$TREE" && "$RG" --files --no-require-git | LC_ALL=C sort) >"$OUT/files.txt" || die "rg --files failed"
files_disk=$(find "$TREE" -type f | wc -l)
files_visible=$(wc -l <"$OUT/files.txt")
size=$(du -sh --apparent-size -- "$TREE" | cut -f1)
((files_visible > 0)) || die "no files in $TREE"
say "tree: $files_disk files on disk, $files_visible visible (not hidden or ignored), $size"

for i in "${!CHECKS[@]}"; do
    (cd "$TREE" && "$RG" -q --no-require-git -g '*.rs' -F -- "${CHECKS[$i]}" .) \
        || die "task $((i + 1)) names code the tree does not have ('${CHECKS[$i]}' found nowhere); set REPOMAP_TASKS"
done
printf '%s\n' "${TASKS[@]}" >"$OUT/tasks.txt"
if ((${#IDENTS[@]})); then printf '%s\n' "${IDENTS[@]}"; fi >"$OUT/idents.txt"

if [[ -n ${REPOMAP_OUTLINE:-} ]]; then
    OUTLINE=$REPOMAP_OUTLINE
    [[ -f $TREE/$OUTLINE ]] || die "REPOMAP_OUTLINE $OUTLINE is not a file in the tree"
    OUTLINE_LINES=$(wc -l <"$TREE/$OUTLINE")
else
    read -r OUTLINE_LINES OUTLINE < <(cd "$TREE" && python3 - "$OUT/files.txt" <<'EOF'
import os, sys
code = {".rs", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".go", ".java",
        ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".py"}
best = None
for path in open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read().splitlines():
    if os.path.splitext(path)[1] not in code:
        continue
    with open(path, "rb") as f:
        n = f.read().count(b"\n")
    key = (abs(n - 5000), path)
    if best is None or key < best[0]:
        best = (key, n, path)
if best is None:
    sys.exit("no code files")
print(best[1], best[2])
EOF
    ) || die "could not pick a file for ws_outline"
fi
say "ws_outline file: $OUTLINE ($OUTLINE_LINES lines)"

say "warming the page cache"
find "$TREE" -type f -print0 | xargs -0 cat >/dev/null

# ---- slmcode -----------------------------------------------------------------------------
json_arg() { python3 -c 'import json,sys; print(json.dumps({sys.argv[1]: sys.argv[2]}))' "$1" "$2"; }
# Runs one call, saves stdout to $1, dies on a failure or an empty result.
run_ours() {
    local out=$1 err rc=0
    err=$RAW/$(basename -- "$1").err
    shift
    "$SLM" "$@" >"$out" 2>"$err" || rc=$?
    ((rc == 0)) || die "slmcode $* exited $rc: $(head -c 2000 "$out" "$err")"
    [[ -s $out ]] || die "slmcode $* printed nothing"
}
hf() {  # name runs warmup [hyperfine options...] -- command
    local name=$1 runs=$2 warmup=$3
    shift 3
    say "hyperfine: $name"
    hyperfine -N --output=pipe --style basic --runs "$runs" --warmup "$warmup" \
        --export-json "$RAW/$name.json" "$@" >"$RAW/$name.txt" 2>&1 \
        || { cat "$RAW/$name.txt" >&2; die "hyperfine failed for $name"; }
}
map_cmd() {  # root task
    echo "$(q "$SLM") map --root $(q "$1") --tokens $TOKENS $(q "$2")"
}

CACHE=$TREE/.slmcode/cache
say "slmcode: cold index build + map for task 1"
rm -rf -- "$CACHE"
hf ours-cold "$COLD_RUNS" 0 --prepare "rm -rf $(q "$CACHE")" "$(map_cmd "$TREE" "${TASKS[0]}")"
[[ -d $CACHE ]] || die "slmcode map did not write $CACHE"
run_ours "$OUT/slmcode-1.md" map --root "$TREE" --tokens "$TOKENS" "${TASKS[0]}"  # warms the cache again
# A name that occurs nowhere: "no such symbol" may come back as an error result (exit 1);
# anything else (a crash, a usage error) stops the bench.
never_rc=0
"$SLM" tool --root "$TREE" ws_symbols "$(json_arg query "$NEVER")" >"$RAW/never.txt" 2>&1 || never_rc=$?
((never_rc <= 1)) || die "slmcode tool ws_symbols (absent name) exited $never_rc: $(head -c 2000 "$RAW/never.txt")"
hf ours-index-warm "$RUNS" 1 -i "$(q "$SLM") tool --root $(q "$TREE") ws_symbols $(q "$(json_arg query "$NEVER")")"
for i in "${!TASKS[@]}"; do
    n=$((i + 1))
    run_ours "$OUT/slmcode-$n.md" map --root "$TREE" --tokens "$TOKENS" "${TASKS[$i]}"
    hf "ours-map-$n" "$RUNS" 1 "$(map_cmd "$TREE" "${TASKS[$i]}")"
done
run_ours "$OUT/slmcode-outline.txt" tool --root "$TREE" ws_outline "$(json_arg path "$OUTLINE")"
hf ours-outline "$RUNS" 1 "$(q "$SLM") tool --root $(q "$TREE") ws_outline $(q "$(json_arg path "$OUTLINE")")"
for s in "${SYMBOLS[@]}"; do
    run_ours "$OUT/slmcode-symbols-$s.txt" tool --root "$TREE" ws_symbols "$(json_arg query "$s")"
    hf "ours-symbols-$s" "$RUNS" 1 "$(q "$SLM") tool --root $(q "$TREE") ws_symbols $(q "$(json_arg query "$s")")"
done

# ---- aider -------------------------------------------------------------------------------
run_aider() {  # root files-list out-dir log
    timeout --kill-after=30 "$AIDER_TIMEOUT" "$PY" "$SCRIPT_DIR/repomap_aider.py" --root "$1" \
        --files-from "$2" --out-dir "$3" --tokens "$TOKENS" --runs "$AIDER_RUNS" -- "${TASKS[@]}" \
        2> >(tee "$4" | grep --line-buffered -v 'Scanning repo:' >&2) \
        || die "the aider half failed or ran past ${AIDER_TIMEOUT}s (REPOMAP_AIDER_TIMEOUT); log: $4"
}
if [[ ${REPOMAP_SKIP_AIDER:-0} != 1 ]]; then
    say "aider: full tree ($files_visible files); the cold scan takes minutes"
    run_aider "$TREE" "$OUT/files.txt" "$OUT" "$RAW/aider.log"
    [[ -s $OUT/aider.json ]] || die "the aider driver wrote no $OUT/aider.json"
fi

# ---- subset: top-level directories matching REPOMAP_SUBSET, both maps -------------------
SUB=$OUT/subset
rm -rf -- "$SUB"
if ((${#SUBSET[@]})); then
    mkdir -p -- "$SUB/tree"
    mapfile -t subdirs < <(cd "$TREE" && for g in "${SUBSET[@]}"; do
        find . -mindepth 1 -maxdepth 1 -type d -name "$g" -printf '%f\n'; done | LC_ALL=C sort -u)
    ((${#subdirs[@]})) || die "no top-level directory of the tree matches REPOMAP_SUBSET='${SUBSET[*]}'"
    for d in "${subdirs[@]}"; do cp -al -- "$TREE/$d" "$SUB/tree/" || die "cp -al $TREE/$d failed"; done
    (cd "$SUB/tree" && "$RG" --files --no-require-git | LC_ALL=C sort) >"$SUB/files.txt" || die "rg --files failed"
    say "subset: ${#subdirs[@]} directories (${SUBSET[*]}), $(wc -l <"$SUB/files.txt") files"
    hf sub-ours-cold "$COLD_RUNS" 0 --prepare "rm -rf $(q "$SUB/tree/.slmcode/cache")" "$(map_cmd "$SUB/tree" "${TASKS[0]}")"
    hf sub-ours-index-warm "$RUNS" 1 -i "$(q "$SLM") tool --root $(q "$SUB/tree") ws_symbols $(q "$(json_arg query "$NEVER")")"
    for i in "${!TASKS[@]}"; do
        n=$((i + 1))
        run_ours "$SUB/slmcode-$n.md" map --root "$SUB/tree" --tokens "$TOKENS" "${TASKS[$i]}"
        hf "sub-ours-map-$n" "$RUNS" 1 "$(map_cmd "$SUB/tree" "${TASKS[$i]}")"
    done
    if [[ ${REPOMAP_SKIP_AIDER:-0} != 1 ]]; then
        say "aider: subset"
        run_aider "$SUB/tree" "$SUB/files.txt" "$SUB" "$RAW/aider-subset.log"
        [[ -s $SUB/aider.json ]] || die "the aider driver wrote no $SUB/aider.json"
    fi
fi

# ---- report ------------------------------------------------------------------------------
report() {
    echo "tree: $SRC, copied to $TREE: $files_disk files on disk, $files_visible visible, $size;" \
        "$(nproc) cores; map budget $TOKENS tokens; $("$SLM" --version 2>/dev/null | head -1)," \
        "aider $have_version, $(hyperfine --version)"
    echo
    BENCH_OUT=$OUT BENCH_RAW=$RAW BENCH_OUTLINE=$OUTLINE BENCH_OUTLINE_LINES=$OUTLINE_LINES \
        BENCH_SKIP_AIDER=${REPOMAP_SKIP_AIDER:-0} BENCH_AIDER_VERSION=$have_version \
        BENCH_SUBSET="${SUBSET[*]}" "$PY" - "${SYMBOLS[@]}" <<'EOF'
import json, os, re, statistics, sys
import tiktoken

env = os.environ
out, raw = env["BENCH_OUT"], env["BENCH_RAW"]
symbols = sys.argv[1:]
enc = tiktoken.get_encoding("cl100k_base")
tasks = open(os.path.join(out, "tasks.txt"), encoding="utf-8").read().splitlines()
idents = open(os.path.join(out, "idents.txt"), encoding="utf-8").read().splitlines()
if not idents:  # REPOMAP_TASKS: the words that look like code (an underscore or an inner capital)
    idents = [" ".join(w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", t)
                       if "_" in w.strip("_") or re.search(r"[a-z][A-Z]", w)) for t in tasks]


def named(path, i):
    text = open(path, encoding="utf-8", errors="replace").read()
    want = idents[i - 1].split()
    if not want:
        return "—"
    got = sum(1 for w in want if re.search(rf"\b{re.escape(w)}\b", text))
    return f"{got}/{len(want)}"


def tokens(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return len(enc.encode(f.read(), disallowed_special=()))


def fmt(secs, sd=None):
    if secs is None:
        return "—"
    unit, scale = ("ms", 1e3) if secs < 1 else ("s", 1)
    digits = 1 if secs * scale < 100 else 0
    s = f"{secs * scale:.{digits}f} {unit}"
    return s + (f" ± {sd * scale:.{digits}f}" if sd is not None else "")


def hf(name):  # mean ± sd of a hyperfine run
    r = json.load(open(os.path.join(raw, f"{name}.json")))["results"][0]
    return fmt(r["mean"], r.get("stddev"))


def stats(xs):
    return fmt(statistics.mean(xs), statistics.stdev(xs) if len(xs) > 1 else None)


def short(t, n=64):
    return t if len(t) <= n else t[: n - 1] + "…"


def block(base, prefix):
    aider = None
    if env["BENCH_SKIP_AIDER"] != "1":
        aider = json.load(open(os.path.join(base, "aider.json")))
    print("| tool | call | index cold | index warm | map time | map tokens | named |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for i, task in enumerate(tasks, 1):
        first = i == 1
        row = ["slmcode", f"map {i}: {short(task)}",
               hf(f"{prefix}ours-cold") if first else "", hf(f"{prefix}ours-index-warm") if first else "",
               hf(f"{prefix}ours-map-{i}"), tokens(os.path.join(base, f"slmcode-{i}.md")),
               named(os.path.join(base, f"slmcode-{i}.md"), i)]
        print("| " + " | ".join(map(str, row)) + " |")
        if aider:
            t = aider["tasks"][i - 1]
            row = [f"aider {env['BENCH_AIDER_VERSION']}", f"map {i}",
                   fmt(aider["cold"]) if first else "", stats(aider["index_warm"]) if first else "",
                   stats(t["times"]), tokens(t["map"]), named(t["map"], i)]
            print("| " + " | ".join(map(str, row)) + " |")
    return aider


def aider_note(a):
    if a:
        print(f"\naider: {a['files']} files, {a['tags']} tags, peak RSS {a['max_rss_mb'] / 1024:.1f} GiB; "
              f"in-process times (imports not counted): index cold once, the rest mean ± sd of "
              f"{a['runs']} runs.")


print("### Full tree\n")
a = block(out, "")
print(f"| slmcode | ws_outline {env['BENCH_OUTLINE']} ({env['BENCH_OUTLINE_LINES']} lines) | | | "
      f"{hf('ours-outline')} | {tokens(os.path.join(out, 'slmcode-outline.txt'))} | |")
for s in symbols:
    print(f"| slmcode | ws_symbols {s} | | | {hf('ours-symbols-' + s)} | "
          f"{tokens(os.path.join(out, f'slmcode-symbols-{s}.txt'))} | |")
aider_note(a)
sub = os.path.join(out, "subset")
if env["BENCH_SUBSET"]:
    n = sum(1 for _ in open(os.path.join(sub, "files.txt"), encoding="utf-8", errors="replace"))
    print(f"\n### Subset: top-level directories {env['BENCH_SUBSET']} ({n} files)\n")
    aider_note(block(sub, "sub-"))
print("\nindex cold: the first map with no cache (index built, then the map for task 1). index warm: "
      "ws_symbols for a name that occurs nowhere (slmcode) / RepoMap.get_tags over every file "
      "(aider). map time: the map for the task on a warm index. slmcode: whole processes "
      "(hyperfine). Tokens: cl100k_base. named: the task's code identifiers found in the map.")
EOF
}
report >"$OUT/results.md" || die "the report failed (partial table in $OUT/results.md)"
echo
cat -- "$OUT/results.md"
say "maps and results in $OUT"

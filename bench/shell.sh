#!/usr/bin/env bash
# What the ws_shell sandbox costs a call, in one run: `true` through `slmcode tool ws_shell`
# with the sandbox on and off, against the obvious references — the bare shell, and the same
# namespaces made by util-linux's unshare(1) — and `cargo test` of a crate with a dependency
# and `npm test` through ws_shell against running them directly, with the read confinement
# (the default) and with reads opened (`shell_read_allow: [/]`, nothing hidden), and through a
# baseline binary when one is given (e.g. main's, before the read confinement).
#
# Usage: bench/shell.sh
# Environment:
#   BENCH_WARMUP=N   hyperfine warmup runs (default 3)
#   BENCH_RUNS=N     hyperfine timed runs (default 20)
#   BENCH_KEEP=1     keep the temp dir (hyperfine JSON) instead of deleting it
#   SLMCODE_BIN=PATH the slmcode to measure (default: a release build of this tree)
#   BENCH_BASELINE=PATH  another slmcode to compare (e.g. main's build)
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$SCRIPT_DIR/.." && pwd)
[[ -f $REPO/Cargo.toml && -d $REPO/crates/cli ]] || die "cannot find the repo root"

WARMUP=${BENCH_WARMUP:-3}
RUNS=${BENCH_RUNS:-20}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/slmcode-bench-shell.XXXXXX")
cleanup() {
    local rc=$?
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then echo "bench: kept $TMP" >&2; else rm -rf -- "$TMP"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v hyperfine >/dev/null || apt_install hyperfine
command -v unshare >/dev/null || die "unshare (util-linux) is missing"

if [[ -n ${SLMCODE_BIN:-} ]]; then
    BIN=$SLMCODE_BIN
else
    say "building slmcode (release)"
    cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" -p slmcode
    BIN=$REPO/target/release/slmcode
fi

# A crate with a dependency from the registry cache (read from ~/.cargo, which the command may
# only read), built once so the runs measure a warm `cargo test`.
PROJ=$TMP/proj
mkdir -p "$PROJ"
(cd "$PROJ" && cargo init -q --lib --name benchcrate && git init -q 2>/dev/null || true)
dep=$(grep -A1 '^name = "memchr"$' "$REPO/Cargo.lock" | sed -n 's/^version = "\(.*\)"$/\1/p' | head -1)
[[ -n $dep ]] && printf 'memchr = "=%s"\n' "$dep" >>"$PROJ/Cargo.toml"
(cd "$PROJ" && cargo test -q --offline >/dev/null 2>&1) || die "cargo test of the bench crate failed"
NPM=$TMP/npm
mkdir -p "$NPM"
printf '{"name":"bench","version":"1.0.0","scripts":{"test":"node test.js"}}\n' >"$NPM/package.json"
printf 'require("assert").strictEqual(1 + 1, 2);\nconsole.log("ok");\n' >"$NPM/test.js"
export XDG_CONFIG_HOME=$TMP/no-user-config

# unshare as an ordinary user needs --map-root-user; as root it works without.
UNSHARE=(unshare --user --map-current-user --mount --pid --fork --net --ipc --mount-proc)
"${UNSHARE[@]}" true 2>/dev/null || UNSHARE=(unshare --mount --pid --fork --net --ipc --mount-proc)
"${UNSHARE[@]}" true || die "unshare cannot make the namespaces here"
printf -v UNSHARE_CMD '%q ' "${UNSHARE[@]}"

say "true: bare shell, unshare(1), ws_shell sandbox off, ws_shell sandbox on"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$TMP/true.json" \
    -n 'sh -c true' "sh -c true" \
    -n 'unshare(1) namespaces' "${UNSHARE_CMD}sh -c true" \
    -n 'ws_shell, sandbox off' "env SLMCODE_SANDBOX=off $BIN tool ws_shell '{\"command\":\"true\"}' --root $PROJ" \
    -n 'ws_shell, sandbox on' "$BIN tool ws_shell '{\"command\":\"true\"}' --root $PROJ" >&2

say "cargo test and npm test: direct, through ws_shell (reads confined, reads open, baseline)"
CARGO_CALL="'{\"command\":\"cargo test -q\"}'"
NPM_CALL="'{\"command\":\"npm test\"}'"
extra=()
if [[ -n ${BENCH_BASELINE:-} ]]; then
    extra=(-n 'baseline cargo test' "$BENCH_BASELINE tool ws_shell $CARGO_CALL --root $PROJ"
           -n 'baseline npm test' "$BENCH_BASELINE tool ws_shell $NPM_CALL --root $NPM")
fi
hyperfine -N --warmup 1 --runs "$((RUNS / 2 > 3 ? RUNS / 2 : 3))" --export-json "$TMP/cargo.json" \
    -n 'cargo test' "sh -c 'cd $PROJ && cargo test -q'" \
    -n 'ws_shell cargo test' "$BIN tool ws_shell $CARGO_CALL --root $PROJ" \
    -n 'reads open cargo test' "env SLMCODE_SHELL_READ_ALLOW=/ $BIN tool ws_shell $CARGO_CALL --root $PROJ" \
    -n 'npm test' "sh -c 'cd $NPM && npm test'" \
    -n 'ws_shell npm test' "$BIN tool ws_shell $NPM_CALL --root $NPM" \
    -n 'reads open npm test' "env SLMCODE_SHELL_READ_ALLOW=/ $BIN tool ws_shell $NPM_CALL --root $NPM" \
    "${extra[@]}" >&2

python3 - "$TMP/true.json" "$TMP/cargo.json" <<'PY'
import json, sys
rows = []
for path in sys.argv[1:]:
    for r in json.load(open(path))["results"]:
        rows.append((r["command"], r["median"] * 1000, r["stddev"] * 1000 if r["stddev"] else 0.0))
print(f"{'case':<26} {'median ms':>10} {'± ms':>7}")
for name, median, sd in rows:
    print(f"{name:<26} {median:>10.2f} {sd:>7.2f}")
t = {n: m for n, m, _ in rows}
print(f"sandbox on - off: {t['ws_shell, sandbox on'] - t['ws_shell, sandbox off']:.2f} ms a call; "
      f"unshare(1) - sh: {t['unshare(1) namespaces'] - t['sh -c true']:.2f} ms; "
      f"ws_shell cargo test / cargo test: {t['ws_shell cargo test'] / t['cargo test']:.2f}x")
for tool in ("cargo test", "npm test"):
    line = (f"{tool}: reads confined - reads open: "
            f"{t['ws_shell ' + tool] - t['reads open ' + tool]:.2f} ms")
    if 'baseline ' + tool in t:
        line += f"; this - baseline: {t['ws_shell ' + tool] - t['baseline ' + tool]:.2f} ms"
    print(line)
PY

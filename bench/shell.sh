#!/usr/bin/env bash
# What the ws_shell sandbox costs a call, in one run: `true` through `slmcode tool ws_shell`
# with the sandbox on and off, against the obvious references — the bare shell, and the same
# namespaces made by util-linux's unshare(1) — and `cargo test` of a fresh crate through
# ws_shell against running it directly.
#
# Usage: bench/shell.sh
# Environment:
#   BENCH_WARMUP=N   hyperfine warmup runs (default 3)
#   BENCH_RUNS=N     hyperfine timed runs (default 20)
#   BENCH_KEEP=1     keep the temp dir (hyperfine JSON) instead of deleting it
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

say "building slmcode (release)"
cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" -p slmcode
BIN=$REPO/target/release/slmcode

PROJ=$TMP/proj
mkdir -p "$PROJ"
(cd "$PROJ" && cargo init -q --lib --name benchcrate && git init -q 2>/dev/null || true)
(cd "$PROJ" && cargo test -q >/dev/null 2>&1) || die "cargo test of the fresh crate failed"
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

say "cargo test of a fresh crate: direct, through ws_shell"
hyperfine -N --warmup 1 --runs "$((RUNS / 2 > 3 ? RUNS / 2 : 3))" --export-json "$TMP/cargo.json" \
    -n 'cargo test' "sh -c 'cd $PROJ && cargo test -q'" \
    -n 'ws_shell cargo test' "$BIN tool ws_shell '{\"command\":\"cargo test -q\"}' --root $PROJ" >&2

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
PY

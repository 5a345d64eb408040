#!/usr/bin/env bash
# Times ws_grep against ripgrep and ws_glob against fd on one large source tree (the crates.io
# sources cargo has downloaded), in one run, and prints ours/reference ratios.
#
# Usage: bench/search.sh
# Environment:
#   BENCH_TREE=DIR   use (or create and fill) this corpus instead of one in a temp dir;
#                    a non-empty DIR is used as it is and never deleted
#   BENCH_KEEP=1     keep the temp dir (hyperfine JSON, corpus) instead of deleting it
#   BENCH_RARE=RE    the rare-match regex (must match 1..49 lines in the corpus)
#   BENCH_WARMUP=N   hyperfine warmup runs (default 3)
#   BENCH_RUNS=N     hyperfine timed runs (default 10)
#   CARGO_HOME       where the registry sources are (default ~/.cargo)
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
# Single-quotes one word for hyperfine's --shell=none command splitting (POSIX rules).
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd -- "$SCRIPT_DIR/.." && pwd)
[[ -f $REPO/Cargo.toml && -d $REPO/crates/cli ]] || die "cannot find the repo root (expected $REPO/Cargo.toml and crates/cli)"

WARMUP=${BENCH_WARMUP:-3}
RUNS=${BENCH_RUNS:-10}
NEVER='zqxj_never_occurs_42'
GLOB='*.rs'

# ---- temp dir + cleanup ------------------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/slmcode-bench.XXXXXX")
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

# ---- tools -------------------------------------------------------------------------------
need_install=()
command -v rg >/dev/null || need_install+=(ripgrep)
command -v fdfind >/dev/null || command -v fd >/dev/null || need_install+=(fd-find)
command -v hyperfine >/dev/null || need_install+=(hyperfine)
command -v git >/dev/null || need_install+=(git)
apt_install ${need_install[@]+"${need_install[@]}"}
FD=$(command -v fdfind || command -v fd) || die "fd not found after install"
RG=$(command -v rg) || die "rg not found after install"
command -v python3 >/dev/null || die "python3 is needed to read hyperfine's JSON"
command -v cargo >/dev/null || die "cargo not found"

# ---- build -------------------------------------------------------------------------------
say "building slmcode (release)"
(cd "$REPO" && cargo build --release -p slmcode) || die "cargo build --release -p slmcode failed"
TARGET_DIR=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])') || TARGET_DIR=$REPO/target
SLM=$TARGET_DIR/release/slmcode
[[ -x $SLM ]] || die "built binary not found at $SLM"

# ---- corpus ------------------------------------------------------------------------------
CORPUS=${BENCH_TREE:-$TMP/corpus}
mkdir -p -- "$CORPUS"
CORPUS=$(cd -- "$CORPUS" && pwd)
if [[ -n $(ls -A -- "$CORPUS") ]]; then
    say "using the existing corpus $CORPUS as it is"
    [[ -d $CORPUS/.git ]] || echo "bench: warning: $CORPUS is not a git repo; rg ignores .gitignore there but ws_grep does not, so the file sets may differ" >&2
else
    say "cargo fetch (so the registry sources exist)"
    (cd "$REPO" && cargo fetch -q) || die "cargo fetch failed"
    REG=${CARGO_HOME:-$HOME/.cargo}/registry/src
    shopt -s nullglob
    srcs=("$REG"/*/)
    shopt -u nullglob
    ((${#srcs[@]})) || die "no registry sources under $REG (set CARGO_HOME?)"
    say "copying ${srcs[*]} into $CORPUS"
    for d in "${srcs[@]}"; do cp -a -- "$d". "$CORPUS"/; done
    cat >"$CORPUS/.gitignore" <<'EOF'
# Same rules for rg, fd and slmcode: this corpus is a git repo.
target/
*.orig
*.rej
/*/benches/
EOF
    git -C "$CORPUS" init -q || die "git init in $CORPUS failed"
    sync  # write the copy back now, not while timing
fi

all_files=$(find "$CORPUS" -type f | wc -l)
visible=$(cd "$CORPUS" && "$FD" -t f | wc -l)
size=$(du -sh -- "$CORPUS" | cut -f1)
say "corpus: $CORPUS — $all_files files on disk, $visible visible (not ignored/hidden), $size"

say "warming the page cache"
find "$CORPUS" -type f -print0 | xargs -0 cat >/dev/null
(cd "$CORPUS" && "$RG" -n --no-messages "$NEVER" . >/dev/null) || true
"$SLM" tool ws_grep "{\"pattern\":\"$NEVER\"}" --root "$CORPUS" >/dev/null || true

# ---- sanity checks: same answers before timing -------------------------------------------
json_pattern() { python3 -c 'import json,sys; print(json.dumps({"pattern": sys.argv[1]}))' "$1"; }
rg_lines() { (cd "$CORPUS" && { "$RG" -n --no-messages -- "$1" . || true; } | wc -l); }
ours() {  # tool json -> stdout; dies on an error result
    local out rc=0
    out=$("$SLM" tool "$1" "$2" --root "$CORPUS") || rc=$?
    ((rc == 0)) || die "slmcode tool $1 $2 exited $rc: $out"
    printf '%s\n' "$out"
}

n=$(rg_lines "$NEVER")
((n == 0)) || die "the no-match pattern $NEVER occurs $n times in the corpus"
out=$(ours ws_grep "$(json_pattern "$NEVER")")
[[ $out == *"no matches"* ]] || die "ws_grep found something for $NEVER: $out"
searched=$(sed -n 's/.*(\([0-9]*\) files searched.*/\1/p' <<<"$out")
rg_files=$(cd "$CORPUS" && "$RG" --files | wc -l)
say "files searched: ws_grep $searched, rg --files $rg_files"
[[ $searched == "$rg_files" ]] || echo "bench: warning: ws_grep and rg do not see the same number of files" >&2

if [[ -n ${BENCH_RARE:-} ]]; then
    candidates=("$BENCH_RARE")
else
    candidates=('impl\s+Drop\s+for\s+\w+Guard' 'fn\s+levenshtein\w*' '#\[cfg\(target_os = "haiku"\)\]'
        'fn try_reserve_exact\b' 'Levenshtein' 'fn\s+\w+_utf16\w*\(')
fi
RARE=
for c in "${candidates[@]}"; do
    k=$(rg_lines "$c")
    if ((k > 0 && k < 50)); then RARE=$c; RARE_N=$k; break; fi
    say "rare candidate '$c' has $k matching lines (need 1..49), skipped"
done
[[ -n $RARE ]] || die "no rare regex with 1..49 matching lines; set BENCH_RARE to one"
out=$(ours ws_grep "$(json_pattern "$RARE")")
ours_n=$(sed -n 's/^(\([0-9]*\) match.*/\1/p' <<<"$out" | tail -1)
say "rare regex '$RARE': rg $RARE_N matching lines, ws_grep ${ours_n:-?}"
[[ ${ours_n:-} == "$RARE_N" ]] || echo "bench: warning: ws_grep and rg disagree on the rare regex" >&2

out=$(ours ws_glob "$(json_pattern "$GLOB")")
glob_ours=$(tail -1 <<<"$out" | sed -n 's/.* of \([0-9]*\) matches shown.*/\1/p; s/^(\([0-9]*\) match.*/\1/p')
glob_fd=$(cd "$CORPUS" && "$FD" -g "$GLOB" | wc -l)
say "glob '$GLOB': fd $glob_fd paths, ws_glob ${glob_ours:-?}"
[[ ${glob_ours:-} == "$glob_fd" ]] || echo "bench: warning: ws_glob and fd disagree on the count" >&2

# ---- timing ------------------------------------------------------------------------------
# Run from the corpus (rg/fd search "."; ours gets --root). --shell=none: no shell startup in
# either number; -i: rg exits 1 on no match (our exit codes were checked above);
# --output=pipe: both write into a pipe, so nothing can special-case /dev/null.
bench() {  # name ours-cmd ref-cmd
    say "hyperfine: $1"
    (cd "$CORPUS" && hyperfine -N -i --output=pipe --warmup "$WARMUP" --runs "$RUNS" \
        --export-json "$TMP/$1.json" -n ours "$2" -n reference "$3") \
        || die "hyperfine failed for $1"
}
bench grep-nomatch "$(q "$SLM") tool ws_grep $(q "$(json_pattern "$NEVER")") --root $(q "$CORPUS")" \
    "$(q "$RG") -n --no-messages $(q "$NEVER") ."
bench grep-rare "$(q "$SLM") tool ws_grep $(q "$(json_pattern "$RARE")") --root $(q "$CORPUS")" \
    "$(q "$RG") -n --no-messages $(q "$RARE") ."
bench glob "$(q "$SLM") tool ws_glob $(q "$(json_pattern "$GLOB")") --root $(q "$CORPUS")" \
    "$(q "$FD") -g $(q "$GLOB")"

# ---- report ------------------------------------------------------------------------------
echo
echo "corpus: $all_files files on disk, $visible visible, $size; $(nproc) cores; $("$RG" --version | head -1), $("$FD" --version), $(hyperfine --version)"
python3 - "$TMP" "$RARE" "$RARE_N" <<'EOF'
import json, sys
tmp, rare, rare_n = sys.argv[1:4]
cases = [
    ("grep-nomatch", "ws_grep vs rg, no match (full scan)"),
    ("grep-rare", f"ws_grep vs rg, /{rare}/ ({rare_n} hits)"),
    ("glob", "ws_glob vs fd, *.rs"),
]
rows = []
for key, label in cases:
    res = {r["command"]: r for r in json.load(open(f"{tmp}/{key}.json"))["results"]}
    o, r = res["ours"], res["reference"]
    rows.append((label, o["mean"] * 1e3, o["stddev"] * 1e3, r["mean"] * 1e3, r["stddev"] * 1e3))
w = max(len(x[0]) for x in rows)
print(f"{'case':<{w}}  {'ours ms':>14}  {'reference ms':>14}  {'ratio':>6}")
for label, om, os_, rm, rs in rows:
    print(f"{label:<{w}}  {om:7.1f} ±{os_:5.1f}  {rm:7.1f} ±{rs:5.1f}  {om / rm:6.2f}")
ratio = rows[0][1] / rows[0][3]
print(f"target: full-scan ws_grep within 1.2x of rg -> {ratio:.2f}x, "
      + ("met" if ratio <= 1.2 else "NOT met"))
EOF

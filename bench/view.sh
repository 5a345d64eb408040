#!/usr/bin/env bash
# How fast `slmcode view` opens a long run: a 2,000-turn trajectory (written by
# crates/agent/benches/view_large_run.rs, sealed as slmcode writes it), then, in one hyperfine
# run, curl of its run page (page 1), its last page (?page=40), its budget chart and the runs
# list, against `slmcode runs show` of the same run (the text transcript) as the reference.
# Prints the size of the trajectory file and of the run page, and writes hyperfine's markdown
# table to target/bench-view.md.
#
# Usage: bench/view.sh
# Environment:
#   VIEW_TURNS=N     turns of the generated run (default 2000; the last page is N/50)
#   BENCH_WARMUP=N   hyperfine warmup runs (default 2)
#   BENCH_RUNS=N     hyperfine timed runs (default 10)
#   BENCH_KEEP=1     keep the temp dir (project, key, server log) instead of deleting it
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."

turns=${VIEW_TURNS:-2000}
warmup=${BENCH_WARMUP:-2}
runs=${BENCH_RUNS:-10}
last_page=$(( (turns + 49) / 50 ))

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v curl >/dev/null || need+=(curl)
command -v git >/dev/null || need+=(git)
apt_install ${need[@]+"${need[@]}"}

# ---- temp dir, server, cleanup -----------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/slmcode-view.XXXXXX")
server=
cleanup() {
    local rc=$?
    if [[ -n $server ]]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then
        echo "bench: kept $TMP (BENCH_KEEP=1)" >&2
    else
        rm -rf -- "$TMP"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The generator and the slmcode binary read one key: the user's, under XDG_DATA_HOME.
export XDG_DATA_HOME=$TMP/data
mkdir -p "$XDG_DATA_HOME"
project=$TMP/project
mkdir -p "$project"
git -C "$project" init -q

# ---- build -------------------------------------------------------------------------------
say "building slmcode and the generator (release)"
cargo build --release --locked --bin slmcode
cargo bench --locked -p slmcode-agent --bench view_large_run --no-run
gen=$(cargo bench --locked -p slmcode-agent --bench view_large_run --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*view_large_run[^"]*\)".*/\1/p' | tail -1)
[[ -x $gen ]] || die "cannot find the view_large_run bench binary"
slm=$PWD/target/release/slmcode
[[ -x $slm ]] || die "cannot find $slm"

# ---- the run -----------------------------------------------------------------------------
say "writing a $turns-turn run"
id=$(VIEW_TURNS=$turns "$gen" "$project")
[[ -n $id ]] || die "the generator printed no run id"
log=$project/.slmcode/runs/$id.jsonl
[[ -f $log ]] || die "no trajectory at $log"

# ---- the server --------------------------------------------------------------------------
# Starts `slmcode view` on the project; sets server, url, base and token.
start_server() {
    "$slm" view --root "$project" >"$TMP/view.out" 2>"$TMP/view.err" &
    server=$!
    url=
    for _ in $(seq 100); do
        url=$(head -n1 "$TMP/view.out" 2>/dev/null || true)
        [[ $url == http://* ]] && break
        kill -0 "$server" 2>/dev/null || { cat "$TMP/view.err" >&2; die "slmcode view exited"; }
        sleep 0.1
    done
    [[ $url == http://* ]] || { cat "$TMP/view.err" >&2; die "slmcode view printed no address"; }
    base=${url%%/\?*}
    token=${url##*token=}
}
stop_server() {
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=
}

# The first open of the run by a fresh server reads and checks the whole trajectory; later
# requests read only what it gained. Five fresh servers, the first request of each.
cold=()
for _ in 1 2 3 4 5; do
    start_server
    cold+=("$(curl -sf -o /dev/null -w '%{time_total}' "$base/runs/$id?token=$token")")
    stop_server
done
echo "first open of the run page by a fresh server (s): ${cold[*]}"

start_server
say "slmcode view at $base"

run_url="$base/runs/$id?token=$token"
last_url="$base/runs/$id?page=$last_page&token=$token"
svg_url="$base/runs/$id/budget.svg?token=$token"
list_url="$base/?token=$token"
for u in "$run_url" "$last_url" "$svg_url" "$list_url"; do
    curl -sf -o /dev/null "$u" || die "GET ${u%%\?*} failed"
done

page_bytes=$(curl -sf "$run_url" | wc -c)
log_bytes=$(wc -c <"$log")
echo "trajectory: $log_bytes bytes ($turns turns, $(wc -l <"$log") records)"
echo "run page (page 1 of $last_page): $page_bytes bytes"

# ---- timing ------------------------------------------------------------------------------
md=target/bench-view.md
hyperfine --warmup "$warmup" --runs "$runs" --export-markdown "$md" \
    -n "run page (page 1)" "curl -sf -o /dev/null '$run_url'" \
    -n "last page (page $last_page)" "curl -sf -o /dev/null '$last_url'" \
    -n "budget chart" "curl -sf -o /dev/null '$svg_url'" \
    -n "runs list" "curl -sf -o /dev/null '$list_url'" \
    -n "runs show (reference)" "'$slm' runs show '$id' --root '$project' > /dev/null"

echo
cat "$md"

#!/usr/bin/env bash
# What a hostile or broken model server costs the harness, case by case: wall time and peak
# memory (maximum resident set, from /usr/bin/time) of one process per case. The cases are in
# crates/agent/benches/hostile_replies.rs.
#
# Usage: bench/hostile.sh [CASE ARG]...   (default: every case below)
# Environment:
#   BENCH_MEM_LIMIT_KB=N   run each case under `ulimit -v N` (default 8388608, 8 GiB), so a
#                          case that sizes an allocation by what the server says fails instead
#                          of taking the machine's memory
#   BENCH_BIN=PATH         measure this build of the bench instead of building it (e.g. one
#                          built from an older commit, for before/after numbers)
set -euo pipefail

source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
cd "$(dirname "$0")/.."

[[ -x /usr/bin/time ]] || apt_install time

limit=${BENCH_MEM_LIMIT_KB:-8388608}
bin=${BENCH_BIN:-}
if [[ -z $bin ]]; then
  cargo bench --locked -p slmcode-agent --bench hostile_replies --no-run
  bin=$(cargo bench --locked -p slmcode-agent --bench hostile_replies --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*hostile_replies[^"]*\)".*/\1/p' | tail -1)
fi
[[ -x $bin ]] || die "cannot find the hostile_replies bench binary"

cases=("$@")
if ((${#cases[@]} == 0)); then
  cases=(tool-index 1000 tool-index 1000000 tool-index 10000000 tool-index 1000000000
         braces 30 braces 60 braces 120 empty-deltas "" keep-alive "")
fi
printf '%-28s %10s %12s  %s\n' case seconds "peak RSS" outcome
for ((i = 0; i < ${#cases[@]}; i += 2)); do
  case=${cases[i]} arg=${cases[i + 1]:-}
  out=$(mktemp)
  status=0
  ( ulimit -v "$limit"; /usr/bin/time -f '%e %M' -o "$out.time" "$bin" "$case" $arg ) >"$out" 2>"$out.err" || status=$?
  read -r secs kb < <(tail -1 "$out.time")
  outcome=$(tail -1 "$out" | sed 's/^[^:]*: [^,]*, //')
  if ((status != 0)); then
    outcome="exit $status: $(grep -m1 -E 'memory allocation|panicked|error' "$out.err" || tail -1 "$out.err")"
  fi
  printf '%-28s %10s %9d MB  %s\n' "$case $arg" "$secs" "$((kb / 1024))" "$outcome"
  rm -f "$out" "$out.time" "$out.err"
done

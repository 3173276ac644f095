#!/usr/bin/env bash
# Same-run A/B of two stepscope binaries (a refactor must not be slower): the load +
# analysis + report of the benchmark traces (`report --format json`, whole process, wall and
# peak RSS) and of the embedded demo, runs interleaved A, B, A, B … so that both see the
# same machine state. Prints a markdown table with medians and the B/A ratio.
#
#   scripts/bench-ab.sh OLD_BINARY NEW_BINARY
#   RUNS=9 CASES="single r64 demo single-gz" THREADS=2 scripts/bench-ab.sh old new
#   RUNS=1 CASES="s1024 s4096 s10240" scripts/bench-ab.sh old new   # jobs from summaries
set -euo pipefail
A=$(realpath "$1"); B=$(realpath "$2")
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-bench}
THREADS=${THREADS:-2}
CASES=${CASES:-"single r64 demo"}
RUNS=${RUNS:-7}

source "$(dirname "$0")/bench-lib.sh"

machine "$THREADS" "$RUNS"
echo
echo "| case | A wall (s) | B wall (s) | B/A wall | A RSS (MB) | B RSS (MB) |"
echo "|---|---:|---:|---:|---:|---:|"
for c in $CASES; do
  case $c in
    single) gen single 1 540 "$B"; args=("$BENCH_DIR/single") ;;
    r64) gen r64 64 16 "$B"; args=("$BENCH_DIR/r64") ;;
    single-gz) gen_gz "$B"; args=("$BENCH_DIR/single-gz") ;;
    demo) args=() ;;
    s[0-9]*) gen_summaries "${c#s}" "$B"; args=("$BENCH_DIR/$c") ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  wa=(); wb=(); ra=(); rb=()
  for _ in $(seq "$RUNS"); do
    read -r w r < <(measure "$A" --threads "$THREADS" report --format json "${args[@]}"); wa+=("$w"); ra+=("$r")
    read -r w r < <(measure "$B" --threads "$THREADS" report --format json "${args[@]}"); wb+=("$w"); rb+=("$r")
  done
  ma=$(printf '%s\n' "${wa[@]}" | median); mb=$(printf '%s\n' "${wb[@]}" | median)
  rma=$(printf '%s\n' "${ra[@]}" | median); rmb=$(printf '%s\n' "${rb[@]}" | median)
  printf '| %s | %.2f | %.2f | %.3f | %.0f | %.0f |\n' "$c" "$ma" "$mb" \
    "$(echo "$mb / $ma" | bc -l)" "$(echo "$rma / 1024" | bc -l)" "$(echo "$rmb / 1024" | bc -l)"
done

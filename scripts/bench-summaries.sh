#!/usr/bin/env bash
# Jobs opened from summaries (`stepscope summarize`, docs/cache.md) against the same jobs'
# traces, by rank count: the summarize run, the report from the traces and from the
# summaries (whole process wall, peak RSS), and a summary's size per rank against its trace.
#
#   RANKS="256 1024" RUNS=3 scripts/bench-summaries.sh [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${1:-target/release/stepscope}")
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-summaries}
RANKS=${RANKS:-"256 1024"}
RUNS=${RUNS:-3}
export STEPSCOPE_CACHE_MIN=1T
source scripts/bench-lib.sh
machine "$(nproc)" "$RUNS"
echo
echo "| ranks | traces | summaries | summary / trace | summarize wall | report from traces: wall, RSS | from summaries: wall, RSS |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for n in $RANKS; do
  dir=$BENCH_DIR/r$n; sums=$BENCH_DIR/s$n
  gen "r$n" "$n" 1 "$BIN"
  rm -rf "$sums"
  read -r sw _ < <(measure "$BIN" summarize "$dir" --out "$sums")
  tw=(); tr=(); uw=(); ur=()
  for _ in $(seq "$RUNS"); do
    read -r w r < <(measure "$BIN" report --format json "$dir"); tw+=("$w"); tr+=("$r")
    read -r w r < <(measure "$BIN" report --format json "$sums"); uw+=("$w"); ur+=("$r")
  done
  tb=$(du -sb "$dir" | cut -f1); sb=$(du -sb "$sums" | cut -f1)
  printf '| %s | %.0f MB | %.0f MB | %.3f | %.2f s | %.2f s, %.0f MB | %.2f s, %.0f MB |\n' "$n" \
    "$(echo "$tb / 1000000" | bc -l)" "$(echo "$sb / 1000000" | bc -l)" "$(echo "$sb / $tb" | bc -l)" "$sw" \
    "$(printf '%s\n' "${tw[@]}" | median)" "$(echo "$(printf '%s\n' "${tr[@]}" | median) / 1024" | bc -l)" \
    "$(printf '%s\n' "${uw[@]}" | median)" "$(echo "$(printf '%s\n' "${ur[@]}" | median) / 1024" | bc -l)"
done

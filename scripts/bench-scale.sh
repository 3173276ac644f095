#!/usr/bin/env bash
# Cluster-scale benchmark (issue #3): the demo job at growing rank counts, 6 steps and 200
# all-reduces per step per rank (4 gradient buckets split 50 ways), loaded and analysed end
# to end by `stepscope report --format json`. Reports, per rank count, the load and analysis
# wall times the report itself measures (median of $RUNS runs), the whole-process wall time and
# peak RSS (/usr/bin/time), as a markdown table (the figures in BENCHMARKS.md).
#
#   scripts/bench-scale.sh                   128 256 512 1024 ranks
#   RANKS="64 1024" RUNS=1 scripts/bench-scale.sh
#
# Traces are plain JSON under $BENCH_DIR (default /tmp/stepscope-scale); 1024 ranks take 16 GB
# (every collective carries its 1024-rank `Process Group Ranks` list, as real traces do) and
# are deleted after their run unless KEEP=1.
set -euo pipefail
# A cold read on every run (the warm cache, docs/cache.md, is measured by bench-cache.sh).
export STEPSCOPE_CACHE_MIN=${STEPSCOPE_CACHE_MIN:-1T}
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-scale}
RANKS=${RANKS:-"128 256 512 1024"}
RUNS=${RUNS:-3}
KEEP=${KEEP:-0}

cargo build --release --locked -q
bin=target/release/stepscope

echo "| ranks | JSON | collective calls | load (median) | analysis (median) | process wall | peak RSS |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for n in $RANKS; do
  dir=$BENCH_DIR/r$n
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    "$bin" demo --out "$dir" --ranks "$n" --split-buckets 50 --plain 2>/dev/null
    touch "$dir/.done"
  fi
  size=$(du -sh "$dir" | cut -f1)
  loads=(); analyses=(); walls=(); rss=0; calls=0
  for _ in $(seq "$RUNS"); do
    t=$(mktemp)
    /usr/bin/time -f "%e %M" -o "$t.time" "$bin" report "$dir" --format json >"$t"
    read -r wall kb <"$t.time"
    read -r load analysis calls < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["timings"]["load_ns"] / 1e9, r["timings"]["analysis_ns"] / 1e9, sum(t["calls"] for t in r["communication"]["types"]))
' "$t")
    loads+=("$load"); analyses+=("$analysis"); walls+=("$wall")
    [ "$kb" -gt "$rss" ] && rss=$kb
    rm -f "$t" "$t.time"
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  printf "| %s | %s | %s | %.2f s | %.3f s | %.2f s | %d MB |\n" "$n" "$size" "$calls" \
    "$(med "${loads[@]}")" "$(med "${analyses[@]}")" \
    "$(med "${walls[@]}")" $((rss / 1024))
  [ "$KEEP" = 1 ] || rm -rf "$dir"
done

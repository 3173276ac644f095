#!/usr/bin/env bash
# Load + breakdown benchmark (issue #2): stepscope vs HolisticTraceAnalysis on the same files,
# in the same run. Generates, once, under $BENCH_DIR (default /tmp/stepscope-bench):
#   single/  one rank, ~1 GB of plain Kineto JSON   (stepscope demo --ranks 1 --scale 540)
#   r64/     64 ranks, ~30 MB each                  (stepscope demo --ranks 64 --scale 16)
#   single-gz/  the single trace gzip-compressed (level 1), stepscope only (opt-in: CASES)
# and times `stepscope report --format json` (load + breakdown + report, whole process) and
# HTA's `TraceAnalysis(trace_dir=...)` + `get_temporal_breakdown()`, with wall time and peak
# RSS from /usr/bin/time. Prints a markdown table (the figures in BENCHMARKS.md).
#
#   scripts/bench-load.sh            both cases, stepscope (median and best of 5) and HTA (once)
#   HTA=0 scripts/bench-load.sh      stepscope only
#   CASES="r64" scripts/bench-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-bench}
THREADS=${THREADS:-2}
CASES=${CASES:-"single r64"}
HTA=${HTA:-1}
RUNS=${RUNS:-5}

cargo build --release --locked -q
bin=target/release/stepscope

source scripts/bench-lib.sh

# uncompressed JSON bytes of a case
mbytes() {
  if ls "$1"/*.json >/dev/null 2>&1; then du -cb "$1"/*.json | tail -1 | cut -f1
  else for f in "$1"/*.json.gz; do gzip -l "$f" | awk 'NR==2{print $2}'; done | awk '{s+=$1} END{print s}'; fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB RAM"
echo "stepscope $($bin --version | cut -d' ' -f2), threads $THREADS; HTA $(python3 -c 'import importlib.metadata as m; print(m.version("HolisticTraceAnalysis"))' 2>/dev/null || echo 'not installed')"
echo
echo "| case | JSON | tool | wall (s), median | MB/s, median (best) | peak RSS | RSS / JSON |"
echo "|---|---:|---|---:|---:|---:|---:|"
for c in $CASES; do
  case $c in
    single) gen single 1 540 "$bin" ;;
    r64) gen r64 64 16 "$bin" ;;
    single-gz) gen_gz "$bin" ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  dir=$BENCH_DIR/$c
  bytes=$(mbytes "$dir")
  runs=()
  for _ in $(seq "$RUNS"); do runs+=("$(measure "$bin" --threads "$THREADS" report "$dir" --format json)"); done
  sorted=$(printf '%s\n' "${runs[@]}" | sort -n)
  med=$(echo "$sorted" | sed -n "$(( (RUNS + 1) / 2 ))p"); best=$(echo "$sorted" | head -1)
  w=${med% *}; bw=${best% *}; rss=$(printf '%s\n' "${runs[@]}" | awk '{print $2}' | sort -n | tail -1)
  awk -v c="$c" -v b="$bytes" -v w="$w" -v bw="$bw" -v r="$rss" 'BEGIN{printf "| %s | %.0f MB | stepscope | %.2f | %.0f (%.0f) | %.0f MB | %.2f× |\n", c, b/1e6, w, b/1e6/w, b/1e6/bw, r/1024, r*1024/b}'
  if [ "$HTA" = 1 ] && [ "$c" != single-gz ]; then
    r=$(measure python3 scripts/hta_breakdown.py "$dir")
    hw=${r% *}; hrss=${r#* }
    awk -v c="$c" -v b="$bytes" -v w="$hw" -v r="$hrss" -v s="$w" -v sr="$rss" 'BEGIN{printf "| %s | %.0f MB | HTA | %.2f | %.1f | %.0f MB | %.2f× |\n| %s | | **stepscope advantage** | **%.0f× faster** | | **%.1f× less memory** | |\n", c, b/1e6, w, b/1e6/w, r/1024, r*1024/b, c, w/s, r/sr}'
  fi
done

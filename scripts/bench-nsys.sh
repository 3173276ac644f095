#!/usr/bin/env bash
# Nsight Systems export vs Kineto JSON of the same job (issue 45): the demo job of one rank at
# --scale SCALE (540: ~1 GB of JSON) written both ways once under $BENCH_DIR/nsys-SCALE
# (`demo --plain` and `demo --as nsys`), then `report --format json` of each, interleaved
# (Kineto, nsys, Kineto, …), RUNS times: whole-process wall time, peak RSS, and the load
# phase alone (the report's `timings.load_ns`). Prints a markdown table with the ratios.
#
#   scripts/bench-nsys.sh                 SCALE=540 RUNS=3
#   SCALE=64 RUNS=5 scripts/bench-nsys.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-bench}
SCALE=${SCALE:-540}
RUNS=${RUNS:-3}
cargo build --release --locked -q
bin=target/release/stepscope
source scripts/bench-lib.sh

dir=$BENCH_DIR/nsys-$SCALE
if [ ! -f "$dir/.done" ]; then
  rm -rf "$dir"; mkdir -p "$dir/kineto" "$dir/nsys"
  "$bin" demo --out "$dir/kineto" --ranks 1 --scale "$SCALE" --plain
  "$bin" demo --as nsys --out "$dir/nsys" --ranks 1 --scale "$SCALE"
  touch "$dir/.done"
fi

# load_ns CASE: the load phase of one report run, in seconds
load_s() {
  "$bin" report "$dir/$1" --format json 2>/dev/null \
    | grep -o '"load_ns": [0-9]*' | head -1 | awk '{printf "%.2f", $2 / 1e9}'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB RAM"
echo "stepscope $($bin --version | cut -d' ' -f2); one rank, demo --scale $SCALE"
echo
declare -A wall rss load
for i in $(seq "$RUNS"); do
  for c in kineto nsys; do
    read -r w r < <(measure "$bin" report "$dir/$c" --format json)
    wall[$c]+="$w "; rss[$c]+="$r "; load[$c]+="$(load_s "$c") "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
echo "| input | bytes on disk | report wall (s), median | load (s), median | peak RSS (MB) |"
echo "|---|---:|---:|---:|---:|"
for c in kineto nsys; do
  bytes=$(du -cb "$dir/$c"/* | tail -1 | cut -f1)
  w=$(echo "${wall[$c]}" | median); l=$(echo "${load[$c]}" | median)
  r=$(echo "${rss[$c]}" | median)
  eval "W_$c=$w; L_$c=$l; R_$c=$r"
  echo "| $c | $bytes | $w | $l | $((r / 1024)) |"
done
awk -v a="$W_nsys" -v b="$W_kineto" -v c="$L_nsys" -v d="$L_kineto" -v e="$R_nsys" -v f="$R_kineto" \
  'BEGIN{printf "\nnsys / kineto: wall %.2f×, load %.2f×, peak RSS %.2f×\n", a/b, c/d, e/f}'

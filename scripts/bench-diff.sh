#!/usr/bin/env bash
# Diff benchmark (issue 33): `stepscope diff` of two 64-rank jobs against the time it takes to
# load them. Generates, once, under $BENCH_DIR (default /tmp/stepscope-bench):
#   d64-base/  64 ranks, the default demo        (stepscope demo --ranks 64 --scale $SCALE)
#   d64-strag/ 64 ranks, the straggler scenario  (the same, --scenario straggler)
# Runs `stepscope diff d64-base d64-strag --format json` RUNS times (whole process, wall and
# peak RSS) and reads from its JSON where the time went: load of each job, analysis of each
# (the two run at once), the comparison. Target: the whole diff in < 2× the time of loading
# both jobs (each loaded alone, as `report` does: its timings.load_ns).
#
# With HTA=1 (and `pip install HolisticTraceAnalysis psutil`), HTA's TraceDiff.compare_traces
# on the same pair once (scripts/hta_diff.py; its defaults: the first iteration of the first
# rank), wall and peak RSS beside stepscope's.
#
#   scripts/bench-diff.sh            RUNS=3 SCALE=4 THREADS=2 HTA=0
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-bench}
THREADS=${THREADS:-2}
RUNS=${RUNS:-3}
SCALE=${SCALE:-4}
HTA=${HTA:-0}

cargo build --release --locked -q
bin=target/release/stepscope
source scripts/bench-lib.sh

gen_scenario() { # DIR SCENARIO
  local dir=$BENCH_DIR/$1
  if [ ! -f "$dir/.done-64-$SCALE" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    "$bin" --scenario "$2" demo --out "$dir" --ranks 64 --scale "$SCALE" --plain
    touch "$dir/.done-64-$SCALE"
  fi
}
gen_scenario d64-base default
gen_scenario d64-strag straggler

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB RAM"
echo "stepscope $($bin --version | cut -d' ' -f2), threads $THREADS, 2 × 64 ranks, $(du -sb "$BENCH_DIR/d64-base" | cut -f1 | awk '{printf "%.0f MB", $1/1e6}') per job"
echo
# The time of loading them: each job loaded alone (`report`'s timings.load_ns, median of
# RUNS), and each job's whole report for context.
base() { # DIR: "LOAD_S REPORT_WALL_S", medians
  for _ in $(seq "$RUNS"); do
    f=$(mktemp)
    /usr/bin/time -f "%e" -o "$f.t" "$bin" --threads "$THREADS" report "$1" --format json >"$f"
    echo "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['timings']['load_ns']/1e9)" "$f") $(tail -1 "$f.t")"
    rm -f "$f" "$f.t"
  done | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
read -r load_a rep_a < <(base "$BENCH_DIR/d64-base")
read -r load_b rep_b < <(base "$BENCH_DIR/d64-strag")
load=$(awk -v a="$load_a" -v b="$load_b" 'BEGIN{print a+b}')
echo "loading them (each alone, median): $load_a + $load_b = $load s; each one's whole report: $rep_a + $rep_b s"
echo
echo "| run | diff wall (s) | peak RSS | inside: load A, B (s) | analysis A, B (s) | compare (s) | wall / loading |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for i in $(seq "$RUNS"); do
  f=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$f.t" "$bin" --threads "$THREADS" diff "$BENCH_DIR/d64-base" "$BENCH_DIR/d64-strag" --format json >"$f"
  read -r wall rss <"$f.t"
  python3 - "$f" "$wall" "$rss" "$i" "$load" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d["timings"]
wall, rss, i, load = float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
l = ", ".join(f"{x/1e9:.2f}" for x in t["load_ns"]); a = ", ".join(f"{x/1e9:.2f}" for x in t["analysis_ns"])
print(f"| {i} | {wall:.2f} | {rss/1024:.0f} MB | {l} | {a} | {t['diff_ns']/1e9:.3f} | {wall/load:.2f}× |")
PY
  rm -f "$f" "$f.t"
done
if [ "$HTA" = 1 ]; then
  r=$(measure python3 scripts/hta_diff.py "$BENCH_DIR/d64-base" "$BENCH_DIR/d64-strag")
  echo
  echo "HTA TraceDiff.compare_traces (first rank, first iteration): ${r% *} s, $(( ${r#* } / 1024 )) MB peak RSS"
fi

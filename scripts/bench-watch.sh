#!/usr/bin/env bash
# `stepscope watch` throughput and memory on a generated Megatron log (issue 13): N iteration
# lines (default 2 M, ~712 MB), one slow step every 997; prints lines/s and peak RSS of
# `watch --once --from-start --summary` (recognition + live analysis, no JSON output) and of
# the JSON-lines output to /dev/null.
#
#   scripts/bench-watch.sh [BINARY] [LINES]
set -euo pipefail
BIN=$(realpath "${1:-target/release/stepscope}")
N=${2:-2000000}
DIR=${BENCH_DIR:-/tmp/stepscope-bench}
LOG=$DIR/megatron-$N.log
mkdir -p "$DIR"
if [ ! -f "$LOG" ]; then
  python3 - "$LOG" "$N" <<'PY'
import random, sys
random.seed(1)
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(1, n + 1):
        t = 3400 + random.random() * 40 + (3000 if i % 997 == 0 else 0)
        f.write(f" [2024-04-06 02:59:36] iteration {i:8d}/ 9999999 | consumed samples: {i*128:12d} | elapsed time per iteration (ms): {t:.1f} | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | global batch size:   128 | lm loss: 1.825991E+00 | loss scale: 1.0 | grad norm: 1.426 | number of skipped iterations:   0 | number of nan iterations:   0 |\n")
PY
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $N lines, $(du -m "$LOG" | cut -f1) MB"
for mode in summary jsonl; do
  if [ $mode = summary ]; then args=(--summary); else args=(--jsonl); fi
  /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$BIN" watch --once --from-start "${args[@]}" "$LOG" > /dev/null
  read -r secs kb < "$DIR/time.txt"
  printf '%-8s %6.2f s  %8.0f lines/s  peak RSS %4.0f MB\n' "$mode" "$secs" "$(echo "$N / $secs" | bc -l)" "$(echo "$kb / 1024" | bc -l)"
done

# Shared by the benchmark scripts (source it): the generated benchmark traces and the
# measurement of one run. Needs BENCH_DIR set.

# Every benchmark measures a cold read unless it says otherwise (bench-cache.sh does): no
# input is big enough for the warm cache (docs/cache.md).
export STEPSCOPE_CACHE_MIN=${STEPSCOPE_CACHE_MIN:-1T}

# gen CASE RANKS SCALE BINARY: the demo job of a case, generated once under $BENCH_DIR/CASE
gen() {
  local dir=$BENCH_DIR/$1
  if [ ! -f "$dir/.done-$2-$3" ]; then
    rm -rf "$dir"; mkdir -p "$dir"
    "$4" demo --out "$dir" --ranks "$2" --scale "$3" --plain
    touch "$dir/.done-$2-$3"
  fi
}

# measure CMD…: "WALL RSS_KB" of one run (wall seconds, peak RSS from /usr/bin/time);
# "nan 0" and a line on stderr when it fails
measure() {
  local f; f=$(mktemp)
  if /usr/bin/time -f "%e %M" -o "$f" "$@" >/dev/null 2>"$f.err"; then
    tail -1 "$f"
  else
    echo "FAILED: $* — $(grep -v '^Command exited' "$f.err" | tail -1)" >&2
    echo "nan 0"
  fi
  rm -f "$f" "$f.err"
}

# median: the median of the numbers on stdin, one per line
median() { sort -g | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

# machine THREADS RUNS: the line that heads a benchmark's table
machine() {
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB RAM; threads $1, $2 runs each, interleaved"
}

# gen_gz BIN: $BENCH_DIR/single-gz, the single rank compressed with `gzip -1` (made once)
gen_gz() {
  gen single 1 540 "$1"
  mkdir -p "$BENCH_DIR/single-gz"
  [ -f "$BENCH_DIR/single-gz/rank-0.pt.trace.json.gz" ] ||
    gzip -1 -c "$BENCH_DIR/single/rank-0.pt.trace.json" >"$BENCH_DIR/single-gz/rank-0.pt.trace.json.gz"
}

# gen_summaries RANKS BIN: $BENCH_DIR/sRANKS, the summaries (`stepscope summarize`) of the demo
# job at RANKS ranks (its gzip traces under $BENCH_DIR/tRANKS), made once
gen_summaries() {
  local traces=$BENCH_DIR/t$1 sums=$BENCH_DIR/s$1
  if [ ! -f "$sums/.done" ]; then
    rm -rf "$traces" "$sums"
    "$2" demo --out "$traces" --ranks "$1" >/dev/null
    "$2" summarize "$traces" --out "$sums" >/dev/null
    touch "$sums/.done"
  fi
}

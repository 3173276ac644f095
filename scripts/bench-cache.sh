#!/usr/bin/env bash
# The warm cache (docs/cache.md) side by side, interleaved, on the benchmark traces: the
# previous release (A, no cache) against this one (B) read cold without the cache
# (--no-cache), cold writing its cache entries (cache emptied before each run), and warm
# (entries there). Whole `report --format json` processes: wall, the report's own load time
# (load_ns), peak RSS; and `wc -l` of the same files in the same run.
#
#   scripts/bench-cache.sh OLD_BINARY NEW_BINARY
#   RUNS=5 CASES="single r64" THREADS=2 scripts/bench-cache.sh old new
set -euo pipefail
A=$(realpath "$1"); B=$(realpath "$2")
BENCH_DIR=${BENCH_DIR:-/tmp/stepscope-bench}
THREADS=${THREADS:-2}
CASES=${CASES:-"single r64"}
RUNS=${RUNS:-5}
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT
export STEPSCOPE_CACHE_DIR=$CACHE STEPSCOPE_CACHE_MIN=1

source "$(dirname "$0")/bench-lib.sh"
# run LABEL CMD…: appends "wall rss load_s" of one run to the arrays named LABEL_w/_r/_l
run() {
  local label=$1; shift
  local out; out=$(mktemp)
  read -r w r < <(measure bash -c '"$@" > '"$out" _ "$@")
  local l; l=$(grep -o '"load_ns": *[0-9]*' "$out" | grep -o '[0-9]*$' | head -1)
  rm -f "$out"
  eval "${label}_w+=($w); ${label}_r+=($r); ${label}_l+=($(echo "${l:-0} / 1000000000" | bc -l))"
}

machine "$THREADS" "$RUNS"
echo
echo "| case | run | wall (s) | load (s) | peak RSS (MB) | wall / A |"
echo "|---|---|---:|---:|---:|---:|"
for c in $CASES; do
  case $c in
    single) gen single 1 540 "$B"; dir="$BENCH_DIR/single" ;;
    r64) gen r64 64 16 "$B"; dir="$BENCH_DIR/r64" ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  a_w=(); a_r=(); a_l=(); n_w=(); n_r=(); n_l=(); c_w=(); c_r=(); c_l=(); h_w=(); h_r=(); h_l=(); wc=()
  for _ in $(seq "$RUNS"); do
    run a "$A" --threads "$THREADS" report --format json "$dir"
    run n "$B" --threads "$THREADS" report --no-cache --format json "$dir"
    rm -rf "${CACHE:?}"/*
    run c "$B" --threads "$THREADS" report --format json "$dir"
    run h "$B" --threads "$THREADS" report --format json "$dir"
    read -r w _ < <(measure bash -c 'wc -l "$1"/*' _ "$dir"); wc+=("$w")
  done
  ma=$(printf '%s\n' "${a_w[@]}" | median)
  for k in a n c h; do
    eval 'w=$(printf "%s\n" "${'$k'_w[@]}" | median); r=$(printf "%s\n" "${'$k'_r[@]}" | median); l=$(printf "%s\n" "${'$k'_l[@]}" | median)'
    case $k in a) name="A: previous release";; n) name="B --no-cache";; c) name="B cold, writing the cache";; h) name="B warm (cache read)";; esac
    printf '| %s | %s | %.2f | %.2f | %.0f | %.3f |\n' "$c" "$name" "$w" "$l" "$(echo "$r / 1024" | bc -l)" "$(echo "$w / $ma" | bc -l)"
  done
  mw=$(printf '%s\n' "${wc[@]}" | median)
  printf '| %s | `wc -l` of the same files | %.2f | | | %.3f |\n' "$c" "$mw" "$(echo "$mw / $ma" | bc -l)"
  echo "| $c | cache entries | $(du -sb "$CACHE" | cut -f1 | awk '{printf "%.1f MB", $1/1e6}') of $(du -sb --apparent-size "$dir" | cut -f1 | awk '{printf "%.1f MB", $1/1e6}') traces | | | |"
done

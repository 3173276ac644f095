#!/usr/bin/env bash
# Interleaved wall times of `stepscope report --format json` on a noisy machine: each round
# runs every LABEL=BINARY=PATH once, in turn, so a slow stretch hits all of them alike;
# prints each label's median and its runs (ms).
#
#   scripts/interleave.sh 7 before=/tmp/old/stepscope=JOB after=target/release/stepscope=JOB
set -euo pipefail
# A cold read on every run (the warm cache, docs/cache.md, is measured by bench-cache.sh).
export STEPSCOPE_CACHE_MIN=${STEPSCOPE_CACHE_MIN:-1T}
rounds=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$rounds"); do
  for spec in "$@"; do
    IFS== read -r label bin path <<< "$spec"
    t0=$(date +%s%N)
    "$bin" report --format json "$path" > /dev/null 2>&1 || true
    echo "$label $(( ($(date +%s%N) - t0) / 1000000 ))" >> "$out"
  done
done
for label in $(cut -d' ' -f1 "$out" | sort -u); do
  runs=$(awk -v l="$label" '$1 == l {print $2}' "$out" | sort -n)
  n=$(echo "$runs" | wc -l)
  echo "$label: median $(echo "$runs" | sed -n "$(( (n + 1) / 2 ))p") ms ($(echo $runs))"
done

#!/usr/bin/env bash
# Writes every user-visible output of one stepscope binary into OUT_DIR: the text, JSON and
# markdown reports and the seven snapshot panes (two sizes, cluster and device level) of every
# trace job in ../shared/traces, of each trace file alone, and of the demo (with --rank/--step
# variants), plus the error line and exit code of each run. Two such folders, from the binary
# before and after a refactor, are compared with `diff -r` to show that nothing a user sees
# changed.   usage: scripts/behaviour-outputs.sh BINARY OUT_DIR
set -uo pipefail
BIN=$(realpath "$1"); OUT=$2
cd "$(dirname "$0")/.."
TRACES=$(realpath ../shared/traces)
mkdir -p "$OUT"

# Jobs: "name|args..." — a directory of rank files, one file, or the demo (no path).
jobs() {
  echo "demo|"
  find "$TRACES/hta" "$TRACES/ext" "$TRACES/torch-cpu" -name '*.json' -o -name '*.json.gz' |
    sort | while read -r f; do echo "file:${f#$TRACES/}|$f"; done
  find "$TRACES/hta" "$TRACES/ext" "$TRACES/torch-cpu" -type d | sort | while read -r d; do
    if ls "$d"/*.json "$d"/*.json.gz >/dev/null 2>&1; then echo "dir:${d#$TRACES/}|$d"; fi
  done
  # The project's own fixtures: good ones and every kind of bad input (errors and positions).
  for f in testdata/*.json testdata/*.json.gz; do echo "fixture:${f#testdata/}|$PWD/$f"; done
  for d in testdata/*/; do echo "fixture-dir:$(basename "$d")|$PWD/$d"; done
  # Inputs the loader refuses today (Ascend outputs, logs): the error must stay the same.
  echo "dir:ascend-level0|$TRACES/ascend"
  echo "dir:logs|$TRACES/logs"
}

# One line "name|path|args" (args in shell quoting) → OUT/<key>.out and .err (+ exit code).
run_one() {
  local name path args key
  IFS='|' read -r name path args <<<"$1"
  key=$(echo "$name $args" | tr '/ :<>' '_____' | tr -cd 'A-Za-z0-9_.=+-')
  eval "set -- $args"
  # Timings differ run to run: masked so that `diff -r` shows only real differences.
  # shellcheck disable=SC2086
  "$BIN" "$@" $path 2>"$OUT/$key.err" |
    sed -E 's/(timings: ).*/\1…/; s/("(load|analysis)_ns": )[0-9]+/\1…/' >"$OUT/$key.out"
  echo "exit ${PIPESTATUS[0]}" >>"$OUT/$key.err"
}
export -f run_one; export BIN OUT

commands() {
  jobs | while IFS='|' read -r name path; do
    for f in text json md; do echo "$name|$path|report --format $f"; done
    for v in overview timeline critical roofline advisor operator comm; do
      echo "$name|$path|snapshot --view $v --size 120x40"
      echo "$name|$path|snapshot --view $v --size 80x24"
    done
    for v in overview timeline operator; do echo "$name|$path|snapshot --view $v --rank 0"; done
  done
  # Scoped reports, drill-down and keys on the demo and a multi-rank real job.
  for args in "report --rank 3" "report --step 13" "report --rank 5 --step 13 --format json" \
      "report --format md --step 13" "report --fail-on high" "snapshot --view operator --rank 5 --op aten::mm" \
      "snapshot --view timeline --keys '+>>n'" "snapshot --view advisor --keys 'j<enter>'" \
      "snapshot --view critical --keys 'jj<enter>'" "snapshot --view overview --ascii" \
      "report --align none --format json" "report --window fwd:1"; do
    echo "demo||$args"
  done
  local d4="$TRACES/torch-cpu/clean4"
  for args in "report --rank 1" "report --step 4 --format json" "snapshot --view comm --rank 2" \
      "report --align none"; do
    echo "clean4|$d4|$args"
  done
}

commands | tr '\n' '\0' | xargs -0 -P "${JOBS:-2}" -I{} bash -c 'run_one "$1"' _ {}
echo "$(ls "$OUT" | wc -l) files in $OUT"

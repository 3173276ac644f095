#!/usr/bin/env bash
# Coverage-guided fuzzing of one reader or face (docs/testing.md, "Fuzzing").
#   scripts/fuzz.sh TARGET SECONDS [JOBS]   run TARGET for SECONDS (JOBS processes, default 1)
#   scripts/fuzz.sh list                    the targets
#   scripts/fuzz.sh pack TARGET             shrink TARGET's corpus (cmin) and pack it for git
# Needs cargo-fuzz and the nightly toolchain (or stable with RUSTC_BOOTSTRAP=1, used when there
# is no nightly) (`cargo install cargo-fuzz`). The corpus is kept
# packed in fuzz/corpus/TARGET.tar.xz (committed) and unpacked into fuzz/corpus/TARGET to
# run, where scripts/fuzz-seeds.py adds the seeds (testdata/ and ../shared/traces); crashes
# land in fuzz/artifacts/TARGET — copy each, once fixed, to testdata/fuzz/TARGET/ so that
# src/fuzz/tests.rs replays it. libFuzzer's summary (executions, coverage) goes to
# fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS="trace trace_serde gzip stream ascend_csv ascend_json ascend_db logs report snapshot nsys flight model_file"
if [ "${1:-}" = list ] || [ $# -lt 1 ]; then echo "$TARGETS"; exit 0; fi
# The nightly toolchain when there is one; else the stable one told to take nightly flags
# (RUSTC_BOOTSTRAP=1: how the 2026-11-29 runs were made on a machine with stable alone).
if cargo +nightly --version >/dev/null 2>&1; then CARGO=(cargo +nightly); else CARGO=(env RUSTC_BOOTSTRAP=1 cargo); fi
BUILD=("${CARGO[@]}" fuzz build -O -a -s none)
unpack() {
  if [ ! -d "fuzz/corpus/$1" ] && [ -f "fuzz/corpus/$1.tar.xz" ]; then
    tar -C fuzz/corpus -xJf "fuzz/corpus/$1.tar.xz"
  fi
}
if [ "$1" = pack ]; then
  t=$2
  unpack "$t"
  "${BUILD[@]}" "$t"
  "${CARGO[@]}" fuzz cmin -O -a -s none "$t" "fuzz/corpus/$t" -- -max_len=262144 -rss_limit_mb=4096
  tar -C fuzz/corpus -cf - "$t" | xz -9 -T2 > "fuzz/corpus/$t.tar.xz"
  echo "fuzz/corpus/$t.tar.xz: $(ls "fuzz/corpus/$t" | wc -l) files, $(du -h "fuzz/corpus/$t.tar.xz" | cut -f1)"
  exit 0
fi
t=$1; secs=$2; jobs=${3:-1}
case " $TARGETS " in *" $t "*) ;; *) echo "no target $t (targets: $TARGETS)" >&2; exit 2;; esac
corpus="fuzz/corpus/$t"
unpack "$t"
mkdir -p "$corpus" fuzz/logs "fuzz/artifacts/$t"
python3 scripts/fuzz-seeds.py "$t" "$corpus"
"${BUILD[@]}" "$t"
# Long inputs are whole traces and logs; the timeout and RSS cap turn a hang or runaway
# memory into a finding.
args=(-max_total_time="$secs" -max_len=262144 -timeout=20 -rss_limit_mb=4096
      -dict=fuzz/dict/json.dict -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/")
if [ "$jobs" -gt 1 ]; then args+=(-jobs="$jobs" -workers="$jobs"); fi
log="fuzz/logs/$t.log"
set +e
"${CARGO[@]}" fuzz run -O -a -s none "$t" "$corpus" -- "${args[@]}" > "$log.full" 2>&1
rc=$?
set -e
grep -E "^(#[0-9]+\s+(DONE|INITED)|stat::|==[0-9]+== ERROR|SUMMARY|Done [0-9]+ runs)" "$log.full" > "$log" || true
tail -n 3 "$log"
echo "exit $rc; corpus $(ls "$corpus" | wc -l) files; artifacts $(ls "fuzz/artifacts/$t" | wc -l)"
exit $rc

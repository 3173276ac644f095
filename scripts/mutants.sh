#!/usr/bin/env bash
# Mutation testing (cargo-mutants) of the core analysis files, one group at a time: each group
# fits about an hour on a 2-core machine. The tests run are the library's unit tests, the
# hand-computed fixture tests of the analyses (stages, fixtures, advisor, comm_fixtures,
# critical_path) and the real communication traces; the TUI, tmux, progress, bad-input and
# all-traces invariant tests add a minute per mutant and test no analysis arithmetic.
#
#   scripts/mutants.sh GROUP         steps | comm | cluster | critical | advisor
#   scripts/mutants.sh list          the groups and their files
#   JOBS=2 scripts/mutants.sh comm   two builds at once (needs ~2× the memory)
#   ITERATE=1 scripts/mutants.sh steps   only the mutants the last run of the group missed
#                                    (after adding tests: confirms they are now caught)
#
# Results: target/mutants/GROUP/mutants.out/{caught,missed,timeout,unviable}.txt; the table
# in docs/testing.md is `python3 scripts/mutants-table.py`. Needs `cargo install cargo-mutants`.
set -euo pipefail
cd "$(dirname "$0")/.."

group_files() {
  case $1 in
    steps) echo crates/core/src/analysis/intervals.rs crates/core/src/analysis/steps.rs crates/core/src/analysis/step_times.rs crates/core/src/analysis/breakdown.rs ;;
    comm) echo crates/core/src/analysis/comm/matching.rs crates/core/src/analysis/comm/timing.rs crates/core/src/analysis/comm/align.rs ;;
    cluster) echo crates/core/src/analysis/cluster/mod.rs crates/core/src/analysis/cluster/slow_steps.rs crates/core/src/analysis/cluster/stragglers.rs crates/core/src/analysis/cluster/stages.rs ;;
    critical) echo crates/core/src/analysis/critical_path/*.rs ;;
    advisor) echo crates/core/src/analysis/advisor/mod.rs crates/core/src/analysis/advisor/draft.rs crates/core/src/analysis/advisor/rules/{parallel,communication,host,compute,mod}.rs ;;
    *) echo "unknown group: $1 (steps, comm, cluster, critical, advisor)" >&2; exit 2 ;;
  esac
}

if [ "${1:-}" = list ] || [ -z "${1:-}" ]; then
  for g in steps comm cluster critical advisor; do echo "$g: $(group_files $g)"; done
  exit 0
fi
command -v cargo-mutants >/dev/null || { echo "needs cargo-mutants: cargo install cargo-mutants" >&2; exit 2; }

g=$1
args=()
for f in $(group_files "$g"); do args+=(--file "$f"); done
# The analyses' test binary (stages, fixtures, advisor, comm_fixtures, critical_path,
# real_comm are modules of it) and the readers' fixtures in the inputs binary.
tests=(--lib --test analyses --test inputs)
# The real-trace tests must run (they fail, not skip, under CI=true); cargo-mutants builds a
# copy of the tree elsewhere, so the shared folder is named by path.
[ "${ITERATE:-0}" = 1 ] || rm -rf "target/mutants/$g"
mkdir -p "target/mutants/$g"
export STEPSCOPE_SHARED=${STEPSCOPE_SHARED:-$(realpath ../shared)}
[ "${ITERATE:-0}" = 1 ] && args+=(--iterate)
# The mutated files are the core crate's; the tests that catch them are both crates'.
CI=true cargo mutants "${args[@]}" --test-workspace=true --jobs "${JOBS:-1}" --output "target/mutants/$g" \
  --timeout-multiplier 3 -- "${tests[@]}" || true
out=target/mutants/$g/mutants.out
for k in caught missed timeout unviable; do
  printf '%-9s %s\n' "$k" "$(cat "$out/$k.txt" 2>/dev/null | wc -l)"
done

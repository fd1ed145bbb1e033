#!/usr/bin/env bash
# The hot paths as benchmarks with thresholds (Benchmarks/README.md, "Benchmarks with thresholds"):
# decode, insert, the analysis (whole and in partitions) and the JSON and HTML report of a
# simulated fleet, as the ordo-one/benchmark benchmarks of Benchmarks/ArrivalBenchmarks, against
# the thresholds in Benchmarks/Thresholds.
#
#   Scripts/benchmarks.sh [ARGS…]           run them and print every metric (nothing is checked)
#   Scripts/benchmarks.sh --check [ARGS…]   run them and check the thresholds (.ci/run): exits 1 when a
#                                           benchmark allocates more than its threshold allows; fewer is
#                                           reported, not failed (--update keeps it). Times and peak
#                                           memory are printed, never checked: they are the machine's.
#   Scripts/benchmarks.sh --update [ARGS…]  run them and write their p90s as the new thresholds (commit
#                                           Benchmarks/Thresholds after an intended change)
#
# ARGS go to `swift package benchmark` (e.g. --filter Decode). The benchmark target and the ordo-one
# package exist only with ARRIVAL_BENCHMARKS set (Package.swift), which this script sets; the
# benchmarks build in release mode, in .build like everything else.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=run
case "${1:-}" in
--check | --update)
    mode="${1#--}"
    shift
    ;;
esac

export ARRIVAL_BENCHMARKS=1
# Dictionaries iterate in one order on every run, so that what the report allocates is the same.
export SWIFT_DETERMINISTIC_HASHING=1
# The fleet is simulated once per run, not once per benchmark (Benchmarks/ArrivalBenchmarks/Pipeline.swift).
ARRIVAL_BENCHMARK_FLEET="$(mktemp -d)"
export ARRIVAL_BENCHMARK_FLEET
log="$(mktemp)"
trap 'rm -rf "$ARRIVAL_BENCHMARK_FLEET" "$log"' EXIT
thresholds="$PWD/Benchmarks/Thresholds"

# ARRIVAL_SCRATCH_PATH: SwiftPM's build folder (default .build); .ci/run gives one of its own so that
# the benchmarks build beside the tests, which hold .build.
scratch="${ARRIVAL_SCRATCH_PATH:-.build}"
started=$(date +%s)
# Built first, with its log kept: a compiler warning in the benchmarks fails as one in the rest of the project does.
mkdir -p "$scratch"
if ! swift build --scratch-path "$scratch" -c release --product ArrivalBenchmarks >"$scratch/benchmarks-build.log" 2>&1
then
    cat "$scratch/benchmarks-build.log"
    exit 1
fi
grep -v '^\[' "$scratch/benchmarks-build.log" || true
Scripts/check-warnings.sh "$scratch/benchmarks-build.log"
built=$(date +%s)

status=0
case "$mode" in
run)
    swift package --scratch-path "$scratch" benchmark --no-progress "$@" || status=$?
    ;;
update)
    swift package --scratch-path "$scratch" --allow-writing-to-package-directory benchmark thresholds update \
        --path "$thresholds" --no-progress "$@" || status=$?
    ;;
check)
    set +e
    swift package --scratch-path "$scratch" benchmark thresholds check --path "$thresholds" --no-progress "$@" 2>&1 |
        tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    ;;
esac
if [ "$mode" = update ]; then
    # Only what the code alone decides is recorded: allocations. ordo-one writes the times and the peak
    # memory too, which would then be checked against one machine's pace and its allocator's and
    # threads' timing (they are printed by every run, never checked).
    for file in "$thresholds"/*.p90.json; do
        python3 - "$file" <<'EOF'
import json, sys
path = sys.argv[1]
kept = {k: v for k, v in json.load(open(path)).items() if k == "mallocCountTotal"}
open(path, "w").write(json.dumps(kept, indent=2, sort_keys=True).replace('": ', '" : ') + "\n")
EOF
    done
fi
echo "benchmarks: built in $((built - started)) s, ran in $(($(date +%s) - built)) s"
if [ "$mode" = check ]; then
    if grep -q "is WORSE than the defined thresholds" "$log"; then
        echo "benchmarks: a regression beyond the thresholds of Benchmarks/Thresholds (above; exit $status)." >&2
        exit 1
    elif ! grep -q "is EQUAL to the defined thresholds\|is BETTER than the defined thresholds" "$log" ||
        { [ "$status" -ne 0 ] && ! grep -q "is BETTER than the defined thresholds" "$log"; }; then
        echo "benchmarks: the threshold check did not run to its end (exit $status)." >&2
        exit 1
    fi
    if grep -q "is BETTER than the defined thresholds" "$log"; then
        # A gain is not a failure (a faster or leaner machine must not turn CI red); it is said, so that
        # the thresholds can be tightened on purpose.
        echo "benchmarks: no regression; some metrics are better than Benchmarks/Thresholds records (above):" \
            "to keep the gain, run Scripts/benchmarks.sh --update and commit Benchmarks/Thresholds."
    else
        echo "benchmarks: every metric within its threshold"
    fi
    exit 0
fi
exit "$status"

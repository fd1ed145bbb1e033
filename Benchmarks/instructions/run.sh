#!/usr/bin/env bash
# The CPU work of arrival's hot paths as instructions retired, counted by valgrind's callgrind (issue 51): a
# count that a shared or busy machine does not change, unlike a time. Three measurements, each a whole
# `arrival` process on inputs made here, deterministically:
#
#   large_file_ingest  `arrival ingest` of one sender file of 20,000 `apns` lines in one gzip stream
#                      (Benchmarks/large-file/generate.py 20000, seed 42): the path one big file takes
#                      (inflate, line split, JSON scan, admission, keys, SQLite insert) into a new store
#   fleet_ingest       `arrival ingest` of a simulated fleet's tree (`arrival simulate --activities 600
#                      --seed 42`: many small device files and hourly sender batches) into a new store
#   report_json        `arrival report --format json` over that fleet's store
#
# Usage:
#   Benchmarks/instructions/run.sh BINARY             print the counts beside the recorded ones
#   Benchmarks/instructions/run.sh --check BINARY     …and exit 1 when a count is more than 5 % above its
#                                                     recorded one (.ci/run); one more than 5 % below is
#                                                     reported (re-record it to keep the gain)
#   Benchmarks/instructions/run.sh --record BINARY    write the counts as the new record
#                                                     (Benchmarks/Thresholds/instructions.json)
#
# BINARY: a release build of arrival, as Scripts/build-release.sh makes it (static Swift runtime); the
# record is of that build, on x86-64 (valgrind reports the same CPU features to the program everywhere).
# The binary is copied without debug info first (valgrind 3.19 cannot read Swift 6.3's DWARF). Dictionaries
# iterate in one order (SWIFT_DETERMINISTIC_HASHING=1), and each measurement stays well within the 10 s after
# which a first load commits and begins anew, so the same binary gives the same counts run after run.
# Needs valgrind and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
record=$root/Benchmarks/Thresholds/instructions.json
mode=show
case "${1:-}" in
--check | --record)
    mode=${1#--}
    shift
    ;;
esac
[ $# -eq 1 ] || { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/arrival" "$1"
export SWIFT_DETERMINISTIC_HASHING=1

python3 "$root/Benchmarks/large-file/generate.py" 20000 "$work/large.jsonl.gz" --seed 42 >/dev/null
"$work/arrival" simulate --out "$work/fleet" --activities 600 --seed 42 >/dev/null
"$work/arrival" ingest "$work/fleet" --db "$work/report.sqlite" --quiet

# Instructions the command's whole process retired (every thread), as callgrind totals them.
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null \
        | awk '/Collected :/ {print $NF}'
}
: >"$work/counts"
rm -f "$work/i.sqlite"*
echo "large_file_ingest $(count "$work/arrival" ingest "$work/large.jsonl.gz" --db "$work/i.sqlite" --quiet)" \
    >>"$work/counts"
rm -f "$work/i.sqlite"*
echo "fleet_ingest $(count "$work/arrival" ingest "$work/fleet" --db "$work/i.sqlite" --quiet)" >>"$work/counts"
echo "report_json $(count "$work/arrival" report --db "$work/report.sqlite" --format json --out "$work/r.json")" \
    >>"$work/counts"

python3 - "$mode" "$record" "$work/counts" "$("$work/arrival" --version)" <<'PY'
import json, sys
mode, path, counts_path, version = sys.argv[1:]
counts = {}
for line in open(counts_path):
    name, value = line.split()
    if not value.isdigit():
        sys.exit(f"instructions: {name}: valgrind gave no count")
    counts[name] = int(value)
if mode == "record":
    with open(path, "w") as f:
        json.dump({"arrival": version, "instructions": counts}, f, indent=2, sort_keys=True)
        f.write("\n")
    for name, value in counts.items():
        print(f"instructions: {name} {value:,} recorded")
    sys.exit(0)
recorded = json.load(open(path))["instructions"]
failed = False
print(f"{'measurement':<18} {'recorded':>16} {'now':>16} {'change':>8}")
for name, value in counts.items():
    base = recorded.get(name)
    if base is None:
        print(f"{name:<18} {'-':>16} {value:>16,} (no record: run --record)")
        failed = failed or mode == "check"
        continue
    change = value / base - 1
    verdict = ""
    if change > 0.05:
        verdict = "  more than 5 % above the record: FAIL"
        failed = failed or mode == "check"
    elif change < -0.05:
        verdict = "  more than 5 % below the record: re-record it (--record) to keep the gain"
    print(f"{name:<18} {base:>16,} {value:>16,} {change:>+8.2%}{verdict}")
if failed:
    print("instructions: a hot path does more work than recorded; find why (Benchmarks/compare-builds), or, "
          "for an intended change, re-record with Benchmarks/instructions/run.sh --record BINARY and say why in "
          "the commit", file=sys.stderr)
    sys.exit(1)
print("instructions: within 5 % of the record" if mode == "check" else "instructions: counted")
PY

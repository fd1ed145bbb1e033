#!/usr/bin/env bash
# Every output a user sees, on SampleData/ and four simulated fleets, against
# the files recorded in Tests/Golden/: reports (JSON, markdown, HTML, whole
# store, one day, a window, a 7-day trend), diff (text, markdown, JSON,
# --records), gate (text, JSON, JUnit) and the ingest summary.
# A refactoring must leave every byte as it was.
#
# Usage: Scripts/golden.sh [path/to/arrival]            check (run by .ci/run)
#        Scripts/golden.sh --record [path/to/arrival]   re-record on purpose
set -uo pipefail
cd "$(dirname "$0")/.."
record=0
if [ "${1:-}" = "--record" ]; then
    record=1
    shift
fi
arrival="$(realpath "${1:-.build/debug/arrival}")"
golden="$PWD/Tests/Golden"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out"

# run NAME COMMAND...: stdout to NAME, stderr to NAME.err, exit code to NAME.exit.
run() {
    local name="$1"
    shift
    (cd "$work" && "$@" >"$out/$name" 2>"$out/$name.err")
    echo $? >"$out/$name.exit"
}

# The fleets: small, each with a different seed and mix of faults.
"$arrival" simulate --out "$work/fleet-a" --activities 300 --seed 101 >/dev/null
"$arrival" simulate --out "$work/fleet-b" --activities 500 --seed 202 --inject stale-timestamps >/dev/null
"$arrival" simulate --out "$work/fleet-c" --activities 400 --seed 303 --inject large-payloads --inject lost-callbacks >/dev/null
# Contract 3.0's device story: dismissals, device ends, token rotations, push-to-start, dead tokens.
"$arrival" simulate --out "$work/fleet-d" --activities 400 --seed 404 --lifecycle --providers >/dev/null
cp -R SampleData "$work/sample"

for side in sample fleet-a fleet-b fleet-c fleet-d; do
    db="$side.sqlite"
    run "$side.ingest" "$arrival" ingest "$side" --db "$db" --quiet
    run "$side.report.json" "$arrival" report --db "$db" --format json
    run "$side.report.md" "$arrival" report --db "$db" --format markdown
    run "$side.day.json" "$arrival" report --db "$db" --day 2026-11-21 --format json
    run "$side.day.html" "$arrival" report --db "$db" --day 2026-11-21 --format html
    run "$side.trend.html" "$arrival" report --db "$db" --day 2026-11-21 --days 7 --format html
    run "$side.window.md" "$arrival" report --db "$db" --from 2026-11-21T06:00:00Z --to 2026-11-21T18:00:00Z --format markdown
done
run demo.md "$arrival" demo --data sample
run demo.json "$arrival" demo --data sample --format json
for pair in "fleet-a fleet-b" "fleet-a fleet-c" "sample fleet-a" "fleet-a fleet-d"; do
    set -- $pair
    run "diff.$1.$2.txt" "$arrival" diff "$1" "$2"
    run "diff.$1.$2.md" "$arrival" diff "$1" "$2" --format markdown
    run "diff.$1.$2.json" "$arrival" diff "$1.sqlite" "$2.sqlite" --format json
    run "diff.$1.$2.records.txt" "$arrival" diff "$1" "$2" --records
    run "gate.$1.$2.txt" "$arrival" gate --baseline "$1.sqlite" --current "$2.sqlite" --config "$OLDPWD/gate.yml" --junit "$out/gate.$1.$2.junit.xml"
    run "gate.$1.$2.json" "$arrival" gate --baseline "$1.sqlite" --current "$2.sqlite" --config "$OLDPWD/gate.yml" --format json
done
# Paths of the temporary folder and the time of the run are not part of the output.
sed -i -E -e "s|$work|WORK|g" \
    -e 's/Generated [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}Z/Generated NOW/' \
    -e 's/timestamp="[0-9T:-]{19}"/timestamp="NOW"/' "$out"/*

if [ "$record" = 1 ]; then
    rm -rf "$golden"
    mkdir -p "$golden"
    cp "$out"/* "$golden/"
    echo "recorded $(ls "$golden" | wc -l) golden files in Tests/Golden"
    exit 0
fi
failures=0
checked=0
for expected in "$golden"/*; do
    name="$(basename "$expected")"
    checked=$((checked + 1))
    if ! cmp -s "$expected" "$out/$name"; then
        echo "FAIL  $name differs from Tests/Golden/$name"
        diff "$expected" "$out/$name" | head -10 | sed 's/^/      /'
        failures=$((failures + 1))
    fi
done
for produced in "$out"/*; do
    name="$(basename "$produced")"
    [ -e "$golden/$name" ] || { echo "FAIL  $name is produced but not in Tests/Golden"; failures=$((failures + 1)); }
done
echo "golden: $((checked - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]

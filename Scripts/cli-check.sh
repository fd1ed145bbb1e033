#!/usr/bin/env bash
# Runs the built `arrival` binary and checks its exit codes and messages:
# 0 success, 1 a failed run or gate, 2 bad usage or unreadable input.
# (Tests/ArrivalCommandLineTests/ExitCodeTests.swift checks
# every subcommand the same way from Swift.)
# Usage: Scripts/cli-check.sh [path/to/arrival]   (run by .ci/run)
set -uo pipefail
cd "$(dirname "$0")/.."
arrival="${1:-.build/debug/arrival}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

# expect CODE DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit code.
expect() {
    local code="$1" what="$2"
    shift 3
    "$@" >"$work/out" 2>"$work/err"
    local got=$?
    if [ "$got" -eq "$code" ]; then
        echo "ok    $what (exit $got)"
    else
        echo "FAIL  $what: expected exit $code, got $got"
        sed 's/^/      /' "$work/err" | head -5
        failures=$((failures + 1))
    fi
}

# expect_text PATTERN FILE DESCRIPTION: the last command's output says PATTERN.
expect_text() {
    if grep -q -- "$1" "$work/$2"; then
        echo "ok    $3"
    else
        echo "FAIL  $3: '$1' not in $2"
        failures=$((failures + 1))
    fi
}

"$arrival" simulate --out "$work/before" --activities 150 --seed 11 >/dev/null
"$arrival" simulate --out "$work/after" --activities 150 --seed 11 --inject large-payloads >/dev/null
"$arrival" simulate --out "$work/noise" --activities 150 --seed 21 >/dev/null

expect 0 "diff of a batch with itself" -- "$arrival" diff "$work/before" "$work/before" --records
expect_text "0 answered differently, 0 only in A, 0 only in B" out "self-diff lists no record changes"
expect 0 "diff as json" -- "$arrival" diff "$work/before" "$work/after" --format json
expect_text '"schema": "arrival.diff/1"' out "diff json names its schema"
expect 1 "gate fails on injected large payloads" -- "$arrival" gate --baseline "$work/before" --current "$work/after" --junit "$work/junit.xml"
expect_text "FAIL     requests.oversize_share" out "gate names the failed rule"
[ -s "$work/junit.xml" ] && echo "ok    --junit wrote a file" || { echo "FAIL  --junit wrote nothing"; failures=$((failures + 1)); }
expect 0 "gate passes on noise" -- "$arrival" gate --baseline "$work/before" --current "$work/noise"
GITHUB_STEP_SUMMARY="$work/summary.md" expect 1 "gate --github" -- "$arrival" gate --baseline "$work/before" --current "$work/after" --github
expect_text "::error title=arrival gate%3A requests.oversize_share" out "--github prints an error annotation"
[ -s "$work/summary.md" ] && echo "ok    --github wrote the step summary" || { echo "FAIL  no step summary"; failures=$((failures + 1)); }
expect 2 "gate with a missing baseline" -- "$arrival" gate --baseline "$work/nowhere" --current "$work/after"
expect_text "does not exist" err "missing baseline is named"
printf 'garbage\n' >"$work/corrupt.jsonl"
expect 2 "gate with a corrupt baseline" -- "$arrival" gate --baseline "$work/corrupt.jsonl" --current "$work/after"
expect_text "no valid apns record" err "corrupt baseline is explained"
printf '{\n  "schema": "arrival.report/1"\n' >"$work/cut.json"
expect 2 "gate with a cut report JSON" -- "$arrival" gate --baseline "$work/cut.json" --current "$work/after"
expect 2 "gate with a bad rule" -- "$arrival" gate --current "$work/after" --rule "updates.arrival_rate > 0.9"
expect 2 "gate with an unknown option" -- "$arrival" gate --current "$work/after" --no-such-flag
expect 2 "gate whose rules passed but --junit cannot be written" -- "$arrival" gate --baseline "$work/before" --current "$work/noise" --junit "$work/no/dir/junit.xml"
expect_text "cannot write" err "unwritable --junit is named"
expect 2 "gate with a rate rule written as a percentage" -- "$arrival" gate --current "$work/after" --rule "updates.arrival_rate >= 90"
expect_text "rates are fractions: write 0.9 for 90%" err "rate rule out of 0–1 says how to write it"
expect 2 "gate with a regression rule and no baseline" -- "$arrival" gate --current "$work/after" --config gate.yml
expect_text "no --baseline was given" err "missing baseline for regression rules is explained"
expect 1 "gate --allow-no-baseline checks the floors" -- "$arrival" gate --current "$work/after" --config gate.yml --allow-no-baseline
expect_text "not checked: a regression rule needs --baseline" out "skipped regression rules are listed"
expect 2 "report with a bad day" -- "$arrival" report --day 2026-13-01
expect 1 "report without a store" -- "$arrival" report --db "$work/none.sqlite"
expect_text "no store at" err "missing store says to ingest first"
[ ! -e "$work/none.sqlite" ] && echo "ok    report created no store" || { echo "FAIL  report created $work/none.sqlite"; failures=$((failures + 1)); }
mkdir -p "$work/empty"
expect 0 "ingest of an empty directory" -- "$arrival" ingest "$work/empty" --db "$work/empty.sqlite"
expect_text "no input files found under" err "empty ingest warns"
expect 1 "ingest --require-data of an empty directory" -- "$arrival" ingest "$work/empty" --db "$work/empty.sqlite" --require-data
expect 1 "ingest into a missing directory" -- "$arrival" ingest "$work/before" --db "$work/no/dir/s.sqlite"
expect_text "does not exist" err "missing --db directory is named"
expect 0 "ingest" -- "$arrival" ingest "$work/before" --db "$work/store.sqlite" --quiet
expect 1 "ingest --strict stops at a malformed line" -- "$arrival" ingest "$work/corrupt.jsonl" --db "$work/store.sqlite" --strict
expect 0 "gate against a store and a report JSON" -- "$arrival" gate --baseline "$work/store.sqlite" --current "$work/noise" --format json
"$arrival" report --db "$work/store.sqlite" --format json --out "$work/report.json"
expect 0 "diff of a store with its own report JSON" -- "$arrival" diff "$work/store.sqlite" "$work/report.json"
# A file ingested by mistake, listed and taken back out: the report is as before.
printf '# Notes\nnot a record\n' >"$work/README.md"
expect 0 "ingest of a file with no record" -- "$arrival" ingest "$work/README.md" --db "$work/store.sqlite" --quiet
expect_text "found no valid record (2 malformed lines)" err "a file without a record is warned about"
expect 0 "files list" -- "$arrival" files list --db "$work/store.sqlite" --match README
expect_text "README.md" out "files list names the mistaken file"
expect 0 "files list as json" -- "$arrival" files list --db "$work/store.sqlite" --format json
expect_text '"status": "ingested"' out "files list json lists ingested files"
expect 2 "files remove without --yes off a terminal" -- "$arrival" files remove "$work/README.md" --db "$work/store.sqlite" </dev/null
expect_text "Pass --yes" err "files remove says to pass --yes or --dry-run"
expect 0 "files remove --dry-run" -- "$arrival" files remove "$work/README.md" --db "$work/store.sqlite" --dry-run
expect_text "Dry run: nothing removed" out "files remove --dry-run removes nothing"
expect 0 "files remove --yes" -- "$arrival" files remove "$work/README.md" --db "$work/store.sqlite" --yes
expect_text "Removed 1 file: 0 records" out "files remove --yes says what it removed"
expect 2 "files remove of a file no longer ingested" -- "$arrival" files remove "$work/README.md" --db "$work/store.sqlite" --yes
"$arrival" report --db "$work/store.sqlite" --format json --out "$work/report-after.json"
cmp -s "$work/report.json" "$work/report-after.json" && echo "ok    report after files remove equals the report before the mistake" \
    || { echo "FAIL  report changed by ingesting and removing a file"; failures=$((failures + 1)); }
expect 0 "report on a day without data" -- "$arrival" report --db "$work/store.sqlite" --day 2026-11-20
expect_text "the store has no requests in 2026-11-20; it holds 2026-11-21" err "empty day says where the data is"
expect 1 "report --require-data on a day without data" -- "$arrival" report --db "$work/store.sqlite" --day 2026-11-20 --require-data
: >"$work/zero.sqlite"
expect 1 "report on an empty file" -- "$arrival" report --db "$work/zero.sqlite"
[ ! -s "$work/zero.sqlite" ] && echo "ok    report left the empty file empty" || { echo "FAIL  report wrote into an empty file"; failures=$((failures + 1)); }
expect 1 "report in partitions with TMPDIR not a directory" -- env TMPDIR="$work/zero.sqlite" ARRIVAL_PARTITION_ROWS=50 "$arrival" report --db "$work/store.sqlite" --format json
expect_text "set TMPDIR to a writable directory" err "the analysis' temporary directory is named"
ARRIVAL_PARTITION_ROWS=50 "$arrival" report --db "$work/store.sqlite" --format json --out "$work/report-partitions.json"
cmp -s "$work/report-after.json" "$work/report-partitions.json" && echo "ok    a report in partitions of 50 requests equals the whole one" \
    || { echo "FAIL  a report in partitions differs from the whole one"; failures=$((failures + 1)); }
expect 0 "demo --format html" -- "$arrival" demo --format html
expect_text "<!DOCTYPE html>" out "demo prints the HTML page"
expect 2 "demo --format with a format it cannot make" -- "$arrival" demo --format pdf
expect 2 "check-payload of a directory" -- "$arrival" check-payload "$work"
expect_text "is a directory" err "a directory is named as one"
expect 0 "--version" -- "$arrival" --version
"$arrival" report --db "$work/store.sqlite" --format json --out "$work/report.json"
expect 0 "diff of a store with its own report JSON" -- "$arrival" diff "$work/store.sqlite" "$work/report.json"

# tokens: the dead tokens of a store, in each format; usage errors are 2, a missing store 1.
expect 0 "tokens of a store" -- "$arrival" tokens --db "$work/store.sqlite"
expect_text "Dead tokens (all data)" out "tokens says what it lists"
expect 0 "tokens as csv for a day" -- "$arrival" tokens --db "$work/store.sqlite" --day 2026-11-21 --format csv
expect_text "^push_token,app,provider,died_at,reason,requests_after,last_sent_at" out "tokens csv has its header"
expect 2 "tokens with --day and --from" -- "$arrival" tokens --db "$work/store.sqlite" --day 2026-11-21 --from 2026-11-21T00:00:00Z --to 2026-11-22T00:00:00Z
expect 2 "tokens with a format it cannot make" -- "$arrival" tokens --db "$work/store.sqlite" --format xml
expect 1 "tokens of a store that does not exist" -- "$arrival" tokens --db "$work/nowhere.sqlite"
expect_text "no store at" err "a missing store is named"

# prune: retention on a store; a --before that is no time is bad usage (2), a missing store 1.
cp "$work/store.sqlite" "$work/pruned.sqlite"
expect 0 "prune of a store" -- "$arrival" prune --db "$work/pruned.sqlite" --before 2026-11-21T12:00:00Z
expect_text "Kept .* earlier records that reports from then on still read" out "prune says what it kept"
expect_text "(vacuumed)" out "prune says it gave the space back"
expect 0 "prune as json, a day, no vacuum" -- "$arrival" prune --db "$work/pruned.sqlite" --before 2026-11-22 --no-vacuum --format json
expect_text '"schema": "arrival.prune/1"' out "prune json names its schema"
expect 2 "prune with a --before that is no time" -- "$arrival" prune --db "$work/pruned.sqlite" --before yesterday
expect_text "--before 'yesterday' is not a time" err "a bad --before is named"
expect 2 "prune without --before" -- "$arrival" prune --db "$work/pruned.sqlite"
expect_text "Missing expected argument '--before" err "a missing --before is named"
expect 1 "prune of a store that does not exist" -- "$arrival" prune --db "$work/nowhere.sqlite" --before 2026-11-21
expect_text "no store at" err "prune names the missing store"
expect 2 "serve with --retain 0" -- "$arrival" serve --db "$work/pruned.sqlite" --retain 0
expect_text "--retain must be 1 to 36500 days" err "a bad --retain is named"

if [ "$failures" -gt 0 ]; then
    echo "$failures command-line check(s) failed"
    exit 1
fi
echo "all command-line checks passed"

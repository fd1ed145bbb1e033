#!/usr/bin/env bash
# Builds the HTML report of SampleData/, opens it in headless Chromium and
# fails if the page logs an error, fetches anything, or a chart has no size
# (Scripts/browser_test.py). Leaves report.html, report.png (first screen),
# report-full.png, throttling-card.png (the section "Is Apple throttling these updates?")
# and report.pdf in OUT_DIR (default: browser-test/, ignored by git); then the same for a
# simulated fleet with Apple's priority-10 budget in it, in OUT_DIR/budget/, and for the sample
# with Apple's example exports imported, in OUT_DIR/apple/ (apple-card.png: Apple's numbers).
#
#   Scripts/browser-test.sh [OUT_DIR] [--update-readme-screenshot]
#
# --update-readme-screenshot also writes Dashboards/sample-report.png, the
# picture the docs show, and Dashboards/sample-report.source-sha256, the hash of
# the page it was taken of (its "Generated …" time masked). Without it, the
# page made now must hash the same: a picture of an older report fails the run
# (issue 43), naming the command that makes it again. Needs chromium (Debian:
# apt-get install chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-browser-test}
mkdir -p "$out"
swift build --product arrival >/dev/null
bin=$(swift build --show-bin-path)/arrival
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" ingest SampleData/sender SampleData/devices --db "$work/sample.sqlite" --quiet
"$bin" report --db "$work/sample.sqlite" --day 2026-11-21 --format html --out "$out/report.html"
# The throttling section (contract 3.1) must be there, shown, its priority-10 buckets in their
# natural order (not sorted as strings); it gets a screenshot of its own, throttling-card.png.
python3 Scripts/browser_test.py "$out/report.html" "$out" --width 1280 --height 1700 \
    --section throttling-card --in-order "throttling-card:0-4,5-14"
# The same on a fleet with Apple's budget in it (`simulate --budget`, with channels, a lifecycle and
# providers): its priority-10 buckets up to 60-119, in that order, and the switch's split; the page
# and its throttling section are left in OUT_DIR/budget/ (throttling-card.png is the section).
mkdir -p "$out/budget"
"$bin" simulate --out "$work/budget-fleet" --activities 300 --seed 7 --budget --channels --lifecycle --providers \
    >/dev/null
"$bin" ingest "$work/budget-fleet" --db "$work/budget.sqlite" --quiet
"$bin" report --db "$work/budget.sqlite" --format html --out "$out/budget/report.html"
# The devices far below the fleet (contract 3.2): every one the JSON lists, in its order, on the page.
listed=$("$bin" report --db "$work/budget.sqlite" --format json |
    python3 -c 'import json, sys; print(",".join(d["device_id"] for d in json.load(sys.stdin)["outliers"]["devices"][:20]))')
[ -n "$listed" ] || { echo "browser-test: the budget fleet lists no device far below the fleet" >&2; exit 1; }
python3 Scripts/browser_test.py "$out/budget/report.html" "$out/budget" --width 1280 --height 1700 \
    --section throttling-card --in-order "throttling-card:0-4,5-14,15-29,30-59,60-119" \
    --section outliers-card --in-order "outliers-card:$listed"
# Apple's numbers beside arrival's (issue 54): the sample's day with the three example exports imported;
# the section is shown, its statuses and channel in order, and gets a screenshot (OUT_DIR/apple/apple-card.png).
mkdir -p "$out/apple"
cp "$work/sample.sqlite" "$work/apple.sqlite"
"$bin" apple import Documentation/examples/apple/*.csv --db "$work/apple.sqlite" >/dev/null
"$bin" report --db "$work/apple.sqlite" --day 2026-11-21 --format html --out "$out/apple/report.html"
python3 Scripts/browser_test.py "$out/apple/report.html" "$out/apple" --width 1280 --height 1700 \
    --section apple-card --in-order "apple-card:Received by APNs,Delivered to Device,dHN0LU1TQkw="
# The page without its moving parts: the time it was made, and where the checkout is (its file paths' root).
source_hash=$(sed -E -e 's/Generated [0-9-]+ [0-9:]+Z by/Generated … by/' -e "s|$PWD/|CHECKOUT/|g" "$out/report.html" |
    sha256sum | cut -d' ' -f1)
if [ "${2:-}" = "--update-readme-screenshot" ]; then
    cp "$out/report.png" Dashboards/sample-report.png
    echo "$source_hash" > Dashboards/sample-report.source-sha256
    echo "wrote Dashboards/sample-report.png ($(wc -c < Dashboards/sample-report.png) bytes), of the page $source_hash"
elif [ "$source_hash" != "$(cat Dashboards/sample-report.source-sha256 2>/dev/null)" ]; then
    echo "browser-test: Dashboards/sample-report.png is a picture of another page than the report of SampleData/" \
        "makes now ($source_hash): run Scripts/browser-test.sh browser-test --update-readme-screenshot and commit" \
        "the picture ($out/report.png is the new one)" >&2
    exit 1
else
    echo "browser-test: Dashboards/sample-report.png is a picture of today's report of SampleData/"
fi

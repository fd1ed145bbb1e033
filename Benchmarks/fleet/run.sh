#!/usr/bin/env bash
# The whole jobs of a day, timed on a simulated fleet with the release `arrival`; prints the median of
# RUNS runs and the peak RSS of each:
#   - ingest of the sender's 24 hourly gzip batches alone (apns records), with DuckDB's read_json_auto
#     load of the same files as a side-by-side reference;
#   - ingest of the whole day (apns + render beacons + callbacks);
#   - the JSON report over the whole store;
#   - the HTML report of the fleet's day with a 7-day trend.
#
#   Benchmarks/fleet/run.sh [ACTIVITIES] [RUNS]      (defaults: 200000 activities ≈ 2 M apns records, 3 runs)
#
# Needs: /usr/bin/time (Debian: time); for the reference, python3 with duckdb (pip install duckdb). The
# fleet is written once to bench-data/ (ignored by git). The stages one by one, with allocations, are
# the benchmarks of Scripts/benchmarks.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
activities=${1:-200000}
runs=${2:-3}
data=bench-data/fleet-$activities
swift build -c release --product arrival >/dev/null
arrival=.build/release/arrival
if [ ! -d "$data" ]; then
    "$arrival" simulate --out "$data" --activities "$activities" --seed 42 | head -2
fi
# The 24 complete hourly batches: DuckDB stops at the sample's deliberately cut gzip.
hourly=("$data"/sender/*/apns-[0-9][0-9].jsonl.gz)
day=$(basename "$(dirname "${hourly[0]}")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# Runs a command under /usr/bin/time; appends "<seconds> <peak RSS kB>" to the file named first.
timed() {
    local out=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
    cat "$work/time" >> "$out"
}
records() { python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(sum(c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in sys.argv[2:]))' "$@"; }

for run in $(seq "$runs"); do
    rm -f "$work"/*.sqlite*
    timed "$work/sender.txt" "$arrival" ingest --quiet --db "$work/sender.sqlite" "${hourly[@]}"
    timed "$work/all.txt" "$arrival" ingest --quiet --db "$work/all.sqlite" "$data"
    timed "$work/report.txt" "$arrival" report --db "$work/all.sqlite" --format json --out /dev/null
    timed "$work/html.txt" "$arrival" report --db "$work/all.sqlite" --day "$day" --days 7 --format html \
        --out "$work/report.html"
    if python3 -c "import duckdb" 2>/dev/null; then
        rm -f "$work/ref.duckdb"
        timed "$work/duckdb.txt" python3 - "$work/ref.duckdb" "${hourly[@]}" <<'PY'
import duckdb, sys
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE apns AS SELECT * FROM read_json_auto(?)", [sys.argv[2:]])
con.close()
PY
    fi
done

count() { case $1 in sender) records "$work/sender.sqlite" apns ;; all) records "$work/all.sqlite" apns render callback ;; *) echo "-" ;; esac; }
echo "fleet: $data ($(du -shL "$data" | cut -f1)), $runs runs, medians (wall time, peak RSS):"
for name in sender all duckdb report html; do
    [ -f "$work/$name.txt" ] || continue
    secs=$(cut -d' ' -f1 "$work/$name.txt" | median)
    rss=$(cut -d' ' -f2 "$work/$name.txt" | median)
    n=$(count "$name")
    rate=""
    [ "$n" != "-" ] && rate=" · $(python3 -c "print(int($n / $secs))") records/s ($n records)"
    [ "$name" = duckdb ] && rate=" · $(python3 -c "print(int($(count sender) / $secs))") records/s"
    echo "  $name: $secs s · peak RSS $((${rss%.*} / 1024)) MB$rate"
done
[ -f "$work/report.html" ] && echo "  html page: $(wc -c < "$work/report.html") bytes"

#!/usr/bin/env bash
# Benchmarks arrival on a generated fleet and prints the median of RUNS runs:
#   - ingest of the sender's 24 hourly gzip batches alone (apns records), with
#     DuckDB's read_json_auto load of the same files as a side-by-side reference;
#   - ingest of the whole day (apns + render beacons + callbacks);
#   - peak resident memory of each ingest;
#   - the JSON report over the whole store;
#   - the HTML report of the fleet's day with a 7-day trend (written next to the store as .html; its size is printed).
#
#   Scripts/benchmark.sh [ACTIVITIES] [RUNS]      (defaults: 200000 activities ≈ 2 M apns records, 3 runs)
#
# Needs: /usr/bin/time (Debian: time); for the reference, python3 with duckdb
# (pip install duckdb). The fleet is written once to bench-data/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
activities=${1:-200000}
runs=${2:-3}
data=bench-data/fleet-$activities
swift build -c release --product arrival >/dev/null
swift build -c release --product arrival-bench >/dev/null
bin=.build/release
if [ ! -d "$data" ]; then
    "$bin/arrival" simulate --out "$data" --activities "$activities" --seed 42 | head -2
fi
# The 24 complete hourly batches: DuckDB stops at the sample's deliberately cut gzip.
hourly=("$data"/sender/*/apns-[0-9][0-9].jsonl.gz)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# Runs a command under /usr/bin/time; prints "<the command's last line> | <peak RSS kB>".
timed() { /usr/bin/time -f "%M" -o "$work/rss" "$@" > "$work/out"; echo "$(tail -1 "$work/out") | $(cat "$work/rss")"; }

for run in $(seq "$runs"); do
    rm -f "$work"/*.sqlite*
    timed "$bin/arrival-bench" ingest "$work/sender.sqlite" "${hourly[@]}" >> "$work/sender.txt"
    timed "$bin/arrival-bench" ingest "$work/all.sqlite" "$data" >> "$work/all.txt"
    timed "$bin/arrival-bench" report "$work/all.sqlite" >> "$work/report.txt"
    timed "$bin/arrival-bench" html "$work/all.sqlite" "$(basename "$(dirname "${hourly[0]}")")" 7 >> "$work/html.txt"
    if python3 -c "import duckdb" 2>/dev/null; then
        rm -f "$work/ref.duckdb"
        timed python3 - "$work/ref.duckdb" "${hourly[@]}" <<'PY' >> "$work/duckdb.txt"
import duckdb, sys, time
con = duckdb.connect(sys.argv[1])
start = time.time()
con.execute("CREATE TABLE apns AS SELECT * FROM read_json_auto(?)", [sys.argv[2:]])
n = con.execute("SELECT count(*) FROM apns").fetchone()[0]
con.close()  # timed to the close, as arrival-bench times its store
seconds = time.time() - start
print(f"duckdb: {n} records, {seconds:.2f} s, {int(n / seconds)} records/s")
PY
    fi
done

echo "fleet: $data ($(du -shL "$data" | cut -f1)), $runs runs, medians:"
for name in sender all duckdb; do
    [ -f "$work/$name.txt" ] || continue
    rate=$(sed -E 's/.* ([0-9]+) records\/s.*/\1/' "$work/$name.txt" | median)
    secs=$(sed -E 's/.*, ([0-9.]+) s,.*/\1/' "$work/$name.txt" | median)
    rss=$(sed -E 's/.*\| ([0-9]+)$/\1/' "$work/$name.txt" | median)
    echo "  $name: $(head -1 "$work/$name.txt" | cut -d, -f1 | sed 's/^[a-z]*: //') · median $secs s · $rate records/s · peak RSS $((rss / 1024)) MB"
done
secs=$(sed -E 's/.*, ([0-9.]+) s.*/\1/' "$work/report.txt" | median)
echo "  report: $(head -1 "$work/report.txt" | cut -d, -f1,2 | sed 's/^report: //') · median $secs s · peak RSS $(( $(sed -E 's/.*\| ([0-9]+)$/\1/' "$work/report.txt" | median) / 1024 )) MB"
secs=$(sed -E 's/.*, ([0-9.]+) s.*/\1/' "$work/html.txt" | median)
echo "  html: $(head -1 "$work/html.txt" | cut -d, -f1-3 | sed 's/^html: //') · median $secs s · peak RSS $(( $(sed -E 's/.*\| ([0-9]+)$/\1/' "$work/html.txt" | median) / 1024 )) MB"

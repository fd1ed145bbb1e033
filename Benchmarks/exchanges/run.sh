#!/usr/bin/env bash
# Ingest speed of exchange lines against plain apns lines of the same requests.
#
#   Benchmarks/exchanges/run.sh [ACTIVITIES] [RUNS]      (defaults: 20000 3)
#
# Simulates a fleet, keeps its sender batches (plain `apns` lines, gzip), and
# rewrites them with Scripts/reference/exchangify.py twice: every line as an
# APNs exchange (the same requests: the derived records equal the plain ones),
# and every line as an exchange of one of the three providers. Then, RUNS
# times, interleaved, `arrival ingest` into a new store, for each of the three.
# Prints records/s per run and the median. Uses the release build. (Decoding
# alone, without a store, is the `Decode` benchmark of Scripts/benchmarks.sh,
# whose fleet holds exchanges of all three providers.)
set -euo pipefail
cd "$(dirname "$0")/../.."
activities=${1:-20000}
runs=${2:-3}
swift build -c release --product arrival >/dev/null
bin=.build/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/arrival" simulate --out "$work/fleet" --seed 5 --activities "$activities" >/dev/null
mkdir -p "$work/plain"
mv "$work/fleet/sender" "$work/plain/sender"
python3 Scripts/reference/exchangify.py "$work/plain" "$work/apns" --seed 5 --providers apns --keep 0 --damage 0 >/dev/null
python3 Scripts/reference/exchangify.py "$work/plain" "$work/mixed" --seed 5 --keep 0 --damage 0 >/dev/null
for set in plain apns mixed; do
    printf '%-6s %s uncompressed\n' "$set" \
        "$(find "$work/$set" -name '*.gz' -exec zcat {} + 2>/dev/null | wc -c | awk '{printf "%.0f MB", $1 / 1e6}')"
done
declare -A ingest
for run in $(seq "$runs"); do
    for set in plain apns mixed; do
        rm -f "$work/$set.sqlite"*
        started=$(date +%s.%N)
        "$bin/arrival" ingest --quiet --db "$work/$set.sqlite" "$work/$set/sender"
        elapsed=$(echo "$(date +%s.%N) - $started" | bc)
        records=$(sqlite3 "$work/$set.sqlite" 'SELECT count(*) FROM apns')
        ingest[$set]+="$(echo "$records / $elapsed" | bc) "
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "records/s (runs: values; median)"
for set in plain apns mixed; do
    echo "  ingest $set: ${ingest[$set]}; median $(echo "${ingest[$set]}" | median)"
done

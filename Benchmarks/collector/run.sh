#!/usr/bin/env bash
# Load on the collector over loopback (README, "The collector"): 64 clients
# upload distinct ~10 KB device batches for SECONDS with wrk; then the
# worker's drain rate is compared with `arrival ingest` on the same bytes.
#
# 1. Load: acknowledged uploads/s, latency percentiles and the server's peak
#    RSS. The worker ingests meanwhile, with the CPU the load leaves it;
#    what it has not ingested when the load ends stays in the spool.
# 2. Drain: the server is stopped (SIGTERM) and its spool and store saved;
#    the uploads still queued are written out as files under their upload
#    names (extract.py), and again named so that their order is the order
#    of arrival. Then PAIRS interleaved rounds, each from copies of the
#    saved state: the server restarts and drains the spool (timed by its own
#    arrival_ingest_seconds_total, and from the restart to an empty spool,
#    recovery included); `arrival ingest` reads the files in the order they
#    arrived (the order the worker must keep), and then in the order of
#    their upload names, each into a copy of the same store. Medians are
#    printed.
#
#   Benchmarks/collector/run.sh [SECONDS] [CONNECTIONS] [ROUNDS]   (defaults: 20 64 3)
#
# Needs wrk (Debian: apt-get install wrk) and sqlite3. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
connections=${2:-64}
rounds=${3:-3}
swift build -c release --product arrival >/dev/null 2>&1
arrival=$PWD/.build/release/arrival
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export TOKEN=bench-device-token-0123456789
server=
start_server() {  # DIRECTORY
    ARRIVAL_DEVICE_TOKENS=$TOKEN ARRIVAL_READ_TOKENS=bench-read-token-0123456789 \
        "$arrival" serve --db "$1/store.sqlite" --spool "$1/spool" --port "$port" --log-level warning \
        >>"$work/serve.log" 2>&1 &
    server=$!
    for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && return; sleep 0.05; done
    echo "the collector did not start:" >&2
    cat "$work/serve.log" >&2
    exit 1
}
stop_server() {
    kill -TERM "$server"
    wait "$server" || true
    server=
}
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v name="$1" '$1 == name {print $2}'; }
now() { date +%s.%N; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

mkdir "$work/live"
start_server "$work/live"
echo "load: wrk, $connections connections, $seconds s, 2 threads"
wrk -t2 -c"$connections" -d"${seconds}s" --timeout 10s -s Benchmarks/collector/upload.lua \
    "http://127.0.0.1:$port" | grep -E '^(acknowledged|latency|non-2xx)'
echo "server peak RSS: $(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server/status") MB"
echo "ingested by the worker during the load: $(metric arrival_uploads_ingested_total) uploads"
stop_server

queued=$(python3 Benchmarks/collector/extract.py "$work/live/spool" "$work/files" "$work/arrival-order")
stored=$(sqlite3 "$work/live/store.sqlite" 'SELECT count(*) FROM renders')
lines=$(find "$work/files" -type f -exec cat {} + | wc -l)
echo "drain: $queued uploads ($lines lines) queued at the stop, on top of $stored stored records; $rounds rounds"
restore() {  # the saved state into $work/run
    rm -rf "$work/run"
    cp -r "$work/live" "$work/run"
    sync
}
timed_ingest() {  # DIRECTORY: seconds
    restore
    local started
    started=$(now)
    "$arrival" ingest --quiet --db "$work/run/store.sqlite" "$1"
    echo "$(now) - $started" | bc
}
for round in $(seq "$rounds"); do
    restore
    started=$(now)
    start_server "$work/run"
    # Polled twice a second: curl and awk at a faster pace take CPU from the worker being timed.
    while [ "$(metric arrival_spool_uploads | cut -d. -f1)" != "0" ]; do sleep 0.5; done
    wall=$(echo "$(now) - $started" | bc)
    busy=$(metric arrival_ingest_seconds_total)
    stop_server
    ordered=$(timed_ingest "$work/arrival-order")
    named=$(timed_ingest "$work/files")
    printf 'round %s: worker %.2f s ingesting (%.2f s from the restart to an empty spool); ' "$round" "$busy" "$wall"
    printf 'arrival ingest %.2f s in arrival order, %.2f s in name order\n' "$ordered" "$named"
    echo "$busy $wall $ordered $named" >>"$work/rounds"
done
busy=$(awk '{print $1}' "$work/rounds" | median)
wall=$(awk '{print $2}' "$work/rounds" | median)
ordered=$(awk '{print $3}' "$work/rounds" | median)
named=$(awk '{print $4}' "$work/rounds" | median)
rate() { echo "$lines / $1" | bc -l; }
printf 'medians, records/s: worker %.0f (%.0f from the restart); arrival ingest %.0f in arrival order, %.0f in name order\n' \
    "$(rate "$busy")" "$(rate "$wall")" "$(rate "$ordered")" "$(rate "$named")"
printf 'worker / arrival ingest: %.2f in arrival order, %.2f in name order (from the restart: %.2f, %.2f)\n' \
    "$(echo "$ordered / $busy" | bc -l)" "$(echo "$named / $busy" | bc -l)" "$(echo "$ordered / $wall" | bc -l)" \
    "$(echo "$named / $wall" | bc -l)"

#!/usr/bin/env bash
# One, two and three collectors on one PostgreSQL store (issue 31, item 7): each collector
# with its own spool and its own wrk (Benchmarks/collector/upload.lua, distinct ~10 KB device
# batches), CONNECTIONS split between them, for SECONDS. Prints, per count of collectors, the
# acknowledged uploads/s (summed) and each wrk's p99, then how long the spools took to drain
# into PostgreSQL after the load and the uploads/s stored end to end.
#
#   Benchmarks/postgres-collectors/run.sh [SECONDS] [CONNECTIONS]   (defaults: 15 64)
#
# Needs wrk, psql and a PostgreSQL server whose role may create databases:
# ARRIVAL_BENCH_POSTGRES_URL or ARRIVAL_TEST_POSTGRES_URL (Scripts/postgres-cluster.sh prints
# one, with its PGPASSFILE). ARRIVAL names the binary (default: a release build of this checkout).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-15}
connections=${2:-64}
url=${ARRIVAL_BENCH_POSTGRES_URL:-${ARRIVAL_TEST_POSTGRES_URL:-}}
[ -n "$url" ] || { echo "run.sh: set ARRIVAL_BENCH_POSTGRES_URL (Scripts/postgres-cluster.sh start DIR prints one)" >&2; exit 2; }
if [ -z "${ARRIVAL:-}" ]; then
    swift build -c release --product arrival >/dev/null
    ARRIVAL=$PWD/.build/release/arrival
fi
base=${url%/*}
work=$(mktemp -d)
export TOKEN=bench-device-token-0123456789
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for n in 1 2 3; do psql -q "$url" -c "DROP DATABASE IF EXISTS arrival_collectors_$$_$n" >/dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
spooled() { curl -s "http://127.0.0.1:$1/metrics" | awk '$1 == "arrival_spool_uploads" {print $2}'; }

for n in 1 2 3; do
    db=arrival_collectors_$$_$n
    psql -q "$url" -c "CREATE DATABASE $db" >/dev/null
    ports=()
    pids=()
    for i in $(seq "$n"); do
        port=$(free_port)
        ports+=("$port")
        mkdir -p "$work/$n/$i"
        ARRIVAL_DEVICE_TOKENS=$TOKEN "$ARRIVAL" serve --db "$base/$db" --spool "$work/$n/$i/spool" --port "$port" \
            --log-level warning >>"$work/serve.log" 2>&1 &
        pids+=($!)
    done
    for port in "${ports[@]}"; do
        for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.05; done
    done
    per=$((connections / n))
    started=$(date +%s.%N)
    wrks=()
    for i in $(seq "$n"); do
        PREFIX="c$n-$i" wrk -t1 -c"$per" -d"${seconds}s" --timeout 10s -s Benchmarks/collector/upload.lua \
            "http://127.0.0.1:${ports[$((i - 1))]}" >"$work/$n/$i/wrk.txt" &
        wrks+=($!)
    done
    wait "${wrks[@]}"
    total=0
    for i in $(seq "$n"); do
        rate=$(awk '/^acknowledged/ {print $(NF - 1)}' "$work/$n/$i/wrk.txt")
        p99=$(awk '/^latency/ {for (f = 1; f <= NF; f++) if ($f == "p99") print $(f + 1)}' "$work/$n/$i/wrk.txt")
        acked=$(awk '/^acknowledged/ {print $2}' "$work/$n/$i/wrk.txt")
        echo "collectors $n: #$i acknowledged $acked uploads, $rate uploads/s, p99 $p99 ms"
        total=$(echo "$total + $rate" | bc)
    done
    # Drained: every spool empty, so every acknowledged upload is in PostgreSQL.
    for port in "${ports[@]}"; do
        for _ in $(seq 12000); do [ "$(spooled "$port")" = "0.0" ] && break; sleep 0.05; done
    done
    drained=$(date +%s.%N)
    stored=$(psql -At "$base/$db" -c "SELECT count(*) FROM arrival.files")
    echo "collectors $n: $total uploads/s acknowledged; $stored uploads stored in PostgreSQL, $(echo "scale=0; $stored / ($drained - $started)" | bc) uploads/s end to end"
    for pid in "${pids[@]}"; do kill -TERM "$pid"; wait "$pid" || true; done
    pids=()
done

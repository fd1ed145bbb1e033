#!/usr/bin/env bash
# The least any loader pays on this PostgreSQL server for one fleet's records, beside arrival's SQLite
# ingest of the same fleet (issue 40, item 3): what arrival's PostgreSQL ingest cannot go under
# however its client is written.
#
#   Benchmarks/postgres-ingest/floor.sh [ACTIVITIES] [ROUNDS]      (defaults: 20000 3)
#
# Ingests the fleet once into a PostgreSQL database (to have its rows on the server), then, in
# interleaved rounds: `arrival ingest` into a new SQLite file (a whole process), and on the server,
# for every record table, the two steps a loader that keeps records' identity cannot skip:
#   copy     COPY of the table's rows (as text, from the client) into a table with no index at all;
#   identity INSERT … SELECT of those rows into a table with only the identity key, ON CONFLICT DO
#            NOTHING (the one way to store each record once whoever else writes).
# and, as a loader with no stage at all would (issue 52): COPY of every table's rows straight into a
# table shaped as the store's, with every index the store keeps (`LIKE … INCLUDING ALL`):
#   indexed  one connection, the tables one after the other;
#   indexed2 two connections at once (renders and callbacks on one, the request tables on the other).
# Prints the medians, the sum of the first two over SQLite's whole ingest, and the indexed loads over
# it. Same server and setup as run.sh.
set -euo pipefail
activities=${1:-20000}
rounds=${2:-3}
source "$(dirname "$0")/../postgres-setup.sh"
db=arrival_floor_$$
export PGOPTIONS="-c client_min_messages=warning"
trap 'rm -rf "$work"; psql -q "$url" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
psql -q "$url" -c "CREATE DATABASE $db" >/dev/null
"$ARRIVAL" ingest "$tree" --db "$base/$db" --quiet
store=$base/$db
tables="requests token_requests renders callbacks start_tokens"
for table in $tables; do
    psql -Atq "$store" -c "COPY (SELECT * FROM arrival.$table ORDER BY id) TO STDOUT" > "$work/$table.copy"
done
identity() { # table: its UNIQUE constraint's columns
    psql -Atq "$store" -c "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
        WHERE c.conrelid = 'arrival.$1'::regclass AND c.contype = 'u'"
}
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$@"; }
: > "$work/runs"
for _ in $(seq 1 "$rounds"); do
    rm -f "$work/store.sqlite"*
    /usr/bin/time -f "%e" -o "$work/time" "$ARRIVAL" ingest "$tree" --db "$work/store.sqlite" --quiet
    echo "sqlite $(cat "$work/time")" | tee -a "$work/runs"
    psql -q "$store" -c "DROP SCHEMA IF EXISTS floor CASCADE" -c "CREATE SCHEMA floor"
    copy=0
    insert=0
    for table in $tables; do
        psql -q "$store" -c "CREATE TABLE floor.$table (LIKE arrival.$table)" \
            -c "CREATE TABLE floor.${table}_kept (LIKE arrival.$table, $(identity "$table"))"
        start=$(date +%s.%N)
        psql -q "$store" -c "\\copy floor.$table FROM '$work/$table.copy'"
        middle=$(date +%s.%N)
        psql -q "$store" -c "INSERT INTO floor.${table}_kept SELECT * FROM floor.$table ON CONFLICT DO NOTHING"
        end=$(date +%s.%N)
        copy=$(python3 -c "print($copy + $(seconds "$start" "$middle"))")
        insert=$(python3 -c "print($insert + $(seconds "$middle" "$end"))")
    done
    echo "copy $copy" | tee -a "$work/runs"
    echo "identity $insert" | tee -a "$work/runs"
    load() { # tables: COPY each into its indexed copy, one connection
        { for table in "$@"; do echo "\\copy floor.${table}_indexed FROM '$work/$table.copy'"; done; } | psql -q "$store"
    }
    for pass in indexed indexed2; do
        for table in $tables; do
            psql -q "$store" -c "DROP TABLE IF EXISTS floor.${table}_indexed" \
                -c "CREATE TABLE floor.${table}_indexed (LIKE arrival.$table INCLUDING ALL)"
        done
        psql -q "$store" -c "CHECKPOINT" 2>/dev/null || true
        start=$(date +%s.%N)
        if [ "$pass" = indexed ]; then
            load $tables
        else
            load renders callbacks &
            load requests token_requests start_tokens
            wait
        fi
        echo "$pass $(seconds "$start" "$(date +%s.%N)")" | tee -a "$work/runs"
    done
done
python3 - "$work/runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, seconds = line.split()
    runs.setdefault(label, []).append(float(seconds))
med = {k: statistics.median(v) for k, v in runs.items()}
for k, v in med.items():
    print(f"{k}: median {v:.2f} s over {len(runs[k])} rounds")
floor = med["copy"] + med["identity"]
print(f"floor (copy + identity): {floor:.2f} s = {floor / med['sqlite']:.2f}x SQLite's whole ingest")
for k in ("indexed", "indexed2"):
    print(f"{k} (COPY into the store's indexes): {med[k]:.2f} s = {med[k] / med['sqlite']:.2f}x SQLite's whole ingest")
PY

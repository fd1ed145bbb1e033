#!/usr/bin/env bash
# Ingest of one simulated fleet into a SQLite store and into a PostgreSQL store, interleaved
# rounds, medians (issue 31, item 7), then the PostgreSQL store's size per table.
#
#   Benchmarks/postgres-ingest/run.sh [ACTIVITIES] [ROUNDS]
#
# Needs a PostgreSQL server whose role may create databases: ARRIVAL_BENCH_POSTGRES_URL (or
# ARRIVAL_TEST_POSTGRES_URL, what Scripts/postgres-cluster.sh prints, with its PGPASSFILE).
# Each round ingests the tree (default: the 70,000-activity fleet of Benchmarks/whole-job,
# seed 42, simulated once and kept) with `arrival ingest TREE --db NEW --quiet` into a new
# SQLite file, then into a new PostgreSQL database; each a whole process under /usr/bin/time.
# ARRIVAL names the binary (default: a release build of this checkout). Needs psql.
set -euo pipefail
activities=${1:-70000}
rounds=${2:-3}
source "$(dirname "$0")/../postgres-setup.sh"
admin=$url
db=arrival_bench_$$
trap 'rm -rf "$work"; for r in $(seq 1 "$rounds"); do psql -q "$admin" -c "DROP DATABASE IF EXISTS ${db}_$r" >/dev/null 2>&1 || true; done' EXIT

measure() { # label, then the command: prints "label wall_s peak_mb"
    local label=$1; shift
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null
    read -r wall rss < "$work/time"
    echo "$label $wall $((rss / 1024))"
}
: > "$work/runs"
for round in $(seq 1 "$rounds"); do
    rm -f "$work/store.sqlite"*
    measure sqlite "$ARRIVAL" ingest "$tree" --db "$work/store.sqlite" --quiet | tee -a "$work/runs"
    psql -q "$admin" -c "CREATE DATABASE ${db}_$round" >/dev/null
    measure postgres "$ARRIVAL" ingest "$tree" --db "$base/${db}_$round" --quiet | tee -a "$work/runs"
    # Only the last round's database is kept, for its sizes.
    [ "$round" -lt "$rounds" ] && psql -q "$admin" -c "DROP DATABASE ${db}_$round" >/dev/null
done
medians "$work/runs" ""
# ANALYZE of arrival's tables only (the role may not analyze the catalogs, and says so for each).
tables=$(psql -Atq "$base/${db}_$rounds" -c "SELECT string_agg('arrival.' || relname, ', ') FROM pg_stat_user_tables WHERE schemaname = 'arrival'")
psql -q "$base/${db}_$rounds" -c "ANALYZE $tables" -c "SELECT relname AS table, n_live_tup AS rows,
    pg_size_pretty(pg_total_relation_size(relid)) AS size,
    CASE WHEN n_live_tup > 0 THEN pg_total_relation_size(relid) / n_live_tup END AS bytes_per_row
    FROM pg_stat_user_tables WHERE schemaname = 'arrival' ORDER BY pg_total_relation_size(relid) DESC"

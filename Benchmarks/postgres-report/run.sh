#!/usr/bin/env bash
# Reports of one simulated fleet from a SQLite store and from a PostgreSQL store of the same input
# (issue 40, item 2): interleaved rounds, medians of wall time and peak RSS, the JSON reports compared
# byte for byte, and (as root) the PostgreSQL report run with TMPDIR on a 16 MiB tmpfs, which it
# must not fill.
#
#   Benchmarks/postgres-report/run.sh [ACTIVITIES] [ROUNDS]      (defaults: 20000 5)
#
# Needs a PostgreSQL server whose role may create databases: ARRIVAL_BENCH_POSTGRES_URL (or
# ARRIVAL_TEST_POSTGRES_URL, what Scripts/postgres-cluster.sh prints, with its PGPASSFILE), and psql.
# The fleet is `arrival simulate --activities ACTIVITIES --seed 42`, made once and kept in bench-data/.
# ARRIVAL names the binary (default: a release build of this checkout).
set -euo pipefail
activities=${1:-20000}
rounds=${2:-5}
source "$(dirname "$0")/../postgres-setup.sh"
db=arrival_report_bench_$$
small_tmp=$work/small-tmp
cleanup() {
    if mountpoint -q "$small_tmp" 2>/dev/null; then umount "$small_tmp" || true; fi
    rm -rf "$work"
    psql -q "$url" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$ARRIVAL" ingest "$tree" --db "$work/store.sqlite" --quiet
psql -q "$url" -c "CREATE DATABASE $db" >/dev/null
"$ARRIVAL" ingest "$tree" --db "$base/$db" --quiet
echo "fleet: $activities activities; SQLite store $(du -h "$work/store.sqlite" | cut -f1)," \
    "PostgreSQL database $(psql -Atq "$base/$db" -c "SELECT pg_size_pretty(pg_database_size(current_database()))")"

measure() { # label, then the command: prints "label wall_s peak_mb"
    local label=$1; shift
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/$label.json"
    read -r wall rss < "$work/time"
    echo "$label $wall $((rss / 1024))"
}
: > "$work/runs"
for _ in $(seq 1 "$rounds"); do
    measure sqlite "$ARRIVAL" report --db "$work/store.sqlite" --format json | tee -a "$work/runs"
    measure postgres "$ARRIVAL" report --db "$base/$db" --format json | tee -a "$work/runs"
done
if cmp -s "$work/sqlite.json" "$work/postgres.json"; then
    echo "JSON reports: byte-identical ($(wc -c < "$work/sqlite.json") bytes)"
else
    echo "JSON reports: DIFFER" >&2
    diff "$work/sqlite.json" "$work/postgres.json" | head -20 >&2
    exit 1
fi
medians "$work/runs" "report from "
if [ "$(id -u)" -eq 0 ]; then
    mkdir -p "$small_tmp"
    mount -t tmpfs -o size=16m tmpfs "$small_tmp"
    if TMPDIR=$small_tmp "$ARRIVAL" report --db "$base/$db" --format json > "$work/small.json" \
        && cmp -s "$work/small.json" "$work/sqlite.json"; then
        echo "with TMPDIR on a 16 MiB tmpfs: the same report"
    else
        echo "with TMPDIR on a 16 MiB tmpfs: FAILED" >&2
        exit 1
    fi
else
    echo "(not root: the 16 MiB TMPDIR run is skipped)"
fi

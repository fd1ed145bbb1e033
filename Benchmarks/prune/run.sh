#!/usr/bin/env bash
# A prune of one day (issue 40, item 4) on stores holding more and more days, on SQLite and on
# PostgreSQL: what does removing the oldest day cost as the store grows?
#
#   Benchmarks/prune/run.sh [ACTIVITIES_PER_DAY] [DAYS...]
#
# For each D of DAYS (default: 2 4 8), simulates D days of ACTIVITIES_PER_DAY activities (default
# 2000; day k with seed 100+k, simulated once and kept in bench-data/prune), ingests them into a
# new SQLite file and a new PostgreSQL database, then times `arrival prune --before DAY2` (the
# oldest day goes) as a whole process: on SQLite without and with the vacuum (on a copy), with the
# file's size before and after; on PostgreSQL, the prune alone (the migration that adds the
# indexes runs at ingest). Prints one line per store and a table.
#
# Needs a PostgreSQL server whose role may create databases: ARRIVAL_BENCH_POSTGRES_URL (or
# ARRIVAL_TEST_POSTGRES_URL with its PGPASSFILE, as Scripts/postgres-cluster.sh prints) and psql.
# ARRIVAL names the binary (default: a release build of this checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
activities=${1:-2000}
shift || true
days=("$@")
[ ${#days[@]} -gt 0 ] || days=(2 4 8)
url=${ARRIVAL_BENCH_POSTGRES_URL:-${ARRIVAL_TEST_POSTGRES_URL:-}}
[ -n "$url" ] || { echo "run.sh: set ARRIVAL_BENCH_POSTGRES_URL (Scripts/postgres-cluster.sh start DIR prints one)" >&2; exit 2; }
if [ -z "${ARRIVAL:-}" ]; then
    (cd "$root" && swift build -c release --product arrival >/dev/null)
    ARRIVAL=$root/.build/release/arrival
fi
data=$root/bench-data/prune
max=0
for d in "${days[@]}"; do [ "$d" -gt "$max" ] && max=$d; done
day_of() { date -u -d "2026-11-01 + $(($1 - 1)) days" +%F; }
for k in $(seq 1 "$max"); do
    tree=$data/$activities/day-$k
    [ -d "$tree/sender" ] || "$ARRIVAL" simulate --out "$tree" --activities "$activities" --seed $((100 + k)) \
        --day "$(day_of "$k")" --lifecycle --channels >/dev/null
done
work=$(mktemp -d)
base=${url%/*}
db=arrival_prune_bench_$$
trap 'rm -rf "$work"; for d in "${days[@]}"; do psql -q "$url" -c "DROP DATABASE IF EXISTS ${db}_$d" >/dev/null 2>&1 || true; done' EXIT
cut="$(day_of 2)T00:00:00Z"
seconds() { # the command's wall time in seconds
    /usr/bin/time -f "%e" -o "$work/time" "$@" >"$work/out"
    cat "$work/time"
}
printf '| days stored | records | SQLite prune (no vacuum) | SQLite prune + VACUUM | SQLite bytes before → after | PostgreSQL prune | records removed |\n'
printf '|---|---|---|---|---|---|---|\n'
for d in "${days[@]}"; do
    trees=()
    for k in $(seq 1 "$d"); do trees+=("$data/$activities/day-$k"); done
    rm -f "$work"/store.sqlite* "$work"/copy.sqlite*
    "$ARRIVAL" ingest "${trees[@]}" --db "$work/store.sqlite" --quiet
    cp "$work/store.sqlite" "$work/copy.sqlite"
    records=$(sqlite3 "$work/store.sqlite" "SELECT (SELECT count(*) FROM apns)+(SELECT count(*) FROM renders)+(SELECT count(*) FROM callbacks)")
    plain=$(seconds "$ARRIVAL" prune --db "$work/copy.sqlite" --before "$cut" --no-vacuum --format json)
    vacuumed=$(seconds "$ARRIVAL" prune --db "$work/store.sqlite" --before "$cut" --format json)
    sizes=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(format(s["bytes_before"], ",") + " → " + format(s["bytes_after"], ","))' "$work/out")
    removed_sqlite=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["removed"]; print(r["requests"]+r["renders"]+r["callbacks"])' "$work/out")
    psql -q "$url" -c "CREATE DATABASE ${db}_$d" >/dev/null
    "$ARRIVAL" ingest "${trees[@]}" --db "$base/${db}_$d" --quiet
    psql -q "$base/${db}_$d" -c "VACUUM ANALYZE arrival.requests, arrival.token_requests, arrival.broadcasts, arrival.renders, arrival.callbacks, arrival.start_tokens" >/dev/null
    postgres=$(seconds "$ARRIVAL" prune --db "$base/${db}_$d" --before "$cut" --format json)
    removed_pg=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["removed"]; print(r["requests"]+r["renders"]+r["callbacks"])' "$work/out")
    [ "$removed_pg" = "$removed_sqlite" ] || echo "run.sh: the engines removed different counts: $removed_sqlite vs $removed_pg" >&2
    printf '| %s | %s | %s s | %s s | %s | %s s | %s |\n' "$d" "$records" "$plain" "$vacuumed" "$sizes" "$postgres" "$removed_pg"
    psql -q "$url" -c "DROP DATABASE ${db}_$d" >/dev/null
done

# Sourced by the PostgreSQL benchmarks (postgres-ingest, postgres-report) after they set `activities`:
# the server's URL (`url`, and `base`, the URL without its database), the binary (`ARRIVAL`, default a
# release build of this checkout), the fleet (`tree`: `arrival simulate --activities $activities
# --seed 42`, made once and kept in bench-data/) and a work directory (`work`).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
url=${ARRIVAL_BENCH_POSTGRES_URL:-${ARRIVAL_TEST_POSTGRES_URL:-}}
[ -n "$url" ] || { echo "run.sh: set ARRIVAL_BENCH_POSTGRES_URL (Scripts/postgres-cluster.sh start DIR prints one)" >&2; exit 2; }
if [ -z "${ARRIVAL:-}" ]; then
    (cd "$root" && swift build -c release --product arrival >/dev/null)
    ARRIVAL=$root/.build/release/arrival
fi
tree=$root/bench-data/whole-job/fleet-$activities-seed42
if ! [ -d "$tree/sender" ]; then
    mkdir -p "$root/bench-data/whole-job"
    "$ARRIVAL" simulate --out "$tree" --activities "$activities" --seed 42 >/dev/null
fi
work=$(mktemp -d)
base=${url%/*}

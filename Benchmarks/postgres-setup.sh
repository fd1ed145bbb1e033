# Sourced by the PostgreSQL benchmarks (postgres-ingest, postgres-report) after they set `activities`:
# the server's URL (`url`, and `base`, the URL without its database), the binary (`ARRIVAL`, default a
# release build of this checkout), the fleet (`tree`: `arrival simulate --activities $activities
# --seed 42`, made once and kept in bench-data/), a work directory (`work`), and `medians`.
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

# Prints the medians of the "label wall_s peak_mb" lines in FILE, each label as "PREFIX label", and
# postgres' wall time over sqlite's.
medians() { # FILE PREFIX
    python3 - "$1" "$2" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, wall, rss = line.split()
    runs.setdefault(label, []).append((float(wall), int(rss)))
med = {k: (statistics.median(w for w, _ in v), statistics.median(r for _, r in v)) for k, v in runs.items()}
for k, (w, r) in med.items():
    print(f"{sys.argv[2]}{k}: median {w:.2f} s, {r} MB peak RSS over {len(runs[k])} rounds")
print(f"postgres/sqlite wall: {med['postgres'][0] / med['sqlite'][0]:.2f}x")
PY
}

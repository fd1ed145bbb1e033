#!/usr/bin/env bash
# The whole job, arrival against the contract written as DuckDB SQL, on one simulated fleet
# (issue 14, item 2): from the raw tree to the outcome of every update.
#
#   Benchmarks/whole-job/run.sh [ACTIVITIES] [PAIRS] [--seed N] [--check RATIO]
#
# 1. Simulates ACTIVITIES activities (default 70,000; seed 42) once, into
#    bench-data/whole-job/fleet-ACTIVITIES-seedN (kept and reused).
# 2. Times PAIRS (default 3) interleaved pairs, each side into a new database file, each a
#    whole process under /usr/bin/time (wall, CPU, peak RSS):
#      arrival: `arrival ingest TREE --db NEW --quiet` then `arrival report --db NEW --format json`
#               (two processes, their times added, the larger RSS);
#      DuckDB:  duckdb_job.py: load both streams with read_json, keep each kind's well-typed records
#               once, and compute every update's outcome with contract.sql's window functions.
# 3. Prints both sides' outcome counts (they should agree: a different count means the SQL and
#    arrival read the contract differently, or DuckDB kept a line arrival calls malformed), the
#    pairs and the medians, and exits 1 when the median of DuckDB/arrival is below RATIO
#    (default 4, issue 14's goal).
#
# ARRIVAL names the binary (default: a release build of this checkout). DuckDB is the Python
# package `duckdb` (pip install duckdb). Needs /usr/bin/time, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
activities=70000
pairs=3
seed=42
check=4
positional=()
while [ $# -gt 0 ]; do
    case "$1" in
    --seed) seed=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -ge 1 ] && activities=${positional[0]}
[ ${#positional[@]} -ge 2 ] && pairs=${positional[1]}

if [ -z "${ARRIVAL:-}" ]; then
    (cd "$root" && swift build -c release --product arrival >/dev/null)
    ARRIVAL=$root/.build/release/arrival
fi
python3 -c 'import duckdb' 2>/dev/null || { echo "run.sh: needs the duckdb Python package (pip install duckdb)" >&2; exit 2; }

data=$root/bench-data/whole-job
tree=$data/fleet-$activities-seed$seed
mkdir -p "$data"
if ! [ -d "$tree/sender" ]; then
    echo "simulating $tree"
    "$ARRIVAL" simulate --out "$tree" --activities "$activities" --seed "$seed" >/dev/null
    # DuckDB's reader stops at a gzip file cut short (the simulator leaves one, as a crashed
    # sender would), where arrival keeps what it holds: both sides read the tree without it.
    find "$tree" -name '*.gz' | while read -r file; do
        gzip -t "$file" 2>/dev/null || { echo "removed (cut short, DuckDB cannot read it): $file"; rm -f "$file"; }
    done
fi
work=$(mktemp -d "$data/run.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "arrival: $ARRIVAL ($("$ARRIVAL" --version))"
echo "duckdb: $(python3 -c 'import duckdb; print(duckdb.__version__)')"
echo "tree: $tree ($(du -sh "$tree" | cut -f1), $(find "$tree" -type f | wc -l) files)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

timed() { # OUT_PREFIX COMMAND...: wall, user+sys, RSS (KB) into OUT_PREFIX.time
    /usr/bin/time -f '%e %U %S %M' -o "$1.time" "${@:2}"
}
run_arrival() {
    rm -f "$work"/a.sqlite*
    sync
    timed "$work/ingest" "$ARRIVAL" ingest "$tree" --db "$work/a.sqlite" --quiet
    timed "$work/report" "$ARRIVAL" report --db "$work/a.sqlite" --format json >"$work/report.json"
    read -r w1 u1 s1 m1 <"$work/ingest.time"
    read -r w2 u2 s2 m2 <"$work/report.time"
    python3 - "$w1" "$u1" "$s1" "$m1" "$w2" "$u2" "$s2" "$m2" <<'PY' >>"$work/arrival.txt"
import sys
w1, u1, s1, m1, w2, u2, s2, m2 = map(float, sys.argv[1:])
print(f"{w1 + w2:.2f} {u1 + s1 + u2 + s2:.2f} {max(m1, m2) / 1024:.0f} {w1:.2f} {w2:.2f}")
PY
}
run_duckdb() {
    rm -f "$work"/d.duckdb*
    sync
    timed "$work/duck" python3 "$here/duckdb_job.py" "$tree" "$work/d.duckdb" >"$work/duck.json"
    read -r w u s m <"$work/duck.time"
    echo "$w $(python3 -c "print(f'{$u + $s:.2f}')") $((m / 1024))" >>"$work/duckdb.txt"
}

for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) = 1 ]; then run_arrival; run_duckdb; else run_duckdb; run_arrival; fi
    read -r aw ac am ai ar < <(tail -1 "$work/arrival.txt")
    read -r dw dc dm < <(tail -1 "$work/duckdb.txt")
    echo "pair $pair: arrival ${aw} s wall (ingest ${ai} + report ${ar}), ${ac} s CPU, ${am} MB | duckdb ${dw} s wall, ${dc} s CPU, ${dm} MB | DuckDB/arrival $(python3 -c "print(f'{$dw / $aw:.2f}')")"
done

python3 - "$work/report.json" "$work/duck.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))["updates"]
for cause, count in report.get("lost_by_cause", {}).items():
    report["lost_by_cause." + cause] = count
duck = json.load(open(sys.argv[2]))
for names in (["rendered", "superseded", "lost", "dismissed", "stale_timestamp", "ended", "expired"],
              ["lost_by_cause." + c for c in ("not_rendered", "old_token", "closed_later", "device_silent", "unexplained")]):
    width = max(len(n) for n in names) + 2
    print("           " + "".join(f"{n.replace('lost_by_cause.', ''):>{width}}" for n in names))
    print("arrival    " + "".join(f"{report.get(n, 0):>{width},}" for n in names))
    print("duckdb SQL " + "".join(f"{duck.get(n, 0):>{width},}" for n in names))
PY

python3 - "$work/arrival.txt" "$work/duckdb.txt" "$check" <<'PY'
import statistics, sys
a = [list(map(float, l.split())) for l in open(sys.argv[1])]
d = [list(map(float, l.split())) for l in open(sys.argv[2])]
check = float(sys.argv[3])
ratios = [x[0] / y[0] for x, y in zip(d, a)]
m = statistics.median
print(f"medians of {len(a)} pairs:")
print(f"  arrival ingest + report   {m(r[0] for r in a):.2f} s wall   {m(r[1] for r in a):.2f} s CPU   {m(r[2] for r in a):.0f} MB")
print(f"  DuckDB contract SQL       {m(r[0] for r in d):.2f} s wall   {m(r[1] for r in d):.2f} s CPU   {m(r[2] for r in d):.0f} MB")
print(f"  DuckDB wall / arrival wall: {m(ratios):.2f} (pairs: {', '.join(f'{r:.2f}' for r in ratios)})")
if m(ratios) < check:
    print(f"FAIL: {m(ratios):.2f} is below --check {check}")
    sys.exit(1)
print(f"ok: {m(ratios):.2f} >= {check}")
PY

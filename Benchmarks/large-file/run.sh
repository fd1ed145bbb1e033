#!/usr/bin/env bash
# Ingest of ONE large sender file against DuckDB's load of the same file
# (issue 14, item 4).
#
#   Benchmarks/large-file/run.sh [LINES] [PAIRS] [--seed N] [--check RATIO] [--max-rss-mb N]
#
# Defaults: 2000000 lines, 3 pairs, seed 42, --check 1.25, --max-rss-mb 150.
#
# 1. Writes LINES realistic `apns` lines into one gzip file with generate.py
#    (once: kept in bench-data/large-file/, which git ignores, by LINES and
#    seed) and reads it once so that both tools start from a warm page cache.
# 2. Runs PAIRS interleaved pairs, each tool into a fresh database, `sync`
#    before each run, arrival first in odd pairs and DuckDB first in even:
#      arrival: "$ARRIVAL" ingest FILE --db NEW.sqlite --quiet
#      DuckDB:  CREATE TABLE t AS SELECT * FROM read_json_auto('FILE') into a
#               new database file, in one Python process (load_duckdb.py below)
#    each under /usr/bin/time -f '%e %U %S %M' (wall, user and system CPU,
#    peak RSS), the whole process timed. After each run the stored count is
#    checked (sqlite3 'SELECT count(*) FROM apns', DuckDB's count of t):
#    it must be LINES.
# 3. Prints each pair, then the medians: wall, CPU (user + system), peak RSS,
#    records/s, and DuckDB wall / arrival wall (median of the pairs' ratios,
#    and the ratio of the median walls).
#
# Exits 1 when a count is wrong, when the median of the pairs' ratios is
# below --check RATIO, or when arrival's median peak RSS is above
# --max-rss-mb N; 0 otherwise.
#
# ARRIVAL: the arrival binary to time. Unset: `swift build -c release
# --product arrival` in the repository, then .build/release/arrival.
# DuckDB: the Python package duckdb (pip install duckdb). When `python3 -c
# 'import duckdb'` fails, it is installed into a venv under
# bench-data/large-file/venv. Needs /usr/bin/time (Debian: time), sqlite3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

lines=2000000 pairs=3 seed=42 check=1.25 max_rss_mb=150
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        --seed) seed=$2; shift 2 ;;
        --check) check=$2; shift 2 ;;
        --max-rss-mb) max_rss_mb=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -ge 1 ] && lines=${positional[0]}
[ ${#positional[@]} -ge 2 ] && pairs=${positional[1]}
[ ${#positional[@]} -le 2 ] || { echo "run.sh: at most two arguments: [LINES] [PAIRS]" >&2; exit 2; }

for tool in /usr/bin/time sqlite3 python3; do
    command -v "$tool" >/dev/null || { echo "run.sh: needs $tool" >&2; exit 2; }
done

if [ -z "${ARRIVAL:-}" ]; then
    (cd "$root" && swift build -c release --product arrival >/dev/null)
    ARRIVAL=$root/.build/release/arrival
fi
[ -x "$ARRIVAL" ] || { echo "run.sh: ARRIVAL=$ARRIVAL is not an executable" >&2; exit 2; }

data=$root/bench-data/large-file
mkdir -p "$data"

# DuckDB's Python: the system's when it has duckdb, else a venv of our own.
duck_py=python3
if ! python3 -c 'import duckdb' 2>/dev/null; then
    duck_py=$data/venv/bin/python
    if ! [ -x "$duck_py" ] || ! "$duck_py" -c 'import duckdb' 2>/dev/null; then
        echo "python3 has no duckdb: installing it into $data/venv (python3 -m venv, pip install duckdb)"
        python3 -m venv "$data/venv" && "$data/venv/bin/pip" install --quiet duckdb || {
            echo "run.sh: could not install duckdb; install it yourself (pip install duckdb) and rerun" >&2
            exit 2
        }
    fi
fi

file=$data/apns-$lines-seed$seed.jsonl.gz
if ! [ -f "$file" ]; then
    echo "generating $file"
    python3 "$here/generate.py" "$lines" "$file" --seed "$seed"
fi

work=$(mktemp -d "$data/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/load_duckdb.py" <<'PY'
import duckdb, sys
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE t AS SELECT * FROM read_json_auto(?)", [sys.argv[2]])
con.close()
PY

echo "command: ${0} $lines $pairs --seed $seed --check $check --max-rss-mb $max_rss_mb"
echo "arrival: $ARRIVAL ($("$ARRIVAL" --version 2>/dev/null || echo '?'))"
echo "duckdb: $("$duck_py" -c 'import duckdb; print(duckdb.__version__)') (Python package, $("$duck_py" --version 2>&1))"
echo "file: $file: $lines lines, $(stat -c %s "$file") gzip bytes"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$file" > /dev/null    # warm the page cache for both tools

fail() { echo "FAIL: $*" >&2; exit 1; }

# run_arrival PAIR, run_duckdb PAIR: one timed run each, appending
# "tool pair wall user sys rss_kb" to $work/runs.txt
run_arrival() {
    rm -f "$work/new.sqlite"*
    sync
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" \
        "$ARRIVAL" ingest "$file" --db "$work/new.sqlite" --quiet
    local n
    n=$(sqlite3 "$work/new.sqlite" 'SELECT count(*) FROM apns')
    [ "$n" = "$lines" ] || fail "arrival stored $n apns records, not $lines (pair $1)"
    echo "arrival $1 $(cat "$work/time.txt")" >> "$work/runs.txt"
    rm -f "$work/new.sqlite"*
}
run_duckdb() {
    rm -f "$work/new.duckdb"*
    sync
    /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" \
        "$duck_py" "$work/load_duckdb.py" "$work/new.duckdb" "$file"
    local n
    n=$("$duck_py" -c 'import duckdb, sys; print(duckdb.connect(sys.argv[1], read_only=True).execute("SELECT count(*) FROM t").fetchone()[0])' "$work/new.duckdb")
    [ "$n" = "$lines" ] || fail "DuckDB stored $n rows, not $lines (pair $1)"
    echo "duckdb $1 $(cat "$work/time.txt")" >> "$work/runs.txt"
    rm -f "$work/new.duckdb"*
}

: > "$work/runs.txt"
for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) -eq 1 ]; then
        run_arrival "$pair"; run_duckdb "$pair"
    else
        run_duckdb "$pair"; run_arrival "$pair"
    fi
    python3 - "$work/runs.txt" "$pair" "$lines" <<'PY'
import sys
runs = {t: (float(w), float(u) + float(s), int(m)) for t, p, w, u, s, m in
        (l.split() for l in open(sys.argv[1])) if p == sys.argv[2]}
pair, lines = int(sys.argv[2]), int(sys.argv[3])
first = "arrival" if pair % 2 else "duckdb"
def show(t):
    w, c, m = runs[t]
    return f"{t} {w:.2f} s wall, {c:.2f} s CPU, {m / 1024:.0f} MB RSS, {lines / w:,.0f} records/s"
print(f"pair {pair} ({first} first): {show('arrival')} | {show('duckdb')} | "
      f"DuckDB/arrival {runs['duckdb'][0] / runs['arrival'][0]:.2f}", flush=True)
PY
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/runs.txt" "$lines" "$check" "$max_rss_mb" <<'PY'
import statistics, sys
path, lines, check, max_rss_mb = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
runs = {"arrival": {}, "duckdb": {}}
for t, p, w, u, s, m in (l.split() for l in open(path)):
    runs[t][p] = (float(w), float(u) + float(s), int(m) / 1024)
pairs = sorted(runs["arrival"], key=int)
med = {t: [statistics.median(r[p][i] for p in pairs) for i in range(3)] for t, r in runs.items()}
ratios = [runs["duckdb"][p][0] / runs["arrival"][p][0] for p in pairs]
ratio = statistics.median(ratios)
print(f"medians of {len(pairs)} pairs, {lines:,} records:")
for t, name in (("arrival", "arrival ingest"), ("duckdb", "DuckDB read_json_auto")):
    w, c, m = med[t]
    print(f"  {name:22} {w:7.2f} s wall  {c:7.2f} s CPU  {m:6.0f} MB RSS  {lines / w:>9,.0f} records/s")
print(f"  DuckDB wall / arrival wall: {ratio:.2f} (median of the pairs: "
      f"{', '.join(f'{r:.2f}' for r in ratios)}); ratio of the medians {med['duckdb'][0] / med['arrival'][0]:.2f}")
bad = []
if ratio < check:
    bad.append(f"DuckDB/arrival {ratio:.2f} is below --check {check:g}: arrival is not {check:g}x as fast as DuckDB")
if med["arrival"][2] > max_rss_mb:
    bad.append(f"arrival's median peak RSS {med['arrival'][2]:.0f} MB is above --max-rss-mb {max_rss_mb:g}")
for b in bad:
    print("FAIL: " + b)
if not bad:
    print(f"ok: DuckDB/arrival {ratio:.2f} >= {check:g}, arrival RSS {med['arrival'][2]:.0f} MB <= {max_rss_mb:g} MB")
sys.exit(1 if bad else 0)
PY

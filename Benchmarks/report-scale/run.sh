#!/usr/bin/env bash
# Report memory and time as the store grows (issue 14, item 3): `report --format json` and
# `--format html` (a day with a 7-day trend) over a small and a large simulated store,
# interleaved, with each run's wall time, CPU and peak RSS, and a threshold on the large
# store's peak RSS over the small one's.
#
#   Benchmarks/report-scale/run.sh [SMALL] [LARGE] [ROUNDS] [--check RATIO]
#
# SMALL and LARGE are fleet sizes in activities (defaults 200,000 and 700,000: about 1.8 M and
# 6.3 M updates). Each is simulated (seed 42 and 44) and ingested once into
# bench-data/report-scale/ (kept and reused). ROUNDS (default 3) interleaved rounds each run
# both formats on both stores under /usr/bin/time. Exits 1 when the median peak RSS of the
# large store exceeds RATIO (default 1.25) times the small one's, for either format.
#
# ARRIVAL names the binary (default: a release build of this checkout). Extra environment
# (ARRIVAL_PARTITION_ROWS=…) is passed on, to compare partition sizes.
set -euo pipefail
# shellcheck source=Benchmarks/report-scale/commands.sh
source "$(dirname "$0")/commands.sh"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
small=200000
large=700000
rounds=3
check=1.25
positional=()
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=$2; shift 2 ;;
    *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -ge 1 ] && small=${positional[0]}
[ ${#positional[@]} -ge 2 ] && large=${positional[1]}
[ ${#positional[@]} -ge 3 ] && rounds=${positional[2]}

if [ -z "${ARRIVAL:-}" ]; then
    (cd "$root" && swift build -c release --product arrival >/dev/null)
    ARRIVAL=$root/.build/release/arrival
fi
data=$root/bench-data/report-scale
mkdir -p "$data"
store() { # ACTIVITIES SEED: the store's path, made once
    local db="$data/fleet-$1-seed$2.sqlite"
    if ! [ -f "$db" ]; then
        echo "simulating and ingesting $1 activities (seed $2)" >&2
        rm -rf "$data/tree"
        "$ARRIVAL" simulate --out "$data/tree" --activities "$1" --seed "$2" >/dev/null
        "$ARRIVAL" ingest "$data/tree" --db "$db.partial" --quiet
        rm -rf "$data/tree"
        mv "$db.partial" "$db"
    fi
    echo "$db"
}
smallDB=$(store "$small" 42)
largeDB=$(store "$large" 44)
echo "arrival: $ARRIVAL ($("$ARRIVAL" --version))"
echo "small: $smallDB ($(du -hL "$smallDB" | cut -f1))"
echo "large: $largeDB ($(du -hL "$largeDB" | cut -f1))"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq "$rounds"); do
    for format in json html; do
        for side in small large; do
            db=$smallDB
            [ "$side" = large ] && db=$largeDB
            report_args "$format" "$db"
            /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$ARRIVAL" "${args[@]}" >"$work/out"
            read -r wall user sys rss <"$work/t"
            [ "$format" = json ] && cp "$work/out" "$work/$side.json"
            echo "$format $side $wall $(echo "$user + $sys" | bc) $((rss / 1024)) $(wc -c <"$work/out")" | tee -a "$work/all"
        done
    done
done
python3 - "$work/all" "$check" <<'PY'
import statistics, sys
import json, os
rows = [line.split() for line in open(sys.argv[1])]
for side in ("small", "large"):
    report = json.load(open(os.path.join(os.path.dirname(sys.argv[1]), side + ".json")))
    print(f"{side}: {report['requests']['total']:,} requests, {report['updates']['sent']:,} updates")
check = float(sys.argv[2])
failed = False
print("medians:            wall      CPU     peak RSS   output")
for fmt in ("json", "html"):
    med = {}
    for side in ("small", "large"):
        sel = [r for r in rows if r[0] == fmt and r[1] == side]
        wall = statistics.median(float(r[2]) for r in sel)
        cpu = statistics.median(float(r[3]) for r in sel)
        rss = statistics.median(int(r[4]) for r in sel)
        med[side] = (wall, rss)
        print(f"  {fmt:4} {side:5}  {wall:8.2f} s {cpu:7.2f} s {rss:8} MB {int(sel[0][5]):9} bytes")
    ratio = med["large"][1] / med["small"][1]
    time_ratio = med["large"][0] / med["small"][0]
    ok = ratio <= check
    failed |= not ok
    print(f"  {fmt}: peak RSS large/small {ratio:.2f} (threshold {check}), wall large/small {time_ratio:.2f}: {'ok' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)
PY

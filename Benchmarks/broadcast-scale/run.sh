#!/usr/bin/env bash
# One broadcast channel at scale (issue 29, item 6): the report of a store where one
# channel has SUBSCRIBERS subscribers and BROADCASTS broadcasts (SUBSCRIBERS x BROADCASTS
# subscriber-updates, none of them a stored row) next to the report of the 70k-activity
# simulated fleet of Benchmarks/whole-job, interleaved, with each run's wall time, CPU and
# peak RSS.
#
#   Benchmarks/broadcast-scale/run.sh [SUBSCRIBERS] [BROADCASTS] [ROUNDS] [--check RATIO]
#
# Defaults: 200,000 subscribers, 60 broadcasts (12 M subscriber-updates), 3 rounds. The
# channel's tree is written by generate.py and both stores are ingested once into
# bench-data/broadcast-scale/ (kept and reused). Exits 1 when the median peak RSS of the
# channel's report exceeds RATIO (default 1.25) times the fleet's.
#
# ARRIVAL names the binary (default: a release build of this checkout). Needs /usr/bin/time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
subscribers=200000
broadcasts=60
rounds=3
check=1.25
positional=()
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=$2; shift 2 ;;
    *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -ge 1 ] && subscribers=${positional[0]}
[ ${#positional[@]} -ge 2 ] && broadcasts=${positional[1]}
[ ${#positional[@]} -ge 3 ] && rounds=${positional[2]}

if [ -z "${ARRIVAL:-}" ]; then
    (cd "$root" && swift build -c release --product arrival >/dev/null)
    ARRIVAL=$root/.build/release/arrival
fi
data=$root/bench-data/broadcast-scale
mkdir -p "$data"
channelDB=$data/channel-$subscribers-x$broadcasts.sqlite
if ! [ -f "$channelDB" ]; then
    echo "writing and ingesting one channel: $subscribers subscribers, $broadcasts broadcasts" >&2
    rm -rf "$data/tree"
    python3 "$here/generate.py" "$data/tree" --subscribers "$subscribers" --broadcasts "$broadcasts"
    /usr/bin/time -f 'ingest: %e s, peak RSS %M KB' "$ARRIVAL" ingest "$data/tree" --db "$channelDB.partial" --quiet
    rm -rf "$data/tree"
    mv "$channelDB.partial" "$channelDB"
fi
fleetDB=$data/fleet-70000-seed42.sqlite
if ! [ -f "$fleetDB" ]; then
    echo "simulating and ingesting the 70,000-activity fleet (seed 42)" >&2
    rm -rf "$data/fleet"
    "$ARRIVAL" simulate --out "$data/fleet" --activities 70000 --seed 42 >/dev/null
    "$ARRIVAL" ingest "$data/fleet" --db "$fleetDB.partial" --quiet
    rm -rf "$data/fleet"
    mv "$fleetDB.partial" "$fleetDB"
fi
echo "arrival: $ARRIVAL ($("$ARRIVAL" --version))"
echo "channel: $channelDB ($(du -hL "$channelDB" | cut -f1))"
echo "fleet:   $fleetDB ($(du -hL "$fleetDB" | cut -f1))"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for round in $(seq "$rounds"); do
    for side in fleet channel; do
        db=$fleetDB
        [ "$side" = channel ] && db=$channelDB
        /usr/bin/time -f '%e %U %S %M' -o "$work/t" "$ARRIVAL" report --db "$db" --format json >"$work/$side.json"
        read -r wall user sys rss <"$work/t"
        echo "$side $wall $(echo "$user + $sys" | bc) $((rss / 1024))" | tee -a "$work/all"
    done
done
python3 - "$work/all" "$check" "$work/channel.json" <<'PY'
import json, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
check = float(sys.argv[2])
channel = json.load(open(sys.argv[3]))
updates = channel["updates"]
print(f"channel report: {channel['requests']['broadcasts']} broadcasts, {updates['sent']:,} subscriber-updates, "
      f"{updates['rendered']:,} rendered, {updates['superseded']:,} superseded, {updates['lost']:,} lost")
median = {}
for side in ("fleet", "channel"):
    mine = [r for r in rows if r[0] == side]
    median[side] = tuple(statistics.median(float(r[i]) for r in mine) for i in (1, 2, 3))
    print(f"{side:8s} median wall {median[side][0]:.2f} s, CPU {median[side][1]:.2f} s, peak RSS {median[side][2]:.0f} MB")
ratio = median["channel"][2] / median["fleet"][2]
print(f"peak RSS channel / fleet: {ratio:.2f} (bound {check})")
sys.exit(0 if ratio <= check else 1)
PY

#!/usr/bin/env bash
# Two arrival builds on report-scale's stores, interleaved: `report --format json` and the HTML
# page of a day with a 7-day trend (run.sh's two commands), on the small and the large store, each
# binary in turn, ROUNDS times; one line per run (format, store, binary, wall s, peak RSS MB, output
# md5 prefix: the JSON must be the same for both), then the median peak RSS of each.
#
#   Benchmarks/report-scale/compare.sh A B [ROUNDS=3]
#
# The stores are run.sh's (bench-data/report-scale/, made by run.sh first).
set -euo pipefail
# shellcheck source=Benchmarks/report-scale/commands.sh
source "$(dirname "$0")/commands.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
a=$1
b=$2
rounds=${3:-3}
small=$root/bench-data/report-scale/fleet-200000-seed42.sqlite
large=$root/bench-data/report-scale/fleet-700000-seed44.sqlite
[ -f "$small" ] && [ -f "$large" ] || { echo "make the stores first: Benchmarks/report-scale/run.sh" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq "$rounds"); do
    for format in json html; do
        for side in small large; do
            for bin in "$a" "$b"; do
                db=$small
                [ "$side" = large ] && db=$large
                report_args "$format" "$db"
                /usr/bin/time -f '%e %M' -o "$work/t" "$bin" "${args[@]}" >"$work/out"
                read -r wall rss <"$work/t"
                echo "$format $side $bin $wall $((rss / 1024)) $(md5sum <"$work/out" | cut -c1-8)" | tee -a "$work/all"
            done
        done
    done
done
python3 - "$work/all" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    fmt, side, binary, wall, rss, _ = line.split()
    runs[(fmt, binary, side)].append(int(rss))
print("medians of peak RSS (MB):")
for (fmt, binary, side) in sorted(runs):
    if side == "small":
        small = statistics.median(runs[(fmt, binary, "small")])
        large = statistics.median(runs[(fmt, binary, "large")])
        print(f"  {fmt} {binary}: {small:.0f} -> {large:.0f} ({large / small:.2f}x)")
PY

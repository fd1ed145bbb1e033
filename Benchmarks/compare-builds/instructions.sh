#!/usr/bin/env bash
# Instructions executed (valgrind callgrind: the same count on every run, unlike times on this VM) by two
# arrival binaries on the same fleet: sender ingest, whole-fleet ingest, report JSON, report HTML.
#
#   instructions.sh A B [FLEET]    FLEET: a directory written by `arrival simulate` (default: a 10,000-activity
#                                  fleet, seed 42, made in a temporary directory with B)
#
# Binaries are copied without debug info first (valgrind 3.19 cannot read Swift 6.3's DWARF). The report runs
# read one store made by B's ingest (so an older A must read a store of the newer schema). Needs valgrind.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/A" "$1"
strip --strip-debug -o "$work/B" "$2"
fleet=${3:-}
if [ -z "$fleet" ]; then
    fleet="$work/fleet"
    "$work/B" simulate --out "$fleet" --activities 10000 --seed 42 >/dev/null
fi
"$work/B" ingest "$fleet" --db "$work/report.sqlite" --quiet
day=$(ls "$fleet/sender" | head -1)
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | awk '/refs:/ {gsub(",", "", $NF); print $NF}'; }
printf "%-16s %16s %16s %8s\n" measurement A_instructions B_instructions B/A
for m in sender_ingest fleet_ingest report_json report_html; do
    for side in A B; do
        rm -f "$work/i.sqlite" "$work/i.sqlite-wal" "$work/i.sqlite-shm"
        case $m in
            sender_ingest) n=$(count "$work/$side" ingest "$fleet/sender" --db "$work/i.sqlite" --quiet) ;;
            fleet_ingest) n=$(count "$work/$side" ingest "$fleet" --db "$work/i.sqlite" --quiet) ;;
            report_json) n=$(count "$work/$side" report --db "$work/report.sqlite" --format json --out /dev/null) ;;
            report_html) n=$(count "$work/$side" report --db "$work/report.sqlite" --day "$day" --days 7 --format html --out /dev/null) ;;
        esac
        eval "$side=$n"
    done
    printf "%-16s %16s %16s %8s\n" "$m" "$A" "$B" "$(awk -v a="$A" -v b="$B" 'BEGIN {printf "%.4f", b / a}')"
done

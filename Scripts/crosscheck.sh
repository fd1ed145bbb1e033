#!/usr/bin/env bash
# Cross-checks arrival's JSON report against the independent Python
# reference implementation of the contract (Scripts/reference) on simulated
# fleets, for the whole store and for two windows. Exits 1 on any difference.
#
#   Scripts/crosscheck.sh [SEEDS…]        (default seeds: 11 12 13)
set -euo pipefail
cd "$(dirname "$0")/.."
arrival=${ARRIVAL:-.build/debug/arrival}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seeds=("${@:-11 12 13}")
failures=0
checks=0
for seed in ${seeds[@]}; do
    "$arrival" simulate --out "$work/fleet-$seed" --seed "$seed" --activities 400 >/dev/null
    "$arrival" ingest --quiet --db "$work/$seed.sqlite" "$work/fleet-$seed"
    for window in "" "--day 2026-11-21" "--from 2026-11-21T05:30:00Z --to 2026-11-21T13:15:00.250Z"; do
        # shellcheck disable=SC2086
        "$arrival" report --db "$work/$seed.sqlite" $window > "$work/mine.json"
        # shellcheck disable=SC2086
        python3 Scripts/reference/arrival_reference.py $window "$work/fleet-$seed" > "$work/reference.json"
        checks=$((checks + 1))
        if ! cmp -s <(python3 -m json.tool --sort-keys "$work/mine.json") <(python3 -m json.tool --sort-keys "$work/reference.json"); then
            echo "crosscheck: seed $seed window [$window] differs from the reference:"
            diff <(python3 -m json.tool --sort-keys "$work/mine.json") <(python3 -m json.tool --sort-keys "$work/reference.json") | head -40
            failures=$((failures + 1))
        fi
    done
done
echo "crosscheck: $((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]

#!/usr/bin/env bash
# Cross-checks arrival's JSON report against the independent Python
# reference implementation of the contract (Scripts/reference) on simulated
# fleets, for the whole store and for two windows. Each seed's fleet is
# checked three ways:
#   plain     the fleet as `arrival simulate` wrote it: arrival's report on
#             it against the reference's;
#   exchange  a copy whose sender lines are mostly `exchange` lines of the
#             apns, fcm and tencent_chat providers, about 1% of them damaged
#             (Scripts/reference/exchangify.py): arrival against the
#             reference on that copy;
#   apns      a copy whose sender lines are all faithful `apns` exchanges,
#             so every derived record is its original line: arrival's
#             report on it against the reference's report on the PLAIN
#             fleet (and the reference's own report on the copy must equal
#             that too, which checks exchangify and the reference);
#   providers a fleet simulated with `--providers` (senders of the three
#             providers, FCM and Tencent errors, outages, timeouts written
#             through the sender kit's own exchange encoder): arrival
#             against the reference;
#   lifecycle a fleet simulated with `--lifecycle --providers` (dismissals,
#             some learned hours later, ends by the app, token rotations, a
#             widget that stops drawing, sends after a 410, push-to-start
#             that never appears or never gets a token): arrival against
#             the reference, and arrival again in partitions of 97 requests
#             (ARRIVAL_PARTITION_ROWS), which must give the same report.
#   channels  a fleet simulated with `--channels --lifecycle --providers`
#             (broadcast channels with subscribers joining mid-event, some
#             known only from renders, offline devices, dismissals, a stale
#             broadcaster, oversize broadcasts, records and exchanges):
#             arrival against the reference, and in partitions of 97 requests;
#   simbudget a fleet simulated with `--budget --channels --lifecycle --providers`
#             (chatty priority-10 senders against the budget the simulated devices
#             enforce, "More Frequent Updates" off on one install in five,
#             frequent_pushes written by the kit's encoder except from the oldest
#             builds, with every other model of the simulator): arrival against the
#             reference, and in partitions of 97 requests;
#   broadcast a dense, awkward broadcast fleet (Scripts/reference/broadcast_fleet.py:
#             channels, subscribers known from renders or callbacks only,
#             broadcasts at the instants of starts, ends, dismissals and the
#             8-hour limit, ties with direct pushes, /4/broadcasts exchanges,
#             damaged broadcast lines): arrival against the reference, and
#             in partitions of 7 requests.
#   budget    a dense contract-3.1 fleet (Scripts/reference/budget_fleet.py: chatty priority-10
#             senders against a per-hour budget the device enforces, lower where the user's
#             "More Frequent Updates" switch is off, switches that flip, unnamed values, ties on
#             the hour's bounds, channels, exchanges, damaged lines): arrival against the
#             reference, and in partitions of 7 requests.
# The lifecycle and simbudget fleets have three devices planted far below the fleet (`--outliers 3`):
# each one planted dropping 80 % or more must be listed.
# The reference reports by contract 3.2 (report schema 2 with its two breakdowns and outliers).
# Exits 1 on any difference.
#
#   Scripts/crosscheck.sh [SEEDS…]        (default seeds: 11 12 13)
#
# CROSSCHECK_EXCHANGE=0 checks only `plain`, leaving breakdowns.provider out
# of the comparison: for an arrival built before exchange lines and the
# provider field (contract 2.1, 2.6) were implemented.
set -euo pipefail
cd "$(dirname "$0")/.."
arrival=${ARRIVAL:-.build/debug/arrival}
exchange=${CROSSCHECK_EXCHANGE:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seeds=("${@:-11 12 13}")
failures=0
checks=0
windows=("" "--day 2026-11-21" "--from 2026-11-21T05:30:00Z --to 2026-11-21T13:15:00.250Z")

# A report as sorted, indented JSON; without breakdowns.provider when the
# exchange checks are off (an arrival that predates the provider field).
# With a second report (the one it is compared with): each
# outliers.devices[i].p_value that agrees with that report's at the same place
# within a relative 1e-9 (contract 3.2: arrival computes it in floating point,
# the reference exactly) is written as that report's, so that only a
# disagreement beyond that shows.
normalised() {
    python3 - "$1" "$exchange" "${2:-}" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
if sys.argv[2] == "0":
    report.get("breakdowns", {}).pop("provider", None)
if sys.argv[3]:
    theirs = (json.load(open(sys.argv[3])).get("outliers") or {}).get("devices") or []
    for mine, other in zip((report.get("outliers") or {}).get("devices") or [], theirs):
        a, b = mine.get("p_value"), other.get("p_value")
        if isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-9 * max(abs(a), abs(b)):
            mine["p_value"] = b
print(json.dumps(report, sort_keys=True, indent=4))
EOF
}

# compare LABEL MINE REFERENCE
compare() {
    checks=$((checks + 1))
    if ! cmp -s <(normalised "$2" "$3") <(normalised "$3"); then
        echo "crosscheck: $1 differs from the reference:"
        diff <(normalised "$2" "$3") <(normalised "$3") | head -40 || true
        failures=$((failures + 1))
    fi
}

# reference_reports DIR PREFIX: the reference's report of DIR for each window
reference_reports() {
    local i=0
    for window in "${windows[@]}"; do
        # shellcheck disable=SC2086
        python3 Scripts/reference/arrival_reference.py --contract 3.2 $window "$1" > "$2.$i.json"
        i=$((i + 1))
    done
}

# arrival_reports DIR PREFIX: arrival's report of DIR (ingested into a
# fresh store) for each window
arrival_reports() {
    local i=0
    "$arrival" ingest --quiet --db "$2.sqlite" "$1"
    for window in "${windows[@]}"; do
        # shellcheck disable=SC2086
        "$arrival" report --db "$2.sqlite" $window > "$2.$i.json"
        i=$((i + 1))
    done
}

# check_planted LABEL SIMULATE_OUTPUT REPORT: every device `simulate --outliers` planted dropping at
# least 80 % of what it is given is listed in the report's outliers (whose entries the reference has
# checked field for field), and some planted device is.
check_planted() {
    checks=$((checks + 1))
    if ! python3 - "$2" "$3" <<'EOF'
import json, re, sys
planted = re.findall(r"([0-9a-f]{16}) \(drops (\d+) %\)", open(sys.argv[1]).read())
listed = {d["device_id"] for d in (json.load(open(sys.argv[2])).get("outliers") or {}).get("devices") or []}
missing = [(device, drop) for device, drop in planted if int(drop) >= 80 and device not in listed]
if not planted or not listed & {device for device, _ in planted} or missing:
    print(f"planted {planted}, listed {sorted(listed)}, a heavy dropper not listed: {missing}")
    sys.exit(1)
EOF
    then
        echo "crosscheck: $1: the planted devices are not listed as they should be"
        failures=$((failures + 1))
    fi
}

# check_stage NAME DIR [PARTITION_ROWS]: arrival's reports of the fleet in DIR against the reference's,
# for each window; with PARTITION_ROWS, arrival's again in partitions of that many requests.
check_stage() {
    local name=$1 fleet=$2 rows=${3:-} i
    arrival_reports "$fleet" "$work/$name-mine"
    reference_reports "$fleet" "$work/$name-ref"
    for i in "${!windows[@]}"; do
        compare "$name window [${windows[$i]}]" "$work/$name-mine.$i.json" "$work/$name-ref.$i.json"
        if [ -n "$rows" ]; then
            # shellcheck disable=SC2086
            ARRIVAL_PARTITION_ROWS=$rows "$arrival" report --db "$work/$name-mine.sqlite" ${windows[$i]} \
                > "$work/$name-part.$i.json"
            compare "$name window [${windows[$i]}] in partitions of $rows" "$work/$name-part.$i.json" \
                "$work/$name-ref.$i.json"
        fi
    done
}

for seed in ${seeds[@]}; do
    fleet="$work/fleet-$seed"
    "$arrival" simulate --out "$fleet" --seed "$seed" --activities 400 >/dev/null
    check_stage "seed-$seed-plain" "$fleet"
    if [ "$exchange" = 0 ]; then
        continue
    fi

    python3 Scripts/reference/exchangify.py "$fleet" "$work/xfleet-$seed" --seed "$seed" 2>/dev/null
    check_stage "seed-$seed-exchange" "$work/xfleet-$seed"

    # The same requests as APNs exchanges only: both sides on the copy must equal the reference on the plain fleet.
    python3 Scripts/reference/exchangify.py "$fleet" "$work/afleet-$seed" --seed "$seed" \
        --providers apns --keep 0 --damage 0 2>/dev/null
    arrival_reports "$work/afleet-$seed" "$work/amine-$seed"
    reference_reports "$work/afleet-$seed" "$work/aref-$seed"
    for i in "${!windows[@]}"; do
        compare "seed $seed apns-exchange window [${windows[$i]}] (arrival on the copy, reference on the plain fleet)" \
            "$work/amine-$seed.$i.json" "$work/seed-$seed-plain-ref.$i.json"
        compare "seed $seed apns-exchange window [${windows[$i]}] (reference on the copy, reference on the plain fleet)" \
            "$work/aref-$seed.$i.json" "$work/seed-$seed-plain-ref.$i.json"
    done

    "$arrival" simulate --providers --out "$work/pfleet-$seed" --seed "$seed" --activities 400 >/dev/null
    check_stage "seed-$seed-providers" "$work/pfleet-$seed"

    # With devices planted far below the fleet (contract 3.2), on streams of their own: the rest of the
    # fleet is what it was without them.
    "$arrival" simulate --lifecycle --providers --outliers 3 --out "$work/lfleet-$seed" --seed "$seed" \
        --activities 400 >"$work/lfleet-$seed.txt"
    check_stage "seed-$seed-lifecycle" "$work/lfleet-$seed" 97
    check_planted "seed $seed lifecycle" "$work/lfleet-$seed.txt" "$work/seed-$seed-lifecycle-mine.0.json"

    "$arrival" simulate --channels --lifecycle --providers --out "$work/cfleet-$seed" --seed "$seed" --activities 300 \
        >/dev/null
    check_stage "seed-$seed-channels" "$work/cfleet-$seed" 97

    "$arrival" simulate --budget --channels --lifecycle --providers --outliers 3 --out "$work/sfleet-$seed" \
        --seed "$seed" --activities 300 >"$work/sfleet-$seed.txt"
    check_stage "seed-$seed-simbudget" "$work/sfleet-$seed" 97
    check_planted "seed $seed simbudget" "$work/sfleet-$seed.txt" "$work/seed-$seed-simbudget-mine.0.json"

    python3 Scripts/reference/broadcast_fleet.py "$work/bfleet-$seed" --seed "$seed" --activities 150
    check_stage "seed-$seed-broadcast" "$work/bfleet-$seed" 7

    python3 Scripts/reference/budget_fleet.py "$work/gfleet-$seed" "$seed" --activities 60
    check_stage "seed-$seed-budget" "$work/gfleet-$seed" 7
done
echo "crosscheck: $((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]

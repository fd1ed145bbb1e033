#!/usr/bin/env bash
# Times `arrival diff` on two simulated batches of about a million records
# each, in a release build; prints the median of RUNS runs and peak memory.
#
#   Benchmarks/diff/run.sh [ACTIVITIES] [RUNS]
#
# ACTIVITIES=35000 gives about 1.0 million records per side (apns, render and
# callback together: a whole simulated day). Side B is another seed with
# stale timestamps injected. A second pair holds only the sender's gzip
# batches of 102,000 activities: about 1.0 million apns records per side.
# Data goes to bench-data/ (ignored by git). Needs /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/../.."
activities="${1:-35000}"
runs="${2:-3}"
swift build -c release --product arrival >/dev/null
arrival=.build/release/arrival
data=bench-data
mkdir -p "$data"

simulate() { # DIR ACTIVITIES SEED [INJECT]: once; prints the records written
    local dir="$1" stamp="$1.summary-$2-$3-${4:-none}"
    if [ ! -f "$stamp" ]; then
        rm -rf "$dir"
        "$arrival" simulate --out "$dir" --activities "$2" --seed "$3" ${4:+--inject "$4"} --force | sed -n 2p >"$stamp.tmp"
        mv "$stamp.tmp" "$stamp"
    fi
    echo "$dir ($2 activities, seed $3, inject ${4:-none}):$(cat "$stamp")"
}

simulate "$data/diff-a" "$activities" 42
simulate "$data/diff-b" "$activities" 43 stale-timestamps
simulate "$data/diff-sender-a" 102000 42
simulate "$data/diff-sender-b" 102000 43 stale-timestamps

measure() { # LABEL A B [FLAGS...]
    local label="$1" a="$2" b="$3"
    shift 3
    local times=() memory=()
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %M" -o "$data/time.txt" "$arrival" diff "$a" "$b" --no-color "$@" >/dev/null
        read -r seconds kilobytes <"$data/time.txt"
        times+=("$seconds")
        memory+=("$kilobytes")
    done
    local median peak
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    peak=$(printf '%s\n' "${memory[@]}" | sort -n | tail -1)
    echo "$label: median ${median} s of ${runs} runs (all: ${times[*]}), peak RSS $((peak / 1024)) MB"
}

measure "diff, whole day" "$data/diff-a" "$data/diff-b"
measure "diff --records, whole day" "$data/diff-a" "$data/diff-b" --records
measure "diff, sender gzip batches" "$data/diff-sender-a/sender" "$data/diff-sender-b/sender"
measure "diff --records, sender gzip batches" "$data/diff-sender-a/sender" "$data/diff-sender-b/sender" --records

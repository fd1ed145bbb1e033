#!/usr/bin/env bash
# The simulator's output, byte for byte: sha256 of every file that
# `arrival simulate` writes (and of its printed summary) for a fixed set of
# runs, including the SampleData recipe. A refactoring of the simulator or of
# the encoders it writes through must leave every hash as it was.
#
# Usage: Scripts/sim-identity.sh record MANIFEST [path/to/arrival]   hashes before a change
#        Scripts/sim-identity.sh check MANIFEST [path/to/arrival]    the same hashes after it
# `check` also compares the regenerated SampleData tree with the committed SampleData/.
set -uo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
manifest="${2:-}"
if { [ "$mode" != record ] && [ "$mode" != check ]; } || [ -z "$manifest" ]; then
    echo "usage: $0 record|check MANIFEST [path/to/arrival]" >&2
    exit 2
fi
manifest="$(realpath -m "$manifest")"
arrival="$(realpath "${3:-.build/debug/arrival}")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name|arguments: the golden fleets, a larger one, and Documentation/SampleData.md's recipe.
runs=(
    "a|--activities 300 --seed 101"
    "b|--activities 500 --seed 202 --inject stale-timestamps"
    "c|--activities 400 --seed 303 --inject large-payloads --inject lost-callbacks"
    "d|--activities 2000 --seed 7"
    "sample|--activities 200 --seed 1 --day 2026-11-21"
)

hashes="$work/hashes"
: >"$hashes"
for run in "${runs[@]}"; do
    name="${run%%|*}"
    args="${run#*|}"
    # shellcheck disable=SC2086
    (cd "$work" && "$arrival" simulate --out "$name" $args >"$name.summary") || {
        echo "simulate $args failed" >&2
        exit 1
    }
    (cd "$work" && find "$name" -type f -print0 | sort -z | xargs -0 sha256sum) >>"$hashes"
    (cd "$work" && sha256sum "$name.summary") >>"$hashes"
    echo "$name: $(find "$work/$name" -type f | wc -l) files ($args)"
done

status=0
if [ "$mode" = record ]; then
    cp "$hashes" "$manifest"
    echo "recorded $(wc -l <"$manifest") hashes in $manifest"
else
    if diff -u "$manifest" "$hashes" >"$work/diff"; then
        echo "identical: all $(wc -l <"$manifest") hashes equal"
    else
        echo "DIFFERENT: $(grep -c '^[-+][0-9a-f]' "$work/diff") changed lines" >&2
        head -40 "$work/diff" >&2
        status=1
    fi
    if diff -r SampleData/sender "$work/sample/sender" >/dev/null \
        && diff -r SampleData/devices "$work/sample/devices" >/dev/null; then
        echo "SampleData: regenerated tree equals the committed one"
    else
        echo "SampleData: regenerated tree DIFFERS from the committed one" >&2
        status=1
    fi
fi
exit $status

#!/usr/bin/env bash
# Fails when a build log holds a compiler warning in the project's own code
# (Sources/, Tests/, Fuzz/, Benchmarks/): the project builds without one, and
# a new one is a CI failure, not noise. Warnings of dependencies, which the
# project cannot fix, are not counted.
#
#   Scripts/check-warnings.sh LOG...      (.ci/run tees `swift build` and `swift test` into logs)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
found="$(grep -hE "^$root/(Sources|Tests|Fuzz|Benchmarks)/[^:]+:[0-9]+:[0-9]+: warning:" "$@" | sort -u || true)"
if [ -n "$found" ]; then
    echo "check-warnings: $(echo "$found" | wc -l) warning(s) in the project's own code:" >&2
    echo "$found" >&2
    exit 1
fi
echo "check-warnings: no warning in the project's own code ($(cat "$@" | wc -l) log lines read)"

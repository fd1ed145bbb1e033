#!/usr/bin/env bash
# Formats the Swift sources (Sources, Tests, Fuzz, the benchmarks of Benchmarks/ArrivalBenchmarks) with the
# toolchain's swift-format and .swift-format, then lints them as CI does (exit 1 on any finding).
# Usage: Scripts/format.sh          format, then lint
#        Scripts/format.sh --check  lint only (run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--check" ]; then
    swift format format --in-place --recursive --parallel Sources Tests Fuzz Benchmarks/ArrivalBenchmarks Package.swift
fi
swift format lint --strict --recursive --parallel Sources Tests Fuzz Benchmarks/ArrivalBenchmarks Package.swift
echo "swift format: no findings"

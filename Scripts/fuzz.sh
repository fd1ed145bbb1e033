#!/usr/bin/env bash
# Fuzzes the line splitter, the JSON line scanner and the record decoder with
# libFuzzer under AddressSanitizer (Fuzz/README.md).
#
# Usage: Scripts/fuzz.sh [--runs N | --seconds S] [--seed N] [--build-only] [-- LIBFUZZER_FLAGS...]
#        Scripts/fuzz.sh --reproduce FILE...   run the target on saved inputs (e.g. Fuzz/crashes/crash-*)
#
# The target is compiled with swiftc straight from the sources of
# ArrivalModel, ArrivalHandOff, ArrivalStore and the decode stage of
# ArrivalIngest (nothing else of the package, no package dependency) into
# .build/fuzz, so the package's own build is never touched. It is rebuilt when
# a source is newer than it. The seed corpus is made from SampleData/, the
# decoder's test lines, the exchange lines of Fuzz/exchange_seeds.py, the tests'
# exchange fixtures, Documentation/examples/exchanges.jsonl and Fuzz/regressions/; the inputs libFuzzer finds are kept in
# .build/fuzz/corpus for the next run. A crash or broken invariant exits
# non-zero and leaves the input in Fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=1000000
seconds=
seed=
build_only=false
reproduce=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; seconds=; shift 2 ;;
        --seconds) seconds="$2"; runs=; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --build-only) build_only=true; shift ;;
        --reproduce) shift; reproduce=("$@"); break ;;
        --) shift; extra=("$@"); break ;;
        *) echo "usage: $0 [--runs N | --seconds S] [--seed N] [--build-only] [-- LIBFUZZER_FLAGS...]" >&2
           echo "       $0 --reproduce FILE..." >&2
           exit 2 ;;
    esac
done

out=.build/fuzz
binary=$out/decoder-fuzz
mkdir -p "$out/modules"

# MARK: Build

sources() { find "$@" -name '*.swift' | sort; }
model=()
while IFS= read -r file; do model+=("$file"); done < <(sources Sources/ArrivalModel)
handoff=()
while IFS= read -r file; do handoff+=("$file"); done < <(sources Sources/ArrivalHandOff)
store=()
while IFS= read -r file; do store+=("$file"); done < <(sources Sources/ArrivalStore)
# ArrivalIngest's decode stage (Decode/: bytes to lines to row batches) and the error it throws
# for a file it cannot read: admission's hashing (Crypto), the pipeline's threads and the writer's
# store writes are not fuzzed here, and the build needs no package dependency.
ingest=()
while IFS= read -r file; do ingest+=("$file"); done < <(
    sources Sources/ArrivalIngest/Decode; echo Sources/ArrivalIngest/Listing/InputError.swift)
target=(Fuzz/DecoderFuzz/*.swift)
# As the package compiles them (Swift 6, its upcoming features), optimised, with
# assertions kept, coverage and AddressSanitizer (the flags of Package.swift's
# swiftSettings: keep them together); -enable-testing lets the
# target reach the internal batch path (`decode(_:line:into:)`, `LineSplitter`).
flags=(
    -swift-version 6 -enable-upcoming-feature ExistentialAny -package-name arrival
    -enable-upcoming-feature MemberImportVisibility -enable-upcoming-feature InternalImportsByDefault
    -O -assert-config Debug -gline-tables-only
    -enable-testing -parse-as-library -I "$out/modules" -I Sources/CSQLite -I Sources/CZlib -I Sources/CISAL
)

stale=true
if [ -x "$binary" ] && [ -z "$(find "${model[@]}" "${handoff[@]}" "${store[@]}" "${ingest[@]}" "${target[@]}" Scripts/fuzz.sh \
    -newer "$binary" 2>/dev/null)" ]; then
    stale=false
fi
if $stale; then
    started=$(date +%s)
    module() {
        local name=$1 sanitize=$2
        shift 2
        swiftc "${flags[@]}" -sanitize="$sanitize" -module-name "$name" -wmo -c "$@" \
            -emit-module -emit-module-path "$out/modules/$name.swiftmodule" -o "$out/$name.o"
    }
    # The code under test gets libFuzzer's coverage and AddressSanitizer; the target's own code
    # (the reference parser and the checks) only AddressSanitizer, so its branches do not
    # count as coverage nor slow each run with coverage callbacks.
    module ArrivalModel fuzzer,address "${model[@]}"
    module ArrivalHandOff fuzzer,address "${handoff[@]}"
    module ArrivalStore fuzzer,address "${store[@]}"
    module ArrivalIngest fuzzer,address "${ingest[@]}"
    # Extern: the custom mutator calls libFuzzer's LLVMFuzzerMutate with the C calling convention.
    module DecoderFuzz address -enable-experimental-feature Extern "${target[@]}"
    # ld.gold warns about every AddressSanitizer helper it cannot export; nothing else is dropped.
    swiftc -sanitize=fuzzer,address "$out"/{ArrivalModel,ArrivalHandOff,ArrivalStore,ArrivalIngest,DecoderFuzz}.o \
        -lsqlite3 -lz -lisal -o "$binary" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
    echo "fuzz: built $binary in $(($(date +%s) - started)) s"
fi
$build_only && exit 0

# Swift's crash backtracer waits on a fuzzer that is dying: libFuzzer reports the crash itself.
export SWIFT_BACKTRACE=enable=no
symbolizer=$(dirname "$(readlink -f "$(command -v swiftc)")")/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"

# The seed corpus and the target's scratch file (gzip inputs are read back from a file) live
# in one temporary directory, removed at the end: libFuzzer ends with _Exit, so the target
# cannot clean up after itself.
work=$(mktemp -d "${TMPDIR:-/tmp}/arrival-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
seeds=$work/seeds
mkdir "$seeds"
export TMPDIR=$work

if [ ${#reproduce[@]} -gt 0 ]; then
    "$binary" "${reproduce[@]}"
    exit
fi

# MARK: Seed corpus

python3 - "$seeds" <<'PY'
import base64, glob, gzip, hashlib, json, os, sys, zlib

seeds = sys.argv[1]
units = []

def lines_of(data):
    return data.splitlines(keepends=True)

def inflate(data):
    """What a gzip file inflates to, members back to back, up to any break."""
    out = b""
    while data:
        d = zlib.decompressobj(16 + 15)
        try:
            out += d.decompress(data)
        except zlib.error:
            break
        if not d.eof:
            break
        data = d.unused_data
    return out

for path in sorted(glob.glob("SampleData/devices/**/*.jsonl", recursive=True)):
    lines = lines_of(open(path, "rb").read())
    units += lines[:6]                 # one line a unit: records, CRLF, blank and garbage lines
    units.append(b"".join(lines[:5]))  # small multi-line files
    units.append(b"".join(lines[-2:])) # the end of a file, torn last line included
for path in sorted(glob.glob("SampleData/sender/**/*.jsonl.gz", recursive=True)):
    data = open(path, "rb").read()
    lines = lines_of(inflate(data))
    units += lines[:3]
    if path.endswith(("-00.jsonl.gz", "-12.jsonl.gz", ".partial.jsonl.gz")):
        text = b"".join(lines[:3])
        units.append(gzip.compress(text, mtime=0))                                    # one member
        units.append(gzip.compress(lines[0], mtime=0) + gzip.compress(b"".join(lines[1:3]), mtime=0))  # two
        whole = gzip.compress(text, mtime=0)
        units.append(whole[: len(whole) // 2])                                        # cut short
        units.append(whole + b"garbage after the member\n")                           # not another member
for case in json.load(open("Tests/ArrivalIngestTests/Fixtures/decoding/line-cases.json")):
    units.append(base64.b64decode(case["line_base64"]))
sys.dont_write_bytecode = True
sys.path.insert(0, "Fuzz")
from exchange_seeds import exchange_lines  # exchange lines of the three providers, good and broken
units += exchange_lines()
# The exchange fixtures of the tests (derived by the Python reference) and the documentation's examples.
for path in sorted(glob.glob("Tests/ArrivalIngestTests/Fixtures/Exchanges/*.jsonl")) + ["Documentation/examples/exchanges.jsonl"]:
    if not path.endswith(".expected.jsonl") and os.path.exists(path):
        units += lines_of(open(path, "rb").read())
for path in sorted(glob.glob("Fuzz/regressions/*")):  # inputs that once failed, kept once fixed
    units.append(open(path, "rb").read())

for unit in units:
    if 0 < len(unit) <= 4096:
        name = hashlib.sha1(unit).hexdigest()
        with open(os.path.join(seeds, name), "wb") as f:
            f.write(unit)
print(f"fuzz: {len(os.listdir(seeds))} seed inputs from SampleData/, the decoder's test lines, the exchange seeds and fixtures, and Fuzz/regressions/")
PY

# MARK: Run

mkdir -p "$out/corpus" Fuzz/crashes
limit=()
if [ -n "$seconds" ]; then limit=(-max_total_time="$seconds"); else limit=(-runs="$runs"); fi
[ -n "$seed" ] && limit+=(-seed="$seed")
log=$out/last-run.log
command=("$binary" "${limit[@]}" -max_len=4096 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1
    -dict=Fuzz/DecoderFuzz/json.dict -artifact_prefix=Fuzz/crashes/ "${extra[@]}" "$out/corpus" "$seeds")
echo "fuzz: ${command[*]}"
started=$(date +%s)
set +e
"${command[@]}" >"$log" 2>&1
status=$?
set -e
elapsed=$(($(date +%s) - started))
executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
if [ $status -ne 0 ]; then
    # What broke (the invariant's message or the sanitizer's report), then the end of the log.
    grep -m 5 -E "^INFO: Seed|Fatal error:|^  line \(|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY:" "$log" || true
    echo "..."
    tail -n 25 "$log"
    echo "fuzz: FAILED (exit $status) after ${executions:-?} executions in $elapsed s; full log: $log" >&2
    ls -1t Fuzz/crashes/ 2>/dev/null | head -5 | sed 's|^|fuzz: input kept: Fuzz/crashes/|' >&2
    exit $status
fi
grep -E "^(INFO: Seed|#[0-9]+[[:space:]]+(INITED|DONE))" "$log" || true
echo "fuzz: ${executions:-?} executions in $elapsed s, no crash, no broken invariant" \
    "($(find "$out/corpus" -type f | wc -l) inputs in $out/corpus)"

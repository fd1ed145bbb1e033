#!/usr/bin/env bash
# The examples the docs show, run (issue 43):
#   - every ```json block of README.md and Documentation/*.md whose lines are records ({"v":1,…}) is ingested
#     with --strict, and must store every line: an example a reader copies must be valid;
#   - the check-payload example of Documentation/Instrumenting.md prints what the page shows (the clock's
#     "now (…)" masked).
#
#   Scripts/doc-examples.sh [ARRIVAL]     (default: .build/debug/arrival)
set -euo pipefail
cd "$(dirname "$0")/.."
arrival=$(readlink -f "${1:-.build/debug/arrival}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
python3 - "$work" README.md Documentation/*.md <<'PY'
import os, re, sys
work = sys.argv[1]
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8").read()
    for index, block in enumerate(re.findall(r"```json\n(.*?)```", text, re.S)):
        lines = [line for line in block.splitlines() if line.strip()]
        if lines and all(line.startswith('{"v":1') for line in lines):
            name = f"{path.replace('/', '_')}.{index}.jsonl"
            with open(os.path.join(work, name), "w", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
PY
count=0
for example in "$work"/*.jsonl; do
    [ -e "$example" ] || continue
    count=$((count + 1))
    if ! "$arrival" ingest --strict --quiet --db "$work/$(basename "$example").sqlite" "$example" 2>"$work/err"; then
        echo "FAIL  $(basename "$example"): $(cat "$work/err")"
        failures=$((failures + 1))
    else
        echo "ok    $(basename "$example" .jsonl): every line a record"
    fi
done
[ "$count" -gt 0 ] || { echo "doc-examples: no JSON Lines example found" >&2; exit 1; }

# The check-payload example: the page's lines against what the command prints.
expected=$(python3 - Documentation/Instrumenting.md <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
block = re.search(r"    \$ arrival check-payload --provider tencent_chat (\S+)\n((?:    .*\n)+?)    \$ echo \$\?\n    (\d+)\n", text)
print(block.group(1))
print(block.group(3))
print("".join(line[4:] + "\n" for line in block.group(2).splitlines()), end="")
PY
)
file=$(echo "$expected" | sed -n 1p)
want_status=$(echo "$expected" | sed -n 2p)
status=0
"$arrival" check-payload --provider tencent_chat "$file" >"$work/out" 2>&1 || status=$?
got=$(sed -E 's/before now \([0-9]+\)/before now (…)/' "$work/out")
if [ "$got" = "$(echo "$expected" | sed -n '3,$p')" ] && [ "$status" = "$want_status" ]; then
    echo "ok    Instrumenting.md: check-payload --provider tencent_chat prints what the page shows (exit $status)"
else
    echo "FAIL  Instrumenting.md: check-payload printed (exit $status, the page says $want_status):"
    echo "$got"
    failures=$((failures + 1))
fi
if [ "$failures" -gt 0 ]; then
    echo "doc-examples: $failures failed" >&2
    exit 1
fi
echo "doc-examples: all passed"

#!/usr/bin/env python3
"""Writes (or checks) the `.expected.jsonl` file of line fixtures, using the
reference implementation (arrival_reference.py) of the data contract.

For every non-blank line of a fixture `NAME.jsonl` the expected file
`NAME.expected.jsonl` holds one JSON object, in the same order:

    {"line": N, "record": {...}}        the line is a valid `apns` record, or
                                        an `exchange` (2.6) from which one is
                                        derived: all 16 fields of table 2.1,
                                        in table order, times as integer
                                        milliseconds since the Unix epoch,
                                        absent fields as null, `provider`
                                        as compared in 2.5 (absent = "apns")
    {"line": N, "malformed": "cause"}   the line is malformed, with that
                                        cause (a key of malformed_by_cause)

N is the 1-based physical line number in the file (blank lines are skipped
and produce no object, but they do advance N). A fixture whose valid lines
are `render` or `callback` records is refused: this format is for lines that
become `apns` records.

Usage:
    python3 Scripts/reference/derive_fixtures.py [--check] [--explain] PATH...

PATH is a fixture file or a directory (its `*.jsonl` files that are not
`*.expected.jsonl`). `--check` compares with the expected files instead of
writing them and exits 1 on a difference; `--explain` prints, to stderr, why
each malformed line is malformed (the explanation is not part of the
expected file: only the cause is contract).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrival_reference as ref  # noqa: E402

EXPECTED_SUFFIX = ".expected.jsonl"
APNS_FIELDS = [spec.name for spec in ref.SCHEMAS["apns"]]


def expected_lines(path: str, explain: bool) -> list[str]:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == ref.GZIP_MAGIC:
        data, broken = ref.gunzip_salvage(data)
        if broken:
            raise SystemExit(f"{path}: a broken gzip stream is not a line fixture")
    out = []
    for lineno, line in ref.split_lines(data):
        if len(line) <= ref.MAX_LINE_BYTES and ref.is_blank(line):
            continue
        try:
            rec = ref.parse_line(line)
        except ref.Malformed as e:
            if explain:
                why = f" ({e.detail})" if e.detail else ""
                print(f"{path}:{lineno}: {e.cause}{why}", file=sys.stderr)
            out.append(json.dumps({"line": lineno, "malformed": e.cause}))
            continue
        if rec.kind != "apns":
            raise SystemExit(f"{path}:{lineno}: a valid {rec.kind} line; this "
                             "fixture format is for lines that become apns records")
        record = dict(zip(APNS_FIELDS, rec.values))
        out.append(json.dumps({"line": lineno, "record": record}, ensure_ascii=False))
    return out


def fixtures(paths: list[str]) -> list[str]:
    found = []
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if name.endswith(".jsonl") and not name.endswith(EXPECTED_SUFFIX):
                    found.append(os.path.join(p, name))
        else:
            found.append(p)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the expected files, write nothing")
    parser.add_argument("--explain", action="store_true",
                        help="print why each malformed line is malformed")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    args = parser.parse_args()
    differences = 0
    for path in fixtures(args.paths):
        base = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
        target = base + EXPECTED_SUFFIX
        text = "".join(line + "\n" for line in expected_lines(path, args.explain))
        if args.check:
            try:
                with open(target, encoding="utf-8") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                print(f"derive_fixtures: {target} is not what the reference derives "
                      f"from {path}", file=sys.stderr)
                differences += 1
        else:
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {target}", file=sys.stderr)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The shape of Sources/, printed and held against a baseline (issue 42).

    python3 Scripts/structure.py            print the figures, fail if any grew past Scripts/structure-baseline.json
    python3 Scripts/structure.py --update   write the baseline from today's figures (after a change that shrank them,
                                            or with a reason in the commit message when one must grow)

What it counts, per library module of Sources/ (the C shims are left out):
  - `@unchecked Sendable` conformances, and any that has no comment on the line above or after it that says why;
  - the longest functions (func, init, deinit, subscript: from the declaration to its closing brace);
  - labelled loops (`name: for|while|repeat`);
  - duplicate runs: pairs of places that share six or more normalized lines (blank lines, comments, imports and
    lone punctuation passed over, white space folded), the same measure as the `duplicates` tool of the library
    but written here so CI needs nothing that is not in the repository.
Rules that hold whatever the baseline says:
  - no function in ArrivalIngest over 60 lines, and no labelled loop there (the JSON scanner's hot loop included:
    its steps are `@inline(__always)` functions; with them and the rest of issue 42's ingest changes, callgrind
    counted 0.6 % more instructions for a sender ingest and 0.8 % for a fleet's, Benchmarks/compare-builds/
    instructions.sh, 2026-11-29);
  - every `@unchecked Sendable` explained in a comment beside it that names it (`// @unchecked: …` or
    `/// `@unchecked Sendable`: …`, on the line or the three above).
"""

import json
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "Sources")
BASELINE = os.path.join(ROOT, "Scripts", "structure-baseline.json")
C_SHIMS = {"CSQLite", "CZlib", "CISAL"}
INGEST_LIMIT = 60

FUNC_DECL = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|open|static|class|final|override|mutating|nonmutating|"
    r"nonisolated|convenience|required|dynamic|borrowing|consuming)(?:\([^)]*\))?\s+)*"
    r"(func\s+[^\s(<]+|init[?!]?(?=\s*[(<])|deinit\b|subscript(?=\s*[(<]))"
)
LABELLED_LOOP = re.compile(r"^\s*([a-zA-Z_]\w*)\s*:\s*(for|while|repeat)\b")
UNCHECKED = re.compile(r"@unchecked\s+Sendable")


def skip_string(line, i):
    """The index after the string literal whose contents begin at i (interpolations and their own strings skipped)."""
    n = len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            if line.startswith("\\(", i):
                depth = 1
                i += 2
                while i < n and depth > 0:
                    if line[i] == '"':
                        i = skip_string(line, i + 1)
                        continue
                    depth += {"(": 1, ")": -1}.get(line[i], 0)
                    i += 1
                continue
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return n


def strip_code(line, state, keep_strings=False):
    """The line with comments removed and string contents blanked (kept with `keep_strings`); state carries block
    comments and multi-line strings."""
    out = []
    i = 0
    n = len(line)
    while i < n:
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"] = False
            i = end + 2
            continue
        if state["multiline"]:
            end = line.find('"""', i)
            if end < 0:
                return "".join(out)
            state["multiline"] = False
            i = end + 3
            out.append('""')
            continue
        c = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if line.startswith('"""', i):
            state["multiline"] = True
            i += 3
            continue
        if c == '"':
            end = skip_string(line, i + 1)
            out.append(line[i:end] if keep_strings else '""')
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def swift_files():
    for module in sorted(os.listdir(SOURCES)):
        if module in C_SHIMS:
            continue
        base = os.path.join(SOURCES, module)
        for folder, _, files in os.walk(base):
            for name in sorted(files):
                if name.endswith(".swift"):
                    path = os.path.join(folder, name)
                    yield module, os.path.relpath(path, ROOT), path


def functions(lines):
    """(first line, length, name) of every function: from its declaration to the brace that closes its body."""
    state = {"block": False, "multiline": False}
    code = [strip_code(line, state) for line in lines]
    found = []
    for index, text in enumerate(code):
        match = FUNC_DECL.match(text)
        if not match:
            continue
        depth = 0
        parens = 0
        opened = False
        for end in range(index, len(code)):
            for c in code[end]:
                if not opened:
                    # Until the body opens, braces inside the parameters (default closures) do not count.
                    if c in "([":
                        parens += 1
                    elif c in ")]":
                        parens -= 1
                    elif c == "{" and parens == 0:
                        depth = 1
                        opened = True
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
            if opened and depth == 0:
                found.append((index + 1, end - index + 1, match.group(1).replace("func ", "")))
                break
            if not opened and end > index and parens == 0 and code[end].strip() == "":
                break  # a requirement in a protocol: no body
            if not opened and end > index + 30:
                break
    return found


def normalized(lines):
    """(line number, text) of the lines that count for duplicates."""
    state = {"block": False, "multiline": False}
    kept = []
    for number, line in enumerate(lines, 1):
        # Strings are kept: two option declarations alike but for their help texts are not one logic twice.
        text = strip_code(line, state, keep_strings=True)
        text = " ".join(text.split())
        if not text or text.startswith("import ") or re.fullmatch(r"[{}()\[\],;]+", text):
            continue
        kept.append((number, text))
    return kept


def duplicate_pairs(files, window=6):
    """Pairs of places (file, line) that share a run of `window` normalized lines, one per pair of files' runs."""
    seen = defaultdict(list)
    for path, kept in files.items():
        for i in range(len(kept) - window + 1):
            key = "\n".join(text for _, text in kept[i:i + window])
            seen[key].append((path, kept[i][0], i))
    pairs = {}
    for places in seen.values():
        if len(places) < 2 or len(places) > 8:
            continue  # too common to be one piece of logic written twice (a shape that recurs everywhere)
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (pa, la, ia), (pb, lb, ib) = places[a], places[b]
                if pa == pb and abs(ia - ib) < window:
                    continue
                # A run shows as one window per line of it: the windows of one run share its files and the
                # offset between its two places, and the run is named by its first lines.
                key = (pa, pb, ia - ib)
                pairs[key] = min(pairs.get(key, (la, lb)), (la, lb))
    return sorted(f"{a}:{la} ~ {b}:{lb}" for (a, b, _), (la, lb) in pairs.items())


def measure():
    unchecked = defaultdict(list)
    unexplained = []
    longest = defaultdict(list)
    labelled = []
    kept = {}
    for module, relative, path in swift_files():
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        for number, line in enumerate(lines, 1):
            if UNCHECKED.search(line) and not line.strip().startswith("//"):
                unchecked[module].append(f"{relative}:{number}")
                # The reason is a comment that names it, on the line itself or the three above.
                around = lines[max(0, number - 4):number - 1] + [line]
                if not any("//" in text and "unchecked" in text.split("//", 1)[1] for text in around):
                    unexplained.append(f"{relative}:{number}")
            loop = LABELLED_LOOP.match(line)
            if loop and loop.group(1) not in ("case", "default"):
                labelled.append((module, relative, number))
        for first, length, name in functions(lines):
            longest[module].append((length, f"{relative}:{first}", name))
        kept[relative] = normalized(lines)
    for module in longest:
        longest[module].sort(reverse=True)
    pairs = duplicate_pairs(kept)
    return unchecked, unexplained, longest, labelled, pairs


def main():
    update = "--update" in sys.argv[1:]
    unchecked, unexplained, longest, labelled, pairs = measure()
    figures = {
        "unchecked_sendable": sum(len(v) for v in unchecked.values()),
        "duplicate_runs": len(pairs),
        "longest_function": {module: entries[0][0] for module, entries in sorted(longest.items()) if entries},
    }
    print(f"@unchecked Sendable: {figures['unchecked_sendable']}")
    for module, places in sorted(unchecked.items()):
        print(f"  {module}: {len(places)} ({', '.join(places)})")
    print("longest functions, per module (lines):")
    for module, entries in sorted(longest.items()):
        top = ", ".join(f"{name} {length} ({place})" for length, place, name in entries[:3])
        print(f"  {module}: {top}")
    print(f"labelled loops: {len(labelled)}")
    for module, relative, number in labelled:
        print(f"  {relative}:{number}")
    print(f"duplicate runs of 6+ lines in Sources/: {len(pairs)}")
    for pair in pairs:
        print(f"  {pair}")

    if update:
        with open(BASELINE, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=2, sort_keys=True)
            handle.write("\n")
        print(f"structure: baseline written to {os.path.relpath(BASELINE, ROOT)}")
        return 0

    failures = []
    for length, place, name in longest.get("ArrivalIngest", []):
        if length > INGEST_LIMIT:
            failures.append(f"{place}: {name} is {length} lines (ArrivalIngest's limit is {INGEST_LIMIT})")
    for module, relative, number in labelled:
        if module == "ArrivalIngest":
            failures.append(f"{relative}:{number}: a labelled loop in ArrivalIngest")
    for place in unexplained:
        failures.append(f"{place}: @unchecked Sendable without a comment saying why it is safe")
    try:
        with open(BASELINE, encoding="utf-8") as handle:
            baseline = json.load(handle)
    except FileNotFoundError:
        failures.append(f"no baseline at {os.path.relpath(BASELINE, ROOT)} (run with --update)")
        baseline = None
    if baseline:
        for key in ("unchecked_sendable", "duplicate_runs"):
            if figures[key] > baseline[key]:
                failures.append(f"{key} grew: {baseline[key]} -> {figures[key]}")
        for module, length in figures["longest_function"].items():
            limit = baseline["longest_function"].get(module)
            if limit is not None and length > limit:
                failures.append(f"the longest function of {module} grew: {limit} -> {length} lines")
    for failure in failures:
        print(f"structure: {failure}", file=sys.stderr)
    if failures:
        return 1
    print("structure: nothing grew")
    return 0


if __name__ == "__main__":
    sys.exit(main())

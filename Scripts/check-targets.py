#!/usr/bin/env python3
"""Holds the two target tables of Documentation/Architecture.md to
Package.swift, as `swift package dump-package` reads it: between
<!-- targets --> and <!-- /targets --> every target of the product (neither a
test, a system library nor a test support target), between
<!-- test-targets --> and <!-- /test-targets --> every test target and test
support target (`…TestSupport`), each with its dependencies (targets by name,
other packages' products by product name).
Prints 'targets: N passed, N failed'; exits 1 when they differ.
"""
import json
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                                    capture_output=True, text=True).stdout)


def is_test(target):
    return target["type"] == "test" or target["name"].endswith("TestSupport")


def targets(select):
    found = {}
    for target in package["targets"]:
        if target["type"] == "system" or not select(target):
            continue
        deps = []
        for dependency in target.get("dependencies", []):
            kind = next(iter(dependency))
            deps.append(dependency[kind][0])
        found[target["name"]] = set(deps)
    return found


def documented(marker):
    text = open(os.path.join(root, "Documentation", "Architecture.md"), encoding="utf-8").read()
    table = text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
    rows = {}
    for line in table.splitlines():
        match = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
        if match:
            deps = match.group(2).strip()
            rows[match.group(1)] = set() if deps == "—" else {d.strip() for d in deps.split(",")}
    return rows


passed = failed = 0
for marker, actual in [("targets", targets(lambda t: not is_test(t))), ("test-targets", targets(is_test))]:
    table = documented(marker)
    for name in sorted(set(actual) | set(table)):
        if name not in table:
            print(f"targets: {name} is in Package.swift, not in the {marker} table of Documentation/Architecture.md")
            failed += 1
        elif name not in actual:
            print(f"targets: {name} is in the {marker} table of Documentation/Architecture.md, not in Package.swift")
            failed += 1
        elif actual[name] != table[name]:
            print(f"targets: {name}: Package.swift has {sorted(actual[name])}, the table {sorted(table[name])}")
            failed += 1
        else:
            passed += 1
print(f"targets: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

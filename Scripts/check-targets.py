#!/usr/bin/env python3
"""Holds the target table of Documentation/Architecture.md (between
<!-- targets --> and <!-- /targets -->) to Package.swift, as
`swift package dump-package` reads it: every non-test target, and each one's
dependencies (targets by name, other packages' products by product name).
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
actual = {}
for target in package["targets"]:
    if target["type"] in ("test", "system") or target["name"] == "ArrivalTestSupport":
        continue
    deps = []
    for dependency in target.get("dependencies", []):
        kind = next(iter(dependency))
        deps.append(dependency[kind][0])
    actual[target["name"]] = set(deps)

text = open(os.path.join(root, "Documentation", "Architecture.md"), encoding="utf-8").read()
table = text.split("<!-- targets -->", 1)[1].split("<!-- /targets -->", 1)[0]
documented = {}
for line in table.splitlines():
    match = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
    if match:
        deps = match.group(2).strip()
        documented[match.group(1)] = set() if deps == "—" else {d.strip() for d in deps.split(",")}

passed = failed = 0
for name in sorted(set(actual) | set(documented)):
    if name not in documented:
        print(f"targets: {name} is in Package.swift, not in Documentation/Architecture.md")
        failed += 1
    elif name not in actual:
        print(f"targets: {name} is in Documentation/Architecture.md, not in Package.swift")
        failed += 1
    elif actual[name] != documented[name]:
        print(f"targets: {name}: Package.swift has {sorted(actual[name])}, the table {sorted(documented[name])}")
        failed += 1
    else:
        passed += 1
print(f"targets: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)

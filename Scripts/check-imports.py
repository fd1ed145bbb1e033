#!/usr/bin/env python3
"""Imports that say what is true (issue 42): every `import` of a Swift file is
of a module its target declares, and uses something of that module.

    python3 Scripts/check-imports.py              check the package at the repository's root
    python3 Scripts/check-imports.py --root DIR   check the package at DIR
    python3 Scripts/check-imports.py --self-test  check small made-up packages, and that each finding is found

The targets and their dependencies are Package.swift's, as `swift package dump-package` reads them (with
ARRIVAL_BENCHMARKS set, so the benchmark target counts too); every target's Swift files are read, tests included.

Two kinds of finding, each printed as `FILE:LINE: ...` and failing the check (exit 1):
  - undeclared: `import X` where X is a module of this package (a target), a product named in Package.swift, or a
    module of a checked-out dependency (.build/checkouts/*/Sources/X), and the file's target does not list X among
    its own dependencies. A module that comes along through another dependency is not declared: a change to that
    other module's dependencies would break this file, and the table of targets would not say why.
  - unused: `import X` of a Swift target of this package, and the file uses no name X declares `public`,
    `package` or `open` (with `@testable import`, its internal names too): a type, top-level function or
    variable of X written anywhere in the file's code; a member of X (a property, method, case, nested type,
    protocol requirement, member of an extension) written after a dot (`value.member`, `.member`, `\.member`,
    `Type.Nested`), which is how a file reaches a member: a member's name alone is as often the file's own
    local. Comments and the plain text of strings are left out, interpolations kept. A name that X shares
    with another module counts for X, so the check may miss an unused import (`value.count` is a use of any
    module that declares a `count`); it reports only imports no name of the file can stand for. Operators
    from the standard set (`+`, `==`, ...) are not names: a file that used only such an operator of X would
    be reported, and none does. (An import this check misses is found by removing it and building: the
    compiler, with MemberImportVisibility, names the module a member needs.)
Imports of the toolchain's modules (Foundation, Glibc, Synchronization, Testing, ...) are not checked, nor
whether a C module (CSQLite, CZlib, CISAL) is used.
Prints 'imports: N passed, N failed' (files).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

IMPORT = re.compile(
    r"^\s*((?:@[\w]+(?:\([^)]*\))?\s+)*)"
    r"(?:(?:public|package|internal|fileprivate|private)\s+)?"
    r"import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?([A-Za-z_]\w*)"
)
ACCESS = r"(?:public|package|open)(?:\(set\))?"
MODIFIERS = (
    r"(?:(?:public|package|open|internal|private|fileprivate)(?:\(set\))?|static|class|final|override|mutating|"
    r"nonmutating|nonisolated|convenience|required|dynamic|lazy|weak|unowned|indirect|borrowing|consuming|"
    r"prefix|postfix|infix|distributed)"
)
ATTRIBUTES = r"(?:@[\w.]+(?:\([^)]*\))?\s+)*"
DECLARATION = re.compile(
    r"^\s*" + ATTRIBUTES + r"((?:" + MODIFIERS + r"\s+)*)"
    r"(class|struct|enum|protocol|actor|typealias|associatedtype|extension|func|var|let|case|macro)\s+"
    r"(`?[A-Za-z_]\w*`?|[^\s\w(<{`]+)"
)
CASE_NAMES = re.compile(r"(?:^|,)\s*`?([A-Za-z_]\w*)`?")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
MEMBER = re.compile(r"\.\s*`?([A-Za-z_]\w*)")
# Declarations in these count; in any other block (a function's body, a closure) they are locals.
TYPE_LEVEL = {"file", "class", "struct", "enum", "protocol", "actor", "extension"}
STANDARD_OPERATORS = set("+ - * / % == != < > <= >= && || ! ?? ... ..< += -= *= /= & | ^ ~ << >> ~= === !==".split())


def strip_code(text):
    """`text` with comments and the plain text of string literals blanked (interpolations kept), lines kept."""
    out = []
    i = 0
    n = len(text)
    # A stack of what is open: "code" inside an interpolation (with its paren depth), or a string (its closing quote).
    stack = []
    depth = 0
    while i < n:
        c = text[i]
        in_string = stack and stack[-1][0] == "string"
        if in_string:
            closing = stack[-1][1]
            hashes = stack[-1][2]
            if c == "\\" and i + 1 < n and text.startswith("#" * hashes, i + 1):
                # `\(` (`\#(` in a raw string of one #) opens an interpolation; any other escape is the string's.
                j = i + 1 + hashes
                if j < n and text[j] == "(":
                    stack.append(("code", depth))
                    depth = 0
                    out.append(" (")
                    i = j + 1
                    continue
                out.append(" " * (j - i) if text[j] != "\n" else " " * (j - i) + "\n")
                i = j + 1
                continue
            if text.startswith(closing, i):
                stack.pop()
                out.append(" " * len(closing))
                i += len(closing)
                continue
            out.append("\n" if c == "\n" else " ")
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if text.startswith("/*", i):
            level = 0
            j = i
            while j < n:
                if text.startswith("/*", j):
                    level += 1
                    j += 2
                elif text.startswith("*/", j):
                    level -= 1
                    j += 2
                    if level == 0:
                        break
                else:
                    j += 1
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
            continue
        match = re.match(r'(#*)("""|")', text[i:i + 64]) if c in '#"' else None
        if match:
            hashes = len(match.group(1))
            quote = match.group(2)
            stack.append(("string", quote + "#" * hashes, hashes))
            out.append(" " * match.end())
            i += match.end()
            continue
        if stack and stack[-1][0] == "code":
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    depth = stack.pop()[1]
                    out.append(")")
                    i += 1
                    continue
                depth -= 1
        out.append(c)
        i += 1
    return "".join(out)


def declared_names(code, testable):
    """The names a file declares for other modules: with `public`, `package` or `open`; the cases of such an
    enum; the requirements of such a protocol and the members of such an extension; `testable`: every name not
    private. Only declarations at file level or in a type or extension count (not a function's locals)."""
    top_level = set()
    members = set()
    operators = set()
    # One entry per open brace: the kind of declaration that opened it (None for a body, closure or statement)
    # and whether that declaration is exported.
    blocks = []
    pending = (None, False)
    # A line may hold several declarations (`extension Int { package var doubled: Int { self * 2 } }`): each
    # piece between braces and semicolons is read on its own.
    for piece in re.split(r"([{};\n])", code):
        if piece == "{":
            blocks.append(pending)
            pending = (None, False)
            continue
        if piece == "}":
            if blocks:
                blocks.pop()
            continue
        match = DECLARATION.match(piece)
        if match:
            modifiers, kind, name = match.group(1), match.group(2), match.group(3).strip("`")
            enclosing_kind, enclosing_exported = blocks[-1] if blocks else ("file", False)
            at_type_level = all(kind_ in TYPE_LEVEL for kind_, _ in blocks)
            explicit = bool(re.search(r"\b" + ACCESS + r"(?=\s|$)", modifiers + " "))
            hidden = bool(re.search(r"\b(?:private|fileprivate)\b", modifiers))
            if kind == "case":
                exported = enclosing_kind == "enum" and (enclosing_exported or testable)
            elif explicit:
                exported = True
            elif testable:
                exported = not hidden
            else:
                exported = (
                    enclosing_kind in ("protocol", "extension")
                    and enclosing_exported
                    and not re.search(r"\b(?:private|fileprivate|internal)\b", modifiers)
                )
            if exported and at_type_level:
                names = members if blocks else top_level
                if kind == "case":
                    rest = re.sub(r"\([^)]*\)|=[^,]*", "", piece[match.start(3):])
                    names.update(CASE_NAMES.findall(rest))
                elif kind == "func" and not IDENTIFIER.fullmatch(name):
                    operators.add(name)
                elif kind != "extension" and IDENTIFIER.fullmatch(name):
                    names.add(name)
            pending = (kind, exported or (kind == "extension" and explicit))
    return top_level, members, operators


def swift_files(directory):
    for folder, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".swift"):
                yield os.path.join(folder, name)


def load_package(root):
    environment = dict(os.environ, ARRIVAL_BENCHMARKS="1")
    dumped = subprocess.run(
        ["swift", "package", "dump-package"], cwd=root, env=environment, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(dumped)


def target_directory(root, target):
    if target.get("path"):
        return os.path.join(root, target["path"])
    return os.path.join(root, "Tests" if target["type"] == "test" else "Sources", target["name"])


def check(root, package):
    targets = [t for t in package["targets"] if t["type"] != "plugin"]
    project = {t["name"] for t in targets}
    swift_targets = {t["name"] for t in targets if t["type"] != "system"}
    declared = {}
    products = set()
    for target in targets:
        names = set()
        for dependency in target.get("dependencies", []):
            kind = next(iter(dependency))
            names.add(dependency[kind][0])
            if kind == "product":
                products.add(dependency[kind][0])
        declared[target["name"]] = names
    checked = project | products
    checkouts = os.path.join(root, ".build", "checkouts")
    if os.path.isdir(checkouts):
        for checkout in os.listdir(checkouts):
            sources = os.path.join(checkouts, checkout, "Sources")
            if os.path.isdir(sources):
                checked |= {name for name in os.listdir(sources) if os.path.isdir(os.path.join(sources, name))}

    files = {}
    for target in targets:
        if target["type"] == "system":
            continue
        for path in swift_files(target_directory(root, target)):
            with open(path, encoding="utf-8") as handle:
                files[path] = (target["name"], strip_code(handle.read()))

    exports = {}

    def exported(module, testable):
        key = (module, testable)
        if key not in exports:
            top_level, members, operators = set(), set(), set()
            for path, (owner, code) in files.items():
                if owner == module:
                    more = declared_names(code, testable)
                    top_level |= more[0]
                    members |= more[1]
                    operators |= more[2]
            exports[key] = (top_level, members, operators - STANDARD_OPERATORS)
        return exports[key]

    findings = []
    passed = failed = 0
    for path, (target, code) in sorted(files.items()):
        relative = os.path.relpath(path, root)
        lines = code.split("\n")
        imports = []
        for number, line in enumerate(lines, 1):
            match = IMPORT.match(line)
            if match:
                imports.append((number, match.group(2), "@testable" in match.group(1)))
        if not imports:
            passed += 1
            continue
        body = "\n".join("" if IMPORT.match(line) else line for line in lines)
        # Any identifier may name a module's type or top-level function; a member (a property, method, case or
        # nested type) is reached after a dot: `value.member`, `.member` or `Type.Nested`.
        bare = set(IDENTIFIER.findall(body))
        dotted = set(MEMBER.findall(body))
        before = len(findings)
        for number, module, testable in imports:
            if module == target or module not in checked:
                continue
            if module not in declared[target]:
                findings.append(
                    f"{relative}:{number}: imports {module}, which Package.swift does not list among the "
                    f"dependencies of {target}"
                )
            if module in swift_targets:
                top_level, members, operators = exported(module, testable)
                if not (top_level & bare) and not (members & dotted) and not any(op in body for op in operators):
                    findings.append(f"{relative}:{number}: imports {module} and uses nothing it declares")
        if len(findings) > before:
            failed += 1
        else:
            passed += 1
    return findings, passed, failed


def run(root):
    findings, passed, failed = check(root, load_package(root))
    for finding in findings:
        print(f"imports: {finding}")
    print(f"imports: {passed} passed, {failed} failed")
    return 1 if findings else 0


SELF_TEST_MANIFEST = """// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "selftest",
    targets: [
        .target(name: "Base"),
        .target(name: "Middle", dependencies: ["Base"]),
        .target(name: "Top", dependencies: ["Middle"]),
        .testTarget(name: "TopTests", dependencies: ["Top"]),
    ]
)
"""

SELF_TEST_FILES = {
    "Sources/Base/Base.swift": """
/// A comment that names Helper, which must not count as a use.
package struct Length: Sendable { package var metres: Double }
public enum Colour { case red, green(Int), blue }
package protocol Shape { func area() -> Double }
extension Int { package var doubled: Int { self * 2 } }
package func hidden() {}
struct Internal { var x = 0 }
""",
    "Sources/Middle/UsesBase.swift": """
import Base

package func twice(_ n: Int) -> Int { n.doubled }
""",
    "Sources/Middle/UsesCase.swift": """
import Base

let c = Colour.green(1)
func f(_ colour: Colour) -> Bool { if case .blue = colour { true } else { false } }
""",
    "Sources/Middle/InString.swift": """
import Base

// Length, in a comment only, and in strings:
let text = "metres Length \\(1 + 1) Colour"
let raw = #"Length \\(doubled) \\#(2)"#
let block = \"\"\"
    Shape \\(3)
    \"\"\"
""",
    "Sources/Middle/LocalName.swift": """
import Base

// `metres` is a member of Base's Length; a local of that name is no use of Base.
func f() -> Double { let metres = 1.0; return metres }
""",
    "Sources/Middle/Interpolated.swift": """
import Base

let interpolated = "twice: \\(1.doubled)"
""",
    "Sources/Top/Undeclared.swift": """
import Base
import Middle

let x = twice(Length(metres: 1).metres > 0 ? 1 : 2)
""",
    "Sources/Top/Unused.swift": """
import Middle
import Foundation

let y = 1
""",
    "Tests/TopTests/Testable.swift": """
@testable import Top

let z = y
""",
    "Tests/TopTests/UndeclaredTestable.swift": """
@testable import Middle

let w = 2
""",
}

SELF_TEST_EXPECTED = [
    "Sources/Middle/InString.swift:1: imports Base and uses nothing it declares",
    "Sources/Middle/LocalName.swift:1: imports Base and uses nothing it declares",
    "Sources/Top/Undeclared.swift:1: imports Base, which Package.swift does not list among the dependencies of Top",
    "Sources/Top/Unused.swift:1: imports Middle and uses nothing it declares",
    "Tests/TopTests/UndeclaredTestable.swift:1: imports Middle, which Package.swift does not list among the "
    "dependencies of TopTests",
    "Tests/TopTests/UndeclaredTestable.swift:1: imports Middle and uses nothing it declares",
]


def self_test():
    directory = tempfile.mkdtemp(prefix="check-imports.")
    try:
        with open(os.path.join(directory, "Package.swift"), "w", encoding="utf-8") as handle:
            handle.write(SELF_TEST_MANIFEST)
        for relative, text in SELF_TEST_FILES.items():
            path = os.path.join(directory, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text.lstrip("\n"))
        findings, _, _ = check(directory, load_package(directory))
    finally:
        shutil.rmtree(directory)
    ok = sorted(findings) == sorted(SELF_TEST_EXPECTED)
    for finding in findings:
        print(f"imports (self-test): {finding}")
    if not ok:
        for missing in sorted(set(SELF_TEST_EXPECTED) - set(findings)):
            print(f"imports (self-test): not found: {missing}", file=sys.stderr)
        for extra in sorted(set(findings) - set(SELF_TEST_EXPECTED)):
            print(f"imports (self-test): found, not expected: {extra}", file=sys.stderr)
        print("imports (self-test): FAILED", file=sys.stderr)
        return 1
    print(f"imports (self-test): the {len(SELF_TEST_EXPECTED)} findings expected, and no other")
    return 0


def main(arguments):
    if "--self-test" in arguments:
        return self_test()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "--root" in arguments:
        root = os.path.abspath(arguments[arguments.index("--root") + 1])
    return run(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

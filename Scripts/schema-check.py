#!/usr/bin/env python3
"""Checks the JSON Schemas in Documentation/schemas against what arrival reads and writes.

Usage:
    python3 Scripts/schema-check.py [ARRIVAL]    (default: .build/debug/arrival)

(a) Input lines. Every line of SampleData/ (and of Documentation/examples/) is
    read the way `arrival ingest` reads it (gzip by magic bytes, several
    members, a cut stream keeps what came before the cut, `\\n` or `\\r\\n`,
    blank lines skipped). Lines that are not JSON objects are skipped and
    counted; every JSON object is validated against record.schema.json and the
    schema of its kind. The same files are ingested with ARRIVAL, and the
    schemas must agree with it line by line: a line arrival stored validates,
    a line arrival refused for a field-level cause does not.
(b) Reports. `demo --format json`, `report --format json` over SampleData/
    (all data, one day, an empty day) and over simulated fleets (plain;
    `--lifecycle --providers`: dismissals, rotated tokens, push-to-start,
    dead tokens; `--channels` with both; `--budget` with all three: chatty
    senders, frequent_pushes on the device lines) must validate against report.schema.json (schema 2,
    `arrival.report/2`), keep the documented key order, sorted maps and
    number form, and add up (outcomes to accepted, loss causes to lost). A
    saved schema-1 report (Tests/ArrivalCompareTests/Fixtures/reports/) must
    validate against report-1.schema.json and still be read by `arrival diff`.
(c) Negative checks. Broken reports and records must be REJECTED; hand-made
    records are also ingested with ARRIVAL so that each expectation written
    here is the tool's own behaviour.

Needs the PyPI package jsonschema (pip install jsonschema; 4.18 or later).
Exits 1 when any check failed. The last line is `schema: N passed, M failed`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import tempfile
import zlib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "Documentation" / "schemas"
DEFAULT_BINARY = ".build/debug/arrival"

MAX_LINE_BYTES = 1 << 20
MAX_DEPTH = 64
# Causes decided before a line's fields are looked at (the line is not a usable JSON object).
SYNTAX_CAUSES = ("line_too_long", "invalid_utf8", "invalid_json", "too_deep", "duplicate_key", "not_an_object")
# Causes about the fields of a JSON object: the schemas must refuse these lines.
FIELD_CAUSES = (
    "unsupported_version", "unknown_kind", "missing_field", "wrong_type", "invalid_time", "invalid_enum",
    "invalid_exchange",
)
# What an exchange's bodies must hold (an APNs URL path, FCM's live_activity_token,
# Tencent's LaId, an integer aps.timestamp) is JSON text inside a string, which a
# JSON Schema cannot look into: the schemas may accept a line arrival refuses for that.
BODY_CAUSES = ("invalid_exchange",)

try:
    import jsonschema
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
except ImportError:
    print("schema-check needs the jsonschema package (4.18 or later): pip install jsonschema", file=sys.stderr)
    print("schema: 0 passed, 1 failed")
    sys.exit(1)

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)  # a 5,000-digit integer is a JSON number (wrong_type), not a parse error


# ---------------------------------------------------------------------------
# Results


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def record(self, ok: bool, name: str, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"  ok    {name}")
        else:
            self.failed += 1
            print(f"  FAIL  {name}" + (f": {detail}" if detail else ""))
        return ok


# ---------------------------------------------------------------------------
# Schemas


def strict_integer(_checker, instance) -> bool:
    # Like arrival: an integer is an integer literal. JSON Schema itself would
    # also accept 1.0; Python's json module reads 1.0 and 1e3 as floats.
    return isinstance(instance, int) and not isinstance(instance, bool)


# Registered for the 2020-12 dialect (version=...), so that a $ref into another
# schema file, which names its $schema, is validated the same strict way.
StrictValidator = jsonschema.validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", strict_integer),
    version="draft2020-12, integers as literals",
)


def load_schemas(checks: Checks) -> dict:
    schemas = {}
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
            Draft202012Validator.check_schema(schema)
        except (ValueError, jsonschema.SchemaError) as error:
            checks.record(False, f"{path.name} is a valid draft 2020-12 schema", str(error).splitlines()[0])
            continue
        ok = schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema" and "$id" in schema
        checks.record(ok, f"{path.name} is a valid draft 2020-12 schema", "needs $schema 2020-12 and an $id")
        schemas[path.name] = schema
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas.values() if "$id" in schema
    )
    return {name: StrictValidator(schema, registry=registry) for name, schema in schemas.items()}


def first_error(validator, instance) -> str | None:
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    error = errors[0]
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return f"{where}: {error.message}"


# ---------------------------------------------------------------------------
# Reading files the way arrival ingest does


def walk(paths: list[Path]) -> list[Path]:
    """Regular files under `paths`: hidden names, links, FIFOs and other specials met in a walk are left out."""
    files: list[Path] = []

    def visit(directory: Path) -> None:
        for name in sorted(os.listdir(directory), key=lambda n: n.encode("utf-8", "surrogateescape")):
            if name.startswith("."):
                continue
            child = directory / name
            mode = os.lstat(child).st_mode
            if stat.S_ISREG(mode):
                files.append(child)
            elif stat.S_ISDIR(mode):
                visit(child)

    for path in paths:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            files.append(path)
        elif stat.S_ISDIR(mode):
            visit(path)
    return files


def gunzip(raw: bytes) -> tuple[bytes, bool]:
    """Inflates every gzip member; returns (bytes decoded before any break, whether the stream broke off)."""
    out: list[bytes] = []
    rest = raw
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        try:
            out.append(inflater.decompress(rest))
        except zlib.error:
            # Corrupt data or a bad checksum: keep what decodes before the bad
            # byte by feeding the member again one byte at a time.
            inflater = zlib.decompressobj(wbits=31)
            for i in range(len(rest)):
                try:
                    out.append(inflater.decompress(rest[i:i + 1]))
                except zlib.error:
                    break
            return b"".join(out), True
        if not inflater.eof:
            return b"".join(out), True
        rest = inflater.unused_data
    return b"".join(out), False


def split_lines(data: bytes):
    """(1-based number, bytes) of every line; `\\n` ends a line, a `\\r` before it is part of the line end."""
    parts = data.split(b"\n")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if last and part == b"":
            return
        if not last and part.endswith(b"\r"):
            part = part[:-1]
        yield index + 1, part


def has_lone_surrogate(value) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(has_lone_surrogate(k) or has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_lone_surrogate(v) for v in value)
    return False


def depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def classify(line: bytes):
    """('blank', None), (syntax cause, None) or ('object', dict), in arrival's order of causes."""
    if len(line) > MAX_LINE_BYTES:
        return "line_too_long", None
    if all(b in b" \t\r" for b in line):
        return "blank", None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8", None
    repeated = False

    def pairs_hook(pairs):
        nonlocal repeated
        keys = [key for key, _ in pairs]
        if len(set(keys)) != len(keys):
            repeated = True
        return dict(pairs)

    try:
        value = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=refuse_constant)
    except RecursionError:
        return "too_deep", None
    except ValueError:
        return "invalid_json", None
    if has_lone_surrogate(value):
        return "invalid_json", None
    if depth(value) > MAX_DEPTH:
        return "too_deep", None
    if repeated:
        return "duplicate_key", None
    if not isinstance(value, dict):
        return "not_an_object", None
    return "object", value


# ---------------------------------------------------------------------------
# Running arrival


class Arrival:
    def __init__(self, binary: Path, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.binary), *args], cwd=ROOT, capture_output=True, text=True)

    def ingest(self, db: Path, *paths: Path) -> str | None:
        """Ingests `paths` into `db`; returns an error text, or None."""
        done = self.run("ingest", *map(str, paths), "--db", str(db), "--quiet")
        return None if done.returncode == 0 else f"ingest exited {done.returncode}: {done.stderr.strip()[-300:]}"


def verdicts(db: Path) -> tuple[set[str], dict[tuple[str, int], str]]:
    """The content hashes arrival stored, and its malformed-line causes keyed by (content hash, line)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        known = {row[0] for row in connection.execute("SELECT content_sha256 FROM files")}
        causes = {
            (sha, line): cause
            for sha, line, cause in connection.execute(
                "SELECT f.content_sha256, m.line, m.cause FROM malformed_lines AS m JOIN files AS f ON f.id = m.file_id"
            )
        }
    return known, causes


# ---------------------------------------------------------------------------
# (a) Input lines against the schemas and against arrival


def check_lines(checks: Checks, label: str, paths: list[Path], db: Path, validators: dict) -> None:
    known, tool = verdicts(db)
    record_schema = validators["record.schema.json"]
    by_schema: Counter = Counter()
    skipped: Counter = Counter()
    refused: Counter = Counter()
    blank = lines = cut = 0
    accepted_problems: list[str] = []
    refused_problems: list[str] = []
    syntax_problems: list[str] = []
    files = walk(paths)
    for path in files:
        raw = path.read_bytes()
        sha = hashlib.sha256(raw).hexdigest()
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        if sha not in known:
            syntax_problems.append(f"{where}: arrival did not store this file")
            continue
        data, broken = gunzip(raw) if raw[:2] == b"\x1f\x8b" else (raw, False)
        count = 0
        for number, line in split_lines(data):
            count = number
            cause = tool.get((sha, number))
            kind, value = classify(line)
            if kind == "blank":
                blank += 1
                if cause is not None:
                    syntax_problems.append(f"{where}:{number}: blank here, arrival says {cause}")
            elif kind != "object":
                skipped[kind] += 1
                if cause != kind:
                    syntax_problems.append(f"{where}:{number}: {kind} here, arrival says {cause or 'a valid record'}")
            else:
                error = first_error(record_schema, value)
                if error is None:
                    schema_name = f"{value['kind']}.schema.json"
                    by_schema[schema_name] += 1
                    direct = first_error(validators[schema_name], value)
                    if direct is not None:
                        accepted_problems.append(f"{where}:{number}: record.schema.json accepts, {schema_name} refuses: {direct}")
                    if cause is not None and not (value.get("kind") == "exchange" and cause in BODY_CAUSES):
                        refused_problems.append(f"{where}:{number}: the schemas accept it, arrival says {cause}")
                else:
                    refused[cause or "a valid record"] += 1
                    if cause is None:
                        accepted_problems.append(f"{where}:{number}: arrival stored it, record.schema.json refuses: {error}")
                    elif cause not in FIELD_CAUSES:
                        refused_problems.append(f"{where}:{number}: arrival says {cause}, expected a field-level cause")
        lines += count
        if broken:
            cut += 1
            if tool.get((sha, count + 1)) != "truncated_gzip":
                syntax_problems.append(f"{where}: the gzip stream breaks off, arrival has no truncated_gzip at line {count + 1}")
        elif tool.get((sha, count + 1)) == "truncated_gzip":
            syntax_problems.append(f"{where}: arrival says truncated_gzip, the stream reads whole here")

    def listing(counter: Counter) -> str:
        return ", ".join(f"{key} {value}" for key, value in sorted(counter.items())) or "none"

    print(f"  {label}: {len(files)} files, {lines} lines")
    for name in ("apns.schema.json", "render.schema.json", "callback.schema.json"):
        print(f"    {by_schema[name]:6d} validated against {name}")
    print(f"    {blank:6d} blank (skipped)")
    print(f"    {sum(skipped.values()):6d} not JSON objects (skipped, counted): {listing(skipped)}")
    print(f"    {sum(refused.values()):6d} refused by record.schema.json; arrival's causes: {listing(refused)}")
    print(f"    {cut:6d} gzip streams that break off")

    def outcome(name: str, problems: list[str]) -> None:
        shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
        checks.record(not problems, f"{label}: {name}", shown)

    outcome("every record arrival stored validates against record.schema.json and its kind's schema", accepted_problems)
    outcome("every object arrival refused for a field-level cause is refused by record.schema.json", refused_problems)
    outcome("blank lines, non-objects and cut gzip streams are what arrival says they are", syntax_problems)


# ---------------------------------------------------------------------------
# (b) Reports


class Number(float):
    """A JSON number with a fraction or exponent, remembering how it was written."""

    def __new__(cls, text: str):
        number = super().__new__(cls, text)
        number.text = text
        return number


# Schema 2 (contract 3.0, what arrival writes): the order of the contract's example.
REPORT_KEYS = ["schema", "window", "requests", "updates", "starts", "callbacks", "latency_ms", "outliers",
               "data_quality", "breakdowns"]
LOSS_CAUSES = ["not_rendered", "old_token", "closed_later", "device_silent", "unexplained"]
OUTCOMES = ["rendered", "dismissed", "ended", "expired", "stale_timestamp", "superseded", "lost"]
OBJECT_KEYS = {
    "window": ["from", "to"],
    "requests": ["total", "accepted", "rejected", "acceptance_rate", "by_reason", "oversize_failures", "oversize_risk",
                 "broadcasts", "to_dead_tokens"],
    "updates": ["sent", "accepted", *OUTCOMES, "lost_by_cause", "arrival_rate", "effective_arrival_rate"],
    "updates.lost_by_cause": LOSS_CAUSES,
    "starts": ["sent", "accepted", "appeared", "appearance_rate", "update_token_received", "update_token_rate",
               "update_token_latency_ms"],
    "starts.update_token_latency_ms": ["count", "p50", "p90", "p99"],
    "callbacks": ["content_update_expected", "content_update_received", "callback_loss_rate", "token_expected",
                  "token_received", "token_callback_loss_rate"],
    "latency_ms": ["count", "p50", "p90", "p99"],
    "outliers": ["fleet_arrival_rate", "devices_tested", "devices"],
    "data_quality": ["malformed_lines", "malformed_by_cause", "duplicate_records", "files_skipped_as_duplicate",
                     "apns_without_seq", "unattributed", "clock_skew_negative", "broadcasts_without_subscribers"],
}
# The breakdown dimensions, sorted by code point as arrival writes them (contract 3.1 added
# frequent_pushes and priority_10_last_hour).
BREAKDOWN_DIMENSIONS = ["app", "app_version", "channel", "frequent_pushes", "os_version", "priority",
                        "priority_10_last_hour", "provider"]

# Schema 1 (saved by arrival before contract 3.0; diff and gate still read it).
REPORT_KEYS_1 = ["schema", "window", "requests", "updates", "callbacks", "latency_ms", "data_quality", "breakdowns"]
OBJECT_KEYS_1 = {
    "window": ["from", "to"],
    "requests": OBJECT_KEYS["requests"][:7],
    "updates": ["sent", "accepted", "rendered", "ended", "expired", "stale_timestamp", "superseded", "lost",
                "arrival_rate", "effective_arrival_rate"],
    "callbacks": OBJECT_KEYS["callbacks"],
    "latency_ms": OBJECT_KEYS["latency_ms"],
    "data_quality": OBJECT_KEYS["data_quality"][:7],
}
BREAKDOWN_DIMENSIONS_1 = ["app", "app_version", "os_version", "priority", "provider"]

RATES = {"acceptance_rate", "arrival_rate", "effective_arrival_rate", "callback_loss_rate", "token_callback_loss_rate",
         "appearance_rate", "update_token_rate", "fleet_arrival_rate", "p_value"}


def get(obj, dotted: str):
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def form_problems(text: str, report: dict, schema: int = 2) -> list[str]:
    """What JSON Schema cannot say: key order, sorted maps, number form, layout."""
    problems = []
    report_keys, object_keys, dimensions = (
        (REPORT_KEYS, OBJECT_KEYS, BREAKDOWN_DIMENSIONS) if schema == 2
        else (REPORT_KEYS_1, OBJECT_KEYS_1, BREAKDOWN_DIMENSIONS_1))

    def keys(path: str, obj, expected: list[str]) -> None:
        if isinstance(obj, dict) and list(obj) != expected:
            problems.append(f"{path} keys in order {list(obj)}")

    def sorted_map(path: str, obj) -> None:
        if isinstance(obj, dict) and list(obj) != sorted(obj):
            problems.append(f"{path} keys not sorted by code point")

    def numbers(path: str, obj) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                if key in RATES and value is not None and not (isinstance(value, Number) and repr(float(value)) == value.text):
                    problems.append(f"{path}.{key} is not written as the shortest text of a double: {getattr(value, 'text', value)!r}")
                numbers(f"{path}.{key}", value)
        elif isinstance(obj, list):
            for index, value in enumerate(obj):
                numbers(f"{path}[{index}]", value)

    keys("report", report, report_keys + (["apple"] if schema == 2 and "apple" in report else []))
    for index, day in enumerate(get(report, "apple.days") or []):
        keys(f"apple.days[{index}]", day, ["date", "delivery", "arrival", "channels"])
        keys(f"apple.days[{index}].arrival", (day or {}).get("arrival"), ["requests", "accepted", "updates"])
        keys(f"apple.days[{index}].arrival.updates", get(day or {}, "arrival.updates"), object_keys["updates"])
    for name, expected in object_keys.items():
        keys(name, get(report, name), expected)
    sorted_map("requests.by_reason", get(report, "requests.by_reason"))
    sorted_map("data_quality.malformed_by_cause", get(report, "data_quality.malformed_by_cause"))
    breakdowns = report.get("breakdowns")
    sorted_map("breakdowns", breakdowns)
    keys("breakdowns", breakdowns, dimensions)
    for dimension, rows in (breakdowns or {}).items():
        sorted_map(f"breakdowns.{dimension}", rows)
        for key, row in (rows or {}).items():
            keys(f"breakdowns.{dimension}.{key}", row, object_keys["updates"])
            if schema == 2:
                keys(f"breakdowns.{dimension}.{key}.lost_by_cause", (row or {}).get("lost_by_cause"), LOSS_CAUSES)
    for index, device in enumerate(get(report, "outliers.devices") or []):
        keys(f"outliers.devices[{index}]", device, ["device_id", "updates", "p_value"])
        keys(f"outliers.devices[{index}].updates", (device or {}).get("updates"), object_keys["updates"])
    numbers("report", report)
    if text != json.dumps(report, indent=2, ensure_ascii=False) + "\n":
        problems.append("layout differs from two-space indentation, one key per line, a newline at the end")
    return problems


def sum_problems(report: dict) -> list[str]:
    """Schema 2's sums, which JSON Schema cannot add up: each updates block's outcomes make its accepted
    and its loss causes its lost; a start appears only if accepted, gets a token only if it appeared."""
    problems = []
    blocks = [("updates", report.get("updates"))] + [
        (f"outliers.devices[{index}].updates", (device or {}).get("updates"))
        for index, device in enumerate(get(report, "outliers.devices") or [])] + [
        (f"breakdowns.{dimension}.{key}", row)
        for dimension, rows in (report.get("breakdowns") or {}).items() for key, row in (rows or {}).items()]
    for where, block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("accepted") != sum(block.get(outcome, 0) for outcome in OUTCOMES):
            problems.append(f"{where}: the outcomes do not add up to accepted {block.get('accepted')}")
        causes = block.get("lost_by_cause") or {}
        if block.get("lost") != sum(causes.get(cause, 0) for cause in LOSS_CAUSES):
            problems.append(f"{where}: lost_by_cause adds up to {sum(causes.values())}, lost is {block.get('lost')}")
    starts = report.get("starts") or {}
    if not (starts.get("sent", 0) >= starts.get("accepted", 0) >= starts.get("appeared", 0)
            >= starts.get("update_token_received", 0)):
        problems.append(f"starts: not sent >= accepted >= appeared >= update_token_received: {starts}")
    if get(starts, "update_token_latency_ms.count") != starts.get("update_token_received"):
        problems.append("starts.update_token_latency_ms.count differs from update_token_received")
    for name in ("broadcasts", "to_dead_tokens"):
        if get(report, f"requests.{name}") is not None and get(report, f"requests.{name}") > get(report, "requests.total"):
            problems.append(f"requests.{name} exceeds requests.total")
    return problems


def check_report(checks: Checks, label: str, done: subprocess.CompletedProcess, validator) -> dict | None:
    if done.returncode != 0:
        checks.record(False, f"{label}: runs", f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
        return None
    try:
        report = json.loads(done.stdout, parse_float=Number)
    except ValueError as error:
        checks.record(False, f"{label}: prints JSON", str(error))
        return None
    error = first_error(validator, report)  # once: a large report takes seconds to validate
    checks.record(error is None, f"{label}: validates against report.schema.json", error or "")
    problems = form_problems(done.stdout, report)
    checks.record(not problems, f"{label}: key order, sorted maps, number form, layout", "; ".join(problems[:3]))
    problems = sum_problems(report)
    checks.record(not problems, f"{label}: outcomes add up to accepted, loss causes to lost, starts narrow",
                  "; ".join(problems[:3]))
    return report


def check_saved_report_1(checks: Checks, arrival: Arrival, validators: dict, current: Path | None) -> None:
    """A saved report of schema 1 (what arrival wrote before contract 3.0): report-1.schema.json describes it,
    report.schema.json refuses it, and `arrival diff` still reads it beside a schema-2 report."""
    saved = ROOT / "Tests" / "ArrivalCompareTests" / "Fixtures" / "reports" / "sample.schema1.json"
    schema_1 = validators.get("report-1.schema.json")
    if not checks.record(schema_1 is not None, "report-1.schema.json loads", "missing"):
        return
    if not checks.record(saved.is_file(), f"a saved schema-1 report ({saved.relative_to(ROOT)})", "missing"):
        return
    text = saved.read_text(encoding="utf-8")
    report = json.loads(text, parse_float=Number)
    error = first_error(schema_1, report)
    checks.record(error is None, "saved schema-1 report: validates against report-1.schema.json", error or "")
    problems = form_problems(text, report, schema=1)
    checks.record(not problems, "saved schema-1 report: key order, sorted maps, number form, layout",
                  "; ".join(problems[:3]))
    checks.record(first_error(validators["report.schema.json"], report) is not None,
                  "saved schema-1 report: REJECTED by report.schema.json (schema 2)", "the schema accepts it")
    if current is None:
        return
    written = json.loads(current.read_text(encoding="utf-8"))
    checks.record(first_error(schema_1, written) is not None,
                  "a report arrival writes now: REJECTED by report-1.schema.json", "the schema accepts it")
    done = arrival.run("diff", str(saved), str(current), "--format", "json")
    ok = done.returncode == 0
    detail = f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    if ok:
        try:
            json.loads(done.stdout)
        except ValueError as error:
            ok, detail = False, f"not JSON: {error}"
    checks.record(ok, "diff reads a saved schema-1 report beside a schema-2 report", detail)


# ---------------------------------------------------------------------------
# (c) Negative checks


def broken_reports(report: dict, empty: dict | None):
    """(what was broken, the broken report) pairs; each must be rejected."""

    def change(edit):
        copied = copy.deepcopy(report)
        edit(copied)
        return copied

    yield "report without updates.lost", change(lambda r: r["updates"].pop("lost"))
    yield "report without breakdowns", change(lambda r: r.pop("breakdowns"))
    yield "report with an extra top-level key", change(lambda r: r.update(extra=1))
    yield "report with an extra key in requests", change(lambda r: r["requests"].update(median=1))
    yield "acceptance_rate as a string", change(lambda r: r["requests"].update(acceptance_rate="0.91"))
    yield "arrival_rate above 1", change(lambda r: r["updates"].update(arrival_rate=1.5))
    yield "requests.total written as 2186.0", change(lambda r: r["requests"].update(total=float(r["requests"]["total"])))
    yield "arrival_rate null with rendered updates", change(lambda r: r["updates"].update(arrival_rate=None))
    yield "latency p50 given with count 0", change(lambda r: r["latency_ms"].update(count=0))
    yield "schema arrival.report/1", change(lambda r: r.update(schema="arrival.report/1"))
    yield "window with from only", change(lambda r: r.update(window={"from": "2026-11-21T00:00:00Z"}))
    yield "window time with an offset", change(
        lambda r: r.update(window={"from": "2026-11-21T00:00:00+00:00", "to": "2026-11-22T00:00:00Z"}))
    yield "malformed_by_cause with an unknown cause", change(lambda r: r["data_quality"]["malformed_by_cause"].update(bad_vibes=1))
    yield "priority breakdown key 'ten'", change(lambda r: r["breakdowns"]["priority"].update(ten=r["updates"]))
    yield "breakdown row without sent", change(
        lambda r: next(iter(r["breakdowns"]["app"].values())).pop("sent"))
    # Schema 2 (contract 3.0)
    yield "report without starts", change(lambda r: r.pop("starts"))
    yield "requests without to_dead_tokens", change(lambda r: r["requests"].pop("to_dead_tokens"))
    yield "requests without broadcasts", change(lambda r: r["requests"].pop("broadcasts"))
    yield "updates without dismissed", change(lambda r: r["updates"].pop("dismissed"))
    yield "updates without lost_by_cause", change(lambda r: r["updates"].pop("lost_by_cause"))
    yield "lost_by_cause without unexplained", change(lambda r: r["updates"]["lost_by_cause"].pop("unexplained"))
    yield "lost_by_cause with a sixth cause", change(lambda r: r["updates"]["lost_by_cause"].update(gremlins=0))
    yield "lost_by_cause.old_token -1", change(lambda r: r["updates"]["lost_by_cause"].update(old_token=-1))
    yield "breakdown row without lost_by_cause", change(
        lambda r: next(iter(r["breakdowns"]["app"].values())).pop("lost_by_cause"))
    yield "breakdown row without dismissed", change(
        lambda r: next(iter(r["breakdowns"]["priority"].values())).pop("dismissed"))
    yield "breakdowns without channel", change(lambda r: r["breakdowns"].pop("channel"))
    yield "channel breakdown key ''", change(lambda r: r["breakdowns"]["channel"].update({"": r["updates"]}))
    yield "data_quality without broadcasts_without_subscribers", change(
        lambda r: r["data_quality"].pop("broadcasts_without_subscribers"))
    yield "starts without update_token_latency_ms", change(lambda r: r["starts"].pop("update_token_latency_ms"))
    yield "starts with an extra key", change(lambda r: r["starts"].update(appeared_rate=0.5))
    yield "appearance_rate null with accepted starts", change(lambda r: r["starts"].update(appearance_rate=None))
    yield "update_token_rate null with appeared starts", change(lambda r: r["starts"].update(update_token_rate=None))
    yield "update_token_latency_ms p50 null with a count", change(
        lambda r: r["starts"]["update_token_latency_ms"].update(p50=None))
    yield "update_token_latency_ms p90 given with count 0", change(
        lambda r: r["starts"]["update_token_latency_ms"].update(count=0))
    yield "update_token_latency_ms p99 negative", change(
        lambda r: r["starts"]["update_token_latency_ms"].update(p99=-1))
    yield "malformed_by_cause with a cause of 0", change(
        lambda r: r["data_quality"]["malformed_by_cause"].update(invalid_exchange=0))
    if empty is not None:
        broken = copy.deepcopy(empty)
        broken["updates"]["arrival_rate"] = 0.0
        yield "arrival_rate 0.0 over no deliverable update", broken
        broken = copy.deepcopy(empty)
        broken["starts"]["appearance_rate"] = 0.0
        yield "appearance_rate 0.0 over no accepted start", broken
        broken = copy.deepcopy(empty)
        broken["starts"]["update_token_rate"] = 0.0
        yield "update_token_rate 0.0 over no appeared start", broken
        broken = copy.deepcopy(empty)
        broken["updates"]["lost_by_cause"]["device_silent"] = 1
        yield "a loss cause counted with no lost update", broken


def misordered_reports(report: dict):
    """(what was moved, the report) pairs that the schema accepts and the key-order check must refuse."""

    def moved(obj: dict, key: str, after: str) -> dict:
        items = [(k, v) for k, v in obj.items() if k != key]
        at = [k for k, _ in items].index(after) + 1
        return dict(items[:at] + [(key, obj[key])] + items[at:])

    yield "starts after callbacks", moved(report, "starts", "callbacks")
    copied = copy.deepcopy(report)
    copied["breakdowns"] = moved(copied["breakdowns"], "channel", "provider")
    yield "breakdowns.channel after provider", copied
    copied = copy.deepcopy(report)
    copied["updates"]["lost_by_cause"] = moved(copied["updates"]["lost_by_cause"], "not_rendered", "unexplained")
    yield "lost_by_cause with not_rendered last", copied
    copied = copy.deepcopy(report)
    copied["updates"] = moved(copied["updates"], "dismissed", "ended")
    yield "updates.dismissed after ended", copied
    copied = copy.deepcopy(report)
    row = next(iter(copied["breakdowns"]["app"]))
    copied["breakdowns"]["app"][row]["lost_by_cause"] = moved(
        copied["breakdowns"]["app"][row]["lost_by_cause"], "old_token", "device_silent")
    yield "a breakdown row's lost_by_cause out of order", copied


BASE_APNS = {"v": 1, "kind": "apns", "apns_id": "x", "sent_at": "2026-11-21T08:00:00Z", "status": 200,
             "push_token": "0a1b2c", "activity_id": "A", "seq": 1, "aps_timestamp": 1795248000}
BASE_RENDER = {"v": 1, "kind": "render", "activity_id": "A", "seq": 1, "rendered_at": "2026-11-21T08:00:01Z"}
BASE_CALLBACK = {"v": 1, "kind": "callback", "callback": "content_update", "activity_id": "A", "seq": 1,
                 "received_at": "2026-11-21T08:00:02Z"}


def with_(base: dict, **changes) -> dict:
    record = dict(base)
    for key, value in changes.items():
        if value is DROP:
            record.pop(key, None)
        else:
            record[key] = value
    return record


DROP = object()

# (what, the line, the schemas accept it, arrival's cause or None when arrival stores it)
BASE_BROADCAST = {"v": 1, "kind": "apns", "apns_id": "b", "sent_at": "2026-11-21T08:00:00Z", "status": 200,
                  "channel_id": "Y2gtMQ==", "seq": 1, "aps_timestamp": 1795248000}

RECORD_CASES = [
    ("apns record", with_(BASE_APNS), True, None),
    # Contract 3.0: broadcasts and channels.
    ("broadcast record", with_(BASE_BROADCAST), True, None),
    ("broadcast with push_token and activity_id null", with_(BASE_BROADCAST, apns_id="bn", push_token=None,
                                                            activity_id=None), True, None),
    ("broadcast with a push_token", with_(BASE_BROADCAST, push_token="0a"), False, "wrong_type"),
    ("broadcast with an activity_id", with_(BASE_BROADCAST, activity_id="A"), False, "wrong_type"),
    ("apns with an empty channel_id and no push_token", with_(BASE_BROADCAST, channel_id=""), False, "missing_field"),
    ("apns with push_token and channel_id 7", with_(BASE_APNS, channel_id=7), False, "wrong_type"),
    ("apns with push_token and channel_id null", with_(BASE_APNS, apns_id="cn", channel_id=None), True, None),
    ("render with a channel_id", with_(BASE_RENDER, channel_id="Y2gtMQ=="), True, None),
    ("render with an empty channel_id", with_(BASE_RENDER, channel_id=""), False, "wrong_type"),
    ("callback channel_subscription", with_(BASE_CALLBACK, callback="channel_subscription", seq=DROP,
                                            channel_id="Y2gtMQ=="), True, None),
    ("callback channel_subscription without channel_id",
     with_(BASE_CALLBACK, callback="channel_subscription", seq=DROP), False, "missing_field"),
    ("callback content_update with channel_id []", with_(BASE_CALLBACK, channel_id=[]), False, "wrong_type"),
    ("apns without apns_id", with_(BASE_APNS, apns_id=DROP), False, "missing_field"),
    ("apns with apns_id null", with_(BASE_APNS, apns_id=None), False, "missing_field"),
    ("apns with status \"200\"", with_(BASE_APNS, status="200"), False, "wrong_type"),
    ("apns with status 200.0", '{"kind":"apns","apns_id":"f","sent_at":"2026-11-21T08:00:00Z","status":200.0,'
                               '"push_token":"0a","aps_timestamp":1795248000}', False, "wrong_type"),
    ("apns with seq 1e3", '{"kind":"apns","apns_id":"e","sent_at":"2026-11-21T08:00:00Z","status":200,'
                          '"push_token":"0a","seq":1e3,"aps_timestamp":1795248000}', False, "wrong_type"),
    ("apns with seq 2^63", with_(BASE_APNS, seq=1 << 63), False, "wrong_type"),
    ("apns with seq -2^63", with_(BASE_APNS, apns_id="min", seq=-(1 << 63)), True, None),
    ("apns with event \"resume\"", with_(BASE_APNS, event="resume"), False, "invalid_enum"),
    ("apns with event null", with_(BASE_APNS, apns_id="ev", event=None), True, None),
    ("apns with a space for T", with_(BASE_APNS, sent_at="2026-11-21 08:00:00Z"), False, "invalid_time"),
    ("apns with a time without seconds", with_(BASE_APNS, sent_at="2026-11-21T08:00Z"), False, "invalid_time"),
    ("apns with a time without offset", with_(BASE_APNS, sent_at="2026-11-21T08:00:00"), False, "invalid_time"),
    ("apns with 2026-02-29", with_(BASE_APNS, sent_at="2026-02-29T08:00:00Z"), False, "invalid_time"),
    ("apns with 2024-02-29", with_(BASE_APNS, apns_id="leap", sent_at="2024-02-29T08:00:00Z"), True, None),
    ("apns with second 60", with_(BASE_APNS, sent_at="2026-11-21T23:59:60Z"), False, "invalid_time"),
    ("apns with a dot and no fraction", with_(BASE_APNS, sent_at="2026-11-21T08:00:00.Z"), False, "invalid_time"),
    ("apns with a time and a trailing newline", with_(BASE_APNS, sent_at="2026-11-21T08:00:00Z\n"), False, "invalid_time"),
    ("apns with 't', 'z' and six fraction digits", with_(BASE_APNS, apns_id="lc", sent_at="2026-11-21t08:00:00.123456z"), True, None),
    ("apns with offset -05:30", with_(BASE_APNS, apns_id="off", sent_at="2026-11-21T02:30:00-05:30"), True, None),
    ("apns with a bad sent_at and no status (first field at fault decides)",
     with_(BASE_APNS, sent_at="yesterday", status=DROP), False, "invalid_time"),
    ("record with v 2", with_(BASE_APNS, v=2), False, "unsupported_version"),
    ("record with v \"1\"", with_(BASE_APNS, v="1"), False, "unsupported_version"),
    ("record with v null", with_(BASE_APNS, apns_id="vnull", v=None), True, None),
    ("record without kind", with_(BASE_APNS, kind=DROP), False, "missing_field"),
    ("exchange of APNs", {"v": 1, "kind": "exchange", "provider": "apns", "sent_at": "2026-11-21T08:00:00Z",
     "request": {"url": "https://api.push.apple.com/3/device/0a", "headers": {"apns-priority": "10"},
                 "body": '{"aps":{"timestamp":1795248000,"content-state":{"seq":1}}}'},
     "response": {"status": 200, "headers": {"apns-id": "x1"}}}, True, None),
    ("exchange whose body has no aps.timestamp (a schema cannot look inside a body)",
     {"v": 1, "kind": "exchange", "provider": "apns", "sent_at": "2026-11-21T08:00:00Z",
      "request": {"url": "https://api.push.apple.com/3/device/0a", "body": "{}"}}, True, "invalid_exchange"),
    ("exchange with a header value that is a number",
     {"v": 1, "kind": "exchange", "provider": "fcm", "sent_at": "2026-11-21T08:00:00Z",
      "request": {"url": "u", "headers": {"apns-priority": 10}, "body": "{}"}}, False, "invalid_exchange"),
    ("exchange without request", {"v": 1, "kind": "exchange", "provider": "fcm", "sent_at": "2026-11-21T08:00:00Z"},
     False, "missing_field"),
    ("exchange of provider \"sns\"", {"v": 1, "kind": "exchange", "provider": "sns", "sent_at": "2026-11-21T08:00:00Z",
     "request": {"url": "u", "body": "{}"}}, False, "invalid_enum"),
    ("apns with provider \"fcm\"", with_(BASE_APNS, apns_id="fcm", provider="fcm"), True, None),
    ("apns with provider \"pigeon\" (outside the contract's enumeration)",
     with_(BASE_APNS, apns_id="pigeon", provider="pigeon"), False, "invalid_enum"),
    ("apns with a push_token that is not hex (arrival does not check hex)",
     with_(BASE_APNS, apns_id="nothex", push_token="token-1"), False, None),
    ("apns with an unknown field", with_(BASE_APNS, apns_id="extra", shard=7), True, None),
    ("render record", with_(BASE_RENDER), True, None),
    ("render with numeric rendered_at", with_(BASE_RENDER, rendered_at=1795248001), False, "wrong_type"),
    ("render with seq null", with_(BASE_RENDER, seq=None), False, "missing_field"),
    ("render with offset +08:00", with_(BASE_RENDER, rendered_at="2026-11-21T16:00:01.250+08:00"), True, None),
    ("render with surface \"car_play\"", with_(BASE_RENDER, surface="car_play"), True, None),
    ("callback content_update", with_(BASE_CALLBACK), True, None),
    ("callback content_update without seq", with_(BASE_CALLBACK, seq=DROP), False, "missing_field"),
    ("callback content_update without activity_id", with_(BASE_CALLBACK, activity_id=DROP), False, "missing_field"),
    ("callback push_token without push_token", with_(BASE_CALLBACK, callback="push_token", seq=DROP), False, "missing_field"),
    ("callback push_to_start_token without activity_id",
     with_(BASE_CALLBACK, callback="push_to_start_token", activity_id=DROP, seq=DROP, push_token="0a1b"), True, None),
    ("callback activity_state with state \"paused\"",
     with_(BASE_CALLBACK, callback="activity_state", seq=DROP, state="paused"), False, "invalid_enum"),
    ("callback activity_state without state", with_(BASE_CALLBACK, callback="activity_state", seq=DROP), False, "missing_field"),
    ("callback activity_state \"pending\" (3.0)",
     with_(BASE_CALLBACK, callback="activity_state", seq=DROP, state="pending"), True, None),
    ("callback content_update with state \"paused\" (3.0: ignored there)",
     with_(BASE_CALLBACK, state="paused"), True, None),
    ("render in year 0000 (3.0: years 0001-9999)", with_(BASE_RENDER, rendered_at="0000-11-21T08:00:01Z"), False, "invalid_time"),
    ("callback \"resumed\"", with_(BASE_CALLBACK, callback="resumed"), False, "invalid_enum"),
]


def check_records(checks: Checks, arrival: Arrival, validator) -> None:
    path = arrival.workdir / "cases" / "cases.jsonl"
    path.parent.mkdir()
    lines = [case if isinstance(case, str) else json.dumps(case) for _, case, _, _ in RECORD_CASES]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    db = arrival.workdir / "cases.sqlite"
    error = arrival.ingest(db, path)
    if error:
        checks.record(False, "hand-made records: ingest", error)
        return
    _, tool = verdicts(db)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    for number, ((what, _, schema_ok, expected_cause), line) in enumerate(zip(RECORD_CASES, lines), start=1):
        kind, value = classify(line.encode("utf-8"))
        schema_error = first_error(validator, value) if kind == "object" else kind
        cause = tool.get((sha, number))
        verdict = "accepted" if schema_ok else "REJECTED"
        tool_text = f"arrival: {expected_cause}" if expected_cause else "arrival stores it"
        problems = []
        if (schema_error is None) != schema_ok:
            problems.append(f"the schema {'refuses it: ' + schema_error if schema_error else 'accepts it'}")
        if cause != expected_cause:
            problems.append(f"arrival says {cause or 'a valid record'}")
        checks.record(not problems, f"{what}: {verdict} ({tool_text})", "; ".join(problems))


# ---------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__)
        return 0 if len(argv) == 2 else 2
    binary = Path(argv[1]).resolve() if len(argv) == 2 else ROOT / DEFAULT_BINARY
    checks = Checks()
    print(f"schema-check: schemas in {SCHEMAS.relative_to(ROOT)}, arrival = {binary}")
    print("schemas")
    validators = load_schemas(checks)
    needed = ["record.schema.json", "apns.schema.json", "render.schema.json", "callback.schema.json", "report.schema.json",
              "report-1.schema.json"]
    missing = [name for name in needed if name not in validators]
    if missing:
        checks.record(False, "all schemas load", f"missing or invalid: {', '.join(missing)}")
    elif not (binary.is_file() and os.access(binary, os.X_OK)):
        checks.record(False, "arrival binary", f"{binary} is not an executable file: build it (swift build) or pass its path")
    else:
        with tempfile.TemporaryDirectory(prefix="schema-check.") as temporary:
            try:
                run_all(checks, Arrival(binary, Path(temporary)), validators)
            except (OSError, sqlite3.Error, subprocess.SubprocessError) as error:
                checks.record(False, "the checks ran to the end", f"{type(error).__name__}: {error}")
    print(f"schema: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


def check_fleet(checks: Checks, arrival: Arrival, validators: dict, name: str, flags: list) -> None:
    """A fleet simulated with `flags`: its report, tokens, lost updates and activities against their
    schemas and each other, and its input lines against the record schemas."""
    report_schema = validators["report.schema.json"]
    work = arrival.workdir
    lifecycle = work / name
    done = arrival.run("simulate", "--out", str(lifecycle), "--activities", "400", "--seed", "404", *flags)
    if checks.record(done.returncode == 0, f"simulate {' '.join(flags)} --activities 400 --seed 404",
                     done.stderr.strip()[-300:]):
        lifecycle_db = work / f"{name}.sqlite"
        error = arrival.ingest(lifecycle_db, lifecycle)
        if checks.record(error is None, f"ingest the {name} fleet", error or ""):
            for args in ([], ["--day", "2026-11-21"]):
                report = check_report(checks, " ".join([f"report over the {name} fleet", *args]),
                                      arrival.run("report", "--db", str(lifecycle_db), "--format", "json", *args),
                                      report_schema)
                done = arrival.run("tokens", "--db", str(lifecycle_db), "--format", "json", *args)
                if report is not None and done.returncode == 0:
                    after = json.loads(done.stdout).get("requests_after_death")
                    checks.record(after == report["requests"]["to_dead_tokens"],
                                  " ".join([f"tokens over the {name} fleet", *args]) + ": requests_after_death is "
                                  "the report's requests.to_dead_tokens",
                                  f"{after} against {report['requests']['to_dead_tokens']}")
                listed_devices = ((report or {}).get("outliers") or {}).get("devices") or []
                if "--outliers" in flags:
                    checks.record(len(listed_devices) > 0, " ".join([f"report over the {name} fleet", *args])
                                  + ": lists a planted device", str((report or {}).get("outliers")))
                device_schema = validators.get("device.schema.json")
                for device in listed_devices[:3]:
                    shown = arrival.run("activity", "--device", device["device_id"], "--db", str(lifecycle_db),
                                        "--format", "json", *args)
                    story = json.loads(shown.stdout) if shown.returncode == 0 else None
                    error = first_error(device_schema, story) if story is not None and device_schema else None
                    what = " ".join([f"activity --device {device['device_id']} over the {name} fleet", *args])
                    checks.record(story is not None and device_schema is not None and error is None,
                                  what + ": validates against device.schema.json",
                                  shown.stderr.strip()[-300:] if story is None else (error or ""))
                    if story is not None:
                        checks.record(story["updates"] == device["updates"],
                                      what + ": its updates are the report's outliers entry's",
                                      f"{story['updates']} against {device['updates']}")
                lost_schema = validators.get("lost.schema.json")
                done = arrival.run("lost", "--db", str(lifecycle_db), "--format", "json", *args)
                if report is not None and lost_schema is not None and checks.record(
                        done.returncode == 0, " ".join([f"lost --format json over the {name} fleet", *args]),
                        done.stderr.strip()[-300:]):
                    listed = json.loads(done.stdout)
                    error = first_error(lost_schema, listed)
                    checks.record(error is None,
                                  " ".join([f"lost over the {name} fleet", *args]) + ": validates against lost.schema.json",
                                  error or "")
                    by_cause: dict = {}
                    for update in listed["updates"]:
                        by_cause[update["cause"]] = by_cause.get(update["cause"], 0) + 1
                    expected = {k: v for k, v in report["updates"]["lost_by_cause"].items() if v}
                    checks.record(by_cause == expected,
                                  " ".join([f"lost over the {name} fleet", *args]) + ": its causes are the report's "
                                  "updates.lost_by_cause", f"{by_cause} against {expected}")
                    activity_schema = validators.get("activity.schema.json")
                    for update in listed["updates"][:5]:
                        shown = arrival.run("activity", update["activity_id"], "--db", str(lifecycle_db), "--format", "json")
                        story = json.loads(shown.stdout) if shown.returncode == 0 else None
                        error = first_error(activity_schema, story) if story is not None and activity_schema else None
                        ok = story is not None and activity_schema is not None and error is None
                        checks.record(ok, f"activity {update['activity_id']} --format json: validates against "
                                      "activity.schema.json",
                                      shown.stderr.strip()[-300:] if story is None else (error or ""))
                        if story is not None:
                            line = next((u for u in story["updates"] if u["seq"] == update["seq"]), None)
                            checks.record(line is not None and line["outcome"] == "lost" and line["loss_cause"] == update["cause"],
                                          f"activity {update['activity_id']}: seq {update['seq']} is lost, {update['cause']}, "
                                          "as lost says", str(line))
            check_lines(checks, f"{name} fleet", [lifecycle], lifecycle_db, validators)


def run_all(checks: Checks, arrival: Arrival, validators: dict) -> None:
    report_schema = validators["report.schema.json"]
    work = arrival.workdir

    print("(a) input lines against the schemas and against arrival ingest")
    sample_db = work / "sample.sqlite"
    sample = [ROOT / "SampleData" / "sender", ROOT / "SampleData" / "devices"]
    error = arrival.ingest(sample_db, *sample)
    if not checks.record(error is None, "ingest SampleData/sender SampleData/devices", error or ""):
        return
    check_lines(checks, "SampleData", sample, sample_db, validators)
    examples = ROOT / "Documentation" / "examples"
    if examples.is_dir():
        examples_db = work / "examples.sqlite"
        error = arrival.ingest(examples_db, examples)
        if checks.record(error is None, "ingest Documentation/examples", error or ""):
            check_lines(checks, "Documentation/examples", [examples], examples_db, validators)

    print("(b) report JSON against report.schema.json")
    check_report(checks, "demo --format json", arrival.run("demo", "--format", "json"), report_schema)
    done = arrival.run("report", "--db", str(sample_db), "--format", "json")
    sample_report = check_report(checks, "report over SampleData", done, report_schema)
    sample_report_path = None
    if sample_report is not None:
        sample_report_path = work / "sample-report.json"
        sample_report_path.write_text(done.stdout, encoding="utf-8")
    check_report(checks, "report over SampleData --day 2026-11-21",
                 arrival.run("report", "--db", str(sample_db), "--day", "2026-11-21", "--format", "json"), report_schema)
    # Apple's example exports beside the sample's day (issue 54): the report gains its apple object.
    apple_db = work / "sample-apple.sqlite"
    apple_db.write_bytes(sample_db.read_bytes())
    exports = sorted(str(path) for path in (ROOT / "Documentation" / "examples" / "apple").glob("*.csv"))
    done = arrival.run("apple", "import", *exports, "--db", str(apple_db))
    if checks.record(done.returncode == 0 and len(exports) == 3, "apple import of the three example exports",
                     done.stderr.strip()[-300:]):
        for args in [[], ["--day", "2026-11-21"]]:
            with_apple = check_report(checks, f"report over SampleData {' '.join(args)} with Apple's numbers",
                                      arrival.run("report", "--db", str(apple_db), *args, "--format", "json"),
                                      report_schema)
            days = [day.get("date") for day in ((with_apple or {}).get("apple") or {}).get("days") or []]
            checks.record(days == ["2026-11-21"], f"report {' '.join(args)}: apple.days is the exports' day", f"{days}")
    empty_report = check_report(checks, "report over SampleData --day 2000-01-01 (nothing in the window)",
                                arrival.run("report", "--db", str(sample_db), "--day", "2000-01-01", "--format", "json"),
                                report_schema)
    simulated = work / "simulated"
    done = arrival.run("simulate", "--out", str(simulated), "--activities", "300", "--seed", "5")
    if checks.record(done.returncode == 0, "simulate --activities 300 --seed 5", done.stderr.strip()[-300:]):
        simulated_db = work / "simulated.sqlite"
        error = arrival.ingest(simulated_db, simulated)
        if checks.record(error is None, "ingest the simulated fleet", error or ""):
            check_report(checks, "report over the simulated fleet",
                         arrival.run("report", "--db", str(simulated_db), "--format", "json"), report_schema)
            check_lines(checks, "simulated fleet", [simulated], simulated_db, validators)
    # Dismissals, rotated tokens, push-to-start, dead tokens; then broadcast channels (contract 3.0).
    check_fleet(checks, arrival, validators, "lifecycle", ["--lifecycle", "--providers"])
    check_fleet(checks, arrival, validators, "outliers", ["--outliers", "3", "--lifecycle"])
    check_fleet(checks, arrival, validators, "channels", ["--channels", "--lifecycle", "--providers"])
    # Chatty senders against a device budget, frequent_pushes on renders and callbacks (contract 3.1).
    check_fleet(checks, arrival, validators, "budget", ["--budget", "--channels", "--lifecycle", "--providers"])
    check_saved_report_1(checks, arrival, validators, sample_report_path)

    print("(b2) arrival tokens --format json against tokens.schema.json")
    tokens_schema = validators.get("tokens.schema.json")
    if checks.record(tokens_schema is not None, "tokens.schema.json loads", "missing"):
        dead = work / "dead.jsonl"
        dead.write_text("".join(json.dumps(line) + "\n" for line in [
            {"kind": "apns", "apns_id": "1", "sent_at": "2026-11-21T08:00:00Z", "status": 410, "reason": "Unregistered",
             "push_token": "aa", "aps_timestamp": 1, "topic": "com.example.push-type.liveactivity"},
            {"kind": "apns", "apns_id": "2", "sent_at": "2026-11-21T09:00:00Z", "status": 200, "push_token": "aa",
             "aps_timestamp": 2},
            {"kind": "apns", "apns_id": "3", "sent_at": "2026-11-21T10:00:00Z", "status": 410, "push_token": "bb",
             "aps_timestamp": 3, "provider": "fcm"},
        ]), encoding="utf-8")
        dead_db = work / "dead.sqlite"
        error = arrival.ingest(dead_db, dead)
        if checks.record(error is None, "ingest dead tokens", error or ""):
            for args in ([], ["--day", "2026-11-21"], ["--day", "2000-01-01"]):
                done = arrival.run("tokens", "--db", str(dead_db), "--format", "json", *args)
                label = "tokens --format json " + " ".join(args)
                try:
                    listed = json.loads(done.stdout)
                except ValueError as problem:
                    checks.record(False, f"{label}: JSON", str(problem))
                    continue
                error = first_error(tokens_schema, listed)
                checks.record(done.returncode == 0 and error is None,
                              f"{label}: validates against tokens.schema.json", error or done.stderr)
            broken = {"schema": "arrival.tokens/1", "window": None, "requests_after_death": 0,
                      "tokens": [{"push_token": "aa", "app": "x", "provider": "gcm", "died_at": "2026-11-21T08:00:00Z",
                                  "reason": "Unregistered", "requests_after": 0, "last_sent_at": None}]}
            checks.record(first_error(tokens_schema, broken) is not None, "a token with provider gcm: REJECTED",
                          "the schema accepts it")

    print("(c) negative checks: each must be rejected")
    if sample_report is None:
        checks.record(False, "broken reports", "no sample report to break")
    else:
        for what, broken in broken_reports(sample_report, empty_report):
            error = first_error(report_schema, broken)
            checks.record(error is not None, f"{what}: REJECTED", "the schema accepts it")
        for what, broken in misordered_reports(sample_report):
            text = json.dumps(broken, indent=2, ensure_ascii=False) + "\n"
            checks.record(bool(form_problems(text, broken)), f"{what}: REJECTED by the key-order check",
                          "the order check accepts it")
    check_records(checks, arrival, validators["record.schema.json"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

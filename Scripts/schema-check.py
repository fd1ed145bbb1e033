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
    (all data, one day, an empty day) and over a simulated fleet must
    validate against report.schema.json, and keep the documented key order,
    sorted maps and number form.
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


REPORT_KEYS = ["schema", "window", "requests", "updates", "callbacks", "latency_ms", "data_quality", "breakdowns"]
OBJECT_KEYS = {
    "window": ["from", "to"],
    "requests": ["total", "accepted", "rejected", "acceptance_rate", "by_reason", "oversize_failures", "oversize_risk"],
    "updates": ["sent", "accepted", "rendered", "ended", "expired", "stale_timestamp", "superseded", "lost",
                "arrival_rate", "effective_arrival_rate"],
    "callbacks": ["content_update_expected", "content_update_received", "callback_loss_rate", "token_expected",
                  "token_received", "token_callback_loss_rate"],
    "latency_ms": ["count", "p50", "p90", "p99"],
    "data_quality": ["malformed_lines", "malformed_by_cause", "duplicate_records", "files_skipped_as_duplicate",
                     "apns_without_seq", "unattributed", "clock_skew_negative"],
}
RATES = {"acceptance_rate", "arrival_rate", "effective_arrival_rate", "callback_loss_rate", "token_callback_loss_rate"}


def form_problems(text: str, report: dict) -> list[str]:
    """What JSON Schema cannot say: key order, sorted maps, number form, layout."""
    problems = []

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

    keys("report", report, REPORT_KEYS)
    for name, expected in OBJECT_KEYS.items():
        keys(name, report.get(name), expected)
    sorted_map("requests.by_reason", (report.get("requests") or {}).get("by_reason"))
    sorted_map("data_quality.malformed_by_cause", (report.get("data_quality") or {}).get("malformed_by_cause"))
    breakdowns = report.get("breakdowns")
    sorted_map("breakdowns", breakdowns)
    for dimension, rows in (breakdowns or {}).items():
        sorted_map(f"breakdowns.{dimension}", rows)
        for key, row in (rows or {}).items():
            keys(f"breakdowns.{dimension}.{key}", row, OBJECT_KEYS["updates"])
    numbers("report", report)
    if text != json.dumps(report, indent=2, ensure_ascii=False) + "\n":
        problems.append("layout differs from two-space indentation, one key per line, a newline at the end")
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
    checks.record(first_error(validator, report) is None, f"{label}: validates against report.schema.json",
                  first_error(validator, report) or "")
    problems = form_problems(done.stdout, report)
    checks.record(not problems, f"{label}: key order, sorted maps, number form, layout", "; ".join(problems[:3]))
    return report


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
    yield "schema arrival.report/2", change(lambda r: r.update(schema="arrival.report/2"))
    yield "window with from only", change(lambda r: r.update(window={"from": "2026-11-21T00:00:00Z"}))
    yield "window time with an offset", change(
        lambda r: r.update(window={"from": "2026-11-21T00:00:00+00:00", "to": "2026-11-22T00:00:00Z"}))
    yield "malformed_by_cause with an unknown cause", change(lambda r: r["data_quality"]["malformed_by_cause"].update(bad_vibes=1))
    yield "priority breakdown key 'ten'", change(lambda r: r["breakdowns"]["priority"].update(ten=r["updates"]))
    yield "breakdown row without sent", change(
        lambda r: next(iter(r["breakdowns"]["app"].values())).pop("sent"))
    if empty is not None:
        broken = copy.deepcopy(empty)
        broken["updates"]["arrival_rate"] = 0.0
        yield "arrival_rate 0.0 over no deliverable update", broken


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
RECORD_CASES = [
    ("apns record", with_(BASE_APNS), True, None),
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
    needed = ["record.schema.json", "apns.schema.json", "render.schema.json", "callback.schema.json", "report.schema.json"]
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
    sample_report = check_report(checks, "report over SampleData",
                                 arrival.run("report", "--db", str(sample_db), "--format", "json"), report_schema)
    check_report(checks, "report over SampleData --day 2026-11-21",
                 arrival.run("report", "--db", str(sample_db), "--day", "2026-11-21", "--format", "json"), report_schema)
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
                checks.record(done.returncode == 0 and first_error(tokens_schema, listed) is None,
                              f"{label}: validates against tokens.schema.json",
                              first_error(tokens_schema, listed) or done.stderr)
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
    check_records(checks, arrival, validators["record.schema.json"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

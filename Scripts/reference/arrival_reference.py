#!/usr/bin/env python3
"""Independent reference implementation of the arrival data contract.

This script is an INDEPENDENT reference used to cross-check the Swift
implementation of the `arrival` tool. It was written from the contract alone
(input records, outcomes, metrics and report JSON, as Documentation/ and
CONTRACT.md describe them) without looking at the Swift
sources or tests, and uses the Python 3.11 standard library only. It favours
clarity over speed: every contract rule is a small, commented piece of code
that a reader can audit against the contract text.

Usage:
    python3 Scripts/reference/arrival_reference.py \
        [--day YYYY-MM-DD | --from RFC3339 --to RFC3339] [--contract 2|3.0|3.1|3.2] [--verbose] PATH...

By default, and with `--contract 3.2`, it reads and reports by contract 3.2:
contract 3.1's report (below) with the `outliers` object (section 4: the
devices whose updates arrive far less often than the fleet's, by a
one-sided binomial test with a Bonferroni bound), placed after `latency_ms`
and before `data_quality` as section 5 shows it; the lines are read as by
3.1 (3.2 changes no table). With `--contract 3.1` it reads and reports by
contract 3.1: report schema 2 (`arrival.report/2`) with the
`frequent_pushes` field on renders and callbacks, `breakdowns.frequent_pushes`,
`breakdowns.priority_10_last_hour`, and no update token expected of an
activity subscribed to a channel (`callbacks.token_expected`,
`starts.update_token_*`). With `--contract 3.0` it reads and reports by
contract 3.0 (`frequent_pushes` is then an unknown field): the
activity's end also from an `activity_state` `ended` callback, its
dismissal, the `dismissed` outcome, the five loss causes, the full tie order
of "earliest request", `starts`, `requests.to_dead_tokens`, and broadcast
channels (`channel_id` on `apns` records, renders and callbacks, the
`channel_subscription` callback, `/4/broadcasts/apps/...` exchanges, the
expansion of a broadcast into the open activities subscribed to its
channel, `requests.broadcasts`, `data_quality.broadcasts_without_subscribers`
and `breakdowns.channel`). With `--contract 2` lines are read by the older
tables, where `channel_id` is an unknown field. Scripts/reference/
test_contract3.py, test_broadcasts.py, test_contract31.py and
test_contract32.py check each rule and tie on cases worked out by hand.
U+0000 in a text a record keeps (contract 3.2's pin of 2.4,
`nul_character`) makes its line malformed whatever `--contract` says: the
contract pins it "on every engine".

It ingests the given files and directories (contract section 2), builds the
outcomes (section 3), computes the metrics (section 4) and prints the report
JSON object of section 5 to stdout. `--verbose` prints an ingest summary
(per-file line and malformed counts, skipped special files, duplicate files)
to stderr; it never changes stdout.

Readings chosen where the contract leaves room (each is also noted where it
is implemented):
  * Hidden *directories* (name starting with '.') are skipped in a walk, like
    hidden files.
  * A path on the command line that is a directory (or a link to one) is
    walked; one that does not exist is an error (exit 2); a command-line FIFO,
    socket or device is not read and is listed in the summary.
  * Gzip members are concatenated byte streams (a member boundary is not a
    line boundary). Bytes after a member that do not form a valid member are
    a break (`truncated_gzip`). After a break, the decoded bytes are split into
    lines exactly like a plain file (so a partial last line is parsed, and is
    usually `invalid_json`), plus ONE `truncated_gzip` malformed line.
  * `line_too_long` is decided before the blank-line test (a streaming reader
    cannot know that a 2 MiB line is blank without holding it).
  * A UTF-8 byte order mark is not JSON whitespace: `invalid_json`.
  * A `\\uXXXX` escape that leaves a lone surrogate is `invalid_json`.
  * `push_token` is only type-checked as a string (no hex check), and tokens,
    ids and keys are compared exactly (no case folding, no Unicode
    normalisation); "smallest" string means Unicode code point order.
  * Two empty files have the same content hash: the second is a duplicate file.
  * In the tie order of "earliest request" (section 3), `event` is compared
    as its effective value (absent == "update") and `provider` with absent ==
    "apns"; only priority is compared null first. Full ties after those
    are broken by the remaining table fields in table order, null first
    (which never changes the result).
  * An activity with no start (no accepted start update, no render, no
    callback) can never be `expired`.
  * `app` is the topic with the suffix `.push-type.liveactivity` removed only
    when the topic ends with it; otherwise the whole topic.
  * `oversize_failures` counts every request with status 413 or reason
    `PayloadTooLarge`, whatever its status.
  * The five breakdown dimensions appear in the order of section 5 (app,
    priority, provider, os_version, app_version; schema 2 adds channel after
    provider); the keys inside each are sorted
    (code point order, so "10" < "5" < "unknown").
  * Rule 4 (stale_timestamp) compares with every earlier accepted update of
    the activity, whatever its event or outcome.
  * A gzip member whose CRC/size trailer is wrong keeps its decoded bytes and
    counts as the break (`truncated_gzip`).
  * Only `\r\n` is a line end: a `\r` ending the last, unterminated line
    counts towards its length (JSON ignores it as whitespace anyway).
  * `--from`/`--to` must be given together; `--from` >= `--to` is allowed
    and selects nothing. Directory entries are walked in byte order of names.

Readings for contract 3.0 (`--contract 3.0`):
  * "Later than" and "after" are strict, "at or before" is not: a dismissal
    at the very instant of an accept time neither makes the update
    `dismissed` nor its loss `closed_later`; a token callback at the accept
    time counts for `old_token`.
  * `closed_later` looks at every `activity_state` `ended` callback, not only
    the earliest, and at the dismissal (the earliest `dismissed` callback).
  * `starts` counts an update by the event of its earliest accepted request,
    else of its earliest request; a start "appeared" when any render or any
    callback names its activity, whenever it came.

  Broadcasts (2.1-2.6, 3, 4):
  * Whether an `apns` line is a broadcast is read from its raw `channel_id`
    (a non-empty string: "a record with a non-empty channel_id is a
    broadcast") before its fields are checked in table order; `channel_id`
    is the last field of the apns table, after `surface` on a render, and
    after `state` (before `received_at`) on a callback, as the tables list
    them. So the first field at fault still names the cause.
  * Causes (the contract names none for these; the nearest of 2.4's):
    a broadcast's non-null `push_token` or `activity_id` ("must be absent or
    null") is `wrong_type`, at that field; a `channel_id` that is not a
    string, or is "" ("a non-null value must be a non-empty string") is
    `wrong_type`, on apns, render and callback alike; a
    `channel_subscription` callback without `channel_id` is
    `missing_field`. A line with `"channel_id": ""` and no `push_token` is
    not a broadcast, so it lacks its required `push_token` first:
    `missing_field`.
  * `channel_id` is a field of the 3.0 tables, so it is part of a record's
    identity for duplicates (2.5). A `channel_id` on an exchange line
    itself is an unknown field (ignored).
  * Exchanges: only the `apns` provider has a broadcast path; a path-only
    url `/4/broadcasts/apps/<bundle id>` is accepted like the path-only
    device url the 3.0 pin allows; the bundle id is taken as written (not
    percent-decoded); an absent or "" `apns-channel-id` header, and a
    non-null exchange `activity_id`, are `invalid_exchange` (a top-level
    `activity_id` of the wrong type is `wrong_type` first). The broadcast
    hosts name an environment for either path. An `apns-channel-id` header
    on a `/3/device/` exchange is not read (its channel_id is null: "every
    field of the derived record not named below is null").
  * Subscription has no time condition: any render or callback of the
    activity carrying the channel_id subscribes it, whenever it came (also
    after the broadcast). An activity may be subscribed to several
    channels. A callback without activity_id (push_to_start_token)
    subscribes nothing.
  * Open at sent_at: start <= sent_at <= start + 28,800 s (both ends
    included: "at or before", "at most"), and end > sent_at and dismissal >
    sent_at when they exist. Which activities a broadcast reaches is decided
    once, by the lifecycle computed without any broadcast: a broadcast
    `end` does not stop a later broadcast from reaching the activity (that
    later update is then `ended` by the recomputed end).
  * A broadcast record counts once in every request metric (total,
    accepted/rejected, by_reason, oversize_failures, oversize_risk,
    apns_without_seq), never in `unattributed` or `to_dead_tokens` (it has
    no token); a broadcast-decided update is never `old_token` (its
    deciding request has no push_token). A broadcast without seq, or a
    rejected one, still stands for its open subscribers (it is not "without
    subscribers"); the seq-less one makes no update.
  * `broadcasts_without_subscribers` counts broadcast records of the window
    (by sent_at); subscription and openness are judged on all data, like
    outcomes.
  * In the tie order, a null channel_id comes first: of two requests that
    tie up to provider, the direct one decides. An update's channel is that
    of its deciding request, so an update decided by a direct request is in
    no `breakdowns.channel` entry even if it also holds a broadcast request.

Readings for contract 3.1 (`--contract 3.1`, and 3.2 which keeps them):
  * `frequent_pushes` is the last field of the render and callback tables
    (after `app_version`), so a line with an earlier fault is counted under
    that earlier field's cause. A non-null value that is not a string is
    `wrong_type`, as for `os_version`; any string, "" and case variants
    ("Enabled") included, is kept as given and is its own breakdown key. It
    is part of a record's identity (2.5): two renders that differ only in it
    are two records (the same evidence twice for the outcome).
  * An activity's `frequent_pushes` is one value for all its updates, from
    its earliest render or callback carrying one (rendered_at or
    received_at; among equally early, the smallest by code point), exactly
    like `os_version`: a switch flipped later does not move its updates. A
    `push_to_start_token` callback (no activity_id) is evidence for no
    activity (the field is still type-checked on it).
  * `priority_10_last_hour` keys the accepted updates of the window whose
    deciding request (earliest accepted) has priority 10 and no channel_id;
    n counts the other such updates of the activity by accept time only,
    whatever their outcome (ended, expired, stale ... all count) and
    whether or not they are in the window. A direct update of a subscribed
    activity is keyed; an update decided by a broadcast request is not,
    even when it also holds a direct priority-10 request. Priority is the
    integer 10 (an exchange's `apns-priority: 010` reads as 10).
  * "Subscribed" (token_expected, starts) has no time condition: a render
    or callback carrying a channel_id, whenever it came and whatever the
    report window, subscribes the activity, even if no broadcast ever
    reached it and even if it also has push_token callbacks and direct
    updates. `token_received` counts only activities in `token_expected`.

Readings for contract 3.2 (`--contract 3.2`, the default):
  * An activity's device is its `device_id` from its device evidence,
    exactly like `os_version`: the earliest render or callback of the
    activity carrying one (rendered_at or received_at; among equally early,
    the smallest by code point), whenever it came and whatever the report
    window. An activity without any has no device, and its updates are in
    no device's block (they still count in p0, the fleet's rate). "" is a
    string like any other: a device of its own, as "" is a key of
    `breakdowns.frequent_pushes`. A `push_to_start_token` callback names no
    activity, so its device_id is nobody's evidence.
  * p0 is the double `updates.arrival_rate` prints, taken exactly
    (Fraction(p0)), not the ratio it rounds: the contract says "let p0 be
    the window's `updates.arrival_rate`", and the two differ by at most
    half an ulp, far inside the 1e-9 the contract allows `p_value`.
  * `p_value` is computed exactly (integers and fractions, no floating
    point) and rounded to the nearest double once, at the end; "far below
    the fleet" compares that exact value with the exact 1 / (1000 m), so a
    device is listed or not by the contract's numbers, not by rounding (an
    implementation in doubles may differ only on a p_value within about
    1e-15 relative of the bound). The exact tail is a dyadic rational (p0
    is a double) and 1 / (1000 m) never is, so the two are never equal and
    "<=" against "<" never matters. A tail too small for a double prints as
    0.0 (the exact value is still what is compared with the bound).
  * `devices_tested` counts the tested devices whether listed or not; a
    device with 20 or more updates in the window but fewer than 20
    deliverable ones is not tested. When p0 is null (no deliverable update
    in the window) nothing is tested: `{"fleet_arrival_rate": null,
    "devices_tested": 0, "devices": []}`.
  * Order of `devices`: k / n as exact fractions (1/20 = 2/40), then the
    larger n first, then `device_id` by code point (as breakdown keys are
    sorted).

Readings for `exchange` lines (2.6):
  * Causes: the exchange's own top-level fields (provider, sent_at, request,
    response, error, latency_ms, activity_id, environment) get the usual
    causes in table order (missing_field, wrong_type, invalid_time,
    invalid_enum for an unknown provider); everything inside request,
    response and the bodies, and every provider rule, is `invalid_exchange`.
    The top-level fields are all checked before anything inside them.
  * `request.url` and `request.body` must be strings for every provider
    (the URL is only *read* for `apns`); `response.status` must be an int
    when `response` is an object; a `headers` or `response.body` that is
    present, non-null and of the wrong type is `invalid_exchange`.
  * Every header value must be a string, in request.headers,
    response.headers and an FCM body's message.apns.headers, whether or not
    a rule reads it. Header names are matched ignoring ASCII case only.
  * A response body is parsed only where a rule reads it, with the same
    strict parser as the request body; anything but a JSON object obeying
    2.4 is "absent".
  * APNs URL: `scheme://authority/path`; the authority runs to the first
    `/`, `?` or `#` (the contract's "after the host and optional port,
    before any ? or #": a `?` before any `/` starts the query, so the path
    is empty and the line malformed), userinfo and port
    are dropped from the host (an `[IPv6]` host keeps its brackets), the
    path is cut at the first `?` or `#`, the token is not percent-decoded.
    Only the presence of `://` is required of the scheme.
  * FCM reason without a relayed ApnsError: the first FcmError detail's
    `errorCode` when it is a string, else `error.status` when it is a string,
    else null. A relayed ApnsError is the first detail whose `@type` ends
    with google.firebase.fcm.v1.ApnsError and whose `statusCode` is a JSON
    integer in the signed 64-bit range (whatever its value, even 200).
  * Tencent: "the integer ErrorCode" means a JSON integer in the signed
    64-bit range (`true`, `0.0`, `"0"` are not); MsgKey/TaskId are read from
    the response body whatever the status.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import os
import re
import stat
import sys
import zlib
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional

# --------------------------------------------------------------------------
# Constants from the contract
# --------------------------------------------------------------------------

MAX_LINE_BYTES = 1 << 20          # 2.4: longer than 1 MiB is malformed
MAX_DEPTH = 64                    # 2.4: nesting deeper than 64 levels
INT64_MIN = -(1 << 63)            # 2.4: int = JSON integer in signed 64-bit range
INT64_MAX = (1 << 63) - 1
EIGHT_HOURS_MS = 28_800 * 1000    # 3: expired rule
OVERSIZE_RISK_BYTES = 3584        # 4: payload_bytes > 3584
# 2.1 (3.0): a broadcast payload may be 5,120 bytes, so its risk margin of
# 512 bytes starts above 4,608 (4: "or, for a broadcast (3.0), > 4608").
BROADCAST_OVERSIZE_RISK_BYTES = 4608
TOPIC_SUFFIX = ".push-type.liveactivity"
SCHEMA = "arrival.report/1"
SCHEMA_3 = "arrival.report/2"      # 5: schema 2 (contract 3.0)
GZIP_MAGIC = b"\x1f\x8b"

# Malformed causes (names are the keys of data_quality.malformed_by_cause).
LINE_TOO_LONG = "line_too_long"
INVALID_UTF8 = "invalid_utf8"
INVALID_JSON = "invalid_json"
TOO_DEEP = "too_deep"
DUPLICATE_KEY = "duplicate_key"
NOT_AN_OBJECT = "not_an_object"
UNSUPPORTED_VERSION = "unsupported_version"
UNKNOWN_KIND = "unknown_kind"
MISSING_FIELD = "missing_field"
WRONG_TYPE = "wrong_type"
INVALID_TIME = "invalid_time"
INVALID_ENUM = "invalid_enum"
TRUNCATED_GZIP = "truncated_gzip"
# 2.6: an `exchange` line whose request, response or body breaks a rule, or
# that lacks what its provider needs ("one cause for all of these").
INVALID_EXCHANGE = "invalid_exchange"
NUL_CHARACTER = "nul_character"


class Malformed(Exception):
    """A line is malformed; `cause` is one of the cause names above. `detail`
    is a human explanation (never part of the report)."""

    def __init__(self, cause: str, detail: str = ""):
        super().__init__(cause if not detail else f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail


# --------------------------------------------------------------------------
# Calendar arithmetic (proleptic Gregorian, no datetime leniency)
# --------------------------------------------------------------------------

def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def days_in_month(y: int, m: int) -> int:
    if m == 2:
        return 29 if is_leap(y) else 28
    return 30 if m in (4, 6, 9, 11) else 31


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant)."""
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    mp = m - 3 if m > 2 else m + 9
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """Inverse of days_from_civil."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    return y, m, d


# 2: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+-HH:MM)`, T and Z may be lower case,
# ASCII digits only (no \d, which would match other Unicode digits).
_TIME_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]"
    r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)
_DAY_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def parse_rfc3339_ms(text: str) -> Optional[int]:
    """Milliseconds since the Unix epoch (UTC), or None if not of the form.

    Real calendar dates only, hour 00-23, minute 00-59, second 00-59 (60 is
    rejected), offset hours 00-23 and minutes 00-59; fraction digits past the
    millisecond are truncated, not rounded.
    """
    m = _TIME_RE.fullmatch(text)  # fullmatch: `$` would accept a trailing \n
    if m is None:
        return None
    y, mo, d, hh, mi, ss = (int(m.group(k)) for k in range(1, 7))
    frac = m.group(7)
    if y < 1:  # 3.0 pins years 0001-9999
        return None
    if not (1 <= mo <= 12 and 1 <= d <= days_in_month(y, mo)):
        return None
    if not (hh <= 23 and mi <= 59 and ss <= 59):
        return None
    offset_min = 0
    if m.group(8) is None:
        oh, om = int(m.group(10)), int(m.group(11))
        if not (oh <= 23 and om <= 59):
            return None
        offset_min = oh * 60 + om
        if m.group(9) == "-":
            offset_min = -offset_min
    ms = int((frac + "000")[:3]) if frac is not None else 0  # truncate
    local_ms = (days_from_civil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss) * 1000 + ms
    return local_ms - offset_min * 60_000  # local = UTC + offset


def format_utc_ms(ms: int) -> str:
    """5: `YYYY-MM-DDTHH:MM:SSZ`, with `.mmm` only when milliseconds != 0."""
    days, rem = divmod(ms, 86_400_000)
    y, mo, d = civil_from_days(days)
    secs, milli = divmod(rem, 1000)
    hh, rest = divmod(secs, 3600)
    mi, ss = divmod(rest, 60)
    base = f"{y:04d}-{mo:02d}-{d:02d}T{hh:02d}:{mi:02d}:{ss:02d}"
    return base + (f".{milli:03d}Z" if milli else "Z")


# --------------------------------------------------------------------------
# Strict RFC 8259 JSON parser
# --------------------------------------------------------------------------
# Python's json module accepts NaN/Infinity, lone surrogates and recurses
# (so deep nesting raises RecursionError). This small iterative parser
# accepts exactly RFC 8259 and also reports the maximum container depth and
# whether any object (at any level) repeats a key after unescaping.
# Values: dict / list / str / bool / None; an integer literal (no fraction, no
# exponent) becomes a Python int (a huge one becomes a BigInteger marker);
# any other number becomes a JsonNumber marker. Only `type(v) is int` is an
# int for the contract (bool is a subclass of int in Python: never use
# isinstance for this).

class JsonSyntaxError(Exception):
    pass


class JsonNumber:
    """A number literal with a fraction or exponent (never a contract int)."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class BigInteger:
    """An integer literal too long to be converted cheaply; certainly outside
    the signed 64-bit range (Python 3.11 also limits int() to 4300 digits)."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


_WS = re.compile(r"[ \t\n\r]*")  # RFC 8259 whitespace only
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_STRING_RUN = re.compile(r'[^"\\\x00-\x1f]*')  # unescaped chars allowed in a string
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b",
                   "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _hex4(s: str, i: int) -> tuple[int, int]:
    m = _HEX4.match(s, i)
    if m is None:
        raise JsonSyntaxError("bad \\u escape")
    return int(m.group(), 16), m.end()


def _parse_string(s: str, i: int) -> tuple[str, int]:
    """Parse a string starting at s[i] == '"'; return (value, index after)."""
    if i >= len(s) or s[i] != '"':
        raise JsonSyntaxError("expected string")
    i += 1
    parts: list[str] = []
    while True:
        m = _STRING_RUN.match(s, i)
        parts.append(m.group())
        i = m.end()
        if i >= len(s):
            raise JsonSyntaxError("unterminated string")
        c = s[i]
        if c == '"':
            return "".join(parts), i + 1
        if c != "\\":
            raise JsonSyntaxError("control character in string")
        i += 1
        if i >= len(s):
            raise JsonSyntaxError("unterminated escape")
        e = s[i]
        if e in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[e])
            i += 1
            continue
        if e != "u":
            raise JsonSyntaxError("bad escape")
        cp, i = _hex4(s, i + 1)
        if 0xD800 <= cp <= 0xDBFF:
            # A high surrogate must be followed by an escaped low surrogate.
            if not s.startswith("\\u", i):
                raise JsonSyntaxError("lone high surrogate")
            lo, j = _hex4(s, i + 2)
            if not 0xDC00 <= lo <= 0xDFFF:
                raise JsonSyntaxError("lone high surrogate")
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
            i = j
        elif 0xDC00 <= cp <= 0xDFFF:
            raise JsonSyntaxError("lone low surrogate")
        parts.append(chr(cp))


def _parse_key(s: str, i: int) -> tuple[str, int]:
    """Parse `"key" ws : ws` at i; return (key, index of the value)."""
    key, i = _parse_string(s, i)
    i = _WS.match(s, i).end()
    if i >= len(s) or s[i] != ":":
        raise JsonSyntaxError("expected ':'")
    return key, _WS.match(s, i + 1).end()


def parse_json_strict(s: str) -> tuple[Any, int, bool]:
    """Parse one JSON text. Returns (value, max_depth, has_duplicate_key).

    Raises JsonSyntaxError on any RFC 8259 violation. Depth: each object or
    array is one level; the top-level object is level 1.
    """
    n = len(s)
    ws = _WS.match
    i = ws(s, 0).end()
    stack: list[list[Any]] = []  # frames [container, pending key (objects)]
    max_depth = 0
    duplicate = False
    while True:
        # ---- parse one value starting at i ----
        if i >= n:
            raise JsonSyntaxError("unexpected end")
        c = s[i]
        if c == "{" or c == "[":
            container: Any = {} if c == "{" else []
            stack.append([container, None])
            max_depth = max(max_depth, len(stack))
            i = ws(s, i + 1).end()
            close = "}" if c == "{" else "]"
            if i < n and s[i] == close:           # empty container: complete
                stack.pop()
                value: Any = container
                i += 1
            elif c == "{":
                stack[-1][1], i = _parse_key(s, i)  # first member's key
                continue                              # then parse its value
            else:
                continue                              # parse first element
        elif c == '"':
            value, i = _parse_string(s, i)
        elif c == "-" or "0" <= c <= "9":
            m = _NUMBER.match(s, i)
            if m is None:
                raise JsonSyntaxError("bad number")
            text = m.group()
            if m.group(1) is None and m.group(2) is None:   # integer literal
                value = int(text) if len(text) <= 40 else BigInteger(text)
            else:
                value = JsonNumber(text)
            i = m.end()
        elif s.startswith("true", i):
            value, i = True, i + 4
        elif s.startswith("false", i):
            value, i = False, i + 5
        elif s.startswith("null", i):
            value, i = None, i + 4
        else:
            raise JsonSyntaxError("unexpected character")
        # ---- attach the completed value to the enclosing containers ----
        while True:
            i = ws(s, i).end()
            if not stack:
                if i != n:
                    raise JsonSyntaxError("extra data")
                return value, max_depth, duplicate
            frame = stack[-1]
            container = frame[0]
            if type(container) is dict:
                key = frame[1]
                if key in container:
                    duplicate = True  # keys compared after unescaping
                else:
                    container[key] = value
                if i < n and s[i] == ",":
                    frame[1], i = _parse_key(s, ws(s, i + 1).end())
                    break
                if i < n and s[i] == "}":
                    stack.pop()
                    value, i = container, i + 1
                    continue
                raise JsonSyntaxError("expected ',' or '}'")
            container.append(value)
            if i < n and s[i] == ",":
                i = ws(s, i + 1).end()
                break
            if i < n and s[i] == "]":
                stack.pop()
                value, i = container, i + 1
                continue
            raise JsonSyntaxError("expected ',' or ']'")


# --------------------------------------------------------------------------
# Record schema (contract tables 2.1, 2.2, 2.3), fields in table order
# --------------------------------------------------------------------------

STRING, TIME, INT, ENUM, OBJECT = "string", "time", "int", "enum", "object"
# 2.1 (3.0): "Wherever channel_id appears ... a non-null value must be a
# non-empty string, else the line is malformed" (`wrong_type` for both a
# non-string and "", see "Readings for contract 3.0").
NONEMPTY_STRING = "nonempty_string"

EVENTS = ("start", "update", "end")
CALLBACKS = ("push_token", "push_to_start_token", "content_update", "activity_state")
# 2.3 (3.0): the app started the activity on a broadcast channel.
CALLBACKS_3 = CALLBACKS + ("channel_subscription",)
STATES = ("active", "ended", "dismissed", "stale", "pending")  # 3.0: pending
# 2.1: `provider` is an enumeration; absent or null means "apns".
PROVIDERS = ("apns", "fcm", "tencent_chat")
DEFAULT_PROVIDER = "apns"


@dataclass(frozen=True)
class FieldSpec:
    name: str
    type: str
    # True/False, or a function of the (already validated) earlier fields.
    required: Any = False
    allowed: tuple = ()
    # A function of the earlier fields saying whether the field is read at
    # all; where it is not, it is ignored like an unknown field (3.0 pins
    # this for `state`: read on activity_state callbacks only).
    read_when: Any = None
    # A function of the raw object saying whether the field must be absent
    # or null (3.0: `push_token` and `activity_id` on a broadcast); a
    # non-null value is then `wrong_type`.
    null_when: Any = None
    # A field added by contract 3.1 (`frequent_pushes`): read only when the
    # lines are read by 3.1; by 3.0 it is an unknown field (ignored, never
    # malformed, not part of the record's identity).
    since_31: bool = False


def _cb(obj: dict) -> str:
    return obj["callback"]  # `callback` is the first field: already valid


SCHEMAS: dict[str, list[FieldSpec]] = {
    "apns": [
        FieldSpec("apns_id", STRING, True),
        FieldSpec("sent_at", TIME, True),
        FieldSpec("status", INT, True),
        FieldSpec("reason", STRING),
        FieldSpec("push_token", STRING, True),   # "hex string": type-checked as string only
        FieldSpec("activity_id", STRING),
        FieldSpec("seq", INT),
        FieldSpec("event", ENUM, False, EVENTS),
        FieldSpec("aps_timestamp", INT, True),
        FieldSpec("payload_bytes", INT),
        FieldSpec("topic", STRING),
        FieldSpec("push_type", STRING),
        FieldSpec("priority", INT),              # "5 or 10" is not an enumerated field (2.4)
        FieldSpec("environment", STRING),        # not an enumerated field (2.4)
        FieldSpec("latency_ms", INT),
        FieldSpec("provider", ENUM, False, PROVIDERS),  # 2.1: an enumeration
    ],
    "render": [
        FieldSpec("activity_id", STRING, True),
        FieldSpec("seq", INT, True),
        FieldSpec("rendered_at", TIME, True),
        FieldSpec("surface", STRING),            # other values kept as given
        FieldSpec("device_id", STRING),
        FieldSpec("os_version", STRING),
        FieldSpec("device_model", STRING),
        FieldSpec("app_version", STRING),
    ],
    "callback": [
        FieldSpec("callback", ENUM, True, CALLBACKS),
        FieldSpec("activity_id", STRING, lambda o: _cb(o) != "push_to_start_token"),
        FieldSpec("push_token", STRING,
                  lambda o: _cb(o) in ("push_token", "push_to_start_token")),
        FieldSpec("seq", INT, lambda o: _cb(o) == "content_update"),
        FieldSpec("state", ENUM, lambda o: _cb(o) == "activity_state", STATES,
                  read_when=lambda o: _cb(o) == "activity_state"),
        FieldSpec("received_at", TIME, True),
        FieldSpec("device_id", STRING),
        FieldSpec("os_version", STRING),
        FieldSpec("device_model", STRING),
        FieldSpec("app_version", STRING),
    ],
    # 2.6: the top-level fields of an exchange. Their own problems get the
    # usual causes; what is inside request/response (and the provider's
    # needs) is checked by derive_exchange() and gets `invalid_exchange`.
    "exchange": [
        FieldSpec("provider", ENUM, True, PROVIDERS),
        FieldSpec("sent_at", TIME, True),
        FieldSpec("request", OBJECT, True),
        FieldSpec("response", OBJECT),           # absent or null: no answer
        FieldSpec("error", STRING),
        FieldSpec("latency_ms", INT),
        FieldSpec("activity_id", STRING),
        FieldSpec("environment", STRING),
    ],
}
KINDS = tuple(SCHEMAS)  # apns, render, callback, exchange
FIELD_INDEX = {kind: {spec.name: i for i, spec in enumerate(specs)}
               for kind, specs in SCHEMAS.items()}


def is_broadcast_object(obj: dict) -> bool:
    """2.1 (3.0): "a record with a non-empty channel_id is a broadcast",
    read from the raw line before its fields are checked (so that the
    table-order checks know whether `push_token` is required)."""
    channel = obj.get("channel_id")
    return isinstance(channel, str) and channel != ""


def _with_field(specs: list[FieldSpec], after: str, new: FieldSpec) -> list[FieldSpec]:
    """`specs` with `new` inserted after the field named `after`."""
    at = [spec.name for spec in specs].index(after) + 1
    return specs[:at] + [new] + specs[at:]


def _schemas_3() -> dict[str, list[FieldSpec]]:
    """The tables of contract 3.0 (2.1-2.3): `channel_id` in its table place
    on apns (last), render (after surface) and callback (after state, before
    received_at); `push_token` not required on a broadcast, and it and
    `activity_id` absent or null there; `channel_subscription` a callback,
    which requires a `channel_id`."""
    apns = []
    for spec in SCHEMAS["apns"]:
        if spec.name == "push_token":        # "yes, except on a broadcast"
            spec = FieldSpec("push_token", STRING, lambda o: not is_broadcast_object(o),
                             null_when=is_broadcast_object)
        elif spec.name == "activity_id":
            spec = FieldSpec("activity_id", STRING, null_when=is_broadcast_object)
        apns.append(spec)
    apns.append(FieldSpec("channel_id", NONEMPTY_STRING))
    render = _with_field(SCHEMAS["render"], "surface", FieldSpec("channel_id", NONEMPTY_STRING))
    callback = [FieldSpec("callback", ENUM, True, CALLBACKS_3) if spec.name == "callback" else spec
                for spec in SCHEMAS["callback"]]
    callback = _with_field(callback, "state",
                           FieldSpec("channel_id", NONEMPTY_STRING,
                                     lambda o: _cb(o) == "channel_subscription"))
    # 3.1: `frequent_pushes`, an optional string, last in the render and
    # callback tables as they list it. Any string is kept as given; a
    # non-null value that is not a string is `wrong_type`, exactly like
    # `os_version`. Read only by 3.1 (`since_31`): for a 3.0 reader it is an
    # unknown field, ignored.
    render = render + [FieldSpec("frequent_pushes", STRING, since_31=True)]
    callback = callback + [FieldSpec("frequent_pushes", STRING, since_31=True)]
    return {"apns": apns, "render": render, "callback": callback,
            "exchange": SCHEMAS["exchange"]}


SCHEMAS_3 = _schemas_3()
FIELD_INDEX_3 = {kind: {spec.name: i for i, spec in enumerate(specs)}
                 for kind, specs in SCHEMAS_3.items()}


@dataclass(frozen=True)
class Record:
    """A valid record: kind and the values of its table's fields in table
    order (times as integer ms; absent == null == None). (kind, values) is
    the record identity used for record de-duplication (2.5). `contract3`
    says which tables the values follow: contract 3.0's (with `channel_id`)
    or the ones before it."""
    kind: str
    values: tuple
    contract3: bool = field(default=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        # Field access by name, e.g. rec.sent_at (None when absent/null).
        # Only called for names that are not real attributes. A 3.0 field
        # (`channel_id`) read on a record of the older tables is None.
        kind = object.__getattribute__(self, "kind")
        three = object.__getattribute__(self, "contract3")
        index = (FIELD_INDEX_3 if three else FIELD_INDEX)[kind].get(name)
        if index is None:
            if not three and name in FIELD_INDEX_3.get(kind, {}):
                return None
            raise AttributeError(name)
        return object.__getattribute__(self, "values")[index]


def _is_int(v: Any) -> bool:
    # A JSON integer literal (no fraction/exponent) in signed 64-bit range.
    # `type(v) is int` excludes bool, JsonNumber (1.0, 1e3) and BigInteger.
    return type(v) is int and INT64_MIN <= v <= INT64_MAX


def validate_object(obj: Any, contract3: bool = False, contract31: bool = False) -> Record:
    """Checks after JSON syntax/depth/duplicate checks, in contract order:
    not_an_object, unsupported_version, unknown_kind, then each field of the
    kind's table in order (missing_field, wrong_type, invalid_time,
    invalid_enum). With `contract3`, the tables of contract 3.0 (broadcasts,
    `channel_id`, `channel_subscription`); otherwise `channel_id` is an
    unknown field, ignored. With `contract31` as well, the tables of 3.1
    (`frequent_pushes` on renders and callbacks); without it that field is
    unknown, ignored (its value stays None)."""
    if type(obj) is not dict:
        raise Malformed(NOT_AN_OBJECT)
    # `v`: absent or null means 1; anything but the JSON integer 1 (2, 1.0,
    # "1", true) is unsupported.
    v = obj.get("v")
    if v is not None and not (type(v) is int and v == 1):
        raise Malformed(UNSUPPORTED_VERSION)
    kind = obj.get("kind")
    if isinstance(kind, str) and kind not in KINDS:
        raise Malformed(UNKNOWN_KIND)
    if kind is None:
        raise Malformed(MISSING_FIELD)
    if not isinstance(kind, str):
        raise Malformed(WRONG_TYPE)

    values = []
    for spec in (SCHEMAS_3 if contract3 else SCHEMAS)[kind]:
        if spec.since_31 and not contract31:
            values.append(None)   # an unknown field before 3.1
            continue
        if spec.read_when is not None and not spec.read_when(obj):
            values.append(None)
            continue
        raw = obj.get(spec.name)  # absent == null
        required = spec.required(obj) if callable(spec.required) else spec.required
        if raw is None:
            if required:
                raise Malformed(MISSING_FIELD)
            values.append(None)
            continue
        if spec.null_when is not None and spec.null_when(obj):
            # 2.1 (3.0): a broadcast's push_token and activity_id "must be
            # absent or null"; any other value is of the wrong type.
            raise Malformed(WRONG_TYPE, f"{spec.name} on a broadcast")
        # Optional fields present with a non-null value are type-checked too.
        if spec.type == INT:
            if not _is_int(raw):
                raise Malformed(WRONG_TYPE)
            values.append(raw)
        elif spec.type == STRING:
            if not isinstance(raw, str):
                raise Malformed(WRONG_TYPE)
            values.append(raw)
        elif spec.type == NONEMPTY_STRING:
            if not isinstance(raw, str) or raw == "":
                raise Malformed(WRONG_TYPE, f"{spec.name} is not a non-empty string")
            values.append(raw)
        elif spec.type == TIME:
            if not isinstance(raw, str):
                raise Malformed(WRONG_TYPE)
            ms = parse_rfc3339_ms(raw)
            if ms is None:
                raise Malformed(INVALID_TIME)
            values.append(ms)  # times compared as ms instants
        elif spec.type == ENUM:
            if not isinstance(raw, str):
                raise Malformed(WRONG_TYPE)
            if raw not in spec.allowed:
                raise Malformed(INVALID_ENUM)
            values.append(raw)
        elif spec.type == OBJECT:
            if type(raw) is not dict:
                raise Malformed(WRONG_TYPE)
            values.append(raw)
        else:  # pragma: no cover
            raise AssertionError(spec.type)
    if kind == "exchange":
        # 2.6: ingest derives the `apns` record; the exchange itself is not
        # stored, so duplicates and metrics only ever see the derived record.
        names = [spec.name for spec in SCHEMAS["exchange"]]
        return derive_exchange(dict(zip(names, values)), contract3)
    if kind == "apns":
        # 2.5: an absent (or null) provider counts as "apns" when records are
        # compared, so the stored value is the normalised one.
        p = FIELD_INDEX["apns"]["provider"]   # the same place in both tables
        if values[p] is None:
            values[p] = DEFAULT_PROVIDER
    return Record(kind, tuple(values), contract3)


# --------------------------------------------------------------------------
# Section 2.6: an `exchange` line -> the `apns` record it stands for
# --------------------------------------------------------------------------
# The derivation reads the exchange in three layers:
#   1. the shapes of `request` and `response` (url/body strings, status int,
#      header objects of string values),
#   2. the request body: a JSON text that must itself obey 2.4 (strict
#      RFC 8259, no repeated key, depth <= 64 counted from the body's own
#      root) and be an object,
#   3. the provider's rules (apns, fcm, tencent_chat).
# Every problem in these layers is the one cause `invalid_exchange`; the
# exchange's own top-level fields were already checked by validate_object
# with the usual causes.

APNS_PATH_PREFIX = "/3/device/"
APNS_HOST_ENVIRONMENTS = {                 # 2.6, hosts compared ignoring case
    "api.push.apple.com": "production",
    "api.sandbox.push.apple.com": "sandbox",
    "api.development.push.apple.com": "sandbox",
}
# 2.6 (3.0): a broadcast goes to `/4/broadcasts/apps/<bundle id>`, and the
# broadcast hosts name an environment too (for either path: the rule lists
# them with the others).
BROADCAST_PATH_PREFIX = "/4/broadcasts/apps/"
APNS_HOST_ENVIRONMENTS_3 = {
    **APNS_HOST_ENVIRONMENTS,
    "api-broadcast.push.apple.com": "production",
    "api-broadcast.sandbox.push.apple.com": "sandbox",
}
FCM_APNS_ERROR = "google.firebase.fcm.v1.ApnsError"
FCM_FCM_ERROR = "google.firebase.fcm.v1.FcmError"
_PRIORITY_DIGITS = re.compile(r"[0-9]{1,18}")  # ASCII digits only
_ASCII_UPPER_TO_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def bad_exchange(detail: str) -> Malformed:
    return Malformed(INVALID_EXCHANGE, detail)


def ascii_lower(text: str) -> str:
    """Header names are matched without regard to case. HTTP header names
    are ASCII tokens, so only A-Z are folded (no Unicode case mapping: the
    Kelvin sign is not a `k`)."""
    return text.translate(_ASCII_UPPER_TO_LOWER)


def checked_headers(value: Any, where: str) -> dict:
    """A `headers` field: absent or null is no headers; otherwise it must be
    an object whose every value is a string (read or not). The returned dict
    keeps the object's member order (the parser inserts in order)."""
    if value is None:
        return {}
    if type(value) is not dict:
        raise bad_exchange(f"{where} is not an object")
    for name, v in value.items():
        if not isinstance(v, str):
            raise bad_exchange(f"{where} value of {name!r} is not a string")
    return value


def header(headers: dict, name: str) -> Optional[str]:
    """The value of the first header, in the object's order, whose name
    equals `name` (lower case) without regard to ASCII case."""
    for key, value in headers.items():
        if ascii_lower(key) == name:
            return value
    return None


def priority_from(headers: dict) -> Optional[int]:
    """`apns-priority` read as decimal when it is 1 to 18 ASCII digits."""
    v = header(headers, "apns-priority")
    if v is not None and _PRIORITY_DIGITS.fullmatch(v):
        return int(v, 10)
    return None


def strict_json_object(text: str) -> Optional[dict]:
    """`text` as a JSON object that obeys 2.4 (RFC 8259, no repeated key,
    nesting at most 64 from its own root), else None."""
    try:
        value, depth, duplicate = parse_json_strict(text)
    except JsonSyntaxError:
        return None
    if depth > MAX_DEPTH or duplicate or type(value) is not dict:
        return None
    return value


def member(obj: Any, *path: str) -> Any:
    """obj[path[0]][path[1]]... or None as soon as a step is not an object
    or lacks the key."""
    for key in path:
        if type(obj) is not dict:
            return None
        obj = obj.get(key)
    return obj


def event_of(value: Any) -> Optional[str]:
    """`event` is the value when it is `start`, `update` or `end`, else null
    (an unknown event in a body is not an error)."""
    return value if isinstance(value, str) and value in EVENTS else None


def int_or_none(value: Any) -> Optional[int]:
    """A JSON integer in the signed 64-bit range, else null."""
    return value if _is_int(value) else None


def aps_of(payload: Any) -> tuple[Optional[str], Optional[int], int]:
    """(event, seq, aps_timestamp) from an APNs payload object. `aps.timestamp`
    must be a JSON integer in the signed 64-bit range."""
    aps = member(payload, "aps")
    timestamp = member(aps, "timestamp")
    if not _is_int(timestamp):
        raise bad_exchange("aps.timestamp is missing or not an integer")
    return (event_of(member(aps, "event")),
            int_or_none(member(aps, "content-state", "seq")),
            timestamp)


@dataclass
class Answer:
    """The provider's answer as the derived record reports it."""
    status: int
    reason: Optional[str]


def apns_url_parts(url: str, contract3: bool = False) -> tuple[str, Optional[str], Optional[str]]:
    """(host, push_token, bundle id) of an APNs request URL: exactly one of
    the last two is set (the bundle id only with `contract3`, for a
    broadcast path `/4/broadcasts/apps/<bundle id>`: non-empty, no `/`).

    scheme `://` authority path: the authority runs up to the first `/`,
    `?` or `#` (2.6: the path is what comes "after the host and optional
    port, before any `?` or `#`", so in `https://h?q=/3/device/t` the path
    is empty), the host is the authority without `userinfo@` and without
    `:port`, and the path must be `/3/device/<token>` with a non-empty
    token that holds no `/`. The token is taken as written (no
    percent-decoding)."""
    if url.startswith("/"):
        # 3.0 pins: the path alone, as HTTP/2's `:path` carries it; no host.
        authority, path = "", url
    else:
        sep = url.find("://")
        if sep < 0:
            raise bad_exchange("request.url has no scheme://")
        rest = url[sep + 3:]
        end = len(rest)
        for stop in ("/", "?", "#"):
            at = rest.find(stop)
            if 0 <= at < end:
                end = at
        authority, path = rest[:end], rest[end:]
    for stop in ("?", "#"):
        cut = path.find(stop)
        if cut >= 0:
            path = path[:cut]
    token = bundle = None
    if contract3 and path.startswith(BROADCAST_PATH_PREFIX):
        bundle = path[len(BROADCAST_PATH_PREFIX):]
        if bundle == "" or "/" in bundle:
            raise bad_exchange("request.url has an empty bundle id or one with '/'")
    else:
        if not path.startswith(APNS_PATH_PREFIX):
            raise bad_exchange("request.url path is not /3/device/<token>")
        token = path[len(APNS_PATH_PREFIX):]
        if token == "" or "/" in token:
            raise bad_exchange("request.url has an empty token or one with '/'")
    host = authority.rpartition("@")[2]           # drop userinfo@
    if host.startswith("["):                       # [IPv6]:port
        close = host.find("]")
        host = host[:close + 1] if close >= 0 else host
    else:
        host = host.partition(":")[0]              # drop :port
    return host, token, bundle


def derive_exchange(x: dict, contract3: bool = False) -> Record:
    """2.6: the `apns` record derived from an exchange whose top-level fields
    (`x`, by name; absent == None) are already valid. With `contract3`, the
    record follows contract 3.0's table (`channel_id`) and an `apns`
    exchange may be a broadcast."""
    provider: str = x["provider"]
    sent_at: int = x["sent_at"]

    # -- layer 1: shapes of request and response --------------------------
    request: dict = x["request"]
    url = request.get("url")
    if not isinstance(url, str):
        raise bad_exchange("request.url is missing or not a string")
    request_headers = checked_headers(request.get("headers"), "request.headers")
    body_text = request.get("body")
    if not isinstance(body_text, str):
        raise bad_exchange("request.body is missing or not a string")

    response: Optional[dict] = x["response"]      # None: no answer came
    response_headers: dict = {}
    response_body_text: Optional[str] = None
    if response is not None:
        if response.get("status") is None:
            raise bad_exchange("response.status is missing")
        if not _is_int(response.get("status")):
            raise bad_exchange("response.status is not an integer")
        response_headers = checked_headers(response.get("headers"),
                                           "response.headers")
        response_body_text = response.get("body")
        if response_body_text is not None and not isinstance(response_body_text, str):
            raise bad_exchange("response.body is not a string")

    def response_body() -> Optional[dict]:
        """Read only where a rule says so; not a JSON object == absent."""
        if response_body_text is None:
            return None
        return strict_json_object(response_body_text)

    # -- layer 2: the request body ----------------------------------------
    body = strict_json_object(body_text)
    if body is None:
        raise bad_exchange("request.body is not the text of a JSON object "
                           "obeying 2.4")

    # -- layer 3: the provider's rules ------------------------------------
    apns_specs = (SCHEMAS_3 if contract3 else SCHEMAS)["apns"]
    f: dict[str, Any] = {spec.name: None for spec in apns_specs}
    f["sent_at"] = sent_at                         # copied
    f["latency_ms"] = x["latency_ms"]              # copied
    f["provider"] = provider                       # copied

    if provider == "apns":
        host, f["push_token"], bundle = apns_url_parts(url, contract3)
        broadcast = bundle is not None
        if broadcast:
            # 3.0: the channel is the request header `apns-channel-id`, a
            # non-empty string; the sender names no activity.
            channel = header(request_headers, "apns-channel-id")
            if channel is None or channel == "":
                raise bad_exchange("a broadcast without a non-empty apns-channel-id header")
            if x["activity_id"] is not None:
                raise bad_exchange("a broadcast exchange names an activity_id")
            f["channel_id"] = channel
        f["event"], f["seq"], f["aps_timestamp"] = aps_of(body)
        if broadcast:
            ids = (header(response_headers, "apns-request-id"),
                   header(response_headers, "apns-id"),
                   header(request_headers, "apns-request-id"),
                   header(request_headers, "apns-id"))
        else:
            ids = (header(response_headers, "apns-id"),
                   header(request_headers, "apns-id"))
        f["apns_id"] = next((i for i in ids if i is not None), "")
        if response is None:
            answer = Answer(0, x["error"])
        elif response["status"] == 200:
            answer = Answer(200, None)
        else:
            reason = member(response_body(), "reason")
            answer = Answer(response["status"],
                            reason if isinstance(reason, str) else None)
        f["payload_bytes"] = len(body_text.encode("utf-8"))
        f["topic"] = header(request_headers, "apns-topic")
        if broadcast and f["topic"] is None:
            f["topic"] = bundle                    # 3.0: else the path's bundle id
        f["push_type"] = header(request_headers, "apns-push-type")
        f["priority"] = priority_from(request_headers)
        if x["environment"] is not None:
            f["environment"] = x["environment"]
        else:
            hosts = APNS_HOST_ENVIRONMENTS_3 if contract3 else APNS_HOST_ENVIRONMENTS
            f["environment"] = hosts.get(ascii_lower(host))
        f["activity_id"] = x["activity_id"]        # None on a broadcast (checked)

    elif provider == "fcm":
        apns = member(body, "message", "apns")
        if type(apns) is not dict:
            raise bad_exchange("message.apns is missing or not an object")
        token = apns.get("live_activity_token")
        if not isinstance(token, str) or token == "":
            raise bad_exchange("message.apns.live_activity_token is missing, "
                               "empty or not a string")
        f["push_token"] = token
        fcm_headers = checked_headers(apns.get("headers"), "message.apns.headers")
        f["event"], f["seq"], f["aps_timestamp"] = aps_of(apns.get("payload"))
        f["topic"] = header(fcm_headers, "apns-topic")
        f["push_type"] = header(fcm_headers, "apns-push-type")
        f["priority"] = priority_from(fcm_headers)
        # payload_bytes stays null: FCM writes the APNs payload itself.
        f["apns_id"] = ""
        if response is None:
            answer = Answer(0, x["error"])
        elif response["status"] == 200:
            name = member(response_body(), "name")
            f["apns_id"] = name if isinstance(name, str) else ""
            answer = Answer(200, None)
        else:
            answer = fcm_error_answer(response["status"], response_body())
        f["environment"] = x["environment"]
        f["activity_id"] = x["activity_id"]

    elif provider == "tencent_chat":
        live = member(body, "OfflinePushInfo", "ApnsInfo", "LiveActivity")
        if type(live) is not dict:
            raise bad_exchange("OfflinePushInfo.ApnsInfo.LiveActivity is "
                               "missing or not an object")
        la_id = live.get("LaId")
        if not isinstance(la_id, str) or la_id == "":
            raise bad_exchange("LiveActivity.LaId is missing, empty or not "
                               "a string")
        f["activity_id"] = la_id                   # not the exchange's own
        f["event"] = event_of(live.get("Event"))
        f["seq"] = int_or_none(member(live, "ContentState", "seq"))
        f["push_token"] = ""                       # the provider keeps it
        f["aps_timestamp"] = sent_at // 1000       # whole seconds, rounded down
        f["push_type"] = "liveactivity"
        rbody = response_body() if response is not None else None
        if response is None:
            answer = Answer(0, x["error"])
        elif response["status"] == 200:
            code = member(rbody, "ErrorCode")
            if member(rbody, "ActionStatus") == "OK" and _is_int(code) and code == 0:
                answer = Answer(200, None)
            elif _is_int(code):
                answer = Answer(400, f"Tencent:{code}")
            else:
                answer = Answer(400, "Tencent:unknown")
        else:
            answer = Answer(response["status"], None)
        msg_key, task_id = member(rbody, "MsgKey"), member(rbody, "TaskId")
        f["apns_id"] = (msg_key if isinstance(msg_key, str) else
                        task_id if isinstance(task_id, str) else "")
        f["environment"] = x["environment"]

    else:  # pragma: no cover - validate_object checked the enumeration
        raise AssertionError(provider)

    f["status"], f["reason"] = answer.status, answer.reason
    return Record("apns", tuple(f[spec.name] for spec in apns_specs), contract3)


def fcm_error_answer(status: int, body: Optional[dict]) -> Answer:
    """2.6, FCM with a status other than 200. APNs's own answer relayed in a
    google.firebase.fcm.v1.ApnsError detail wins; otherwise the FCM status
    with `FCM:<errorCode>` (FcmError detail), else `FCM:<error.status>`."""
    error = member(body, "error")
    details = member(error, "details")
    if type(details) is not list:
        details = []
    objects = [d for d in details if type(d) is dict]

    def typed(d: dict, suffix: str) -> bool:
        t = d.get("@type")
        return isinstance(t, str) and t.endswith(suffix)

    for d in objects:
        if typed(d, FCM_APNS_ERROR) and _is_int(d.get("statusCode")):
            reason = d.get("reason")
            return Answer(d["statusCode"], reason if isinstance(reason, str) else None)
    fcm_error = next((d for d in objects if typed(d, FCM_FCM_ERROR)), None)
    code = member(fcm_error, "errorCode")
    if isinstance(code, str):
        return Answer(status, f"FCM:{code}")
    error_status = member(error, "status")
    if isinstance(error_status, str):
        return Answer(status, f"FCM:{error_status}")
    return Answer(status, None)


def parse_line(line: bytes, contract3: bool = False, contract31: bool = False) -> Record:
    """One non-blank line (terminator removed) -> Record, or raise Malformed.
    Causes in priority order; the first that applies wins. `contract3`
    reads the line by contract 3.0's tables (broadcasts), and `contract31`
    (with `contract3`) by 3.1's (`frequent_pushes`)."""
    if len(line) > MAX_LINE_BYTES:
        raise Malformed(LINE_TOO_LONG)
    try:
        text = line.decode("utf-8", errors="strict")  # rejects overlongs, surrogates
    except UnicodeDecodeError:
        raise Malformed(INVALID_UTF8) from None
    try:
        obj, depth, duplicate = parse_json_strict(text)
    except JsonSyntaxError:
        raise Malformed(INVALID_JSON) from None
    if depth > MAX_DEPTH:
        raise Malformed(TOO_DEEP)
    if duplicate:
        raise Malformed(DUPLICATE_KEY)
    record = validate_object(obj, contract3, contract31 and contract3)
    # (3.2) U+0000 in a field the record keeps (an exchange's: its derived
    # record's) makes the line malformed, on every engine. Checked once the
    # record is otherwise valid (arrival's reading: Documentation/ContractChoices.md).
    if any(isinstance(v, str) and "\x00" in v for v in record.values):
        raise Malformed(NUL_CHARACTER)
    return record


# --------------------------------------------------------------------------
# Reading files: gzip, lines
# --------------------------------------------------------------------------

def gunzip_salvage(data: bytes) -> tuple[bytes, bool]:
    """Decompress a (multi-member) gzip stream. Returns (decoded, broken).

    Members are concatenated. If the stream breaks off (truncated, corrupt
    data, bad CRC, or trailing bytes that are not a valid member), everything
    decoded before the break is kept and `broken` is True. On an error, the
    failing chunk is replayed byte by byte from a snapshot of the
    decompressor so that as much output as possible is salvaged.
    """
    CHUNK = 1 << 16
    out: list[bytes] = []
    rest = data
    while rest:
        d = zlib.decompressobj(wbits=31)  # gzip wrapper only
        pos = 0
        while pos < len(rest) and not d.eof:
            chunk = rest[pos:pos + CHUNK]
            snapshot = d.copy()
            try:
                out.append(d.decompress(chunk))
                pos += len(chunk)
            except zlib.error:
                d = snapshot  # replay this chunk one byte at a time
                for k in range(len(chunk)):
                    try:
                        out.append(d.decompress(chunk[k:k + 1]))
                    except zlib.error:
                        return b"".join(out), True  # the break
                    if d.eof:
                        pos += k + 1
                        break
                else:
                    pos += len(chunk)  # (not expected: the error recurs)
        if not d.eof:
            return b"".join(out), True  # member truncated
        # Bytes after this member: d.unused_data + input not yet fed.
        rest = d.unused_data + rest[pos:]
    return b"".join(out), False


def split_lines(data: bytes) -> Iterable[tuple[int, bytes]]:
    """Yield (line number, line without terminator) for `\\n` and `\\r\\n`
    line ends. A final fragment without `\\n` is a line too (its trailing
    `\\r`, if any, is not a terminator)."""
    parts = data.split(b"\n")
    last = len(parts) - 1
    for idx, part in enumerate(parts):
        if idx == last:
            if part == b"":
                break  # data ended with "\n" (or was empty)
        elif part.endswith(b"\r"):
            part = part[:-1]  # CRLF
        yield idx + 1, part


_BLANK = frozenset(b" \t\r")


def is_blank(line: bytes) -> bool:
    # 2: empty, or only spaces, tabs and a carriage return.
    return all(b in _BLANK for b in line)


# --------------------------------------------------------------------------
# The store: ingest with file and record de-duplication
# --------------------------------------------------------------------------

@dataclass
class FileSummary:
    path: str
    lines: int = 0                       # non-blank lines seen
    records: int = 0                     # new valid records
    duplicates: int = 0                  # repeated records
    malformed: dict = field(default_factory=dict)  # cause -> count
    gzip: bool = False


class Store:
    """The ingested records. `contract3` reads lines by contract 3.0's tables
    (broadcast `apns` records, `channel_id` on renders and callbacks, the
    `channel_subscription` callback, broadcast exchanges), which also makes
    `channel_id` part of a record's identity (2.5); without it, lines are
    read by the tables before 3.0 and `channel_id` is an unknown field. A
    store read without it can still be reported by contract 3.0: it then
    holds no broadcast and no subscription (how this reference reported 3.0
    before it read broadcasts). `contract31` (which implies `contract3`)
    reads contract 3.1's tables: `frequent_pushes` on renders and callbacks,
    part of the identity and type-checked; without it the field is unknown."""

    def __init__(self, contract3: bool = False, contract31: bool = False) -> None:
        self.contract3 = contract3 or contract31
        self.contract31 = contract31
        self.records: list[Record] = []
        self._record_keys: set = set()
        self.duplicate_records = 0
        self.malformed_by_cause: dict[str, int] = {}
        self._first_path_by_hash: dict[str, str] = {}
        self._skipped_pairs: set = set()  # (hash, path) pairs skipped
        self.summaries: list[FileSummary] = []
        self.skipped_special: list[str] = []
        self.silent_rereads: list[str] = []

    @property
    def files_skipped_as_duplicate(self) -> int:
        return len(self._skipped_pairs)

    @property
    def malformed_lines(self) -> int:
        return sum(self.malformed_by_cause.values())

    def _malformed(self, summary: FileSummary, cause: str) -> None:
        self.malformed_by_cause[cause] = self.malformed_by_cause.get(cause, 0) + 1
        summary.malformed[cause] = summary.malformed.get(cause, 0) + 1

    def ingest_file(self, path: str) -> None:
        with open(path, "rb") as f:
            raw = f.read()
        # 2.5: file de-duplication by content hash of the bytes on disk; paths
        # compared absolute and normalised (not symlink-resolved).
        digest = hashlib.sha256(raw).hexdigest()
        abspath = os.path.abspath(path)
        first = self._first_path_by_hash.get(digest)
        if first is not None:
            if first != abspath:
                self._skipped_pairs.add((digest, abspath))  # each pair once
            else:
                self.silent_rereads.append(abspath)       # silent no-op
            return
        self._first_path_by_hash[digest] = abspath

        summary = FileSummary(path)
        self.summaries.append(summary)
        broken = False
        if raw[:2] == GZIP_MAGIC:  # gzip by magic bytes, not by name
            summary.gzip = True
            raw, broken = gunzip_salvage(raw)
        for _lineno, line in split_lines(raw):
            # line_too_long is decided before the blank test (see docstring).
            if len(line) <= MAX_LINE_BYTES and is_blank(line):
                continue  # blank lines are skipped and not counted
            summary.lines += 1
            try:
                rec = parse_line(line, self.contract3, self.contract31)
            except Malformed as e:
                self._malformed(summary, e.cause)
                continue
            # 2.5: record de-duplication on (kind, all table fields).
            key = (rec.kind, rec.values)
            if key in self._record_keys:
                self.duplicate_records += 1
                summary.duplicates += 1
                continue
            self._record_keys.add(key)
            self.records.append(rec)
            summary.records += 1
        if broken:
            self._malformed(summary, TRUNCATED_GZIP)  # ONE per broken file

    def ingest_path(self, path: str) -> None:
        """A command-line path: a regular file or a link to one is read; a
        directory (or a link to one) is walked; anything else is listed."""
        if not os.path.lexists(path):
            raise FileNotFoundError(path)
        try:
            st = os.stat(path)  # follows a link
        except OSError:
            self.skipped_special.append(path)  # dangling link
            return
        if stat.S_ISREG(st.st_mode):
            self.ingest_file(path)
        elif stat.S_ISDIR(st.st_mode):
            self.walk(path)
        else:
            self.skipped_special.append(path)

    def walk(self, directory: str) -> None:
        """Recursive walk in sorted order (by name bytes). Hidden entries are
        skipped; symlinks, FIFOs, sockets, devices are skipped and listed."""
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: os.fsencode(e.name))
        for entry in entries:
            if entry.name.startswith("."):
                continue  # hidden file (or hidden directory)
            if entry.is_symlink():
                self.skipped_special.append(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                self.walk(entry.path)
            elif entry.is_file(follow_symlinks=False):
                self.ingest_file(entry.path)
            else:
                self.skipped_special.append(entry.path)  # FIFO, socket, device


# --------------------------------------------------------------------------
# Section 3: attribution, updates, activities, outcomes
# --------------------------------------------------------------------------

OUTCOMES = ("rendered", "ended", "expired", "stale_timestamp", "superseded", "lost")
# 3.0: `dismissed` is rule 2; the loss causes of a `lost` update, in order.
OUTCOMES_3 = ("rendered", "dismissed", "ended", "expired", "stale_timestamp", "superseded", "lost")
LOSS_CAUSES = ("not_rendered", "old_token", "closed_later", "device_silent", "unexplained")
# 3.0 "Dead tokens": reasons that kill a token whatever the status (and status 410).
DEAD_TOKEN_REASONS = ("Unregistered", "BadDeviceToken", "ExpiredToken", "FCM:UNREGISTERED")


def _null_first(v: Any) -> tuple:
    return (0,) if v is None else (1, v)


def effective_event(r: Record) -> str:
    """2.1: `event` defaults to `update`."""
    return r.event if r.event is not None else "update"


def app_of(r: Record) -> str:
    """4: the topic without `.push-type.liveactivity` when it ends with it;
    "unknown" when the topic is absent or null; an empty topic is ""."""
    t = r.topic
    if t is None:
        return "unknown"
    return t[: -len(TOPIC_SUFFIX)] if t.endswith(TOPIC_SUFFIX) else t


def request_order_key(r: Record) -> tuple:
    """Earliest request (3): by sent_at, then the smaller apns_id, then the
    smaller aps_timestamp, then event, app, priority (a null priority first)
    and provider. `event` is compared as its effective value (absent ==
    "update") and `provider` as stored (absent == "apns"): the contract
    singles out priority as the one that may be null. Strings compare by
    code point (Python's str order). The remaining table fields (table
    order, null first) only make the order total; two requests that tie up
    to there give the update the same accept time, aps_timestamp, event,
    app, priority and provider, so which one is picked changes nothing."""
    return (r.sent_at, r.apns_id, r.aps_timestamp, effective_event(r),
            app_of(r), _null_first(r.priority), r.provider,
            tuple(_null_first(v) for v in r.values))


def request_order_key_3(r: Record) -> tuple:
    """3.0's full tie order of "earliest request": sent_at, the smaller
    apns_id, aps_timestamp, then event, app, priority (null first),
    provider, channel_id, then push_token, payload_bytes, topic, push_type,
    environment, latency_ms and reason, nulls first in each. `event` and
    `provider` as their effective values, as above; a request sent to a
    token (no channel_id) comes before a broadcast request that ties with it
    up to there."""
    return (r.sent_at, r.apns_id, r.aps_timestamp, effective_event(r),
            app_of(r), _null_first(r.priority), r.provider, _null_first(r.channel_id),
            _null_first(r.push_token), _null_first(r.payload_bytes),
            _null_first(r.topic), _null_first(r.push_type),
            _null_first(r.environment), _null_first(r.latency_ms),
            _null_first(r.reason),
            tuple(_null_first(v) for v in r.values))


@dataclass
class Update:
    activity_id: str
    seq: int
    requests: list = field(default_factory=list)
    accepted: bool = False
    accept_time: Optional[int] = None
    aps_timestamp: Optional[int] = None
    event: Optional[str] = None      # effective event ("update" if absent)
    # 3.0: the event of the earliest accepted request, else of the earliest
    # request (what `starts` counts by), and the deciding request itself.
    start_event: Optional[str] = None
    first_accepted: Optional[Record] = None
    loss_cause: Optional[str] = None
    window_time: int = 0             # accept time, or earliest request's sent_at
    app: str = "unknown"
    priority: str = "unknown"
    provider: str = DEFAULT_PROVIDER
    # 3.0: the broadcast channel of the deciding request (None: sent to a token).
    channel: Optional[str] = None
    outcome: Optional[str] = None


@dataclass
class Analysis:
    apns: list
    resolved_activity: dict  # id(record) -> activity_id or None
    updates: list
    first_render: dict       # (activity_id, seq) -> earliest rendered_at
    content_update_keys: set  # (activity_id, seq) of content_update callbacks
    push_token_activities: set  # activity_ids with a push_token callback
    os_version: dict         # activity_id -> value or "unknown"
    app_version: dict
    # 3.0 (empty for 2.x): what `starts` needs per activity.
    has_device_evidence: set = field(default_factory=set)   # any render or callback
    first_token_callback: dict = field(default_factory=dict)  # activity -> earliest push_token received_at
    # 3.0: id(broadcast record) -> the activities it stands for (sorted).
    broadcast_reach: dict = field(default_factory=dict)
    # 3.1: activity -> its frequent_pushes evidence (as os_version), and the
    # activities subscribed to a channel (any render or callback names one).
    frequent_pushes: dict = field(default_factory=dict)
    subscribed: set = field(default_factory=set)
    # 3.2: activity -> its device_id evidence (as os_version); an activity
    # without any is not a key (it has no device).
    device_id: dict = field(default_factory=dict)


def is_broadcast(r: Record) -> bool:
    """2.1 (3.0): a record with a non-empty channel_id (a stored channel_id
    is never empty: "" is malformed). Never true for the older tables."""
    return r.channel_id is not None


def build_updates(attributed: list[tuple[str, Record]], order_key) -> list[Update]:
    """Updates (3): the (activity_id, request) pairs that have a seq, grouped
    by (activity_id, seq); accept time, aps_timestamp, event from the
    earliest accepted request; app, priority, provider and channel from it,
    else from the earliest request."""
    groups: dict[tuple[str, int], Update] = {}
    for aid, r in attributed:
        if r.seq is None:
            continue
        u = groups.get((aid, r.seq))
        if u is None:
            u = groups[(aid, r.seq)] = Update(aid, r.seq)
        u.requests.append(r)
    updates = list(groups.values())
    for u in updates:
        acc = [r for r in u.requests if r.status == 200]
        u.accepted = bool(acc)
        if acc:
            first = min(acc, key=order_key)
            u.first_accepted = first
            u.accept_time = first.sent_at
            u.aps_timestamp = first.aps_timestamp
            u.event = effective_event(first)
            u.window_time = u.accept_time
            rep = first  # app/priority/provider from earliest accepted request
        else:
            rep = min(u.requests, key=order_key)  # earliest request
            u.window_time = rep.sent_at
        u.start_event = effective_event(rep)
        u.app = app_of(rep)
        if rep.priority is not None:
            u.priority = str(rep.priority)
        u.provider = rep.provider  # never null: absent was stored as "apns"
        u.channel = rep.channel_id  # 3.0: "like its app"
    return updates


@dataclass
class Lifecycle:
    """Per activity: start, end, dismissal (absent: not in the dict), and
    the received_at of every activity_state `ended` callback."""
    start: dict
    end: dict
    dismissal: dict
    ended_callbacks: dict


def lifecycle(updates: list[Update], renders: list[Record], callbacks: list[Record],
              contract3: bool) -> Lifecycle:
    """Activity start, end and dismissal (3) from these updates and all the
    device's records."""
    # Activity start = earliest of: accept time of an accepted start update,
    # rendered_at of any render, received_at of any callback of the activity.
    start: dict[str, int] = {}

    def note_start(aid: str, t: int) -> None:
        if aid not in start or t < start[aid]:
            start[aid] = t

    for u in updates:
        if u.accepted and u.event == "start":
            note_start(u.activity_id, u.accept_time)
    for r in renders:
        note_start(r.activity_id, r.rendered_at)
    for c in callbacks:
        if c.activity_id is not None:
            note_start(c.activity_id, c.received_at)
    # Activity end = accept time of the earliest accepted end update; 3.0:
    # or the received_at of the earliest activity_state `ended` callback,
    # whichever is earlier. 3.0: activity dismissal = received_at of the
    # earliest activity_state `dismissed` callback.
    end: dict[str, int] = {}

    def note_end(aid: str, t: int) -> None:
        if aid not in end or t < end[aid]:
            end[aid] = t

    for u in updates:
        if u.accepted and u.event == "end":
            note_end(u.activity_id, u.accept_time)
    dismissal: dict[str, int] = {}
    ended_callbacks: dict[str, list[int]] = {}
    if contract3:
        for c in callbacks:
            if c.callback != "activity_state" or c.activity_id is None:
                continue
            if c.state == "ended":
                note_end(c.activity_id, c.received_at)
                ended_callbacks.setdefault(c.activity_id, []).append(c.received_at)
            elif c.state == "dismissed":
                if c.activity_id not in dismissal or c.received_at < dismissal[c.activity_id]:
                    dismissal[c.activity_id] = c.received_at
    return Lifecycle(start, end, dismissal, ended_callbacks)


def is_open(life: Lifecycle, aid: str, t: int) -> bool:
    """3.0: the activity is open at `t`: its start is at or before t, t is at
    most 28,800 s after the start, and neither its end nor its dismissal is
    at or before t. An activity without a start is never open."""
    start = life.start.get(aid)
    if start is None or not (start <= t <= start + EIGHT_HOURS_MS):
        return False
    for closed in (life.end.get(aid), life.dismissal.get(aid)):
        if closed is not None and closed <= t:
            return False
    return True


def expand_broadcasts(broadcasts: list[Record], renders: list[Record],
                      callbacks: list[Record], life: Lifecycle
                      ) -> tuple[list[tuple[str, Record]], dict]:
    """3.0: each broadcast record stands for one request per activity
    subscribed to its channel (a render or callback of the activity carries
    that channel_id) that is open at the record's sent_at, by the lifecycle
    computed without broadcasts. That request is the broadcast record with
    the activity's activity_id, every other field as recorded. Returns the
    (activity_id, request) pairs and id(broadcast) -> the activities."""
    subscribers: dict[str, set] = {}
    for r in renders + callbacks:
        if r.activity_id is not None and r.channel_id is not None:
            subscribers.setdefault(r.channel_id, set()).add(r.activity_id)
    aid_index = FIELD_INDEX_3["apns"]["activity_id"]
    pairs: list[tuple[str, Record]] = []
    reach: dict[int, list[str]] = {}
    for b in broadcasts:
        reached = sorted(aid for aid in subscribers.get(b.channel_id, ())
                         if is_open(life, aid, b.sent_at))
        reach[id(b)] = reached
        for aid in reached:
            values = list(b.values)
            values[aid_index] = aid
            pairs.append((aid, Record("apns", tuple(values), True)))
    return pairs, reach


def analyse(records: list[Record], contract3: bool = False) -> Analysis:
    """Sections 3 of the contract; with `contract3`, of contract 3.0 (end
    and dismissal from the device, the `dismissed` outcome, loss causes,
    the full tie order), else of the contract before it."""
    order_key = request_order_key_3 if contract3 else request_order_key
    apns = [r for r in records if r.kind == "apns"]
    renders = [r for r in records if r.kind == "render"]
    callbacks = [r for r in records if r.kind == "callback"]

    # Attribution: push_token callbacks only. For one token naming several
    # activities: earliest received_at, then smallest activity_id. 3.0: a
    # broadcast is not attributed this way (and is never unattributed).
    direct = [r for r in apns if not is_broadcast(r)]
    broadcasts = [r for r in apns if is_broadcast(r)]
    token_owner: dict[str, tuple[int, str]] = {}
    for c in callbacks:
        if c.callback != "push_token":
            continue
        cand = (c.received_at, c.activity_id)
        cur = token_owner.get(c.push_token)
        if cur is None or cand < cur:
            token_owner[c.push_token] = cand
    resolved: dict[int, Optional[str]] = {}
    for r in direct:
        if r.activity_id is not None:
            resolved[id(r)] = r.activity_id
        else:
            owner = token_owner.get(r.push_token)
            resolved[id(r)] = owner[1] if owner else None  # None: unattributed
    attributed = [(resolved[id(r)], r) for r in direct if resolved[id(r)] is not None]

    # Updates: attributed requests with seq, grouped by (activity_id, seq).
    updates = build_updates(attributed, order_key)
    life = lifecycle(updates, renders, callbacks, contract3)
    reach: dict[int, list[str]] = {}
    if broadcasts:
        # 3.0: start, end and dismissal first without broadcasts (above);
        # then the broadcasts stand for their open subscribers, and the
        # updates, start, end and dismissal are computed again over all.
        expanded, reach = expand_broadcasts(broadcasts, renders, callbacks, life)
        updates = build_updates(attributed + expanded, order_key)
        life = lifecycle(updates, renders, callbacks, contract3)
    start, end, dismissal, ended_callbacks = life.start, life.end, life.dismissal, life.ended_callbacks

    # Renders: earliest rendered_at per (activity_id, seq).
    first_render: dict[tuple[str, int], int] = {}
    for r in renders:
        k = (r.activity_id, r.seq)
        if k not in first_render or r.rendered_at < first_render[k]:
            first_render[k] = r.rendered_at

    # Outcomes, per activity, over ALL data; order = (accept time, seq).
    by_activity: dict[str, list[Update]] = {}
    for u in updates:
        if u.accepted:
            by_activity.setdefault(u.activity_id, []).append(u)
    for aid, ups in by_activity.items():
        ups.sort(key=lambda u: (u.accept_time, u.seq))
        rendered = [(u.activity_id, u.seq) in first_render for u in ups]
        # later_rendered[i]: some update after position i is rendered.
        later_rendered = [False] * len(ups)
        seen = False
        for i in range(len(ups) - 1, -1, -1):
            later_rendered[i] = seen
            seen = seen or rendered[i]
        max_earlier_ts: Optional[int] = None  # max aps_timestamp before i
        for i, u in enumerate(ups):
            if rendered[i]:
                u.outcome = "rendered"                                   # 1
            elif (contract3 and aid in dismissal
                  and (aid not in end or dismissal[aid] < end[aid])
                  and u.accept_time > dismissal[aid]):
                u.outcome = "dismissed"                                  # 3.0: 2
            elif aid in end and u.accept_time > end[aid]:
                u.outcome = "ended"                                      # 2
            elif aid in start and u.accept_time - start[aid] > EIGHT_HOURS_MS:
                u.outcome = "expired"                                    # 3
            elif (u.event != "end" and max_earlier_ts is not None
                  and u.aps_timestamp <= max_earlier_ts):
                u.outcome = "stale_timestamp"                            # 4
            elif later_rendered[i]:
                u.outcome = "superseded"                                 # 5
            else:
                u.outcome = "lost"                                       # 6
            if max_earlier_ts is None or u.aps_timestamp > max_earlier_ts:
                max_earlier_ts = u.aps_timestamp

    content_update_keys = {(c.activity_id, c.seq) for c in callbacks
                           if c.callback == "content_update"}
    push_token_activities = {c.activity_id for c in callbacks
                             if c.callback == "push_token"}

    has_device_evidence: set = set()
    first_token_callback: dict[str, int] = {}
    if contract3:
        # 3.0, "Why it was lost": the first cause that holds.
        token_callbacks: dict[str, list[tuple[int, str]]] = {}
        last_device_time: dict[str, int] = {}
        for c in callbacks:
            if c.activity_id is None:
                continue
            has_device_evidence.add(c.activity_id)
            last_device_time[c.activity_id] = max(last_device_time.get(c.activity_id, c.received_at),
                                                  c.received_at)
            if c.callback == "push_token":
                token_callbacks.setdefault(c.activity_id, []).append((c.received_at, c.push_token))
                if (c.activity_id not in first_token_callback
                        or c.received_at < first_token_callback[c.activity_id]):
                    first_token_callback[c.activity_id] = c.received_at
        for r in renders:
            has_device_evidence.add(r.activity_id)
            last_device_time[r.activity_id] = max(last_device_time.get(r.activity_id, r.rendered_at),
                                                  r.rendered_at)
        for u in updates:
            if u.outcome != "lost":
                continue
            aid, t = u.activity_id, u.accept_time
            sent_token = u.first_accepted.push_token if u.first_accepted is not None else None
            known = [tc for tc in token_callbacks.get(aid, []) if tc[0] <= t]
            newest = max(known) if known else None   # latest received_at, then greatest token
            if (aid, u.seq) in content_update_keys:
                u.loss_cause = "not_rendered"                            # 1
            elif sent_token and newest is not None and newest[1] != sent_token:
                u.loss_cause = "old_token"                               # 2
            elif ((aid in dismissal and dismissal[aid] > t)
                  or any(e > t for e in ended_callbacks.get(aid, []))):
                u.loss_cause = "closed_later"                            # 3
            elif not (last_device_time.get(aid) is not None and last_device_time[aid] > t):
                u.loss_cause = "device_silent"                           # 4
            else:
                u.loss_cause = "unexplained"                             # 5

    # Device evidence per activity, each attribute separately: earliest render
    # or callback carrying a non-null value; among equally early, smallest.
    def evidence(attr: str) -> dict[str, str]:
        best: dict[str, tuple[int, str]] = {}
        for r in renders + callbacks:
            aid = r.activity_id
            val = getattr(r, attr)
            if aid is None or val is None:
                continue
            t = r.rendered_at if r.kind == "render" else r.received_at
            if aid not in best or (t, val) < best[aid]:
                best[aid] = (t, val)
        return {aid: tv[1] for aid, tv in best.items()}

    result = Analysis(apns, resolved, updates, first_render, content_update_keys,
                      push_token_activities, evidence("os_version"),
                      evidence("app_version"), has_device_evidence, first_token_callback,
                      reach)
    if contract3:
        result.frequent_pushes = evidence("frequent_pushes")
        result.subscribed = {r.activity_id for r in renders + callbacks
                             if r.activity_id is not None and r.channel_id is not None}
        # 3.2: "an activity's device is its device_id, taken from its device
        # evidence exactly as os_version is" (no "unknown": without evidence
        # the activity is absent here and has no device).
        result.device_id = evidence("device_id")
    return result


# --------------------------------------------------------------------------
# Section 4: metrics; section 5: report
# --------------------------------------------------------------------------

def rate(num: int, den: int) -> Optional[float]:
    return None if den == 0 else num / den


def updates_block(ups: list[Update], contract3: bool = False) -> dict:
    counts = {o: 0 for o in (OUTCOMES_3 if contract3 else OUTCOMES)}
    causes = {c: 0 for c in LOSS_CAUSES}
    accepted = 0
    for u in ups:
        if u.accepted:
            accepted += 1
            counts[u.outcome] += 1
            if u.outcome == "lost" and contract3:
                causes[u.loss_cause] += 1
    r, s, lost = counts["rendered"], counts["superseded"], counts["lost"]
    block = {"sent": len(ups), "accepted": accepted, **counts}
    if contract3:
        block["lost_by_cause"] = causes                       # all five keys, always
    block["arrival_rate"] = rate(r, r + s + lost)
    block["effective_arrival_rate"] = rate(r + s, r + s + lost)
    return block


def nearest_rank(sorted_values: list[int], num: int, den: int) -> Optional[int]:
    """Value at 1-based position ceil(num/den * n), integer arithmetic."""
    n = len(sorted_values)
    if n == 0:
        return None
    rank = (num * n + den - 1) // den
    return sorted_values[rank - 1]


def build_report(store: Store, window: Optional[tuple[int, int]], contract3: bool = False,
                 contract31: bool = False, contract32: bool = False) -> dict:
    """The report of section 5: schema 2 (contract 3.0) with `contract3`,
    plus contract 3.1's figures with `contract31` (which implies `contract3`),
    plus contract 3.2's `outliers` with `contract32` (which implies
    `contract31`), else schema 1. Broadcasts are read only from a
    Store(contract3=True), `frequent_pushes` only from a
    Store(contract31=True); 3.2 reads lines as 3.1 does."""
    contract31 = contract31 or contract32
    contract3 = contract3 or contract31
    a = analyse(store.records, contract3)

    def in_window(t: int) -> bool:
        return window is None or (window[0] <= t < window[1])  # [from, to)

    # requests: apns records in the window by sent_at.
    reqs = [r for r in a.apns if in_window(r.sent_at)]
    accepted_reqs = [r for r in reqs if r.status == 200]
    by_reason: dict[str, int] = {}
    for r in reqs:
        if r.status == 200:
            continue
        if r.reason is not None and r.reason != "":  # 3.0 pins: "" is no reason
            reason = r.reason
        elif r.status == 0:
            reason = "NoResponse"
        else:
            reason = f"HTTP{r.status}"
        by_reason[reason] = by_reason.get(reason, 0) + 1
    oversize_failures = sum(1 for r in reqs
                            if r.status == 413 or r.reason == "PayloadTooLarge")
    # 4: payload_bytes > 3584, or, for a broadcast (3.0), > 4608.
    oversize_risk = sum(1 for r in accepted_reqs
                        if r.payload_bytes is not None
                        and r.payload_bytes > (BROADCAST_OVERSIZE_RISK_BYTES if is_broadcast(r)
                                               else OVERSIZE_RISK_BYTES))

    # updates in the window (accept time, or earliest request's sent_at).
    win_updates = [u for u in a.updates if in_window(u.window_time)]
    rendered = [u for u in win_updates if u.outcome == "rendered"]

    cu_expected = len(rendered)
    cu_received = sum(1 for u in rendered
                      if (u.activity_id, u.seq) in a.content_update_keys)
    token_acts = {u.activity_id for u in rendered}
    token_expected = len(token_acts)
    token_received = len(token_acts & a.push_token_activities)

    latencies = []
    clock_skew_negative = 0
    for u in rendered:
        lat = a.first_render[(u.activity_id, u.seq)] - u.accept_time
        if lat < 0:
            lat = 0
            clock_skew_negative += 1
        latencies.append(lat)
    latencies.sort()

    apns_without_seq = sum(1 for r in reqs if r.seq is None)
    # 3.0: a broadcast is never unattributed (it is not in resolved_activity).
    unattributed = sum(1 for r in reqs
                       if not is_broadcast(r) and a.resolved_activity[id(r)] is None)

    def breakdown(key_of: Callable[[Update], str]) -> dict:
        groups: dict[str, list[Update]] = {}
        for u in win_updates:
            groups.setdefault(key_of(u), []).append(u)
        return {k: updates_block(groups[k], contract3) for k in sorted(groups)}

    report = {
        "schema": SCHEMA,
        "window": None if window is None else {
            "from": format_utc_ms(window[0]), "to": format_utc_ms(window[1])},
        "requests": {
            "total": len(reqs),
            "accepted": len(accepted_reqs),
            "rejected": len(reqs) - len(accepted_reqs),
            "acceptance_rate": rate(len(accepted_reqs), len(reqs)),
            "by_reason": {k: by_reason[k] for k in sorted(by_reason)},
            "oversize_failures": oversize_failures,
            "oversize_risk": oversize_risk,
        },
        "updates": updates_block(win_updates, contract3),
        "callbacks": {
            "content_update_expected": cu_expected,
            "content_update_received": cu_received,
            "callback_loss_rate": None if cu_expected == 0
            else 1 - cu_received / cu_expected,
            "token_expected": token_expected,
            "token_received": token_received,
            "token_callback_loss_rate": None if token_expected == 0
            else 1 - token_received / token_expected,
        },
        "latency_ms": {
            "count": len(latencies),
            "p50": nearest_rank(latencies, 50, 100),
            "p90": nearest_rank(latencies, 90, 100),
            "p99": nearest_rank(latencies, 99, 100),
        },
        "data_quality": {
            "malformed_lines": store.malformed_lines,
            "malformed_by_cause": {k: store.malformed_by_cause[k]
                                   for k in sorted(store.malformed_by_cause)},
            "duplicate_records": store.duplicate_records,
            "files_skipped_as_duplicate": store.files_skipped_as_duplicate,
            "apns_without_seq": apns_without_seq,
            "unattributed": unattributed,
            "clock_skew_negative": clock_skew_negative,
        },
        "breakdowns": {
            "app": breakdown(lambda u: u.app),
            "priority": breakdown(lambda u: u.priority),
            "provider": breakdown(lambda u: u.provider),
            "os_version": breakdown(lambda u: a.os_version.get(u.activity_id, "unknown")),
            "app_version": breakdown(lambda u: a.app_version.get(u.activity_id, "unknown")),
        },
    }
    if contract3:
        report = report_3(report, a, reqs, win_updates, breakdown)
        if contract31:
            report = report_31(report, a, win_updates, breakdown)
        if contract32:
            report = report_32(report, a, win_updates)
    return report


def report_3(report: dict, a: Analysis, reqs: list, win_updates: list, breakdown) -> dict:
    """Section 5, schema 2 (contract 3.0): the schema-1 report's blocks with
    contract 3.0's figures added in their places."""
    # Dead tokens: a non-empty push_token dies at the sent_at of its earliest
    # request with status 410 or a dead-token reason; requests after it
    # (strictly) are sent to a dead token.
    death: dict[str, int] = {}
    for r in a.apns:
        if r.push_token and (r.status == 410 or r.reason in DEAD_TOKEN_REASONS):
            if r.push_token not in death or r.sent_at < death[r.push_token]:
                death[r.push_token] = r.sent_at
    to_dead = sum(1 for r in reqs if r.push_token in death and r.sent_at > death[r.push_token])

    # starts: updates of the window whose event is `start`.
    starts = [u for u in win_updates if u.start_event == "start"]
    accepted_starts = [u for u in starts if u.accepted]
    appeared = [u for u in accepted_starts if u.activity_id in a.has_device_evidence]
    with_token = [u for u in appeared if u.activity_id in a.first_token_callback]
    token_latency = sorted(max(0, a.first_token_callback[u.activity_id] - u.accept_time)
                           for u in with_token)
    breakdowns = dict(report["breakdowns"])

    # Broadcasts: each record of the window once; "without subscribers" when
    # it stands for no activity (no subscribed activity open at its sent_at).
    window_broadcasts = [r for r in reqs if is_broadcast(r)]
    without_subscribers = sum(1 for r in window_broadcasts if not a.broadcast_reach[id(r)])
    # breakdowns.channel: the updates of the window whose channel is not null.
    by_channel: dict[str, list[Update]] = {}
    for u in win_updates:
        if u.channel is not None:
            by_channel.setdefault(u.channel, []).append(u)
    channel = {k: updates_block(by_channel[k], True) for k in sorted(by_channel)}
    return {
        "schema": SCHEMA_3,
        "window": report["window"],
        "requests": {**report["requests"], "broadcasts": len(window_broadcasts),
                     "to_dead_tokens": to_dead},
        "updates": report["updates"],
        "starts": {
            "sent": len(starts),
            "accepted": len(accepted_starts),
            "appeared": len(appeared),
            "appearance_rate": rate(len(appeared), len(accepted_starts)),
            "update_token_received": len(with_token),
            "update_token_rate": rate(len(with_token), len(appeared)),
            "update_token_latency_ms": {
                "count": len(token_latency),
                "p50": nearest_rank(token_latency, 50, 100),
                "p90": nearest_rank(token_latency, 90, 100),
                "p99": nearest_rank(token_latency, 99, 100),
            },
        },
        "callbacks": report["callbacks"],
        "latency_ms": report["latency_ms"],
        "data_quality": {**report["data_quality"],
                         "broadcasts_without_subscribers": without_subscribers},
        "breakdowns": {
            "app": breakdowns["app"],
            "priority": breakdowns["priority"],
            "provider": breakdowns["provider"],
            "channel": channel,
            "os_version": breakdowns["os_version"],
            "app_version": breakdowns["app_version"],
        },
    }


# 4 (3.1): the keys of `breakdowns.priority_10_last_hour`, each with the
# smallest n it holds (a key holds n from its low bound up to the next key's).
P10_BUCKETS = (("0-4", 0), ("5-14", 5), ("15-29", 15), ("30-59", 30), ("60-119", 60), ("120+", 120))
HOUR_MS = 3_600_000


def p10_bucket(n: int) -> str:
    """The key of `priority_10_last_hour` for n other such updates."""
    key = P10_BUCKETS[0][0]
    for name, low in P10_BUCKETS:
        if n >= low:
            key = name
    return key


def counts_toward_p10(u: Update) -> bool:
    """4 (3.1): an update `priority_10_last_hour` covers and counts: accepted,
    priority 10 and no channel, "both as in the other breakdowns: from the
    update's earliest accepted request" (u.priority and u.channel are those
    of the deciding request, which for an accepted update is its earliest
    accepted one)."""
    return u.accepted and u.priority == "10" and u.channel is None


def p10_last_hour(all_updates: list[Update], win_updates: list[Update]) -> dict[str, list[Update]]:
    """4 (3.1): each update of the window that counts_toward_p10, keyed by n,
    the number of OTHER such updates of the same activity, inside the
    window or not, whose accept time t' satisfies t - 3,600,000 <= t' < t
    (so one exactly an hour before counts, one at the same instant does not,
    and the update itself, at t, never does). Only keys that hold an update
    are returned."""
    accept_times: dict[str, list[int]] = {}      # activity -> sorted accept times
    for u in all_updates:                        # all data, not only the window
        if counts_toward_p10(u):
            accept_times.setdefault(u.activity_id, []).append(u.accept_time)
    for times in accept_times.values():
        times.sort()
    groups: dict[str, list[Update]] = {}
    for u in win_updates:
        if not counts_toward_p10(u):
            continue
        times, t = accept_times[u.activity_id], u.accept_time
        # bisect_left(times, x): how many accept times are < x.
        n = bisect.bisect_left(times, t) - bisect.bisect_left(times, t - HOUR_MS)
        groups.setdefault(p10_bucket(n), []).append(u)
    return groups


def report_31(report: dict, a: Analysis, win_updates: list, breakdown) -> dict:
    """Contract 3.1 on a schema-2 report: the two breakdowns, and no update
    token expected of an activity subscribed to a channel (section 3: any
    of its renders or callbacks carries a channel_id, whenever it came)."""
    # callbacks.token_expected: activities with at least one rendered update
    # in the window, except activities subscribed to a channel;
    # token_received: those of them with at least one push_token callback.
    token_acts = {u.activity_id for u in win_updates if u.outcome == "rendered"} - a.subscribed
    token_received = len(token_acts & a.push_token_activities)
    callbacks = dict(report["callbacks"])
    callbacks["token_expected"] = len(token_acts)
    callbacks["token_received"] = token_received
    callbacks["token_callback_loss_rate"] = (None if not token_acts
                                             else 1 - token_received / len(token_acts))
    # starts: `sent`, `accepted`, `appeared` and `appearance_rate` as in 3.0
    # (appeared still counts every appeared start). update_token_received =
    # appeared starts whose activity has a push_token callback and is not
    # subscribed; update_token_rate divides it by the appeared starts whose
    # activity is not subscribed; the latency follows update_token_received.
    accepted_starts = [u for u in win_updates if u.start_event == "start" and u.accepted]
    appeared = [u for u in accepted_starts if u.activity_id in a.has_device_evidence]
    expecting = [u for u in appeared if u.activity_id not in a.subscribed]
    with_token = [u for u in expecting if u.activity_id in a.first_token_callback]
    latency = sorted(max(0, a.first_token_callback[u.activity_id] - u.accept_time) for u in with_token)
    starts_block = dict(report["starts"])
    starts_block["update_token_received"] = len(with_token)
    starts_block["update_token_rate"] = rate(len(with_token), len(expecting))
    starts_block["update_token_latency_ms"] = {
        "count": len(latency), "p50": nearest_rank(latency, 50, 100),
        "p90": nearest_rank(latency, 90, 100), "p99": nearest_rank(latency, 99, 100)}
    breakdowns = dict(report["breakdowns"])
    # breakdowns.frequent_pushes: the activity's value from its device
    # evidence exactly as os_version (earliest render or callback carrying
    # one; among equally early, the smallest; "unknown" without any).
    breakdowns["frequent_pushes"] = breakdown(lambda u: a.frequent_pushes.get(u.activity_id, "unknown"))
    groups = p10_last_hour(a.updates, win_updates)
    breakdowns["priority_10_last_hour"] = {k: updates_block(groups[k], True) for k in sorted(groups)}
    return {**report, "starts": starts_block, "callbacks": callbacks, "breakdowns": breakdowns}


# 4 (3.2): a device is tested when it has at least this many deliverable
# updates in the window, and is far below the fleet when its p_value is at
# most OUTLIER_ALPHA / m (m: the tested devices; Bonferroni).
OUTLIER_MIN_DELIVERABLE = 20
OUTLIER_ALPHA = Fraction(1, 1000)   # 0.001, exactly


def binomial_tail_at_most(k: int, n: int, p0: Fraction) -> Fraction:
    """4 (3.2): P(X <= k) for X ~ Binomial(n, p0), exactly:
    sum_{i=0..k} C(n, i) p0^i (1 - p0)^(n-i); 1 when p0 = 0; when p0 = 1,
    1 if k = n and 0 otherwise (the sum gives the same, with 0^0 = 1; the
    contract's words are followed literally all the same).

    All in integers: with p0 = a / d (d a power of two when p0 comes from a
    double), each term is T_i / d^n with T_i = C(n, i) a^i (d - a)^(n-i),
    and T_{i+1} = T_i (n - i) a / ((i + 1) (d - a)), a division that is
    exact because T_{i+1} is an integer. So the sum costs k + 1 products of
    one large integer (about 53 n bits) by small ones: time grows as n k
    (n = 5,000: about half a second; a fleet's devices with a few hundred
    updates: milliseconds)."""
    if not (0 <= k <= n) or not (0 <= p0 <= 1):
        raise ValueError(f"binomial_tail_at_most({k}, {n}, {p0})")
    if p0 == 0:
        return Fraction(1)
    if p0 == 1:
        return Fraction(1 if k == n else 0)
    a, d = p0.numerator, p0.denominator
    b = d - a
    term = b ** n                        # T_0 = C(n, 0) a^0 b^n
    total = term
    for i in range(k):                   # T_{i+1} from T_i, i = 0 .. k-1
        numerator = term * (n - i) * a
        denominator = (i + 1) * b
        term, rest = divmod(numerator, denominator)
        assert rest == 0, "T_{i+1} is an integer"
        total += term
    return Fraction(total, d ** n)


def deliverable(block: dict) -> tuple[int, int]:
    """4 (3.2): (n, k) of an `updates` block: n its deliverable updates
    (outcome rendered, superseded or lost, the denominator of its
    arrival_rate), k the rendered ones."""
    return block["rendered"] + block["superseded"] + block["lost"], block["rendered"]


def outliers(a: Analysis, win_updates: list[Update], p0: Optional[float]) -> dict:
    """4 (3.2): `outliers`. Each device (an activity's device_id from its
    device evidence, as os_version; activities without one have none) gets
    the `updates` block of the window's updates of its activities; of its
    n deliverable updates k are rendered. With p0 the window's
    `updates.arrival_rate` (the double, taken exactly), a device is tested
    when n >= 20 and p0 is not null; m tested devices. A tested device's
    p_value = P(X <= k), X ~ Binomial(n, p0); it is far below the fleet when
    p_value <= 0.001 / m. The listed devices are ordered by k / n ascending
    (exact fractions), then n descending, then device_id (code point)."""
    if p0 is None:                       # no deliverable update in the window
        return {"fleet_arrival_rate": None, "devices_tested": 0, "devices": []}
    exact_p0 = Fraction(p0)              # exact value of the double
    by_device: dict[str, list[Update]] = {}
    for u in win_updates:
        device = a.device_id.get(u.activity_id)
        if device is not None:
            by_device.setdefault(device, []).append(u)
    tested = []                          # (device_id, block, n, k)
    for device in sorted(by_device):
        block = updates_block(by_device[device], True)
        n, k = deliverable(block)
        if n >= OUTLIER_MIN_DELIVERABLE:
            tested.append((device, block, n, k))
    m = len(tested)
    listed = []
    for device, block, n, k in tested:
        p_value = binomial_tail_at_most(k, n, exact_p0)
        if p_value <= OUTLIER_ALPHA / m:  # exact comparison (m >= 1 here)
            listed.append((Fraction(k, n), -n, device, block, p_value))
    listed.sort(key=lambda entry: entry[:3])
    return {
        "fleet_arrival_rate": p0,
        "devices_tested": m,
        "devices": [{"device_id": device, "updates": block, "p_value": float(p_value)}
                    for _, _, device, block, p_value in listed],
    }


def report_32(report: dict, a: Analysis, win_updates: list) -> dict:
    """Contract 3.2 on a schema-2 report of contract 3.1: `outliers`, in the
    place section 5 shows (after `latency_ms`, before `data_quality`);
    every other key as 3.1 writes it."""
    block = outliers(a, win_updates, report["updates"]["arrival_rate"])
    result: dict = {}
    for key, value in report.items():
        if key == "data_quality":
            result["outliers"] = block
        result[key] = value
    return result


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def parse_window(args: argparse.Namespace, parser: argparse.ArgumentParser
                 ) -> Optional[tuple[int, int]]:
    if args.day is not None:
        if args.from_ is not None or args.to is not None:
            parser.error("--day cannot be combined with --from/--to")
        m = _DAY_RE.fullmatch(args.day)
        if m is None:
            parser.error(f"--day {args.day!r}: expected YYYY-MM-DD")
        y, mo, d = (int(g) for g in m.groups())
        if not (1 <= mo <= 12 and 1 <= d <= days_in_month(y, mo)):
            parser.error(f"--day {args.day!r}: not a calendar date")
        start = days_from_civil(y, mo, d) * 86_400_000
        return start, start + 86_400_000  # D 00:00:00Z to next day 00:00:00Z
    if args.from_ is None and args.to is None:
        return None
    if args.from_ is None or args.to is None:
        parser.error("--from and --to must be given together")
    lo = parse_rfc3339_ms(args.from_)
    hi = parse_rfc3339_ms(args.to)
    if lo is None:
        parser.error(f"--from {args.from_!r}: not an RFC 3339 time of section 2")
    if hi is None:
        parser.error(f"--to {args.to!r}: not an RFC 3339 time of section 2")
    return lo, hi


def print_summary(store: Store) -> None:
    err = sys.stderr
    for s in store.summaries:
        mal = ", ".join(f"{k}={v}" for k, v in sorted(s.malformed.items())) or "none"
        print(f"ingested {s.path}{' (gzip)' if s.gzip else ''}: lines={s.lines} "
              f"records={s.records} duplicate_records={s.duplicates} malformed: {mal}",
              file=err)
    for p in store.skipped_special:
        print(f"skipped (link/FIFO/socket/device): {p}", file=err)
    for digest, p in sorted(store._skipped_pairs, key=lambda x: x[1]):
        print(f"skipped duplicate file: {p} (same content as "
              f"{store._first_path_by_hash[digest]})", file=err)
    for p in store.silent_rereads:
        print(f"re-read of the same path, no-op: {p}", file=err)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Independent reference implementation of the arrival "
                    "report (CONTRACT.md sections 2-5).")
    parser.add_argument("--day", metavar="YYYY-MM-DD")
    parser.add_argument("--from", dest="from_", metavar="RFC3339")
    parser.add_argument("--to", metavar="RFC3339")
    parser.add_argument("--verbose", action="store_true",
                        help="print an ingest summary to stderr")
    parser.add_argument("--contract", choices=("2", "3.0", "3.1", "3.2"), default="3.2",
                        help="the contract to report by: 3.2 (the default: 3.1's report with "
                             "outliers, the devices far below the fleet's arrival rate), 3.1 (report "
                             "schema 2 with breakdowns.frequent_pushes and priority_10_last_hour, and no "
                             "update token expected of an activity subscribed to a channel), 3.0 (report "
                             "schema 2: dismissals, "
                             "loss causes, starts, dead tokens, broadcast channels) or 2 (report schema 1, "
                             "as arrival before contract 3.0 wrote it)")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    args = parser.parse_args(argv)
    window = parse_window(args, parser)

    store = Store(contract3=args.contract in ("3.0", "3.1", "3.2"),
                  contract31=args.contract in ("3.1", "3.2"))
    for p in args.paths:  # files processed in the order given
        try:
            store.ingest_path(p)
        except FileNotFoundError:
            print(f"error: {p}: no such file or directory", file=sys.stderr)
            return 2
        except OSError as e:  # e.g. an unreadable file or directory
            print(f"error: {p}: {e}", file=sys.stderr)
            return 1
    if args.verbose:
        print_summary(store)
    report = build_report(store, window, contract3=args.contract in ("3.0", "3.1", "3.2"),
                          contract31=args.contract in ("3.1", "3.2"),
                          contract32=args.contract == "3.2")
    sys.stdout.write(json.dumps(report, sort_keys=False, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

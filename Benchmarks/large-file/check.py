#!/usr/bin/env python3
"""Checks a file written by generate.py against the shape it promises.

Usage:
    python3 Benchmarks/large-file/check.py FILE.jsonl.gz

Every line must parse with json.loads and hold every `apns` field in
generate.py's key order; `apns_id` an upper-case version-4 UUID, unique;
`push_token` 64 lower-case hex digits; `sent_at` on 2026-11-21 with
milliseconds, never decreasing; `aps_timestamp` its Unix second; `reason`
null exactly on status 200; `seq` never decreasing per activity. Prints the
line count, the average line length, the counts of activities, events and
statuses. Exits 1 (an AssertionError naming the line) on the first line that
breaks a rule. Memory grows with the number of activities (a million for
2 M lines: about 400 MB).
"""

import calendar
import collections
import gzip
import json
import re
import sys

FIELDS = [
    "v", "kind", "apns_id", "sent_at", "status", "reason", "push_token",
    "activity_id", "seq", "event", "aps_timestamp", "payload_bytes", "topic",
    "push_type", "priority", "environment", "latency_ms", "provider",
]
UUID = re.compile(r"^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$")
TOKEN = re.compile(r"^[0-9a-f]{64}$")
SENT_AT = re.compile(r"^2026-11-21T(\d\d):(\d\d):(\d\d)\.\d{3}Z$")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    day = calendar.timegm((2026, 11, 21, 0, 0, 0))
    last_sent, seqs, ids = "", {}, set()
    events, statuses = collections.Counter(), collections.Counter()
    n = size = 0
    for raw in gzip.open(sys.argv[1], "rb"):
        n += 1
        size += len(raw)
        r = json.loads(raw)
        where = "line %d" % n
        assert list(r) == FIELDS, (where, list(r))
        assert r["v"] == 1 and r["kind"] == "apns" and r["provider"] == "apns", where
        assert UUID.match(r["apns_id"]) and r["apns_id"] not in ids, (where, r["apns_id"])
        ids.add(r["apns_id"])
        assert TOKEN.match(r["push_token"]), (where, r["push_token"])
        m = SENT_AT.match(r["sent_at"])
        assert m and r["sent_at"] >= last_sent, (where, last_sent, r["sent_at"])
        last_sent = r["sent_at"]
        h, mi, s = (int(x) for x in m.groups())
        assert r["aps_timestamp"] == day + h * 3600 + mi * 60 + s, where
        assert (r["reason"] is None) == (r["status"] == 200), (where, r["status"], r["reason"])
        a = r["activity_id"]
        assert r["seq"] >= seqs.get(a, 0), (where, a, r["seq"], seqs.get(a))
        seqs[a] = r["seq"]
        for key in ("status", "seq", "aps_timestamp", "payload_bytes", "priority", "latency_ms"):
            assert type(r[key]) is int, (where, key)
        events[r["event"]] += 1
        statuses["%d %s" % (r["status"], r["reason"])] += 1
    assert n > 0, "no lines"
    print("lines %d, %.1f bytes per line, %d activities, last sent_at %s" % (n, size / n, len(seqs), last_sent))
    print("events:", ", ".join("%s %d" % kv for kv in events.most_common()))
    print("statuses:", ", ".join("%s: %d" % kv for kv in statuses.most_common()))


if __name__ == "__main__":
    main()

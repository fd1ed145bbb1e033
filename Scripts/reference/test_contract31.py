#!/usr/bin/env python3
"""Contract 3.1 in the reference implementation, rule by rule and edge by edge.

Contract 3.1 adds the `frequent_pushes` string on renders and callbacks,
`breakdowns.frequent_pushes`, `breakdowns.priority_10_last_hour`, and stops
expecting an update token of an activity subscribed to a channel. Each case
is a handful of records and the figures the contract's words give for them,
worked out by hand (the comments say how). Standard library only:

    python3 -m unittest discover -s Scripts/reference -p 'test_*.py'
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrival_reference as ref  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = "2026-11-21T08:00:00"
TS0 = 1795248000
TOPIC = "com.example.push-type.liveactivity"
HOUR = 3600


def ms(seconds: float) -> int:
    return ref.parse_rfc3339_ms(T0 + "Z") + round(seconds * 1000)


def at(seconds: float) -> str:
    """T0 plus `seconds`, as an RFC 3339 time (millisecond precision)."""
    return ref.format_utc_ms(ms(seconds))


def apns(seq, t, activity="A", priority=10, status=200, event="update", apns_id=None, **extra):
    """A request sent straight to the activity's token (aps_timestamp = TS0 + seq)."""
    record = {"kind": "apns", "apns_id": apns_id or f"id-{activity}-{seq}-{t}", "sent_at": at(t),
              "status": status, "push_token": f"tok-{activity}", "activity_id": activity, "seq": seq,
              "event": event, "aps_timestamp": TS0 + seq, "topic": TOPIC, **extra}
    if priority is not None:
        record["priority"] = priority
    if status != 200:
        record.setdefault("reason", "TooManyRequests")
    return record


def broadcast(seq, t, channel="ch-1", priority=10, **extra):
    """A broadcast record: a channel_id, no push_token, no activity_id."""
    return {"kind": "apns", "apns_id": f"b-{channel}-{seq}-{t}", "sent_at": at(t), "status": 200, "seq": seq,
            "aps_timestamp": TS0 + seq, "topic": TOPIC, "priority": priority, "channel_id": channel, **extra}


def render(seq, t, activity="A", **extra):
    return {"kind": "render", "activity_id": activity, "seq": seq, "rendered_at": at(t), **extra}


def callback(kind, t, activity="A", **fields):
    return {"kind": "callback", "callback": kind, "activity_id": activity, "received_at": at(t), **fields}


def store_of(lines, contract="3.1"):
    """A store holding `lines` (records, or raw text lines) in one file, read by `contract`."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "records.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for line in lines:
                f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        store = ref.Store(contract3=True, contract31=contract == "3.1")
        store.ingest_path(path)
        return store


def report(lines, window=None, contract="3.1"):
    return ref.build_report(store_of(lines, contract), window, contract3=True, contract31=contract == "3.1")


def p10(r):
    """{key: sent} of breakdowns.priority_10_last_hour."""
    return {k: v["sent"] for k, v in r["breakdowns"]["priority_10_last_hour"].items()}


class PriorityTenLastHour(unittest.TestCase):
    def test_same_instant_and_exactly_one_hour(self):
        # Activity A, all priority 10, accepted, sent to its token:
        #   seqs 1-6 at 0 s (one instant): for each, the others have t' = t, not < t: n = 0 -> "0-4"
        #     (were equal instants counted, n would be 5 -> "5-14");
        #   seq 7 at 3,600 s: t - 3,600,000 ms = 0 s <= t' < 3,600 s holds for seqs 1-6: n = 6 -> "5-14"
        #     (were the bound exclusive, n would be 0);
        #   seq 8 at 3,600.001 s: the window of t' is [0.001 s, 3,600.001 s): only seq 7: n = 1 -> "0-4".
        # seq 7 renders at 3,601 s (the activity's start, from that render). Order (accept time, seq):
        # seqs 1-6 come before seq 7, which rendered: superseded (rule 6); seq 8 comes after it, never
        # rendered, nothing rendered later: lost; the render at 3,601 s is later than its accept time:
        # `unexplained`.
        records = [apns(s, 0) for s in range(1, 7)] + [apns(7, HOUR), apns(8, HOUR + 0.001), render(7, HOUR + 1)]
        r = report(records)
        b = r["breakdowns"]["priority_10_last_hour"]
        self.assertEqual(list(b), ["0-4", "5-14"])
        self.assertEqual(b["5-14"], {
            "sent": 1, "accepted": 1, "rendered": 1, "dismissed": 0, "ended": 0, "expired": 0,
            "stale_timestamp": 0, "superseded": 0, "lost": 0,
            "lost_by_cause": {"not_rendered": 0, "old_token": 0, "closed_later": 0, "device_silent": 0,
                              "unexplained": 0},
            "arrival_rate": 1.0, "effective_arrival_rate": 1.0})
        low = b["0-4"]
        self.assertEqual((low["sent"], low["accepted"], low["superseded"], low["lost"]), (7, 7, 6, 1))
        self.assertEqual(low["lost_by_cause"]["unexplained"], 1)
        self.assertEqual(low["arrival_rate"], 0 / 7)
        self.assertEqual(low["effective_arrival_rate"], 6 / 7)

    def test_updates_outside_the_window_count_toward_n(self):
        # The window is the one instant [7,200 s, 7,200.001 s). Two activities, all priority 10, accepted:
        #   B1: seqs 1-4 at 5,400-5,403 s and seq 5 at exactly 3,600 s (= 7,200 s - 1 hour), all outside the
        #       window; seq 6 at 7,200 s in it: n = 4 + 1 = 5 -> "5-14" (they count although not in the window).
        #   B2: seqs 1-4 at 5,400-5,403 s, seq 5 at 3,599.999 s (a millisecond too early: not counted), seq 6
        #       at 7,200 s in the window, seq 7 at 7,200.5 s (after the window, and t' > t: not counted):
        #       n = 4 -> "0-4".
        # Only the window's updates are keyed: one update in each key.
        records = [apns(s, 5400 + s - 1, "B1") for s in range(1, 5)] + [apns(5, HOUR, "B1"), apns(6, 2 * HOUR, "B1")]
        records += [apns(s, 5400 + s - 1, "B2") for s in range(1, 5)]
        records += [apns(5, HOUR - 0.001, "B2"), apns(6, 2 * HOUR, "B2"), apns(7, 2 * HOUR + 0.5, "B2")]
        r = report(records, window=(ms(2 * HOUR), ms(2 * HOUR + 0.001)))
        self.assertEqual(r["updates"]["sent"], 2)
        self.assertEqual(p10(r), {"0-4": 1, "5-14": 1})
        # The whole data: B1's seq 5 at 3,600 s has none before it within the hour (0); seqs 1-4 at
        # 5,400+ s have seq 5 (3,600 s >= 5,400 - 3,600 = 1,800 s) and the earlier ones of 1-4: n = 1, 2,
        # 3, 4 -> "0-4"; seq 6: 5 -> "5-14". B2's seq 5 (3,599.999 s): 0; seqs 1-4: 1-4; seq 6: 4
        # (seq 5 at 3,599.999 < 3,600 s); seq 7 at 7,200.5 s: seqs 1-4 and 6 -> 5 -> "5-14".
        # So "0-4": B1's 1-5 (5) + B2's 1-6 (6) = 11; "5-14": B1's 6 and B2's 7 = 2.
        self.assertEqual(p10(report(records)), {"0-4": 11, "5-14": 2})

    def test_every_key(self):
        # Activity C: 121 priority-10 updates, seq k at k seconds (k = 0 ... 120): n = k for each (all the
        # earlier ones are within the hour). Keys: 0-4 -> 5 updates, 5-14 -> 10, 15-29 -> 15, 30-59 -> 30,
        # 60-119 -> 60, 120+ -> 1 (seq 120 alone). Keys are sorted by code point in the report.
        r = report([apns(k, k, "C") for k in range(121)])
        self.assertEqual(list(r["breakdowns"]["priority_10_last_hour"]),
                         ["0-4", "120+", "15-29", "30-59", "5-14", "60-119"])
        self.assertEqual(p10(r), {"0-4": 5, "5-14": 10, "15-29": 15, "30-59": 30, "60-119": 60, "120+": 1})

    def test_bucket_bounds(self):
        for n, key in [(0, "0-4"), (4, "0-4"), (5, "5-14"), (14, "5-14"), (15, "15-29"), (29, "15-29"),
                       (30, "30-59"), (59, "30-59"), (60, "60-119"), (119, "60-119"), (120, "120+"),
                       (5000, "120+")]:
            self.assertEqual(ref.p10_bucket(n), key, n)

    def test_what_neither_counts_nor_is_keyed(self):
        # Activity A, subscribed to ch-1 and started at 0 s (its channel_subscription callback), so
        # broadcasts on ch-1 reach it. Between 100 s and 109 s, updates that are NOT accepted priority-10
        # updates without a channel (by the earliest accepted request):
        #   seq 11: priority 10, rejected (429)                       -> not accepted
        #   seq 12: priority 5, accepted                              -> priority "5"
        #   seq 13: no priority, accepted                             -> priority "unknown"
        #   seq 14: a broadcast with priority 10                      -> channel ch-1
        #   seq 15: priority 5 accepted at 104 s, priority 10 at 105 s -> priority "5" (earliest accepted)
        #   seq 16: broadcast at 106 s, direct priority 10 at 107 s   -> channel ch-1 (the broadcast decides)
        # and two that are:
        #   seq 17: direct priority 10 at 108 s, broadcast at 109 s   -> no channel, priority 10: keyed;
        #           (and seq 18: priority 10 rejected at 110 s, then accepted at 111 s -> keyed.)
        #   seq 20: direct priority 10 at 200 s.
        # seq 17 at 108 s: nothing keyable before it: n = 0. seq 18 at 111 s: seq 17: n = 1. seq 20 at
        # 200 s: seqs 17 and 18: n = 2 (had the six above counted, 8 -> "5-14"). All three in "0-4".
        records = [callback("channel_subscription", 0, channel_id="ch-1"),
                   apns(11, 100, status=429), apns(12, 101, priority=5), apns(13, 102, priority=None),
                   broadcast(14, 103), apns(15, 104, priority=5), apns(15, 105),
                   broadcast(16, 106), apns(16, 107), apns(17, 108), broadcast(17, 109),
                   apns(18, 110, status=429), apns(18, 111), apns(20, 200)]
        r = report(records)
        self.assertEqual(p10(r), {"0-4": 3})
        # The others are still updates, in the other breakdowns: 9 sent (seqs 11-18, 20), 8 accepted.
        self.assertEqual((r["updates"]["sent"], r["updates"]["accepted"]), (9, 8))
        pri = {k: v["sent"] for k, v in r["breakdowns"]["priority"].items()}
        # "10": 11 (rejected, by its earliest request), 14, 16, 17, 18, 20; "5": 12, 15; "unknown": 13.
        self.assertEqual(pri, {"10": 6, "5": 2, "unknown": 1})
        self.assertEqual({k: v["sent"] for k, v in r["breakdowns"]["channel"].items()}, {"ch-1": 2})

    def test_other_activities_do_not_count(self):
        # Six priority-10 updates of six other activities at 0 s; D's seq 1 at 10 s: n = 0 (only updates of
        # the same activity count). All seven in "0-4".
        records = [apns(1, 0, f"X{k}") for k in range(6)] + [apns(1, 10, "D")]
        self.assertEqual(p10(report(records)), {"0-4": 7})

    def test_empty(self):
        r = report([])
        self.assertEqual(r["breakdowns"]["priority_10_last_hour"], {})
        self.assertEqual(r["breakdowns"]["frequent_pushes"], {})
        self.assertEqual(list(r["breakdowns"]), ["app", "priority", "provider", "channel", "os_version",
                                                 "app_version", "frequent_pushes", "priority_10_last_hour"])


class FrequentPushes(unittest.TestCase):
    def breakdown(self, records, window=None):
        return {k: v["sent"] for k, v in report(records, window)["breakdowns"]["frequent_pushes"].items()}

    def test_values_and_the_earliest_evidence(self):
        # One update per activity (seq 1 at 0 s), plus seq 2 of E at 50 s:
        #   E: render "enabled" at 10 s, render "disabled" at 20 s (the switch flipped): the earliest
        #      -> "enabled" for both its updates;
        #   D: callback (content_update) "disabled" at 5 s -> "disabled";
        #   X: render "sometimes" -> kept as given;
        #   U: renders and callbacks without the field -> "unknown";
        #   T: a render "enabled" and a callback "disabled" at the same instant, 10 s -> the smallest value,
        #      "disabled" ("d" < "e");
        #   N: a render without the field at 5 s, one with "enabled" at 10 s -> the earliest that carries
        #      one: "enabled";
        #   Z: "Enabled" (another string: its own key) on a push_token callback.
        #   V: "" (a string too, kept as given) on an activity_state callback.
        records = [apns(1, 0, a) for a in "EDXUTNZV"] + [apns(2, 50, "E")]
        records += [render(1, 10, "E", frequent_pushes="enabled"), render(1, 20, "E", frequent_pushes="disabled"),
                    callback("content_update", 5, "D", seq=1, frequent_pushes="disabled"),
                    render(1, 10, "X", frequent_pushes="sometimes"),
                    render(1, 10, "U"), callback("push_token", 11, "U", push_token="tok-U"),
                    render(1, 10, "T", frequent_pushes="enabled"),
                    callback("content_update", 10, "T", seq=1, frequent_pushes="disabled"),
                    render(1, 5, "N"), render(1, 10, "N", frequent_pushes="enabled"),
                    callback("push_token", 3, "Z", push_token="tok-Z", frequent_pushes="Enabled"),
                    callback("activity_state", 3, "V", state="active", frequent_pushes="")]
        self.assertEqual(self.breakdown(records), {"enabled": 3, "disabled": 2, "sometimes": 1, "unknown": 1,
                                                   "Enabled": 1, "": 1})

    def test_evidence_outside_the_window_still_counts(self):
        # F's update at 0 s is in the window [0, 1 s); its only evidence, "disabled", comes at 7,200 s.
        records = [apns(1, 0, "F"), render(1, 2 * HOUR, "F", frequent_pushes="disabled")]
        self.assertEqual(self.breakdown(records, (ms(0), ms(1))), {"disabled": 1})

    def test_push_to_start_token_callback_is_evidence_for_no_activity(self):
        # A push_to_start_token callback has no activity_id: its field is nobody's evidence.
        records = [apns(1, 0, "G"), {"kind": "callback", "callback": "push_to_start_token", "push_token": "pts",
                                     "received_at": at(-5), "frequent_pushes": "disabled"}]
        self.assertEqual(self.breakdown(records), {"unknown": 1})

    def test_a_non_string_is_malformed_like_os_version(self):
        # Each bad line once with frequent_pushes, once with os_version: the same cause for both.
        for value in (True, 1, 1.5, ["enabled"], {"on": True}):
            for name in ("frequent_pushes", "os_version"):
                lines = [render(1, 0, **{name: value}), callback("content_update", 0, seq=1, **{name: value}),
                         callback("push_to_start_token", 0, push_token="p", **{name: value}),
                         render(1, 0, **{name: "enabled"})]
                dq = report(lines)["data_quality"]
                self.assertEqual((dq["malformed_lines"], dq["malformed_by_cause"]), (3, {"wrong_type": 3}),
                                 (name, value))
        # null is absent: valid.
        dq = report([render(1, 0, frequent_pushes=None), callback("push_token", 0, push_token="t",
                                                                   frequent_pushes=None)])["data_quality"]
        self.assertEqual(dq["malformed_lines"], 0)

    def test_an_earlier_field_at_fault_names_the_cause(self):
        # frequent_pushes is the last field of its table: a bad time before it is `invalid_time`.
        lines = [{"kind": "render", "activity_id": "A", "seq": 1, "rendered_at": "yesterday", "frequent_pushes": 3}]
        self.assertEqual(report(lines)["data_quality"]["malformed_by_cause"], {"invalid_time": 1})

    def test_part_of_the_identity(self):
        # Two renders that differ only in frequent_pushes are two records by 3.1; by 3.0 the field is unknown,
        # so the second is a repeat, and a non-string value is no fault.
        lines = [render(1, 0, frequent_pushes="enabled"), render(1, 0, frequent_pushes="disabled"),
                 render(2, 0, frequent_pushes=7)]
        dq = report(lines)["data_quality"]
        self.assertEqual((dq["duplicate_records"], dq["malformed_lines"]), (0, 1))
        r30 = report(lines, contract="3.0")
        self.assertEqual((r30["data_quality"]["duplicate_records"], r30["data_quality"]["malformed_lines"]), (1, 0))
        self.assertNotIn("frequent_pushes", r30["breakdowns"])


class NoUpdateTokenThroughAChannel(unittest.TestCase):
    # Five activities, each started by an accepted direct start push at 0 s and rendered (seq 1) at 1 s:
    #   P: a push_token callback at 2 s;
    #   Q: no push_token callback;
    #   S: subscribed (channel_subscription callback at 0.5 s) AND a push_token callback at 3 s;
    #   R: subscribed only by the channel_id on its render;
    #   W: a push_token callback at 4 s, and a content_update callback carrying channel_id at 5,000 s
    #      (after the window below): subscribed all the same.
    RECORDS = ([apns(1, 0, a, event="start") for a in "PQSRW"]
               + [render(1, 1, a) for a in "PQSW"] + [render(1, 1, "R", channel_id="ch-1")]
               + [callback("push_token", 2, "P", push_token="tok-P"),
                  callback("channel_subscription", 0.5, "S", channel_id="ch-1"),
                  callback("push_token", 3, "S", push_token="tok-S"),
                  callback("push_token", 4, "W", push_token="tok-W"),
                  callback("content_update", 5000, "W", seq=1, channel_id="ch-2")])

    def test_by_31(self):
        # starts: sent = accepted = appeared = 5 (appeared counts every appeared start), appearance 5/5.
        # update_token_received: appeared, with a push_token callback, not subscribed: P only -> 1.
        # update_token_rate: 1 / (appeared and not subscribed: P, Q) = 1/2. Latency: P's callback 2 s after
        # its accept: 2000 ms.
        # callbacks: activities with a rendered update: all five; minus the subscribed S, R, W: P, Q ->
        # token_expected 2; of those with a push_token callback: P -> token_received 1; loss 1 - 1/2.
        for window in (None, (ms(0), ms(100))):
            r = report(self.RECORDS, window)
            s, c = r["starts"], r["callbacks"]
            self.assertEqual((s["sent"], s["accepted"], s["appeared"], s["appearance_rate"]), (5, 5, 5, 1.0))
            self.assertEqual((s["update_token_received"], s["update_token_rate"]), (1, 0.5))
            self.assertEqual(s["update_token_latency_ms"], {"count": 1, "p50": 2000, "p90": 2000, "p99": 2000})
            self.assertEqual((c["token_expected"], c["token_received"], c["token_callback_loss_rate"]),
                             (2, 1, 0.5))

    def test_by_30(self):
        # Contract 3.0 expects a token of every activity: token_expected 5, received 3 (P, S, W); starts
        # update_token_received 3 of 5 appeared; latencies 2000, 3000, 4000 ms: p50 = 2nd of 3, p90 = 3rd.
        r = report(self.RECORDS, contract="3.0")
        s, c = r["starts"], r["callbacks"]
        self.assertEqual((s["update_token_received"], s["update_token_rate"]), (3, 3 / 5))
        self.assertEqual(s["update_token_latency_ms"], {"count": 3, "p50": 3000, "p90": 4000, "p99": 4000})
        self.assertEqual((c["token_expected"], c["token_received"]), (5, 3))

    def test_only_subscribed_gives_null_rate(self):
        # One appeared start, subscribed: appeared 1, update_token_received 0, rate 0/0 = null; no activity
        # expected to report a token: token_expected 0, loss rate null.
        r = report([apns(1, 0, "S", event="start"), render(1, 1, "S", channel_id="ch-1"),
                    callback("push_token", 2, "S", push_token="tok-S")])
        s, c = r["starts"], r["callbacks"]
        self.assertEqual((s["appeared"], s["update_token_received"], s["update_token_rate"]), (1, 0, None))
        self.assertEqual(s["update_token_latency_ms"], {"count": 0, "p50": None, "p90": None, "p99": None})
        self.assertEqual((c["token_expected"], c["token_received"], c["token_callback_loss_rate"]), (0, 0, None))

    def test_subscribed_activity_direct_updates_are_keyed(self):
        # The priority-10 breakdown looks at the update's channel, not the activity's subscription: S's direct
        # start (priority 10, no channel) is keyed.
        r = report([apns(1, 0, "S", event="start"), render(1, 1, "S", channel_id="ch-1")])
        self.assertEqual(p10(r), {"0-4": 1})


class BudgetFleet(unittest.TestCase):
    """Scripts/reference/budget_fleet.py makes data on which every 3.1 figure has work to do."""

    def test_every_key_occurs_and_n_is_counted_right(self):
        with tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "fleet")
            subprocess.run([sys.executable, os.path.join(HERE, "budget_fleet.py"), out, "11", "--activities", "40"],
                           check=True)
            again = os.path.join(directory, "again")
            subprocess.run([sys.executable, os.path.join(HERE, "budget_fleet.py"), again, "--seed", "11",
                            "--activities", "40"], check=True)
            for name in sorted(os.listdir(out)):   # deterministic by seed, whichever way it is given
                with open(os.path.join(out, name), "rb") as a, open(os.path.join(again, name), "rb") as b:
                    self.assertEqual(a.read(), b.read(), name)
            store = ref.Store(contract31=True)
            store.ingest_path(out)
            store30 = ref.Store(contract3=True)
            store30.ingest_path(out)
        r = ref.build_report(store, None, contract31=True)
        b = r["breakdowns"]
        self.assertEqual(sorted(b["priority_10_last_hour"]), sorted(k for k, _ in ref.P10_BUCKETS))
        self.assertLessEqual({"enabled", "disabled", "unknown"}, set(b["frequent_pushes"]))
        self.assertGreater(len(b["frequent_pushes"]), 3)           # and strings the contract does not name
        # The damaged lines: a frequent_pushes that is not a string (4), a priority that is not an int (1).
        self.assertEqual(r["data_quality"]["malformed_by_cause"], {"wrong_type": 5})
        # Subscribed activities are left out where an update token is expected.
        r30 = ref.build_report(store30, None, contract3=True)
        self.assertLess(r["callbacks"]["token_expected"], r30["callbacks"]["token_expected"])
        self.assertEqual(r["starts"]["appeared"], r30["starts"]["appeared"])
        # n recounted the slow way, straight from the contract's words, over all updates.
        a = ref.analyse(store.records, True)
        such: dict = {}
        for u in a.updates:
            if u.accepted and u.priority == "10" and u.channel is None:
                such.setdefault(u.activity_id, []).append(u)
        counts: dict = {}
        for ups in such.values():
            for u in ups:
                n = sum(1 for o in ups if o is not u and u.accept_time - 3_600_000 <= o.accept_time < u.accept_time)
                counts[ref.p10_bucket(n)] = counts.get(ref.p10_bucket(n), 0) + 1
        self.assertEqual({k: v["sent"] for k, v in b["priority_10_last_hour"].items()}, counts)
        # Instants exactly an hour apart, and equal instants, occur among them.
        times = [[u.accept_time for u in ups] for ups in such.values()]
        exact = sum(1 for ts in times for t in ts if t - 3_600_000 in set(ts))
        same = sum(len(ts) - len(set(ts)) for ts in times)
        self.assertGreater(exact, 0)
        self.assertGreater(same, 0)


class CommandLine(unittest.TestCase):
    def run_reference(self, *args):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "records.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                for record in [apns(1, 0, event="start"), render(1, 1, frequent_pushes="enabled")]:
                    f.write(json.dumps(record) + "\n")
            out = subprocess.run([sys.executable, os.path.join(HERE, "arrival_reference.py"), *args, path],
                                 check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    def test_default_is_31(self):
        for args in ((), ("--contract", "3.1")):
            r = self.run_reference(*args)
            self.assertEqual(r["breakdowns"]["frequent_pushes"]["enabled"]["rendered"], 1)
            self.assertEqual(list(r["breakdowns"]["priority_10_last_hour"]), ["0-4"])
        r = self.run_reference("--contract", "3.0")
        self.assertEqual(r["schema"], "arrival.report/2")
        self.assertNotIn("priority_10_last_hour", r["breakdowns"])


if __name__ == "__main__":
    unittest.main()

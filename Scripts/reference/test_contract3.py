#!/usr/bin/env python3
"""Contract 3.0 in the reference implementation, rule by rule and tie by tie.

Each case is a handful of records written as the contract's examples would
write them, and the figures the contract's words give for them, worked out
by hand (the comments say how). Standard library only:

    python3 -m unittest discover -s Scripts/reference -p 'test_*.py'
"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrival_reference as ref  # noqa: E402

T0 = "2026-11-21T08:00:00"


def at(seconds: float) -> str:
    """T0 plus `seconds`, as an RFC 3339 time (millisecond precision)."""
    ms = ref.parse_rfc3339_ms(T0 + "Z") + round(seconds * 1000)
    return ref.format_utc_ms(ms)


def apns(seq, t, status=200, token="tok-1", event="update", ts=None, apns_id=None, reason=None, activity="A",
         topic="com.example.push-type.liveactivity"):
    record = {"kind": "apns", "apns_id": apns_id or f"id-{activity}-{seq}-{t}", "sent_at": at(t), "status": status,
              "push_token": token, "activity_id": activity, "seq": seq, "event": event,
              "aps_timestamp": 1795248000 + (seq if ts is None else ts), "topic": topic}
    if reason is not None:
        record["reason"] = reason
    return record


def render(seq, t, activity="A"):
    return {"kind": "render", "activity_id": activity, "seq": seq, "rendered_at": at(t)}


def callback(kind, t, activity="A", **fields):
    return {"kind": "callback", "callback": kind, "activity_id": activity, "received_at": at(t), **fields}


def state(name, t, activity="A"):
    return callback("activity_state", t, activity, state=name)


def report(records, contract3=True):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "records.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for record in records:
                f.write(json.dumps(record) + "\n")
        store = ref.Store()
        store.ingest_path(path)
        return ref.build_report(store, None, contract3=contract3)


class Outcomes(unittest.TestCase):
    def test_dismissed_after_the_dismissal_only(self):
        # A start renders; the user dismisses at 100 s; seq 2 accepted at 100 s (the same instant: not later),
        # seq 3 at 101 s (later: dismissed).
        r = report([apns(1, 0, event="start"), render(1, 1), state("dismissed", 100),
                    apns(2, 100), apns(3, 101)])
        u = r["updates"]
        self.assertEqual((u["rendered"], u["dismissed"], u["lost"]), (1, 1, 1))
        # seq 2: lost; the dismissal is not later than its accept time (equal), nothing of the device came later.
        self.assertEqual(u["lost_by_cause"]["device_silent"], 1)

    def test_end_before_dismissal_makes_ended(self):
        # Ended on the device at 50 s, dismissed at 60 s: an update at 70 s is `ended` (the end came first).
        r = report([apns(1, 0, event="start"), render(1, 1), state("ended", 50), state("dismissed", 60),
                    apns(2, 70)])
        self.assertEqual((r["updates"]["ended"], r["updates"]["dismissed"]), (1, 0))

    def test_dismissal_before_end_makes_dismissed(self):
        # Dismissed at 50 s, an `end` push accepted at 60 s: an update at 70 s is `dismissed`.
        r = report([apns(1, 0, event="start"), render(1, 1), state("dismissed", 50), apns(2, 60, event="end"),
                    apns(3, 70)])
        self.assertEqual((r["updates"]["dismissed"], r["updates"]["ended"]), (2, 0))

    def test_device_end_is_an_end(self):
        # No end push: the activity_state `ended` callback at 30 s ends it.
        r = report([apns(1, 0, event="start"), render(1, 1), state("ended", 30), apns(2, 31)])
        self.assertEqual(r["updates"]["ended"], 1)
        # Before 3.0 the same update was lost.
        self.assertEqual(report([apns(1, 0, event="start"), render(1, 1), state("ended", 30), apns(2, 31)],
                                contract3=False)["updates"]["lost"], 1)

    def test_skewed_clock_still_renders(self):
        # The device clock runs 5 s behind: the render is stamped before the accept time; still rendered,
        # its latency 0 and counted as clock skew.
        r = report([apns(1, 10, event="start"), render(1, 5)])
        self.assertEqual(r["updates"]["rendered"], 1)
        self.assertEqual(r["latency_ms"]["p50"], 0)
        self.assertEqual(r["data_quality"]["clock_skew_negative"], 1)


class LossCauses(unittest.TestCase):
    def cause(self, records):
        causes = report(records)["updates"]["lost_by_cause"]
        lost = [name for name, count in causes.items() if count]
        self.assertEqual(sum(causes.values()), 1, causes)
        self.assertEqual(list(causes), list(ref.LOSS_CAUSES))
        return lost[0]

    def test_not_rendered(self):
        # The app saw seq 2 arrive (content_update); the widget never showed it.
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1), apns(2, 10),
                                     callback("content_update", 11, seq=2), render(1, 20)]), "not_rendered")

    def test_old_token(self):
        # The token rotated to tok-2 at 5 s; seq 2 went to tok-1 at 10 s.
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1),
                                     callback("push_token", 0.5, push_token="tok-1"),
                                     callback("push_token", 5, push_token="tok-2"),
                                     apns(2, 10, token="tok-1"), render(1, 20)]), "old_token")

    def test_token_callback_at_the_accept_time_counts(self):
        # The rotation is reported at exactly the accept time: "at or before" includes it.
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1),
                                     callback("push_token", 10, push_token="tok-2"),
                                     apns(2, 10, token="tok-1"), render(1, 20)]), "old_token")

    def test_same_token_is_not_old(self):
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1),
                                     callback("push_token", 5, push_token="tok-1"),
                                     apns(2, 10, token="tok-1"), render(1, 20)]), "unexplained")

    def test_tie_between_token_callbacks_takes_the_greatest_token(self):
        # Two callbacks at the same instant: the greater token (tok-b) is the newest; tok-b was used: not old.
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1),
                                     callback("push_token", 5, push_token="tok-a"),
                                     callback("push_token", 5, push_token="tok-b"),
                                     apns(2, 10, token="tok-b"), render(1, 20)]), "unexplained")

    def test_closed_later(self):
        # Dismissed at 30 s, after seq 2's accept time (10 s): closed before anything newer showed.
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1), apns(2, 10),
                                     state("dismissed", 30)]), "closed_later")

    def test_device_silent(self):
        self.assertEqual(self.cause([apns(1, 0, event="start"), render(1, 1), apns(2, 10)]), "device_silent")

    def test_deciding_request_by_the_full_tie_order(self):
        # Two accepted requests of seq 2 tie on everything up to provider; push_token decides (tok-1 < tok-2):
        # tok-1 is the deciding request, and the activity had moved to tok-2: old_token, in either input order.
        for order in ([0, 1], [1, 0]):
            pair = [apns(2, 10, token="tok-1", apns_id="same"), apns(2, 10, token="tok-2", apns_id="same")]
            records = [apns(1, 0, event="start", token="tok-2"), render(1, 1),
                       callback("push_token", 5, push_token="tok-2")] + [pair[i] for i in order] + [render(1, 20)]
            self.assertEqual(self.cause(records), "old_token")


class StartsAndTokens(unittest.TestCase):
    def test_starts(self):
        # A appears and gets its update token 2.5 s after the accept; B appears without one;
        # C's start is accepted and never appears; D's is refused.
        r = report([
            apns(1, 0, event="start", activity="A"), render(1, 1, activity="A"),
            callback("push_token", 2.5, activity="A", push_token="a"),
            apns(1, 0, event="start", activity="B"), callback("content_update", 3, activity="B", seq=1),
            apns(1, 0, event="start", activity="C"),
            apns(1, 0, event="start", activity="D", status=429, reason="TooManyRequests"),
        ])
        s = r["starts"]
        self.assertEqual((s["sent"], s["accepted"], s["appeared"], s["update_token_received"]), (4, 3, 2, 1))
        self.assertEqual(s["appearance_rate"], 2 / 3)
        self.assertEqual(s["update_token_rate"], 1 / 2)
        self.assertEqual(s["update_token_latency_ms"], {"count": 1, "p50": 2500, "p90": 2500, "p99": 2500})

    def test_requests_to_dead_tokens(self):
        # tok-1 dies at 10 s (Unregistered); one more request at 10 s (same instant: not after) and two later.
        r = report([apns(1, 0, event="start"), apns(2, 10, status=400, reason="Unregistered"),
                    apns(3, 10, apns_id="x"), apns(4, 20), apns(5, 30, status=410),
                    apns(1, 40, event="start", token="", activity="E", status=400, reason="BadDeviceToken"),
                    apns(2, 50, token="", activity="E")])
        self.assertEqual(r["requests"]["to_dead_tokens"], 2)

    def test_schema_2_keys_in_order(self):
        r = report([apns(1, 0, event="start"), render(1, 1)])
        self.assertEqual(r["schema"], "arrival.report/2")
        self.assertEqual(list(r), ["schema", "window", "requests", "updates", "starts", "callbacks", "latency_ms",
                                   "data_quality", "breakdowns"])
        self.assertEqual(list(r["requests"])[-2:], ["broadcasts", "to_dead_tokens"])
        self.assertEqual(list(r["breakdowns"]), ["app", "priority", "provider", "channel", "os_version",
                                                 "app_version"])
        self.assertIn("lost_by_cause", r["breakdowns"]["app"]["com.example"])


class LifecycleFleet(unittest.TestCase):
    """`arrival simulate --lifecycle` makes data on which every 3.0 rule has work to do (the built binary,
    when there is one: CI builds it first)."""

    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".build", "debug", "arrival")

    @unittest.skipUnless(os.access(binary, os.X_OK), "no built arrival")
    def test_every_cause_occurs(self):
        import subprocess
        with tempfile.TemporaryDirectory() as directory:
            subprocess.run([self.binary, "simulate", "--out", directory, "--activities", "800", "--seed", "4",
                            "--lifecycle"], check=True, capture_output=True)
            store = ref.Store()
            store.ingest_path(directory)
            r = ref.build_report(store, None, contract3=True)
        self.assertGreater(r["updates"]["dismissed"], 0)
        for cause in ("not_rendered", "old_token", "closed_later", "device_silent"):
            self.assertGreater(r["updates"]["lost_by_cause"][cause], 0, cause)
        self.assertGreater(r["requests"]["to_dead_tokens"], 0)
        s = r["starts"]
        self.assertLess(s["appeared"], s["accepted"])
        self.assertLess(s["update_token_received"], s["appeared"])


if __name__ == "__main__":
    unittest.main()

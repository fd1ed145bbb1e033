#!/usr/bin/env python3
"""Contract 3.0's broadcast channels in the reference implementation.

Each case is a handful of records and the figures the contract's words give
for them, worked out by hand (the comments say how): which open activities a
broadcast stands for (section 3), how request and update metrics count it
(section 4), which broadcast lines are malformed and why (2.1-2.4), and the
`/4/broadcasts/apps/...` exchange (2.6). Standard library only:

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
TS0 = 1795248000
TOPIC = "com.example.push-type.liveactivity"


def at(seconds: float) -> str:
    """T0 plus `seconds`, as an RFC 3339 time (millisecond precision)."""
    return ref.format_utc_ms(ms(seconds))


def ms(seconds: float) -> int:
    return ref.parse_rfc3339_ms(T0 + "Z") + round(seconds * 1000)


def apns(seq, t, activity="A", status=200, token="tok-1", event="update", apns_id=None, topic=TOPIC, **extra):
    """A request sent straight to a token (aps_timestamp = TS0 + seq)."""
    return {"kind": "apns", "apns_id": apns_id or f"id-{activity}-{seq}-{t}", "sent_at": at(t), "status": status,
            "push_token": token, "activity_id": activity, "seq": seq, "event": event,
            "aps_timestamp": TS0 + seq, "topic": topic, **extra}


def broadcast(seq, t, channel="ch-1", status=200, event="update", apns_id=None, topic=TOPIC, **extra):
    """A broadcast record: a channel_id, no push_token, no activity_id."""
    record = {"kind": "apns", "apns_id": apns_id or f"b-{channel}-{seq}-{t}", "sent_at": at(t), "status": status,
              "seq": seq, "event": event, "aps_timestamp": TS0 + (seq or 0), "topic": topic,
              "channel_id": channel, **extra}
    if seq is None:
        del record["seq"]
    return record


def render(seq, t, activity="A", **extra):
    return {"kind": "render", "activity_id": activity, "seq": seq, "rendered_at": at(t), **extra}


def callback(kind, t, activity="A", **fields):
    return {"kind": "callback", "callback": kind, "activity_id": activity, "received_at": at(t), **fields}


def subscribe(t, activity, channel="ch-1"):
    """The app started `activity` with pushType .channel(channel)."""
    return callback("channel_subscription", t, activity, channel_id=channel)


def state(name, t, activity):
    return callback("activity_state", t, activity, state=name)


def store_of(lines, contract3=True):
    """A store holding `lines` (records, or raw text lines) in one file."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "records.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for line in lines:
                f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        store = ref.Store(contract3=contract3)
        store.ingest_path(path)
        return store


def report(lines, window=None, contract3=True):
    return ref.build_report(store_of(lines, contract3), window, contract3=contract3)


def outcome_counts(updates):
    return {k: v for k, v in updates.items() if k in ref.OUTCOMES_3 and v}


class WhoABroadcastReaches(unittest.TestCase):
    def test_two_subscribers_one_by_callback_one_by_render(self):
        # A: started by a direct start push at 0 s (rendered at 1 s), subscribed by a channel_subscription
        # callback at 2 s. B: started by the app; known only from its render of seq 1 at 5 s, which carries
        # channel_id ch-1 (subscribed by the field on a render). Both open at 100 s: the broadcast of seq 2
        # stands for (A, 2) and (B, 2), rendered at 101 s and 102 s.
        r = report([apns(1, 0, "A", event="start"), render(1, 1, "A"), subscribe(2, "A"),
                    render(1, 5, "B", channel_id="ch-1"),
                    broadcast(2, 100), render(2, 101, "A"), render(2, 102, "B")])
        q = r["requests"]
        # Two records: A's start and the broadcast, counted once.
        self.assertEqual((q["total"], q["accepted"], q["broadcasts"]), (2, 2, 1))
        u = r["updates"]
        # Updates (A,1), (A,2), (B,2); all rendered.
        self.assertEqual((u["sent"], u["accepted"], u["rendered"]), (3, 3, 3))
        # Latencies 1000 (A,1), 1000 (A,2), 2000 (B,2): p50 = 2nd of 3, p90 = p99 = 3rd.
        self.assertEqual(r["latency_ms"], {"count": 3, "p50": 1000, "p90": 2000, "p99": 2000})
        self.assertEqual(r["data_quality"]["broadcasts_without_subscribers"], 0)
        self.assertEqual(r["data_quality"]["unattributed"], 0)
        self.assertEqual(list(r["breakdowns"]["channel"]), ["ch-1"])
        ch = r["breakdowns"]["channel"]["ch-1"]
        self.assertEqual((ch["sent"], ch["accepted"], ch["rendered"], ch["arrival_rate"]), (2, 2, 2, 1.0))
        # Activities with a rendered update: A and B; neither reported a push token.
        self.assertEqual((r["callbacks"]["token_expected"], r["callbacks"]["token_received"]), (2, 0))
        self.assertEqual(r["callbacks"]["content_update_expected"], 3)

    def test_subscribers_that_are_not_open(self):
        # Broadcast of seq 2 at 100 s on ch-1. Subscribers:
        #   C starts at 200 s (its subscription callback): not started at sent_at -> not reached;
        #   D started at 0 s, dismissed at 50 s (at or before 100 s) -> not reached;
        #   E started at 0 s, ended on the device at exactly 100 s ("at or before") -> not reached;
        #   G started at 0 s, dismissed at 101 s (after) -> reached.
        r = report([subscribe(200, "C"),
                    render(1, 0, "D", channel_id="ch-1"), state("dismissed", 50, "D"),
                    subscribe(0, "E"), state("ended", 100, "E"),
                    subscribe(0, "G"), state("dismissed", 101, "G"),
                    broadcast(2, 100)])
        u = r["updates"]
        self.assertEqual((u["sent"], u["accepted"], u["lost"]), (1, 1, 1))
        # (G,2): not rendered, not after the dismissal (100 < 101); lost, and G was dismissed later: closed_later.
        self.assertEqual(u["lost_by_cause"]["closed_later"], 1)
        self.assertEqual(r["data_quality"]["broadcasts_without_subscribers"], 0)
        self.assertEqual(r["breakdowns"]["channel"]["ch-1"]["sent"], 1)

    def test_at_most_28800_seconds_after_the_start(self):
        # H subscribed (and started) at 0 s. A broadcast at exactly 28,800 s reaches it ("at most"); one a
        # millisecond later does not (it stands for no activity). A direct request a millisecond later does
        # make an update: expired (more than 28,800 s after the start).
        r = report([subscribe(0, "H"), broadcast(2, 28_800), broadcast(3, 28_800.001),
                    apns(4, 28_800.001, "H")])
        q, u = r["requests"], r["updates"]
        self.assertEqual((q["total"], q["broadcasts"]), (3, 2))
        self.assertEqual(r["data_quality"]["broadcasts_without_subscribers"], 1)
        # (H,2) at 28,800 s: not more than 8 hours after the start; nothing from the device after: device_silent.
        # (H,4): expired.
        self.assertEqual((u["sent"], u["accepted"], u["expired"], u["lost"]), (2, 2, 1, 1))
        self.assertEqual(u["lost_by_cause"]["device_silent"], 1)

    def test_broadcast_without_subscribers(self):
        # Nobody is subscribed to ch-9; I is subscribed to ch-1 but the ch-9 broadcast is not for it.
        r = report([subscribe(0, "I"), broadcast(2, 10, channel="ch-9")])
        self.assertEqual(r["requests"]["total"], 1)
        self.assertEqual(r["requests"]["broadcasts"], 1)
        self.assertEqual(r["data_quality"]["broadcasts_without_subscribers"], 1)
        self.assertEqual(r["data_quality"]["unattributed"], 0)   # a broadcast is never unattributed
        self.assertEqual(r["updates"]["sent"], 0)
        self.assertEqual(r["breakdowns"]["channel"], {})

    def test_an_activity_on_two_channels(self):
        # S renders with ch-a and later subscribes to ch-b: a broadcast on either reaches it.
        r = report([render(1, 0, "S", channel_id="ch-a"), subscribe(1, "S", channel="ch-b"),
                    broadcast(2, 10, channel="ch-a"), broadcast(3, 20, channel="ch-b")])
        self.assertEqual(r["updates"]["sent"], 2)
        self.assertEqual(sorted(r["breakdowns"]["channel"]), ["ch-a", "ch-b"])


class Counting(unittest.TestCase):
    def test_requests_count_a_broadcast_once_updates_per_subscriber(self):
        # J, K, L subscribed at 0 s. Three broadcasts on ch-1: seq 2 accepted at 10 s (payload 4000: within a
        # broadcast's 4608 margin), seq 3 refused at 20 s (429 TooManyRequests), one without seq at 30 s.
        r = report([subscribe(0, "J"), subscribe(0, "K"), subscribe(0, "L"),
                    broadcast(2, 10, payload_bytes=4000),
                    broadcast(3, 20, status=429, reason="TooManyRequests"),
                    broadcast(None, 30)])
        q = r["requests"]
        self.assertEqual((q["total"], q["accepted"], q["rejected"], q["broadcasts"]), (3, 2, 1, 3))
        self.assertEqual(q["acceptance_rate"], 2 / 3)
        self.assertEqual(q["by_reason"], {"TooManyRequests": 1})
        self.assertEqual((q["oversize_risk"], q["oversize_failures"], q["to_dead_tokens"]), (0, 0, 0))
        d = r["data_quality"]
        # The seq-less broadcast counts once in apns_without_seq; it still stands for J, K, L.
        self.assertEqual((d["apns_without_seq"], d["unattributed"], d["broadcasts_without_subscribers"]), (1, 0, 0))
        u = r["updates"]
        # seq 2 and seq 3 for each of J, K, L; only seq 2 accepted. Nothing came from the devices after
        # 10 s: the three accepted updates are lost, device_silent.
        self.assertEqual((u["sent"], u["accepted"], u["lost"]), (6, 3, 3))
        self.assertEqual(u["lost_by_cause"]["device_silent"], 3)
        self.assertEqual((r["breakdowns"]["channel"]["ch-1"]["sent"],
                          r["breakdowns"]["channel"]["ch-1"]["accepted"]), (6, 3))

    def test_oversize_risk_thresholds(self):
        # Accepted: broadcasts of 4608 (not over) and 4609 (over 4608), 4000 (over 3584 but a broadcast: no);
        # direct requests of 3584 (not over) and 3585 (over). A refused broadcast of 5000 is not accepted.
        r = report([broadcast(1, 0, payload_bytes=4608), broadcast(2, 1, payload_bytes=4609),
                    broadcast(3, 2, payload_bytes=4000),
                    broadcast(4, 3, payload_bytes=5000, status=413, reason="PayloadTooLarge"),
                    apns(1, 0, "A", payload_bytes=3584), apns(2, 1, "A", payload_bytes=3585)])
        q = r["requests"]
        self.assertEqual(q["oversize_risk"], 2)
        self.assertEqual(q["oversize_failures"], 1)
        self.assertEqual((q["total"], q["broadcasts"]), (6, 4))
        self.assertEqual(r["data_quality"]["broadcasts_without_subscribers"], 4)

    def test_breakdowns_channel(self):
        # Q and S subscribed to ch-a, R and S to ch-b (all at 0 s). ch-a broadcast of seq 2 at 10 s, ch-b of
        # seq 3 at 20 s, and a direct request of seq 4 to Q at 30 s. Renders: (Q,2) at 11 s, (S,3) at 21 s.
        #   Q: (Q,2) rendered; (Q,4) lost, nothing from Q after 30 s: device_silent; no channel.
        #   S: (S,2) superseded by the rendered (S,3).
        #   R: (R,3) lost, device_silent.
        r = report([subscribe(0, "Q", "ch-a"), subscribe(0, "S", "ch-a"), subscribe(0, "R", "ch-b"),
                    subscribe(0, "S", "ch-b"),
                    broadcast(2, 10, channel="ch-a"), broadcast(3, 20, channel="ch-b"), apns(4, 30, "Q"),
                    render(2, 11, "Q"), render(3, 21, "S")])
        self.assertEqual(r["updates"]["sent"], 5)
        ch = r["breakdowns"]["channel"]
        self.assertEqual(list(ch), ["ch-a", "ch-b"])
        self.assertEqual(outcome_counts(ch["ch-a"]), {"rendered": 1, "superseded": 1})
        self.assertEqual((ch["ch-a"]["arrival_rate"], ch["ch-a"]["effective_arrival_rate"]), (0.5, 1.0))
        self.assertEqual(outcome_counts(ch["ch-b"]), {"rendered": 1, "lost": 1})
        self.assertEqual(ch["ch-b"]["lost_by_cause"]["device_silent"], 1)
        self.assertEqual((ch["ch-b"]["arrival_rate"], ch["ch-b"]["effective_arrival_rate"]), (0.5, 0.5))
        self.assertEqual(set(ch["ch-b"]), set(r["updates"]))  # the whole updates block, lost_by_cause included


class EndsAndMixedUpdates(unittest.TestCase):
    def test_a_broadcast_end_ends_what_it_reached(self):
        # M and N subscribed at 0 s. A broadcast `end` (seq 5) at 100 s reaches both and, after expansion,
        # ends them at 100 s. Then a direct update of seq 6 to M at 200 s: ended (200 > 100).
        # The two end updates are not later than the end they made; nothing from the devices after 100 s:
        # lost, device_silent.
        r = report([subscribe(0, "M"), subscribe(0, "N"), broadcast(5, 100, event="end"), apns(6, 200, "M")])
        u = r["updates"]
        self.assertEqual((u["sent"], u["accepted"], u["ended"], u["lost"]), (3, 3, 1, 2))
        self.assertEqual(u["lost_by_cause"]["device_silent"], 2)
        # Without the broadcast, (M,6) is lost (device_silent), not ended.
        r = report([subscribe(0, "M"), subscribe(0, "N"), apns(6, 200, "M")])
        self.assertEqual((r["updates"]["ended"], r["updates"]["lost"]), (0, 1))

    def test_reach_is_decided_before_broadcast_ends(self):
        # Who a broadcast stands for is decided by start/end/dismissal computed WITHOUT broadcasts: a second
        # broadcast (seq 7, 150 s) still reaches M and N after the broadcast end at 100 s, and both its
        # updates are `ended` by the recomputed end.
        r = report([subscribe(0, "M"), subscribe(0, "N"), broadcast(5, 100, event="end"), broadcast(7, 150)])
        u = r["updates"]
        self.assertEqual((u["sent"], u["ended"], u["lost"]), (4, 2, 2))
        self.assertEqual(r["data_quality"]["broadcasts_without_subscribers"], 0)

    def mixed(self, order):
        # P: direct start (seq 1) at 0 s, rendered at 1 s by a render carrying channel_id ch-1.
        #   seq 2: direct 429 at 50 s, broadcast accepted at 60 s (topic com.bcast) -> decided by the broadcast:
        #          channel ch-1, app com.bcast.
        #   seq 3: direct and broadcast both accepted at 70 s, same apns_id, aps_timestamp, event, topic,
        #          priority, provider: channel_id decides, null first -> the direct one: no channel. (Were
        #          push_token compared before channel_id, the broadcast's null token would have won.)
        #   seq 4: broadcast 500 at 80 s, direct accepted at 90 s -> decided by the direct one: no channel.
        #   seq 5: broadcast 429 at 95 s, direct 429 at 96 s: never accepted, the earliest request is the
        #          broadcast -> channel ch-1, app com.bcast.
        records = [apns(1, 0, "P", event="start"), render(1, 1, "P", channel_id="ch-1"),
                   apns(2, 50, "P", status=429, reason="TooManyRequests"),
                   broadcast(2, 60, topic="com.bcast.push-type.liveactivity"),
                   apns(3, 70, "P", apns_id="same"), broadcast(3, 70, apns_id="same"),
                   broadcast(4, 80, status=500, topic="com.bcast.push-type.liveactivity"), apns(4, 90, "P"),
                   broadcast(5, 95, status=429, reason="TooManyRequests", topic="com.bcast.push-type.liveactivity"),
                   apns(5, 96, "P", status=429, reason="TooManyRequests")]
        return report(records if order == 0 else records[::-1])

    def test_an_update_with_direct_and_broadcast_requests(self):
        for order in (0, 1):
            r = self.mixed(order)
            q = r["requests"]
            self.assertEqual((q["total"], q["accepted"], q["rejected"], q["broadcasts"]), (9, 5, 4, 4))
            self.assertEqual(q["by_reason"], {"HTTP500": 1, "TooManyRequests": 3})
            u = r["updates"]
            # (P,1) rendered; (P,2), (P,3), (P,4) lost: no device record after 1 s, device_silent (the
            # broadcast-decided (P,2) has no push_token, so never old_token).
            self.assertEqual((u["sent"], u["accepted"], u["rendered"], u["lost"]), (5, 4, 1, 3))
            self.assertEqual(u["lost_by_cause"]["device_silent"], 3)
            ch = r["breakdowns"]["channel"]
            self.assertEqual(list(ch), ["ch-1"])
            self.assertEqual((ch["ch-1"]["sent"], ch["ch-1"]["accepted"], ch["ch-1"]["lost"]), (2, 1, 1))
            app = r["breakdowns"]["app"]
            self.assertEqual(list(app), ["com.bcast", "com.example"])
            self.assertEqual((app["com.bcast"]["sent"], app["com.bcast"]["accepted"]), (2, 1))
            self.assertEqual((app["com.example"]["sent"], app["com.example"]["accepted"]), (3, 3))


class MalformedBroadcastLines(unittest.TestCase):
    BASE = {"kind": "apns", "apns_id": "x", "sent_at": at(0), "status": 200, "aps_timestamp": TS0}

    def lines(self):
        b = self.BASE
        return [
            # a. a broadcast that also names a push_token              3.0: wrong_type   2: valid (ignored)
            {**b, "push_token": "tok", "channel_id": "ch"},
            # b. a broadcast that also names an activity_id            3.0: wrong_type   2: missing_field
            {**b, "activity_id": "A", "channel_id": "ch"},
            # c. an empty channel_id beside a push_token               3.0: wrong_type   2: valid
            {**b, "push_token": "tok", "channel_id": ""},
            # d. an empty channel_id, no push_token: not a broadcast,
            #    so its required push_token is missing first           3.0: missing_field 2: missing_field
            {**b, "channel_id": ""},
            # e. a channel_id that is not a string                     3.0: wrong_type   2: valid
            {**b, "push_token": "tok", "channel_id": 7},
            # f. a render with an empty channel_id                     3.0: wrong_type   2: valid
            render(1, 0, "A", channel_id=""),
            # g. channel_subscription without channel_id               3.0: missing_field 2: invalid_enum
            callback("channel_subscription", 0, "A"),
            # h. channel_subscription with an empty channel_id         3.0: wrong_type   2: invalid_enum
            callback("channel_subscription", 0, "A", channel_id=""),
            # i. a content_update whose channel_id is a number         3.0: wrong_type   2: valid
            callback("content_update", 0, "A", seq=1, channel_id=5),
            # j. a broadcast with a push_token and a bad sent_at: sent_at comes first in the table
            #                                                          3.0: invalid_time 2: invalid_time
            {**b, "sent_at": "2026-11-21 08:00:00Z", "push_token": "tok", "channel_id": "ch"},
            # k. a broadcast with an activity_id and an unknown event: activity_id comes first
            #                                                          3.0: wrong_type   2: missing_field
            {**b, "activity_id": "A", "event": "resume", "channel_id": "ch"},
            # l. a callback with an empty channel_id and a bad received_at: channel_id comes before
            #    received_at in the callback table                     3.0: wrong_type   2: invalid_time
            callback("content_update", 0, "A", seq=1, channel_id="", received_at="yesterday"),
            # m. a valid broadcast (push_token and activity_id null)   3.0: valid        2: missing_field
            {**b, "push_token": None, "activity_id": None, "channel_id": "ch"},
        ]

    def test_causes_by_contract_3(self):
        r = report(self.lines())
        d = r["data_quality"]
        self.assertEqual(d["malformed_by_cause"], {"invalid_time": 1, "missing_field": 2, "wrong_type": 9})
        self.assertEqual(d["malformed_lines"], 12)    # all but m
        self.assertEqual((r["requests"]["total"], r["requests"]["broadcasts"]), (1, 1))

    def test_causes_before_contract_3(self):
        # Before 3.0, channel_id is an unknown field and channel_subscription an unknown callback.
        r = report(self.lines(), contract3=False)
        d = r["data_quality"]
        self.assertEqual(d["malformed_by_cause"], {"invalid_enum": 2, "invalid_time": 2, "missing_field": 4})
        # a, c, e are ordinary requests to "tok", equal in every field of the older table (they differ only
        # in the channel_id it does not have): one record and two duplicates.
        self.assertEqual((r["requests"]["total"], d["duplicate_records"]), (1, 2))

    def test_each_line_alone(self):
        expected3 = ["wrong_type", "wrong_type", "wrong_type", "missing_field", "wrong_type", "wrong_type",
                     "missing_field", "wrong_type", "wrong_type", "invalid_time", "wrong_type", "wrong_type", None]
        for line, cause in zip(self.lines(), expected3):
            try:
                rec = ref.parse_line(json.dumps(line).encode(), contract3=True)
                got = None
                self.assertTrue(ref.is_broadcast(rec))
            except ref.Malformed as e:
                got = e.cause
            self.assertEqual(got, cause, line)

    def test_channel_id_is_part_of_a_record_identity(self):
        # Two renders equal but for channel_id: two records by 3.0's table, one (and a duplicate) before it.
        lines = [render(1, 0, "A", channel_id="ch-1"), render(1, 0, "A", channel_id="ch-2"),
                 broadcast(2, 5), broadcast(2, 5)]
        self.assertEqual(report(lines)["data_quality"]["duplicate_records"], 1)   # the repeated broadcast
        self.assertEqual(report(lines, contract3=False)["data_quality"]["duplicate_records"], 1)  # the render
        # (before 3.0 the two broadcast lines lack push_token: malformed, not duplicates)
        self.assertEqual(report(lines, contract3=False)["data_quality"]["malformed_by_cause"],
                         {"missing_field": 2})


class BroadcastExchanges(unittest.TestCase):
    BODY = json.dumps({"aps": {"event": "update", "timestamp": TS0 + 2, "content-state": {"seq": 2}}})

    def exchange(self, url="https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example",
                 request_headers=None, response_headers=None, status=200, **extra):
        headers = {"apns-channel-id": "ch-1", "apns-push-type": "liveactivity", "apns-priority": "10",
                   "apns-request-id": "req-1"} if request_headers is None else request_headers
        response = {"status": status, "headers": {"apns-request-id": "resp-1"} if response_headers is None
                    else response_headers}
        return {"kind": "exchange", "provider": "apns", "sent_at": at(100),
                "request": {"url": url, "headers": headers, "body": self.BODY}, "response": response, **extra}

    def plain(self, **changes):
        """The broadcast record the default exchange derives, written as a plain line."""
        return {"kind": "apns", "apns_id": "resp-1", "sent_at": at(100), "status": 200, "seq": 2,
                "event": "update", "aps_timestamp": TS0 + 2, "payload_bytes": len(self.BODY.encode("utf-8")),
                "topic": "com.example", "push_type": "liveactivity", "priority": 10, "environment": "production",
                "provider": "apns", "channel_id": "ch-1", **changes}

    def derive(self, line):
        return ref.parse_line(json.dumps(line).encode(), contract3=True)

    def test_derives_the_plain_record(self):
        derived = self.derive(self.exchange())
        self.assertEqual(derived.values, self.derive(self.plain()).values)
        self.assertEqual((derived.channel_id, derived.push_token, derived.activity_id, derived.topic),
                         ("ch-1", None, None, "com.example"))
        # Ingested together they are one record; the subscriber U is reached, its app is the bundle id.
        r = report([subscribe(0, "U"), self.exchange(), self.plain()])
        self.assertEqual(r["data_quality"]["duplicate_records"], 1)
        self.assertEqual((r["requests"]["total"], r["requests"]["broadcasts"]), (1, 1))
        self.assertEqual(r["updates"]["sent"], 1)
        self.assertEqual(list(r["breakdowns"]["app"]), ["com.example"])
        self.assertEqual(list(r["breakdowns"]["channel"]), ["ch-1"])

    def test_apns_id_topic_environment(self):
        def apns_id(request_headers, response_headers):
            headers = {"apns-channel-id": "ch-1", **request_headers}
            return self.derive(self.exchange(request_headers=headers, response_headers=response_headers)).apns_id
        # response apns-request-id, else response apns-id, else request apns-request-id, else request apns-id.
        self.assertEqual(apns_id({"apns-request-id": "q1", "apns-id": "q2"},
                                 {"apns-id": "r2", "apns-request-id": "r1"}), "r1")
        self.assertEqual(apns_id({"apns-request-id": "q1", "apns-id": "q2"}, {"apns-id": "r2"}), "r2")
        self.assertEqual(apns_id({"apns-id": "q2", "APNS-Request-ID": "q1"}, {}), "q1")
        self.assertEqual(apns_id({"apns-id": "q2"}, {}), "q2")
        self.assertEqual(apns_id({}, {}), "")
        # apns-topic wins over the bundle id; the sandbox broadcast host is sandbox; a path-only url has none.
        rec = self.derive(self.exchange(
            url="https://API-Broadcast.Sandbox.push.apple.com:443/4/broadcasts/apps/com.example?x=1",
            request_headers={"apns-channel-id": "ch-1", "apns-topic": "com.other.push-type.liveactivity"}))
        self.assertEqual((rec.topic, rec.environment, rec.priority), ("com.other.push-type.liveactivity",
                                                                      "sandbox", None))
        rec = self.derive(self.exchange(url="/4/broadcasts/apps/com.example"))
        self.assertEqual((rec.topic, rec.environment, rec.channel_id), ("com.example", None, "ch-1"))
        # An apns-channel-id header on a request to a device token is not read.
        rec = self.derive(self.exchange(url="https://api.push.apple.com/3/device/tok"))
        self.assertEqual((rec.push_token, rec.channel_id), ("tok", None))

    def test_malformed_exchanges(self):
        bad = [self.exchange(request_headers={"apns-push-type": "liveactivity"}),     # no apns-channel-id
               self.exchange(request_headers={"apns-channel-id": ""}),                # empty channel
               self.exchange(activity_id="A"),                                        # names an activity
               self.exchange(url="https://api-broadcast.push.apple.com/4/broadcasts/apps/"),      # no bundle id
               self.exchange(url="https://api-broadcast.push.apple.com/4/broadcasts/apps/a/b")]   # '/' in it
        for line in bad:
            with self.assertRaises(ref.Malformed) as caught:
                self.derive(line)
            self.assertEqual(caught.exception.cause, "invalid_exchange", line)
        # Before 3.0 a broadcast path is not an APNs path.
        with self.assertRaises(ref.Malformed) as caught:
            ref.parse_line(json.dumps(self.exchange()).encode())
        self.assertEqual(caught.exception.cause, "invalid_exchange")


class Windows(unittest.TestCase):
    def test_a_window_between_a_broadcast_and_its_renders(self):
        # T and V subscribed at 0 s (08:00:00). Broadcast of seq 2 at 3590 s (08:59:50); T renders it at
        # 3610 s (09:00:10), V never does. A broadcast on a channel nobody is on at 3700 s (09:01:40).
        records = [subscribe(0, "T"), subscribe(0, "V"), broadcast(2, 3590), render(2, 3610, "T"),
                   broadcast(3, 3700, channel="ch-none")]
        store = store_of(records)
        first = ref.build_report(store, (ms(0), ms(3600)), contract3=True)
        # 08:00-09:00: the broadcast is in it; (T,2) rendered (the render after the window still counts),
        # latency 20 s; (V,2) lost, nothing from V after 3590 s: device_silent.
        self.assertEqual((first["requests"]["total"], first["requests"]["broadcasts"]), (1, 1))
        u = first["updates"]
        self.assertEqual((u["sent"], u["accepted"], u["rendered"], u["lost"]), (2, 2, 1, 1))
        self.assertEqual(u["lost_by_cause"]["device_silent"], 1)
        self.assertEqual(first["latency_ms"], {"count": 1, "p50": 20000, "p90": 20000, "p99": 20000})
        self.assertEqual(first["data_quality"]["broadcasts_without_subscribers"], 0)
        # 09:00-10:00: T's render is here but proves an update of the earlier window; only the ch-none
        # broadcast, which stands for nobody.
        second = ref.build_report(store, (ms(3600), ms(7200)), contract3=True)
        self.assertEqual((second["requests"]["total"], second["requests"]["broadcasts"]), (1, 1))
        self.assertEqual((second["updates"]["sent"], second["latency_ms"]["count"]), (0, 0))
        self.assertEqual(second["data_quality"]["broadcasts_without_subscribers"], 1)
        self.assertEqual(second["breakdowns"]["channel"], {})


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Contract 3.2 in the reference implementation: `outliers`, rule by rule and edge by edge.

Contract 3.2 adds `outliers` (section 4): each device (an activity's device_id, from its device evidence
exactly as os_version) gets the `updates` block of the window's updates of its activities; with n of them
deliverable (rendered, superseded or lost) and k rendered, a device is tested when n >= 20 and the fleet's
rate p0 (the window's `updates.arrival_rate`) is not null, and is listed, "far below the fleet", when
P(X <= k), X ~ Binomial(n, p0), is at most 0.001 / m (m tested devices). Each case is a handful of
activities and the figures the contract's words give for them, worked out by hand (the comments say how);
the p-values are checked against the sum of the contract's formula written out term by term in fractions
(`tail` below), which shares no code with the reference's. Standard library only:

    python3 -m unittest discover -s Scripts/reference -p 'test_*.py'
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrival_reference as ref  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = "2026-11-21T08:00:00"
TS0 = 1795248000
TOPIC = "com.example.push-type.liveactivity"
EMPTY = {"fleet_arrival_rate": None, "devices_tested": 0, "devices": []}


def ms(seconds: float) -> int:
    return ref.parse_rfc3339_ms(T0 + "Z") + round(seconds * 1000)


def at(seconds: float) -> str:
    """T0 plus `seconds`, as an RFC 3339 time (millisecond precision)."""
    return ref.format_utc_ms(ms(seconds))


def apns(seq, t, activity="A", status=200, **extra):
    """A priority-10 request sent straight to the activity's token (aps_timestamp = TS0 + seq)."""
    record = {"kind": "apns", "apns_id": f"id-{activity}-{seq}-{t}", "sent_at": at(t), "status": status,
              "push_token": f"tok-{activity}", "activity_id": activity, "seq": seq, "event": "update",
              "aps_timestamp": TS0 + seq, "topic": TOPIC, "priority": 10, **extra}
    if status != 200:
        record["reason"] = "TooManyRequests"
    return record


def render(seq, t, activity="A", **extra):
    return {"kind": "render", "activity_id": activity, "seq": seq, "rendered_at": at(t), **extra}


def callback(kind, t, activity="A", **fields):
    return {"kind": "callback", "callback": kind, "activity_id": activity, "received_at": at(t), **fields}


def activity(name, device, rendered=0, lost=0, rejected=0, start=0.0):
    """One activity on `device` (None: its records carry no device_id). An activity_state `active` callback
    half a second before `start` carries the device_id (so even an activity with nothing rendered has its
    evidence); then seqs 1..rendered, one a second from start + 1 s, each rendered a quarter second after
    its request (its render carrying the device_id too); then `lost` accepted seqs, one a second, never
    rendered and after the last render (so lost, not superseded: nothing is rendered after them; the
    device says nothing after them either: `device_silent`); then `rejected` seqs (429: sent, not
    accepted, so not deliverable)."""
    tag = {} if device is None else {"device_id": device}
    records = [callback("activity_state", start - 0.5, name, state="active", **tag)]
    seq = 0
    for _ in range(rendered):
        seq += 1
        records += [apns(seq, start + seq, name), render(seq, start + seq + 0.25, name, **tag)]
    for _ in range(lost):
        seq += 1
        records.append(apns(seq, start + seq, name))
    for _ in range(rejected):
        seq += 1
        records.append(apns(seq, start + seq, name, status=429))
    return records


def store_of(lines, contract="3.2"):
    """A store holding `lines` (records, or raw text lines) in one file, read by `contract`."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "records.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for line in lines:
                f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        store = ref.Store(contract3=True, contract31=contract in ("3.1", "3.2"))
        store.ingest_path(path)
        return store


def report(lines, window=None, contract="3.2"):
    return ref.build_report(store_of(lines, contract), window, contract3=True,
                            contract31=contract in ("3.1", "3.2"), contract32=contract == "3.2")


def tail(k, n, p0):
    """The contract's formula, term by term: sum_{i=0..k} C(n, i) p0^i (1 - p0)^(n-i), in fractions, with p0
    the exact value of the double the report prints."""
    p = Fraction(p0)
    return sum(Fraction(math.comb(n, i)) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def listed(r):
    """[(device_id, n, k), ...] of outliers.devices, in the report's order."""
    return [(d["device_id"], d["updates"]["rendered"] + d["updates"]["superseded"] + d["updates"]["lost"],
             d["updates"]["rendered"]) for d in r["outliers"]["devices"]]


class FarBelowTheFleet(unittest.TestCase):
    def test_a_device_far_below_is_listed_with_its_block(self):
        # Devices G1-G4: one activity each, 50 updates all rendered. Device B: two activities, B-a with 5
        # rendered and 10 lost, B-b with 15 lost: its block holds both, 30 updates, n = 30, k = 5.
        # Window (all data): 205 rendered of 230 deliverable: p0 = 205/230. Tested: all five (n >= 20): m = 5.
        # G's: k = n, P(X <= n) = 1 > 0.001/5. B: P(X <= 5) for Binomial(30, 0.891...) is about 6.6e-20:
        # listed.
        records = [rec for i in range(1, 5) for rec in activity(f"G{i}", f"G{i}", rendered=50)]
        records += activity("B-a", "B", rendered=5, lost=10) + activity("B-b", "B", lost=15)
        r = report(records)
        o = r["outliers"]
        self.assertEqual(r["updates"]["arrival_rate"], 205 / 230)
        self.assertEqual(o["fleet_arrival_rate"], 205 / 230)
        self.assertEqual(o["devices_tested"], 5)
        self.assertEqual(len(o["devices"]), 1)
        entry = o["devices"][0]
        self.assertEqual(list(entry), ["device_id", "updates", "p_value"])
        self.assertEqual(entry["device_id"], "B")
        self.assertEqual(entry["updates"], {
            "sent": 30, "accepted": 30, "rendered": 5, "dismissed": 0, "ended": 0, "expired": 0,
            "stale_timestamp": 0, "superseded": 0, "lost": 25,
            "lost_by_cause": {"not_rendered": 0, "old_token": 0, "closed_later": 0, "device_silent": 25,
                              "unexplained": 0},
            "arrival_rate": 5 / 30, "effective_arrival_rate": 5 / 30})
        self.assertIsInstance(entry["p_value"], float)
        self.assertEqual(entry["p_value"], float(tail(5, 30, 205 / 230)))   # the exact sum, rounded once
        self.assertTrue(6.5e-20 < entry["p_value"] < 6.7e-20)

    def test_bonferroni_m_counts_the_tested_devices(self):
        # Device B: 34 rendered, 6 lost (n = 40, k = 34); the rest of the fleet 200 updates, all rendered.
        # p0 = 234/240 = 0.975 whichever way the 200 are split. P(X <= 34) for Binomial(40, 0.975) is
        # 4.513e-4 (the formula, below).
        #   On one device G (m = 2): 0.001/2 = 5e-4 >= 4.513e-4: B is listed.
        #   On ten devices of 20 (m = 11): 0.001/11 = 9.09e-5 < 4.513e-4: B is not listed.
        p_b = tail(34, 40, 234 / 240)
        self.assertTrue(Fraction(1, 11_000) < p_b <= Fraction(1, 2_000))
        one = report(activity("G", "G", rendered=200) + activity("B", "B", rendered=34, lost=6))
        self.assertEqual(one["outliers"]["fleet_arrival_rate"], 234 / 240)
        self.assertEqual(one["outliers"]["devices_tested"], 2)
        self.assertEqual(listed(one), [("B", 40, 34)])
        self.assertEqual(one["outliers"]["devices"][0]["p_value"], float(p_b))
        ten = report([rec for i in range(10) for rec in activity(f"G{i}", f"G{i}", rendered=20, start=100 * i)]
                     + activity("B", "B", rendered=34, lost=6))
        self.assertEqual(ten["outliers"]["fleet_arrival_rate"], 234 / 240)
        self.assertEqual(ten["outliers"]["devices_tested"], 11)
        self.assertEqual(ten["outliers"]["devices"], [])


class WhoIsTested(unittest.TestCase):
    def test_nineteen_deliverable_updates_are_never_tested(self):
        # G: 100 rendered. D19: 19 lost and 6 rejected (25 sent, 19 deliverable). D20: 20 lost.
        # p0 = 100/139. Tested: G and D20 (m = 2). D19, with k = 0, would be far below (0.28^19), but is not
        # tested: it neither counts in m nor is listed. D20: (39/139)^20 ~ 1e-11 <= 0.001/2: listed.
        records = activity("G", "G", rendered=100) + activity("D19", "D19", lost=19, rejected=6)
        records += activity("D20", "D20", lost=20)
        r = report(records)
        self.assertEqual(r["outliers"]["fleet_arrival_rate"], 100 / 139)
        self.assertEqual(r["outliers"]["devices_tested"], 2)
        self.assertEqual(listed(r), [("D20", 20, 0)])
        self.assertEqual(r["outliers"]["devices"][0]["p_value"], float(tail(0, 20, 100 / 139)))
        # Were D19 tested, it would be listed: its tail is far below 0.001/3.
        self.assertLess(tail(0, 19, 100 / 139), Fraction(1, 3000))

    def test_activities_without_device_id_have_no_device(self):
        # G: 40 rendered on device G. N: 40 lost, its records carry no device_id. P: 30 lost, the only
        # device_id near it is on a push_to_start_token callback, which names no activity. p0 = 40/110 (N's
        # and P's updates count in the fleet's rate); the only device is G (k = n): tested 1, listed none.
        records = activity("G", "G", rendered=40) + activity("N", None, lost=40) + activity("P", None, lost=30)
        records.append({"kind": "callback", "callback": "push_to_start_token", "push_token": "pts",
                        "received_at": at(-5), "device_id": "pts-device"})
        r = report(records)
        self.assertEqual(r["outliers"], {"fleet_arrival_rate": 40 / 110, "devices_tested": 1, "devices": []})
        a = ref.analyse(store_of(records).records, True)
        self.assertEqual(a.device_id, {"G": "G"})
        # The same with N on a device of its own: tested 2, and N's device (0 of 40) is listed.
        records = activity("G", "G", rendered=40) + activity("N", "N-dev", lost=40) + activity("P", None, lost=30)
        r = report(records)
        self.assertEqual(r["outliers"]["devices_tested"], 2)
        self.assertEqual(listed(r), [("N-dev", 40, 0)])

    def test_an_empty_string_is_a_device(self):
        # "" is a string like any other device_id (as "" is a key of breakdowns.frequent_pushes): a device.
        r = report(activity("G", "G", rendered=100) + activity("E", "", lost=25))
        self.assertEqual(r["outliers"]["devices_tested"], 2)
        self.assertEqual(listed(r), [("", 25, 0)])


class Order(unittest.TestCase):
    def test_k_over_n_then_n_descending_then_device_id(self):
        # G: 400 rendered. Listed devices:
        #   dev-0:  0 of 25;
        #   dev-2a: two activities, each 1 rendered and 19 lost: 2 of 40;
        #   eight devices with 1 of 20: "DEV-1", "dev-1", "dev-10", "dev-9", "dev-z", "dev-\u00e9",
        #   "dev-\uffff", "dev-\U0001F600".
        # p0 = 410/625 = 0.656; m = 11; every one of the ten far below (1 of 20: ~2e-8 <= 0.001/11).
        # Order: k/n ascending, exactly (2/40 = 1/20: a tie), then n descending (dev-2a before the n = 20
        # ones), then device_id by code point: "D" < "d"; "dev-1" < "dev-10" (a prefix first) < "dev-9" <
        # "dev-z" < "dev-é" (U+00E9) < "dev-\uffff" < "dev-😀" (U+1F600; in UTF-16 it would come before
        # U+FFFF). Not by p_value: dev-0's (0.344^25, ~2.6e-12) is larger than dev-2a's (~8.4e-16).
        ones = ["dev-9", "dev-\U0001F600", "dev-z", "dev-10", "DEV-1", "dev-\uffff", "dev-1", "dev-\u00e9"]
        records = activity("G", "G", rendered=400)
        records += activity("Z", "dev-0", lost=25)
        records += activity("T1", "dev-2a", rendered=1, lost=19) + activity("T2", "dev-2a", rendered=1, lost=19)
        for i, device in enumerate(ones):
            records += activity(f"O{i}", device, rendered=1, lost=19)
        r = report(records)
        p0 = 410 / 625
        self.assertEqual(r["outliers"]["fleet_arrival_rate"], p0)
        self.assertEqual(r["outliers"]["devices_tested"], 11)
        self.assertEqual(listed(r), [("dev-0", 25, 0), ("dev-2a", 40, 2)] + [
            (d, 20, 1) for d in ["DEV-1", "dev-1", "dev-10", "dev-9", "dev-z", "dev-\u00e9", "dev-\uffff",
                                 "dev-\U0001F600"]])
        p = [d["p_value"] for d in r["outliers"]["devices"]]
        self.assertEqual(p[:3], [float(tail(0, 25, p0)), float(tail(2, 40, p0)), float(tail(1, 20, p0))])
        self.assertGreater(p[0], p[1])
        self.assertEqual(len(set(p[2:])), 1)

    def test_the_json_escapes_the_ids_it_sorted(self):
        # Through the command line: ids outside ASCII come back as written (json escapes them).
        records = activity("G", "G", rendered=100) + activity("X", "dev-\U0001F600", lost=25)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "records.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(json.dumps(rec) + "\n" for rec in records))
            out = subprocess.run([sys.executable, os.path.join(HERE, "arrival_reference.py"), path],
                                 check=True, capture_output=True, text=True).stdout
        self.assertEqual(json.loads(out)["outliers"]["devices"][0]["device_id"], "dev-\U0001F600")


class Edges(unittest.TestCase):
    def test_p0_one(self):
        # Everything rendered: p0 = 1; every device has k = n, so its p_value is 1: none listed.
        r = report(activity("A", "d1", rendered=20) + activity("B", "d2", rendered=30))
        self.assertEqual(r["outliers"], {"fleet_arrival_rate": 1.0, "devices_tested": 2, "devices": []})
        # The contract's words: when p0 = 1, 1 if k = n and 0 otherwise.
        self.assertEqual(ref.binomial_tail_at_most(30, 30, Fraction(1)), 1)
        self.assertEqual(ref.binomial_tail_at_most(29, 30, Fraction(1)), 0)
        self.assertEqual(ref.binomial_tail_at_most(0, 30, Fraction(1)), 0)

    def test_p0_zero(self):
        # Nothing rendered: p0 = 0 (not null: there are deliverable updates); both devices tested, both
        # with p_value 1 > 0.001/2: none listed.
        r = report(activity("A", "d1", lost=20) + activity("B", "d2", lost=30))
        self.assertEqual(r["outliers"], {"fleet_arrival_rate": 0.0, "devices_tested": 2, "devices": []})
        for k in (0, 5, 30):
            self.assertEqual(ref.binomial_tail_at_most(k, 30, Fraction(0)), 1)

    def test_p0_null(self):
        # No deliverable update in the window: p0 null, nothing tested, even a device with 25 updates sent.
        self.assertEqual(report([])["outliers"], EMPTY)
        self.assertEqual(report(activity("A", "d1", rejected=25))["outliers"], EMPTY)
        # A window holding none of the updates.
        records = activity("G", "G", rendered=30) + activity("B", "B", lost=30)
        self.assertEqual(report(records, window=(ms(1000), ms(2000)))["outliers"], EMPTY)

    def test_only_superseded_in_the_window(self):
        # p0 is the window's rate: superseded updates in the window whose rendered successor is after it
        # make p0 = 0, not null. A: seqs 1-25 at 1-25 s, not rendered; seq 26 at 100 s rendered (outside
        # the window [0, 50 s)): the 25 are superseded, deliverable, not rendered: k = 0 of n = 25.
        records = [callback("activity_state", 0.5, "A", state="active", device_id="d")]
        records += [apns(s, s, "A") for s in range(1, 26)] + [apns(26, 100, "A"), render(26, 100.5, "A")]
        r = report(records, window=(ms(0), ms(50)))
        self.assertEqual(r["outliers"], {"fleet_arrival_rate": 0.0, "devices_tested": 1, "devices": []})

    def test_the_exact_tail(self):
        # Hand values: p0 = 1/2, n = 20: P(X <= 0) = 2^-20, P(X <= 1) = 21 / 2^20; p0 = 1/4, n = 2:
        # P(X <= 1) = 1 - 1/16.
        self.assertEqual(ref.binomial_tail_at_most(0, 20, Fraction(1, 2)), Fraction(1, 2 ** 20))
        self.assertEqual(ref.binomial_tail_at_most(1, 20, Fraction(1, 2)), Fraction(21, 2 ** 20))
        self.assertEqual(ref.binomial_tail_at_most(1, 2, Fraction(1, 4)), Fraction(15, 16))
        self.assertEqual(ref.binomial_tail_at_most(20, 20, Fraction(0.3)), 1)
        # Against the formula written out, on doubles as the report holds them.
        for n in (1, 2, 19, 20, 21, 57):
            for p0 in (0.1, 205 / 230, 1 / 3, 0.5, 0.999):
                for k in range(n + 1):
                    self.assertEqual(ref.binomial_tail_at_most(k, n, Fraction(p0)), tail(k, n, p0), (k, n, p0))

    def test_a_tail_the_double_cannot_hold_is_still_compared_exactly(self):
        # G: 3,000 rendered, B: 1 rendered and 2,999 lost. p0 = 3001/6000; B's tail is ~1e-900: the double
        # is 0.0, and the exact value (not 0.0) is what is compared with 0.001/2.
        r = report(activity("G", "G", rendered=3000) + activity("B", "B", rendered=1, lost=2999))
        self.assertEqual(listed(r), [("B", 3000, 1)])
        self.assertEqual(r["outliers"]["devices"][0]["p_value"], 0.0)


class DeviceEvidence(unittest.TestCase):
    def test_earliest_record_carrying_device_id_and_the_smallest_on_a_tie(self):
        # G: 100 rendered on device G.
        # X: 25 lost (at 21-45 s). Its records: an activity_state callback at 1 s without device_id, a
        #    push_token callback at 5 s with "d-early", an activity_state callback at 10 s with "d-late":
        #    the earliest carrying one, "d-early" (a device_id that changes later does not move X).
        # Y: seq 1 rendered (request at 2 s, render at 5 s with "d-b"), a content_update callback for it at
        #    5 s with "d-a"; seqs 2-26 lost: the render and the callback tie at 5 s: the smallest, "d-a".
        # Z: 5 lost; its one record carrying a device_id, "d-early", comes at 500 s: Z is on X's device.
        # Devices: G (100 of 100), d-early (X and Z: 0 of 30), d-a (1 of 26); "d-late" and "d-b" are no
        # activity's device. p0 = 101/156; m = 3; listed: d-early (0/30), then d-a (1/26).
        records = activity("G", "G", rendered=100)
        records += [callback("activity_state", 1, "X", state="active"),
                    callback("push_token", 5, "X", push_token="tok-X", device_id="d-early"),
                    callback("activity_state", 10, "X", state="active", device_id="d-late")]
        records += [apns(s, 20 + s, "X") for s in range(1, 26)]
        records += [apns(1, 2, "Y"), render(1, 5, "Y", device_id="d-b"),
                    callback("content_update", 5, "Y", seq=1, device_id="d-a")]
        records += [apns(s, 20 + s, "Y") for s in range(2, 27)]
        records += [apns(s, 100 + s, "Z") for s in range(1, 6)]
        records.append(callback("activity_state", 500, "Z", state="active", device_id="d-early"))
        a = ref.analyse(store_of(records).records, True)
        self.assertEqual(a.device_id, {"G": "G", "X": "d-early", "Y": "d-a", "Z": "d-early"})
        r = report(records)
        p0 = 101 / 156
        self.assertEqual(r["outliers"]["fleet_arrival_rate"], p0)
        self.assertEqual(r["outliers"]["devices_tested"], 3)
        self.assertEqual(listed(r), [("d-early", 30, 0), ("d-a", 26, 1)])
        self.assertEqual([d["p_value"] for d in r["outliers"]["devices"]],
                         [float(tail(0, 30, p0)), float(tail(1, 26, p0))])
        # The device's block holds X's and Z's updates: Z's 5 losses are `unexplained` (Z's callback at
        # 500 s comes after them), X's 25 `device_silent`.
        self.assertEqual(r["outliers"]["devices"][0]["updates"]["lost_by_cause"],
                         {"not_rendered": 0, "old_token": 0, "closed_later": 0, "device_silent": 25,
                          "unexplained": 5})


class Windows(unittest.TestCase):
    # B: 100 rendered at 1-100 s, then 25 lost at 101-125 s. G: 100 rendered at 201-300 s. W: 25 lost at
    # 131-155 s; its only device_id comes on a callback at 10,000 s. S: 15 lost at 161-175 s and 15 more at
    # 501-515 s.
    RECORDS = (activity("B", "B-dev", rendered=100, lost=25) + activity("G", "G-dev", rendered=100, start=200)
               + [apns(s, 130 + s, "W") for s in range(1, 26)]
               + [callback("activity_state", 10_000, "W", state="active", device_id="W-dev")]
               + activity("S", "S-dev", lost=15, start=160) + [apns(s, 485 + s, "S") for s in range(16, 31)])

    def test_only_the_windows_updates_count(self):
        # Window [100.5 s, 400 s): B's 25 losses, G's 100 renders, W's 25 losses, S's first 15.
        # p0 = 100/165. Tested: B-dev (0 of 25), G-dev, W-dev (0 of 25; its evidence, after the window,
        # counts as os_version's does); S-dev has 15: not tested. m = 3. Listed: B-dev and W-dev, tied on
        # k/n and n: by device_id.
        r = report(self.RECORDS, window=(ms(100.5), ms(400)))
        self.assertEqual(r["outliers"]["fleet_arrival_rate"], r["updates"]["arrival_rate"])
        self.assertEqual(r["outliers"]["fleet_arrival_rate"], 100 / 165)
        self.assertEqual(r["outliers"]["devices_tested"], 3)
        self.assertEqual(listed(r), [("B-dev", 25, 0), ("W-dev", 25, 0)])
        self.assertEqual(r["outliers"]["devices"][0]["updates"]["sent"], 25)

    def test_all_data(self):
        # All data: p0 = 200/280. B-dev: 100 of 125, P(X <= 100) ~ 0.99 (the fleet's rate is lower): not
        # listed. S-dev now has 30: tested and listed (0 of 30) before W-dev (0 of 25): n descending. m = 4.
        r = report(self.RECORDS)
        self.assertEqual(r["outliers"]["fleet_arrival_rate"], 200 / 280)
        self.assertEqual(r["outliers"]["devices_tested"], 4)
        self.assertEqual(listed(r), [("S-dev", 30, 0), ("W-dev", 25, 0)])


class Contracts(unittest.TestCase):
    RECORDS = activity("G", "G", rendered=100) + activity("B", "B", lost=25)

    def test_31_and_30_have_no_outliers(self):
        r32 = report(self.RECORDS)
        r31 = report(self.RECORDS, contract="3.1")
        r30 = report(self.RECORDS, contract="3.0")
        self.assertNotIn("outliers", r31)
        self.assertNotIn("outliers", r30)
        # 3.2 is 3.1 with `outliers` after `latency_ms`, before `data_quality`; nothing else moves.
        self.assertEqual(list(r32), ["schema", "window", "requests", "updates", "starts", "callbacks", "latency_ms",
                                     "outliers", "data_quality", "breakdowns"])
        self.assertEqual(list(r31), [k for k in r32 if k != "outliers"])
        self.assertEqual(json.dumps({k: v for k, v in r32.items() if k != "outliers"}), json.dumps(r31))
        self.assertEqual(list(r32["outliers"]), ["fleet_arrival_rate", "devices_tested", "devices"])
        self.assertEqual(listed(r32), [("B", 25, 0)])

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "records.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(json.dumps(rec) + "\n" for rec in self.RECORDS))

            def run(*args):
                return subprocess.run([sys.executable, os.path.join(HERE, "arrival_reference.py"), *args, path],
                                      check=True, capture_output=True, text=True).stdout

            default, r32, r31, r30 = run(), run("--contract", "3.2"), run("--contract", "3.1"), run("--contract", "3.0")
        self.assertEqual(default, r32)
        self.assertEqual(list(json.loads(r32)), ["schema", "window", "requests", "updates", "starts", "callbacks",
                                                 "latency_ms", "outliers", "data_quality", "breakdowns"])
        self.assertEqual(json.loads(r32)["outliers"]["devices"][0]["device_id"], "B")
        for out in (r31, r30):
            self.assertNotIn("outliers", json.loads(out))
        # The 3.1 text is the 3.2 text without the outliers block.
        without = {k: v for k, v in json.loads(r32).items() if k != "outliers"}
        self.assertEqual(json.dumps(without, indent=2) + "\n", r31)


if __name__ == "__main__":
    unittest.main()

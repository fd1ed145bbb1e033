#!/usr/bin/env python3
"""Writes a small, dense and deliberately awkward broadcast fleet (contract
3.0) for cross-checking arrival against the reference implementation:
channels with many broadcasts, direct pushes that share seqs with
broadcasts (ties in every field up to the channel), subscribers known only
from renders or only from callbacks, activities on two channels,
broadcasts at the very instants of starts, ends, dismissals and the 8-hour
limit, broadcast `end` events, seq-less and rejected broadcasts, oversize
payloads on both sides of the broadcast limit, stale timestamps, renders of
updates no request made, exchanges to `/4/broadcasts/apps/...`, and damaged
broadcast lines (a token or activity on a broadcast, an empty channel, a
subscription without its channel). Times fall on a few instants so that
ties happen. Standard library only:

    python3 Scripts/reference/broadcast_fleet.py OUT_DIR [--seed N] [--activities N]
"""
import argparse
import json
import os
import random

T0 = 1795248000000  # 2026-11-21T00:00:00Z in ms
HOUR = 3_600_000


def iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    import datetime
    t = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--activities", type=int, default=120)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    sender, device, exchanges = [], [], []
    channels = [f"ch-{k}" for k in range(4)] + ["Ch-é"]
    topics = ["com.example.sports.push-type.liveactivity", "com.example.news.push-type.liveactivity", None]
    # Instants on a coarse grid (whole minutes, sometimes the same one) make ties likely.
    grid = lambda lo, hi: T0 + rng.randrange(lo, hi) * 60_000  # noqa: E731

    # Broadcasts: per channel a run of seqs, some at the same instant, some repeated (retries).
    broadcast_seqs = {}
    for channel in channels:
        seqs = list(range(1, rng.randrange(4, 14)))
        broadcast_seqs[channel] = seqs
        for seq in seqs:
            for attempt in range(rng.choice([1, 1, 1, 2])):
                sent = grid(0, 14 * 60)
                status = rng.choice([200] * 8 + [400, 413, 429, 0])
                size = rng.choice([300, 3600, 4700, 5200])
                record = {"kind": "apns", "apns_id": rng.choice([f"b-{channel}-{seq}", f"b-{seq}", "same"]),
                          "sent_at": iso(sent), "status": status, "seq": seq,
                          "event": rng.choice(["update"] * 8 + ["end", "start"]),
                          "aps_timestamp": 1795248000 + seq * rng.choice([1, 1, 1, -1]),
                          "payload_bytes": size, "channel_id": channel,
                          "priority": rng.choice([None, 5, 10])}
                topic = rng.choice(topics)
                if topic is not None:
                    record["topic"] = topic
                if status == 413:
                    record["reason"] = "PayloadTooLarge"
                elif status not in (200, 0):
                    record["reason"] = rng.choice(["BadRequest", "", "TooManyRequests"])
                if rng.random() < 0.3:
                    exchanges.append(exchange_of(record, rng))
                else:
                    sender.append(record)
        # A seq-less broadcast, and one sent long after everything (no subscriber open).
        sender.append({"kind": "apns", "apns_id": f"noseq-{channel}", "sent_at": iso(grid(0, 600)), "status": 200,
                       "aps_timestamp": 1795248000, "channel_id": channel})
        sender.append({"kind": "apns", "apns_id": f"late-{channel}", "sent_at": iso(T0 + 30 * HOUR), "status": 200,
                       "seq": 99, "aps_timestamp": 1795249000, "channel_id": channel})
    # A broadcast to a channel nobody follows.
    sender.append({"kind": "apns", "apns_id": "nobody", "sent_at": iso(T0 + HOUR), "status": 200, "seq": 1,
                   "aps_timestamp": 1795248001, "channel_id": "ch-nobody"})

    for n in range(args.activities):
        activity = f"act-{n:04d}"
        token = f"{n:064x}"
        start = grid(0, 10 * 60)
        follows = rng.sample(channels, rng.choice([0, 1, 1, 1, 2]))
        for channel in follows:
            how = rng.random()
            if how < 0.5:
                device.append({"kind": "callback", "callback": "channel_subscription", "activity_id": activity,
                               "channel_id": channel, "received_at": iso(start)})
            # Renders of broadcast seqs (some carry the channel, some not; some early, some late).
            for seq in broadcast_seqs[channel]:
                if rng.random() < 0.5:
                    render = {"kind": "render", "activity_id": activity, "seq": seq,
                              "rendered_at": iso(grid(0, 15 * 60)), "surface": "lock_screen"}
                    if how >= 0.5 or rng.random() < 0.3:
                        render["channel_id"] = channel
                    device.append(render)
                if rng.random() < 0.3:
                    device.append({"kind": "callback", "callback": "content_update", "activity_id": activity,
                                   "seq": seq, "received_at": iso(grid(0, 15 * 60)),
                                   **({"channel_id": channel} if rng.random() < 0.5 else {})})
        if rng.random() < 0.6:
            device.append({"kind": "callback", "callback": "push_token", "activity_id": activity, "push_token": token,
                           "received_at": iso(start + rng.choice([0, 60_000]))})
        # Direct pushes, some with seqs a broadcast also carries.
        for seq in rng.sample(range(1, 12), rng.randrange(0, 4)):
            sent = rng.choice([start, grid(0, 14 * 60)])
            sender.append({"kind": "apns", "apns_id": rng.choice([f"d-{n}-{seq}", "same", f"b-{seq}"]),
                           "sent_at": iso(sent), "status": rng.choice([200, 200, 200, 410]),
                           "push_token": token, "activity_id": rng.choice([activity, None]), "seq": seq,
                           "event": rng.choice(["update", "update", "start", "end"]),
                           "aps_timestamp": 1795248000 + seq, "payload_bytes": rng.choice([200, 3700]),
                           **({"topic": topics[0]} if rng.random() < 0.7 else {})})
            if rng.random() < 0.5:
                device.append({"kind": "render", "activity_id": activity, "seq": seq,
                               "rendered_at": iso(sent + rng.choice([-1000, 500, 90_000]))})
        fate = rng.random()
        if fate < 0.2:
            device.append({"kind": "callback", "callback": "activity_state", "activity_id": activity,
                           "state": "dismissed", "received_at": iso(grid(0, 14 * 60))})
        elif fate < 0.4:
            device.append({"kind": "callback", "callback": "activity_state", "activity_id": activity,
                           "state": "ended", "received_at": iso(grid(0, 14 * 60))})
        elif fate < 0.45:
            # Started more than 8 hours before some broadcasts.
            device.append({"kind": "callback", "callback": "activity_state", "activity_id": activity,
                           "state": "active", "received_at": iso(T0 - 6 * HOUR)})

    # Broadcasts at the very edges of openness, for some subscribers: at the instant of their start
    # (open), 8 hours after it (open) and a millisecond more (closed), at their dismissal or `ended`
    # callback (closed) and a millisecond before (open). The seqs are new ones, past the others.
    first_seen, closed_at, first_channel = {}, {}, {}
    for record in device:
        moment = parse(record.get("rendered_at") or record["received_at"])
        activity = record["activity_id"]
        first_seen[activity] = min(first_seen.get(activity, moment), moment)
        if record.get("state") in ("dismissed", "ended"):
            closed_at[activity] = moment
        if record.get("channel_id") and activity not in first_channel:
            first_channel[activity] = record["channel_id"]
    edge_seq = 200
    for activity in sorted(first_channel):
        if rng.random() < 0.5:
            continue
        start = first_seen[activity]
        edges = [start, start + 8 * HOUR, start + 8 * HOUR + 1]
        if activity in closed_at:
            edges += [closed_at[activity], closed_at[activity] - 1]
        for moment in edges:
            edge_seq += 1
            sender.append({"kind": "apns", "apns_id": f"edge-{edge_seq}", "sent_at": iso(moment), "status": 200,
                           "seq": edge_seq, "aps_timestamp": 1795249000 + edge_seq,
                           "channel_id": first_channel[activity]})

    damaged = [
        '{"kind":"apns","apns_id":"x","sent_at":"2026-11-21T01:00:00Z","status":200,"push_token":"ab",'
        '"aps_timestamp":1,"seq":1,"channel_id":"ch-0"}',
        '{"kind":"apns","apns_id":"x","sent_at":"2026-11-21T01:00:00Z","status":200,"activity_id":"a",'
        '"aps_timestamp":1,"seq":1,"channel_id":"ch-0"}',
        '{"kind":"apns","apns_id":"x","sent_at":"2026-11-21T01:00:00Z","status":200,'
        '"aps_timestamp":1,"seq":1,"channel_id":""}',
        '{"kind":"apns","apns_id":"x","sent_at":"2026-11-21T01:00:00Z","status":200,"push_token":"ab",'
        '"aps_timestamp":1,"seq":1,"channel_id":7}',
        '{"kind":"render","activity_id":"a","seq":1,"rendered_at":"2026-11-21T01:00:00Z","channel_id":""}',
        '{"kind":"callback","callback":"channel_subscription","activity_id":"a",'
        '"received_at":"2026-11-21T01:00:00Z"}',
        '{"kind":"callback","callback":"channel_subscription","activity_id":"a","channel_id":"",'
        '"received_at":"bad"}',
        '{"kind":"exchange","provider":"apns","sent_at":"2026-11-21T01:00:00Z","request":{"url":'
        '"https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example","headers":{},'
        '"body":"{\\"aps\\":{\\"timestamp\\":1}}"},"response":{"status":200}}',
        '{"kind":"exchange","provider":"apns","sent_at":"2026-11-21T01:00:00Z","activity_id":"a","request":{"url":'
        '"/4/broadcasts/apps/com.example","headers":{"apns-channel-id":"ch-0"},'
        '"body":"{\\"aps\\":{\\"timestamp\\":1}}"},"response":{"status":200}}',
    ]
    rng.shuffle(sender)
    rng.shuffle(device)
    with open(os.path.join(args.out, "sender.jsonl"), "w") as f:
        for record in sender:
            f.write(json.dumps({k: v for k, v in record.items() if v is not None}) + "\n")
        for line in damaged:
            f.write(line + "\n")
    with open(os.path.join(args.out, "sender-exchanges.jsonl"), "w") as f:
        for line in exchanges:
            f.write(json.dumps(line) + "\n")
    with open(os.path.join(args.out, "device.jsonl"), "w") as f:
        for record in device:
            f.write(json.dumps(record) + "\n")


def parse(text: str) -> int:
    """The milliseconds of a time this script wrote."""
    import datetime
    moment = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return round(moment.timestamp() * 1000)


def exchange_of(record: dict, rng: random.Random) -> dict:
    """The broadcast `record` as a raw `/4/broadcasts/apps/...` exchange."""
    aps = {"timestamp": record["aps_timestamp"], "event": record["event"],
           "content-state": {"seq": record["seq"]}}
    body = json.dumps({"aps": aps})
    headers = {"apns-channel-id": record["channel_id"], "apns-push-type": "liveactivity",
               "apns-request-id": record["apns_id"]}
    if "topic" in record:
        headers["apns-topic"] = record["topic"]
    if record.get("priority") is not None:
        headers["apns-priority"] = str(record["priority"])
    host = rng.choice(["https://api-broadcast.push.apple.com", "https://api-broadcast.sandbox.push.apple.com", ""])
    response = None
    if record["status"] != 0:
        response = {"status": record["status"], "headers": {"apns-request-id": record["apns_id"]}}
        if record.get("reason"):
            response["body"] = json.dumps({"reason": record["reason"]})
    return {"kind": "exchange", "provider": "apns", "sent_at": record["sent_at"],
            "request": {"url": f"{host}/4/broadcasts/apps/com.example.sports", "headers": headers, "body": body},
            "response": response, **({"error": "timeout"} if response is None else {})}


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes a dense and deliberately awkward fleet for contract 3.1 (the
priority-10 budget, the "More Frequent Updates" switch, no update token
through a channel) for cross-checking arrival against the reference
implementation. Deterministic by seed; standard library only:

    python3 Scripts/reference/budget_fleet.py OUT_DIR [SEED] [--seed N] [--activities N]

SEED (positional) and --seed are the same thing (default 1); give either.
It writes, like broadcast_fleet.py, three JSON Lines files in OUT_DIR:
  sender.jsonl            the senders' `apns` records (direct and broadcast),
                          then a few damaged lines;
  sender-exchanges.jsonl  more of the same requests written as raw `apns`
                          exchanges (`/3/device/<token>` and
                          `/4/broadcasts/apps/<bundle id>`, the priority in
                          the `apns-priority` header, sometimes as "010");
  device.jsonl            render beacons and callbacks, some lines twice
                          (re-uploaded), and a few damaged lines
                          (a `frequent_pushes` that is not a string).

What the fleet holds:
  * chatty senders: activities updated every 30-120 s for hours (some on an
    exact 30, 60, 90 or 120 s cadence, so that an update falls exactly
    3,600,000 ms after another one, and some of them for more than 8 hours),
    mostly priority 10, priority-5 and priority-less updates mixed in (the
    exact-cadence ones send only priority 10 and retry until accepted, so
    the count of the hour before reaches 120); calm activities updated
    every few minutes;
  * a device-side budget of priority-10 pushes per activity and hour: an
    update accepted at t is never delivered (so never rendered) when the
    activity already had `budget` or more priority-10 pushes accepted in
    [t - 1 h, t). A priority-less push is priority 10 to APNs, so the device
    counts it (the report does not). The budget is lower while the user's
    switch is off: such activities write `frequent_pushes: "disabled"` on
    their beacons and callbacks; some switch flips mid-way (the records
    then change value; the report keys the activity by its earliest one),
    some devices never write the field (an older app), some write a string
    the contract does not name ("restricted", "Enabled", "notDetermined");
    a few write a render and a callback at the very same instant with
    different values (the smallest wins);
  * requests APNs rejects (429, 500, 403, no response), some retried with a
    new apns-id, some never accepted; token rotations the sender follows
    late; devices that stop uploading; ends by push, by the app, dismissals
    and activities left to pass their 8-hour limit; duplicate sends at one
    instant (same-second aps timestamps, so stale ones);
  * channel-subscribed activities (broadcasts on three channels, priority
    10 and 5), known by a channel_subscription callback or only by the
    channel_id on their renders, some of them with direct priority-10
    pushes too, a few with an update token all the same;
  * extra updates at the very instants of the cross-check's windows
    (2026-11-21T00:00:00Z, 05:30:00Z, 13:15:00.250Z, 2026-11-22T00:00:00Z)
    and activities that start before the first window, so updates outside a
    window count toward the hour before updates inside it.
"""
import argparse
import bisect
import datetime
import json
import os
import random

T0 = 1795248000000  # 2026-11-21T00:00:00Z in ms
SECOND = 1000
MINUTE = 60_000
HOUR = 3_600_000
EIGHT_HOURS = 8 * HOUR
# The instants where crosscheck.sh's windows begin and end.
EDGES = [T0, T0 + 5 * HOUR + 30 * MINUTE, T0 + 13 * HOUR + 15 * MINUTE + 250, T0 + 24 * HOUR]
TOPICS = ["com.example.sports.push-type.liveactivity", "com.example.rides.push-type.liveactivity"]
CHANNELS = ["match-1", "match-2", "match-3"]
OS_VERSIONS = ["18.6", "26.0", "26.1"]
APP_VERSIONS = ["4.1.0", "4.2.0"]
UNNAMED_SWITCH = ["restricted", "Enabled", "notDetermined"]


def iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    t = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


class Activity:
    """One Live Activity on one device, and what its device does."""

    def __init__(self, n: int, rng: random.Random, kind: str) -> None:
        self.id = f"bud-{n:04d}"
        self.kind = kind                       # chatty, calm or subscribed
        self.token = f"{n:04x}" + "a" * 60
        self.topic = rng.choice(TOPICS)
        self.device = f"device-{n % 97:03d}"
        self.os_version = rng.choice(OS_VERSIONS)
        self.app_version = rng.choice(APP_VERSIONS)
        # Starts from two hours before the day to 14:00, on a whole second or not.
        self.start = T0 + rng.randrange(-2 * 3600, 14 * 3600) * SECOND
        if rng.random() < 0.4:
            self.start += rng.randrange(1, 1000)
        hours = rng.uniform(1.5, 9.5) if kind == "chatty" else rng.uniform(0.5, 6)
        self.life_end = self.start + int(hours * HOUR)
        # The user's switch: on, off, or a value the contract does not name; some flip mid-way.
        self.switch = rng.choices(["enabled", "disabled", "unnamed"], weights=[55, 30, 15])[0]
        if self.switch == "unnamed":
            self.switch = rng.choice(UNNAMED_SWITCH)
        self.flip_at = None
        self.flip_to = None
        if rng.random() < 0.2:
            self.flip_at = self.start + rng.randrange(10 * MINUTE, max(11 * MINUTE, self.life_end - self.start))
            self.flip_to = "enabled" if self.switch == "disabled" else "disabled"
        # Which records carry the field: all, none (an older app), or only the app's callbacks.
        self.field_mode = rng.choices(["all", "none", "callbacks"], weights=[70, 15, 15])[0]
        # A tie at the first instant: the widget and the app disagree.
        self.tie = self.field_mode == "all" and rng.random() < 0.15
        # Priority-10 pushes the device takes per hour, switch on and off.
        self.budget_on = rng.randrange(40, 101)
        self.budget_off = rng.randrange(6, 21)
        # Some devices stop uploading at some point.
        self.upload_cutoff = None
        if rng.random() < 0.1:
            self.upload_cutoff = self.start + rng.randrange(0, self.life_end - self.start + 1)
        self.channel = rng.choice(CHANNELS) if kind == "subscribed" else None
        # A metronome: a chatty sender on an exact cadence, every update priority 10 and retried
        # until accepted (so an update falls exactly an hour after another, and n reaches 120).
        self.metronome = kind == "chatty" and rng.random() < 0.35
        self.device_records: list = []

    def switch_at(self, t: int) -> str:
        if self.flip_at is not None and t >= self.flip_at:
            return self.flip_to
        return self.switch

    def budget_at(self, t: int) -> int:
        return self.budget_off if self.switch_at(t) == "disabled" else self.budget_on

    def emit(self, record: dict, t: int, rng: random.Random, switch=None) -> None:
        """A record of this device at `t`, with what the device adds to it."""
        if self.upload_cutoff is not None and t > self.upload_cutoff:
            return  # written, never uploaded
        record = dict(record)
        if rng.random() < 0.9:
            record["device_id"] = self.device
            record["os_version"] = self.os_version
            record["app_version"] = self.app_version
        if self.field_mode == "all" or (self.field_mode == "callbacks" and record["kind"] == "callback"):
            record["frequent_pushes"] = switch if switch is not None else self.switch_at(t)
        self.device_records.append(record)

    def render(self, seq: int, t: int, rng: random.Random, channel=None) -> None:
        for surface in rng.sample(["lock_screen", "island_compact", "island_expanded", "standby"],
                                  rng.choice([1, 1, 2, 3])):
            at = t + rng.choice([0, 0, 0, 40, 250])
            record = {"kind": "render", "activity_id": self.id, "seq": seq, "rendered_at": iso(at),
                      "surface": surface}
            if channel is not None:
                record["channel_id"] = channel
            self.emit(record, at, rng)

    def callback(self, name: str, t: int, rng: random.Random, switch=None, **fields) -> None:
        self.emit({"kind": "callback", "callback": name, "activity_id": self.id, "received_at": iso(t), **fields},
                  t, rng, switch)


def update_times(act: Activity, rng: random.Random) -> list:
    """When the sender sends this activity's updates (sorted; repeats allowed)."""
    times = []
    if act.kind == "chatty":
        fixed = act.metronome
        step = rng.choice([30, 30, 60, 90, 120]) * SECOND
        t = act.start + (step if fixed else rng.randrange(30_000, 120_001))
        while t < act.life_end:
            times.append(t)
            t += step if fixed else rng.randrange(30_000, 120_001)
    else:
        t = act.start + rng.randrange(1, 20) * MINUTE
        while t < act.life_end:
            times.append(t + rng.randrange(0, 1000))
            t += rng.randrange(3, 21) * MINUTE
    extras = []
    for x in times:
        r = rng.random()
        if r < 0.03:
            extras.append(x + HOUR)          # exactly an hour after another update
        elif r < 0.05:
            extras.append(x)                 # the same instant as another update
    for edge in EDGES:                       # on the cross-check's window bounds
        if act.start < edge < act.life_end and rng.random() < 0.6:
            extras.append(edge)
    times += [x for x in extras if x < act.life_end + 10 * MINUTE]
    # Some senders go on after the end (those updates are ended or dismissed).
    if rng.random() < 0.15:
        times += [act.life_end + rng.randrange(1, 10 * MINUTE) for _ in range(rng.randrange(1, 4))]
    return sorted(times)


def attempts(t: int, rng: random.Random, persistent: bool = False) -> list:
    """(sent_at, status, reason) of one update's requests: retried after a
    rejection, or not; a `persistent` sender retries until one is accepted."""
    out = []
    for attempt in range(4):
        status, reason = rng.choices([(200, None), (429, "TooManyRequests"), (500, "InternalServerError"),
                                      (403, "TooManyProviderTokenUpdates"), (0, "timeout"), (0, None)],
                                     weights=[90, 5, 1, 1, 2, 1])[0]
        if persistent and attempt == 3:
            status, reason = 200, None
        out.append((t, status, reason))
        if status == 200 or (not persistent and rng.random() < 0.35):
            break
        t += rng.randrange(1, 6) * SECOND
    return out


def priority_for(kind: str, rng: random.Random):
    if kind == "chatty":
        return rng.choices([10, 5, None], weights=[85, 10, 5])[0]
    return rng.choices([10, 5, None], weights=[50, 40, 10])[0]


class Sender:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.records: list = []
        self.exchanges: list = []
        self.ids = 0

    def send(self, record: dict) -> None:
        self.ids += 1
        record = {"kind": "apns", "apns_id": f"req-{self.ids:06d}", **record}
        if self.rng.random() < 0.2:
            self.exchanges.append(exchange_of(record, self.rng))
        else:
            self.records.append(record)


def simulate_direct(act: Activity, sender: Sender, rng: random.Random, first_seq: int = 0) -> None:
    """The direct pushes of one activity and what its device makes of them."""
    pushed_start = rng.random() < 0.5
    has_token = act.kind != "subscribed" or rng.random() < 0.2
    # The start: by a push-to-start (seq first_seq; for a subscribed activity one carrying
    # input-push-channel), or by the app (its first render).
    if act.kind != "subscribed" or pushed_start:
        if act.tie and act.kind != "subscribed":
            # The widget's first render and the app's first callback at the same instant, disagreeing.
            act.emit({"kind": "render", "activity_id": act.id, "seq": first_seq, "rendered_at": iso(act.start),
                      "surface": "lock_screen"}, act.start, rng)
            act.callback("activity_state", act.start, rng, switch="disabled" if act.switch != "disabled"
                         else "enabled", state="active")
        if pushed_start:
            sender.send({"sent_at": act.start, "status": 200, "push_token": "pts-" + act.token[:8],
                         "activity_id": act.id, "seq": first_seq, "event": "start",
                         "aps_timestamp": act.start // 1000, "topic": act.topic, "priority": 10,
                         "payload_bytes": rng.randrange(300, 900)})
        act.render(first_seq, act.start + rng.randrange(100, 3000), rng)
    if has_token:
        if rng.random() < 0.9:
            act.callback("push_token", act.start + rng.randrange(0, 3000), rng, push_token=act.token)
    # A token rotation the sender follows late: pushes in between go to the old token.
    rotation = None
    if has_token and rng.random() < 0.06:
        at = act.start + rng.randrange(0, act.life_end - act.start)
        rotation = (at, at + rng.randrange(1, 11) * MINUTE, act.token[:-4] + "beef")
        act.callback("push_token", at, rng, push_token=rotation[2])

    # What the device shows, the end, and the priority-10 pushes of the last hour.
    ending = rng.choices(["push", "app", "dismissed", "none"], weights=[50, 20, 10, 20])[0]
    # Ended or dismissed on the device: nothing is shown after that.
    ended_at = act.life_end if ending in ("app", "dismissed") else None
    p10_times: list = []
    shown_ts = None
    seq = first_seq
    times = update_times(act, rng) if act.kind != "subscribed" or rng.random() < 0.4 else []
    if act.kind == "subscribed":
        times = [t for t in times if rng.random() < 0.15]   # a direct push now and then
    if ending == "push" and act.kind != "subscribed":
        times.append(act.life_end)
        times.sort()
    for t in times:
        seq += 1
        is_end = ending == "push" and t == act.life_end and act.kind != "subscribed"
        priority = 10 if is_end or act.metronome else priority_for(act.kind, rng)
        token = act.token
        if rotation is not None and t >= rotation[1]:
            token = rotation[2]
        accepted_at = None
        for sent_at, status, reason in attempts(t, rng, act.metronome):
            record = {"sent_at": sent_at, "status": status, "push_token": token, "activity_id": act.id,
                      "seq": seq, "event": "end" if is_end else "update", "aps_timestamp": t // 1000,
                      "topic": act.topic, "payload_bytes": rng.randrange(200, 1200),
                      "latency_ms": rng.randrange(5, 400)}
            if priority is not None:
                record["priority"] = priority
            if reason is not None:
                record["reason"] = reason
            if rng.random() < 0.1:
                del record["activity_id"]    # resolved through the push_token callback
            sender.send(record)
            if status == 200:
                accepted_at = sent_at
                break
        if accepted_at is None:
            continue
        # The device: a pushed-out activity or an old token gets nothing.
        if ended_at is not None and accepted_at > ended_at:
            continue
        if rotation is not None and rotation[0] <= accepted_at and token != rotation[2]:
            continue
        counts = priority != 5 and not is_end
        if counts:
            recent = bisect.bisect_left(p10_times, accepted_at) - bisect.bisect_left(p10_times, accepted_at - HOUR)
            bisect.insort(p10_times, accepted_at)
            if recent >= act.budget_at(accepted_at):
                continue                     # over the budget: never delivered
        if accepted_at - act.start > EIGHT_HOURS:
            continue                         # past the 8-hour limit
        ts = t // 1000
        if not is_end and shown_ts is not None and ts <= shown_ts:
            continue                         # not newer than what it shows
        latency = rng.randrange(1000, 90_000) if priority == 5 else rng.randrange(100, 3000)
        if rng.random() < 0.03:
            latency = -rng.randrange(1, 2000)  # a clock behind
        shown = accepted_at + latency
        fate = rng.random()
        if fate < 0.95:
            act.render(seq, shown, rng)
            shown_ts = ts
            if rng.random() < 0.75:
                act.callback("content_update", shown + rng.randrange(0, 2000), rng, seq=seq)
        elif fate < 0.97:
            # The app saw it, the widget never showed it.
            act.callback("content_update", shown, rng, seq=seq)
        if is_end:
            ended_at = accepted_at
            act.callback("activity_state", shown + rng.randrange(0, 5000), rng, state="ended")
    if ending == "app":
        act.callback("activity_state", act.life_end, rng, state="ended")
    elif ending == "dismissed":
        act.callback("activity_state", act.life_end, rng, state="dismissed")
    if ending in ("push", "app") and rng.random() < 0.3:
        act.callback("activity_state", act.life_end + rng.randrange(1, 240) * MINUTE, rng, state="dismissed")


def simulate_broadcasts(subscribers: list, sender: Sender, rng: random.Random) -> None:
    """Broadcasts on each channel, and the subscribed activities' devices."""
    for channel in CHANNELS:
        t = T0 + 30 * MINUTE + rng.randrange(0, 600) * SECOND
        seq = 0
        while t < T0 + 13 * HOUR:
            seq += 1
            priority = rng.choices([10, 5, None], weights=[80, 15, 5])[0]
            status, reason = rng.choices([(200, None), (429, "TooManyRequests")], weights=[95, 5])[0]
            record = {"sent_at": t, "status": status, "seq": seq, "event": "update",
                      "aps_timestamp": t // 1000, "topic": TOPICS[0], "channel_id": channel,
                      "payload_bytes": rng.randrange(300, 4000)}
            if priority is not None:
                record["priority"] = priority
            if reason is not None:
                record["reason"] = reason
            sender.send(record)
            if status == 200:
                for act in subscribers:
                    if act.channel != channel or not (act.start <= t < act.life_end):
                        continue
                    if rng.random() < 0.9:
                        shown = t + rng.randrange(200, 5000)
                        act.render(seq, shown, rng, channel=channel if act.by_render or rng.random() < 0.3 else None)
                        if rng.random() < 0.5:
                            act.callback("content_update", shown, rng, seq=seq)
            t += rng.randrange(2, 11) * MINUTE + rng.choice([0, rng.randrange(0, 1000)])


def exchange_of(record: dict, rng: random.Random) -> dict:
    """The request `record` as a raw `apns` exchange (contract 2.6)."""
    aps = {"timestamp": record["aps_timestamp"], "event": record["event"], "content-state": {"seq": record["seq"]}}
    body = json.dumps({"aps": aps})
    headers = {"apns-push-type": "liveactivity", "apns-topic": record["topic"], "apns-id": record["apns_id"]}
    if record.get("priority") is not None:
        headers["apns-priority"] = rng.choice([str(record["priority"])] * 4 + ["0" + str(record["priority"])])
    if record.get("channel_id") is not None:
        headers["apns-channel-id"] = record["channel_id"]
        host = rng.choice(["https://api-broadcast.push.apple.com", ""])
        url = f"{host}/4/broadcasts/apps/{record['topic'].split('.push-type')[0]}"
    else:
        host = rng.choice(["https://api.push.apple.com", "https://api.push.apple.com:443", ""])
        url = f"{host}/3/device/{record['push_token']}"
    response = None
    if record["status"] != 0:
        response = {"status": record["status"], "headers": {"apns-id": record["apns_id"]}}
        if record.get("reason"):
            response["body"] = json.dumps({"reason": record["reason"]})
    exchange = {"kind": "exchange", "provider": "apns", "sent_at": iso(record["sent_at"]),
                "request": {"url": url, "headers": headers, "body": body}, "response": response}
    if response is None:
        exchange["error"] = record.get("reason") or "reset"
    if record.get("activity_id") is not None:
        exchange["activity_id"] = record["activity_id"]
    if record.get("latency_ms") is not None:
        exchange["latency_ms"] = record["latency_ms"]
    return exchange


DAMAGED_SENDER = [
    # A priority that is not an int.
    '{"kind":"apns","apns_id":"bad-1","sent_at":"2026-11-21T06:00:00Z","status":200,"push_token":"ab",'
    '"activity_id":"bud-0000","seq":1,"aps_timestamp":1795264800,"priority":"10"}',
]
DAMAGED_DEVICE = [
    # 3.1: a frequent_pushes that is not a string makes the line malformed.
    '{"kind":"render","activity_id":"bud-0000","seq":1,"rendered_at":"2026-11-21T06:00:00Z",'
    '"frequent_pushes":true}',
    '{"kind":"callback","callback":"content_update","activity_id":"bud-0000","seq":1,'
    '"received_at":"2026-11-21T06:00:00Z","frequent_pushes":1}',
    '{"kind":"render","activity_id":"bud-0001","seq":1,"rendered_at":"2026-11-21T06:00:00Z",'
    '"frequent_pushes":["enabled"]}',
    '{"kind":"callback","callback":"push_to_start_token","push_token":"ab","received_at":"2026-11-21T06:00:00Z",'
    '"frequent_pushes":{"enabled":true}}',
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("seed_arg", nargs="?", type=int, metavar="SEED")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--activities", type=int, default=100)
    args = parser.parse_args()
    if args.seed is not None and args.seed_arg is not None and args.seed != args.seed_arg:
        parser.error("SEED and --seed differ")
    seed = args.seed if args.seed is not None else (args.seed_arg if args.seed_arg is not None else 1)
    rng = random.Random(seed)
    os.makedirs(args.out, exist_ok=True)

    sender = Sender(rng)
    activities = []
    for n in range(args.activities):
        kind = rng.choices(["chatty", "calm", "subscribed"], weights=[35, 50, 15])[0]
        act = Activity(n, rng, kind)
        activities.append(act)
        if kind == "subscribed":
            # Known by a channel_subscription callback, or only by the channel_id on its renders.
            act.by_render = rng.random() < 0.25
            if not act.by_render:
                act.callback("channel_subscription", act.start, rng, channel_id=act.channel)
            else:
                act.render(0, act.start, rng, channel=act.channel)
            simulate_direct(act, sender, rng, first_seq=100_000)
        else:
            simulate_direct(act, sender, rng)
    simulate_broadcasts([a for a in activities if a.kind == "subscribed"], sender, rng)

    device = [r for act in activities for r in act.device_records]
    device += rng.sample(device, min(len(device), 20))      # uploaded twice
    rng.shuffle(device)
    sender_records = sender.records
    rng.shuffle(sender_records)

    def line(record: dict) -> str:
        record = dict(record)
        for name in ("sent_at",):
            if isinstance(record.get(name), int):
                record[name] = iso(record[name])
        return json.dumps({k: v for k, v in record.items() if v is not None})

    with open(os.path.join(args.out, "sender.jsonl"), "w") as f:
        for record in sender_records:
            f.write(line(record) + "\n")
        for text in DAMAGED_SENDER:
            f.write(text + "\n")
    with open(os.path.join(args.out, "sender-exchanges.jsonl"), "w") as f:
        for exchange in sender.exchanges:
            f.write(json.dumps(exchange) + "\n")
    with open(os.path.join(args.out, "device.jsonl"), "w") as f:
        for record in device:
            f.write(json.dumps(record) + "\n")
        for text in DAMAGED_DEVICE:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

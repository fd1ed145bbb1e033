#!/usr/bin/env python3
"""One broadcast channel at scale (issue 29, item 6): SUBSCRIBERS Live
Activities follow one channel of a match and BROADCASTS broadcasts update
them all, so the sender writes BROADCASTS lines and the devices about
SUBSCRIBERS x BROADCASTS render beacons.

Shaped like a real event: subscribers join during the ten minutes before
kick-off (a `channel_subscription` callback, lost for 5% of them, who are
then known from the `channel_id` on their renders), the broadcasts come every
two minutes, each subscriber's widget draws each update a second or so after
it is accepted; 3% of subscribers are offline for a stretch and draw only the
newest update when they return (the ones in between are superseded), 1% stop
drawing (their updates are lost), 2% of users dismiss the activity half-way
(the rest of their updates are dismissed). One broadcast in thirty is
refused (429) and sent again. Standard library only:

    python3 generate.py OUT_DIR [--subscribers 200000] [--broadcasts 60] [--seed 29]
"""
import argparse
import os
import random

KICKOFF_MS = 1795255200000  # 2026-11-21T10:00:00Z
CHANNEL = "bWF0Y2gtMjAyNi0xMS0yMS1maW5hbA=="  # base64, as APNs channel ids are
TOPIC = "com.example.sports.push-type.liveactivity"


def iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    # 2026-11-21 is day 20,778 since 1970-01-01; the event fits in that day.
    assert days == 20778, days
    return f"2026-11-21T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--subscribers", type=int, default=200_000)
    parser.add_argument("--broadcasts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)

    sends = [KICKOFF_MS + k * 120_000 for k in range(args.broadcasts)]
    with open(os.path.join(args.out, "sender.jsonl"), "w") as f:
        for k, sent in enumerate(sends):
            seq = k + 1
            body = (f'"channel_id":"{CHANNEL}","seq":{seq},"event":"update","aps_timestamp":{sent // 1000},'
                    f'"payload_bytes":{rng.randrange(900, 4900)},"topic":"{TOPIC}","push_type":"liveactivity",'
                    f'"priority":10,"environment":"production"')
            if k % 30 == 7:
                f.write(f'{{"kind":"apns","apns_id":"refused-{seq}","sent_at":"{iso(sent - 2000)}","status":429,'
                        f'"reason":"TooManyRequests",{body},"latency_ms":31}}\n')
            f.write(f'{{"kind":"apns","apns_id":"b-{seq:04d}","sent_at":"{iso(sent)}","status":200,{body},'
                    f'"latency_ms":{rng.randrange(20, 90)}}}\n')

    with open(os.path.join(args.out, "devices.jsonl"), "w") as f:
        write = f.write
        for n in range(args.subscribers):
            activity = f"sub-{n:07d}"
            joined = KICKOFF_MS - rng.randrange(1000, 600_000)
            device = f'"device_id":"dev-{n:07d}","os_version":"18.{rng.randrange(0, 6)}","app_version":"5.2.0"'
            if rng.random() >= 0.05:
                write(f'{{"kind":"callback","callback":"channel_subscription","activity_id":"{activity}",'
                      f'"channel_id":"{CHANNEL}","received_at":"{iso(joined)}",{device}}}\n')
            else:
                write(f'{{"kind":"callback","callback":"activity_state","activity_id":"{activity}","state":"active",'
                      f'"received_at":"{iso(joined)}",{device}}}\n')
            fate = rng.random()
            stop = len(sends)
            offline = None
            if fate < 0.01:
                stop = rng.randrange(1, len(sends))  # the widget stops drawing
            elif fate < 0.03:
                dismissed = sends[len(sends) // 2] + rng.randrange(1, 60_000)
                stop = len(sends) // 2 + 1
                write(f'{{"kind":"callback","callback":"activity_state","activity_id":"{activity}",'
                      f'"state":"dismissed","received_at":"{iso(dismissed)}",{device}}}\n')
            elif fate < 0.06:
                start = rng.randrange(0, len(sends) - 5)
                offline = range(start, start + rng.randrange(2, 5))
            for k in range(stop):
                if offline is not None and k in offline and k != offline[-1]:
                    continue  # offline: only the newest stored broadcast is drawn when back
                rendered = sends[k] + rng.randrange(300, 2500)
                write(f'{{"kind":"render","activity_id":"{activity}","seq":{k + 1},"rendered_at":"{iso(rendered)}",'
                      f'"surface":"lock_screen","channel_id":"{CHANNEL}"}}\n')


if __name__ == "__main__":
    main()

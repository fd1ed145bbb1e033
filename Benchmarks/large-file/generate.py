#!/usr/bin/env python3
"""Writes ONE large, realistic sender file of `apns` lines, gzip-compressed.

Usage:
    python3 Benchmarks/large-file/generate.py LINES OUT.jsonl.gz [--seed N]

The shape of issue 14's large-file case: LINES `apns` records (format
version 1, Documentation/InputRecords.md) in one gzip file, one sender's log
of one day (2026-11-21), in the order it sent them:

  * `apns_id`: a fresh upper-case UUID (version 4) per request, retries too;
  * `sent_at`: milliseconds, never decreasing through the day, denser in the
    day's busy hours; `aps_timestamp`: the same instant in Unix seconds;
  * `activity_id`: LINES / 2 activities (a million for 2 M lines), each
    living a few minutes and sent 1 + a geometric number of requests (mean 2;
    the total is exactly LINES), spread over apps with their own topic;
  * `push_token`: 64 lower-case hex digits, one per activity (a push-to-start
    token of its own for a remote `start`);
  * `seq`: one per line, increasing per activity; a retry repeats its seq;
  * `event`: `start` for remote starts (8 % of activities), `end` for a
    quarter of the activities' last requests, `update` otherwise;
  * every optional field present: `reason` is null on a 200 and a real APNs
    reason on the few refusals (400 BadDeviceToken and 410 Unregistered on
    an activity's last request, 413 PayloadTooLarge with a payload over
    4 KiB, 429 TooManyRequests then a retry), status 0 with the sender's
    error text on timeouts and resets (then a retry); `payload_bytes`,
    `topic`, `push_type`, `priority` (10, or 5 for a fifth of the updates),
    `environment` (a few sandbox activities), `latency_ms`, `provider`.

Deterministic: the same LINES and --seed give the same bytes (random.Random
seeded with --seed, no clock: the gzip header's time is 0 and holds no file
name). Streaming: memory holds the activities alive at the moment (a few
thousand), not the file. The file is written to OUT.tmp and renamed, so a
file at OUT is complete. Prints lines, bytes and gzip bytes at the end.
"""

import argparse
import bisect
import calendar
import gzip
import heapq
import math
import os
import random
import sys

DAY = "2026-11-21"
DAY_EPOCH = calendar.timegm((2026, 11, 21, 0, 0, 0))  # 1795219200
DAY_MS = 86_400_000

# Relative number of activities starting in each hour (UTC) of the day:
# quiet nights, a morning and an evening peak.
HOURLY_WEIGHTS = [
    2, 1, 1, 1, 2, 4, 7, 10, 12, 10, 8, 8,
    9, 8, 7, 8, 10, 12, 12, 10, 8, 6, 4, 3,
]

# (share of activities, topic, activity_id prefix)
APPS = [
    (0.60, "com.example.rides.push-type.liveactivity", "ride-"),
    (0.30, "com.example.food.push-type.liveactivity", "order-"),
    (0.10, "com.example.scores.push-type.liveactivity", "match-"),
]

START_SHARE = 0.08      # activities started remotely (push-to-start)
END_SHARE = 0.25        # activities whose last request is an `end`
SANDBOX_SHARE = 0.005   # activities of a development build
GONE_400 = 0.002        # last request refused: BadDeviceToken
GONE_410 = 0.006        # last request refused: Unregistered
TOO_LARGE = 0.0005      # any request: PayloadTooLarge
THROTTLED = 0.002       # any request: TooManyRequests, retried
NO_ANSWER = 0.001       # any request: status 0, retried
ERRORS_0 = [
    ("timeout: no response from APNs within 10 s", 10000),
    ("connection reset by peer", None),
    ("stream reset: REFUSED_STREAM", None),
]


def hour_cdf():
    total = float(sum(HOURLY_WEIGHTS))
    cdf, acc = [0.0], 0.0
    for w in HOURLY_WEIGHTS:
        acc += w / total
        cdf.append(acc)
    cdf[-1] = 1.0
    return cdf


def day_ms_at(u, cdf):
    """Maps u in [0, 1) to a millisecond of the day, through the hourly curve."""
    h = min(bisect.bisect_right(cdf, u) - 1, 23)
    within = (u - cdf[h]) / (cdf[h + 1] - cdf[h])
    return int((h + within) * 3_600_000)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lines", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    if args.lines < 1:
        sys.exit("generate.py: LINES must be at least 1")

    rng = random.Random(args.seed)
    rand = rng.random
    bits = rng.getrandbits
    cdf = hour_cdf()

    n_lines = args.lines
    n_acts = max(1, n_lines // 2)
    # activity ids: a bijection of the index onto WIDTH hex digits, so ids
    # look scattered and never repeat
    width = max(5, (max(1, n_acts - 1).bit_length() + 3) // 4)
    mask = (1 << (4 * width)) - 1
    id_fmt = "%0" + str(width) + "x"
    # the last activity starts at 99.5 % of the day; later requests are
    # squeezed toward midnight
    start_span = 0.995

    lines_left = n_lines          # requests not yet planned
    next_act = 0                  # next activity to start
    next_start = None             # its first request's time
    heap = []                     # (time, order, activity state)
    order = 0

    def plan_next_start():
        nonlocal next_start
        u = (next_act + rand()) / n_acts * start_span
        next_start = day_ms_at(u, cdf)

    plan_next_start()

    def start_activity():
        nonlocal next_act, lines_left, order
        a = next_act
        acts_left = n_acts - a
        if acts_left == 1:
            k = lines_left
        else:
            mean = lines_left / acts_left
            if mean <= 1.0:
                k = 1
            else:
                k = 1 + int(math.log(1.0 - rand()) / math.log(1.0 - 1.0 / mean))
            k = min(k, lines_left - (acts_left - 1))
        lines_left -= k
        r = rand()
        for share, topic, prefix in APPS:
            if r < share:
                break
            r -= share
        remote_start = rand() < START_SHARE
        ends = rand() < END_SHARE
        sandbox = rand() < SANDBOX_SHARE
        # the last request's refusal, decided up front (nothing follows it)
        r = rand()
        gone = 400 if r < GONE_400 else 410 if r < GONE_400 + GONE_410 else 0
        state = [
            prefix + id_fmt % ((a * 0x9E3779B1) & mask),  # 0 activity_id
            "%064x" % bits(256),                         # 1 push_token
            "%064x" % bits(256) if remote_start else None,  # 2 push-to-start
            topic,                                       # 3
            "sandbox" if sandbox else "production",      # 4
            k,                                           # 5 requests left
            1 if remote_start else 1 + int(rand() * 3),  # 6 seq
            remote_start,                                # 7 next is a start
            ends,                                        # 8
            gone,                                        # 9
            False,                                       # 10 next is a retry
        ]
        heapq.heappush(heap, (next_start, order, state))
        order += 1
        next_act += 1
        if next_act < n_acts:
            plan_next_start()

    tmp = args.out + ".tmp"
    raw = open(tmp, "wb")
    gz = gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw, mtime=0)
    batch = []
    emitted = 0
    text_bytes = 0

    while heap or next_act < n_acts:
        if next_act < n_acts and (not heap or next_start <= heap[0][0]):
            start_activity()
            continue
        t, _, s = heapq.heappop(heap)
        s[5] -= 1
        last = s[5] == 0
        retry = s[10]
        if s[7]:
            event, token = "start", s[2]
        else:
            event, token = ("end" if last and s[8] else "update"), s[1]

        status, reason, latency = 200, "null", None
        r = rand()
        if r < TOO_LARGE and not retry:
            status, reason = 413, '"PayloadTooLarge"'
            payload = 4097 + int(rand() * 1500)
        else:
            if event == "start":
                payload = 1100 + int(rand() * 900)
            elif event == "end":
                payload = 300 + int(rand() * 600)
            else:
                payload = 400 + int(rand() * 1000)
            if last and s[9]:
                status = s[9]
                reason = '"BadDeviceToken"' if status == 400 else '"Unregistered"'
            elif r < TOO_LARGE + THROTTLED:
                status, reason = 429, '"TooManyRequests"'
            elif r < TOO_LARGE + THROTTLED + NO_ANSWER:
                text, latency = ERRORS_0[int(rand() * len(ERRORS_0))]
                status, reason = 0, '"' + text + '"'
                if latency is None:
                    latency = 5 + int(rand() * 3000)
        if latency is None:
            latency = max(4, int(rng.lognormvariate(3.55, 0.45)))
        priority = 5 if event == "update" and rand() < 0.2 else 10

        u = bits(128)
        hexid = "%032X" % ((u & ~(0xF000 << 64) & ~(0xC << 60)) | (0x4000 << 64) | (0x8 << 60))
        sec, ms = divmod(t, 1000)
        hh, rem = divmod(sec, 3600)
        mm, ss = divmod(rem, 60)
        line = (
            '{"v":1,"kind":"apns","apns_id":"%s-%s-%s-%s-%s","sent_at":"%sT%02d:%02d:%02d.%03dZ",'
            '"status":%d,"reason":%s,"push_token":"%s","activity_id":"%s","seq":%d,'
            '"event":"%s","aps_timestamp":%d,"payload_bytes":%d,"topic":"%s",'
            '"push_type":"liveactivity","priority":%d,"environment":"%s",'
            '"latency_ms":%d,"provider":"apns"}\n'
        ) % (
            hexid[0:8], hexid[8:12], hexid[12:16], hexid[16:20], hexid[20:32],
            DAY, hh, mm, ss, ms,
            status, reason, token, s[0], s[6],
            event, DAY_EPOCH + sec, payload, s[3],
            priority, s[4], latency,
        )
        batch.append(line)
        emitted += 1

        if not last:
            if status in (0, 429):
                gap = 1000 + int(rand() * 4000)     # back off, same seq
                s[10] = True
            else:
                gap = 5000 + int(rng.expovariate(1.0 / 60000))
                s[6] += 1
                s[7] = False
                s[10] = False
            nt = t + gap
            if nt >= DAY_MS:                         # squeeze toward midnight
                nt = t + (DAY_MS - 1 - t) // 2
            heapq.heappush(heap, (nt, order, s))
            order += 1

        if len(batch) >= 20000:
            chunk = "".join(batch).encode()
            text_bytes += len(chunk)
            gz.write(chunk)
            batch = []

    if batch:
        chunk = "".join(batch).encode()
        text_bytes += len(chunk)
        gz.write(chunk)
    gz.close()
    raw.close()
    assert emitted == n_lines, (emitted, n_lines)
    os.replace(tmp, args.out)
    gz_bytes = os.path.getsize(args.out)
    print(
        "lines %d, bytes %d (%.1f per line), gzip bytes %d (%.1f MB)"
        % (emitted, text_bytes, text_bytes / emitted, gz_bytes, gz_bytes / 1e6)
    )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the uploads queued in a collector's spool out as files, one per
upload (the yardstick of Benchmarks/collector/run.sh: `arrival ingest` reads
exactly the bytes the worker drains), twice: under the names they were
uploaded with in BY_NAME, and in BY_ARRIVAL as `<sequence>-<name>` so that
`arrival ingest`, which reads a directory in name order, takes them in the
order the worker does. Reads the segment format
Sources/ArrivalServer/Spool.swift describes; skips the records the spool's
checkpoint says are ingested. Prints how many uploads it wrote.

    extract.py SPOOL_DIR BY_NAME BY_ARRIVAL
"""
import os
import struct
import sys

spool, by_name, by_arrival = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(by_arrival, exist_ok=True)
checkpoint = 0
try:
    with open(os.path.join(spool, "checkpoint"), "rb") as f:
        raw = f.read(16)
    if len(raw) == 16:
        checkpoint = struct.unpack_from("<Q", raw)[0]
except FileNotFoundError:
    pass

count = 0
segments = os.path.join(spool, "segments")
for name in sorted(os.listdir(segments)):
    with open(os.path.join(segments, name), "rb") as f:
        data = f.read()
    offset = 0
    while offset + 72 <= len(data):
        if data[offset:offset + 4] != b"ARVU":
            break
        name_bytes, body_bytes, sequence = struct.unpack_from("<HQQ", data, offset + 6)
        upload = data[offset + 64:offset + 64 + name_bytes].decode()
        start = offset + 64 + name_bytes + 8
        offset = start + body_bytes
        if sequence <= checkpoint:
            continue
        path = os.path.join(by_name, upload)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data[start:start + body_bytes])
        flat = "%016d-%s" % (sequence, upload.replace("/", "_"))
        with open(os.path.join(by_arrival, flat), "wb") as f:
            f.write(data[start:start + body_bytes])
        count += 1
print(count)

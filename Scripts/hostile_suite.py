#!/usr/bin/env python3
"""The collector against hostile clients and operators' mistakes (issue 26).

Runs the built `arrival serve` on loopback and checks, each bounded in time:

1. a second collector on the same spool exits at start, naming the first,
   and never listens; the first goes on serving;
2. 64 device-token uploads that declare 64 MiB and send one byte do not stop
   a normal upload (202 within a second), and are closed with 408 once their
   body has been idle for --body-idle-timeout; a client that sends one byte
   of a request head is answered 408 after --header-timeout;
3. the per-address and per-role caps answer 429 with Retry-After, and a
   client from another address is not held by them;
4. a client that hangs up mid-body is counted `aborted` (no 500, no `failed`);
5. SIGTERM with a stalled upload exits 0 within --shutdown-grace plus a
   second, and an upload acknowledged before it is ingested after a restart;
6. a full spool disk (a small tmpfs; root only) answers 503 with Retry-After,
   /readyz says 503, and both recover on their own once room returns, with
   every acknowledged upload ingested;
7. bytes a device token uploaded (its apns lines refused) and a sender token
   then uploads are stored with the sender's records;
8. (issue 39) a device-token upload of a million render lines in one
   millisecond and a gzip bomb (~1 GiB inflated) do not hold a sender upload
   sent after them (ingested within 30 s), SIGTERM then exits within the
   documented bound, and after a restart they are still there (queued or
   ingested), never lost;
9. ten concurrent reports: at most --max-concurrent-reports are computed,
   the rest answered 503 with Retry-After, the collector's RSS stays within
   the documented bound, and repeated requests are served from one
   computation;
10. the `duplicate` count of /metrics is exact under concurrent uploads and
   re-uploads;
11. HTTP: Expect: 100-continue, Transfer-Encoding other than chunked,
   X-Upload-Name rules (UTF-8, one header, no . or ..), IPv6 clients
   counted by /64 against the per-address cap.

Usage: hostile_suite.py PATH-TO-ARRIVAL [CASE...]
Prints 'hostile-suite: N passed, N failed' last; exits 1 on any failure.
"""

import gzip
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

DEVICE = "device-token-hostile-0123456789"
SENDER = "sender-token-hostile-0123456789"
READER = "read-token-hostile-0123456789ab"

results = []


def check(name, condition, detail=""):
    results.append((name, bool(condition)))
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"), flush=True)
    return bool(condition)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, directory, spool=None, extra=(), name="serve"):
        self.port = free_port()
        self.directory = directory
        self.log_path = os.path.join(directory, f"{name}-{self.port}.log")
        self.log = open(self.log_path, "w")
        env = dict(os.environ)
        env.update(ARRIVAL_DEVICE_TOKENS=DEVICE, ARRIVAL_SENDER_TOKENS=SENDER, ARRIVAL_READ_TOKENS=READER)
        self.spool = spool or os.path.join(directory, "spool")
        self.process = subprocess.Popen(
            [binary, "serve", "--db", os.path.join(directory, "store.sqlite"), "--spool", self.spool,
             "--port", str(self.port), "--log-level", "info", *extra],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                status, _, _ = request(self.port, "GET", "/healthz")
                if status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()


def request(port, method, path, body=b"", token=None, headers=None, source="127.0.0.1", timeout=10):
    """One HTTP/1.1 request on its own connection; (status, headers, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
    try:
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
        if token:
            lines.append(f"Authorization: Bearer {token}")
        for key, value in (headers or {}).items():
            lines.append(f"{key}: {value}")
        if method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        return read_response(s)
    finally:
        s.close()


def read_response(s):
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if not head:
        return 0, {}, b""
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        fields[key.strip().lower()] = value.strip()
    return status, fields, body


def stalled_upload(port, token=DEVICE, declared=64 << 20, source="127.0.0.1"):
    """Declares `declared` bytes, sends one, and keeps the connection open."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0))
    s.sendall(
        (f"POST /v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
         f"Content-Length: {declared}\r\n\r\n").encode() + b"{")
    return s


def device_batch(tag, lines=40):
    records = []
    for index in range(lines):
        records.append(json.dumps({
            "v": 1, "kind": "render", "activity_id": f"act-{tag}", "seq": index + 1,
            "rendered_at": f"2026-11-26T10:{index // 60:02d}:{index % 60:02d}.000Z", "surface": "lock_screen",
            "device_id": f"dev-{tag}"}))
    return ("\n".join(records) + "\n").encode()


def sender_log(tag, lines=20):
    records = []
    for index in range(lines):
        records.append(json.dumps({
            "v": 1, "kind": "apns", "apns_id": f"00000000-0000-4000-8000-{tag:06d}{index:06d}",
            "sent_at": f"2026-11-26T10:00:{index:02d}.000Z", "status": 200, "push_token": f"{tag:064x}",
            "activity_id": f"act-{tag}", "seq": index + 1, "event": "update",
            "aps_timestamp": 1795600000 + index}))
        records.append(json.dumps({
            "v": 1, "kind": "render", "activity_id": f"act-{tag}", "seq": index + 1,
            "rendered_at": f"2026-11-26T10:00:{index:02d}.500Z"}))
    return ("\n".join(records) + "\n").encode()


def metric(port, name, **labels):
    _, _, body = request(port, "GET", "/metrics")
    total = 0.0
    for line in body.decode().splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{key}="{value}"' in line for key, value in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def wait_ingested(port, sha, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, _, body = request(port, "GET", f"/v1/uploads/{sha}", token=READER)
        if status == 200 and json.loads(body)["state"] == "ingested":
            return json.loads(body)
        time.sleep(0.1)
    return None


# --- the cases ---------------------------------------------------------------------------------------------------


def second_collector(binary, work):
    first = Server(binary, work, name="first")
    try:
        check("first collector starts", first.ready())
        second = Server(binary, work, spool=first.spool, name="second")
        try:
            code = second.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            code = None
        text = second.log_text()
        check("second collector on the same spool exits at start", code not in (None, 0), f"exit {code}: {text}")
        check("its message names the other process", str(first.process.pid) in text and "in use" in text, text)
        refused = False
        try:
            request(second.port, "GET", "/healthz", timeout=2)
        except OSError:
            refused = True
        check("second collector never listened", refused)
        second.stop()
        # The same spool and the same port (the same command started twice): the spool is named, not the port.
        env = dict(os.environ, ARRIVAL_DEVICE_TOKENS=DEVICE)
        twice = subprocess.run(
            [binary, "serve", "--db", os.path.join(work, "store.sqlite"), "--spool", first.spool,
             "--port", str(first.port)], env=env, capture_output=True, text=True, timeout=30)
        check("the same command started twice exits 2 naming the first collector's process",
              twice.returncode == 2 and f"in use by another collector (process {first.process.pid})" in twice.stderr
              and "--port" not in twice.stderr, f"{twice.returncode}: {twice.stderr}")
        # Another spool, the same port: a plain message, exit 2, no errno soup.
        third = Server(binary, work, spool=os.path.join(work, "other-spool"), name="third")
        third.process.kill()
        third.process.wait()
        env = dict(os.environ, ARRIVAL_DEVICE_TOKENS=DEVICE)
        taken = subprocess.run(
            [binary, "serve", "--db", os.path.join(work, "store.sqlite"), "--spool", os.path.join(work, "other-spool"),
             "--port", str(first.port)], env=env, capture_output=True, text=True, timeout=30)
        check("a collector on a port in use exits 2 saying so",
              taken.returncode == 2 and "already in use" in taken.stderr and "--port" in taken.stderr
              and "errno" not in taken.stderr, f"{taken.returncode}: {taken.stderr}")
        body = device_batch("after-second")
        status, _, answer = request(first.port, "POST", "/v1/uploads", body, token=DEVICE)
        sha = hashlib.sha256(body).hexdigest()
        check("first collector still takes uploads", status == 202, f"{status} {answer!r}")
        check("and ingests them", wait_ingested(first.port, sha) is not None)
    finally:
        first.stop()


def stalled_clients(binary, work):
    server = Server(binary, work, extra=["--body-idle-timeout", "3", "--header-timeout", "2"])
    sockets = []
    try:
        check("collector starts", server.ready())
        sockets = [stalled_upload(server.port) for _ in range(64)]
        time.sleep(0.3)
        started = time.time()
        body = device_batch("normal")
        status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=DEVICE, timeout=5)
        elapsed = time.time() - started
        check("a normal upload beside 64 stalled ones gets 202", status == 202, f"{status} {answer!r}")
        check("within a second", elapsed < 1.0, f"{elapsed:.2f} s")
        # The stalled ones are closed with 408 once their body has been idle for 3 s.
        answers = []
        deadline = time.time() + 10
        for s in sockets:
            s.settimeout(max(0.1, deadline - time.time()))
            try:
                answers.append(read_response(s)[0])
            except OSError:
                answers.append(None)
        waited = time.time() - started
        check("64 stalled uploads are answered 408", answers.count(408) == 64, f"{answers}")
        check("after the body idle timeout, not later", waited < 6.0, f"{waited:.1f} s")
        # One byte of a request head, then nothing: 408 after the header timeout.
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(b"P")
        started = time.time()
        status = read_response(s)[0]
        elapsed = time.time() - started
        s.close()
        check("one byte of a head is answered 408", status == 408, f"{status}")
        check("after the header timeout", 1.5 < elapsed < 4.0, f"{elapsed:.1f} s")
        # Refused before its body was read (a bad token), the body then sent, and the client idles on the
        # kept-alive connection: the header timeout closes it.
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(b"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token-of-this-collector\r\n"
                  b"Content-Length: 5\r\n\r\n")
        time.sleep(0.3)
        s.sendall(b"hello")
        started = time.time()
        status = read_response(s)[0]
        elapsed = time.time() - started
        s.close()
        check("a refused request's idle connection is answered 401, then closed after the header timeout",
              status == 401 and elapsed < 4.0, f"{status} after {elapsed:.1f} s")
        check("timed-out uploads are counted", metric(server.port, "arrival_uploads_total", result="timed_out") >= 64)
        check("and none as failed", metric(server.port, "arrival_uploads_total", result="failed") == 0)
        check("the closed connections are counted by limit",
              metric(server.port, "arrival_connection_timeouts_total", limit="body_idle") == 64
              and metric(server.port, "arrival_connection_timeouts_total", limit="header") == 1)
    finally:
        for s in sockets:
            s.close()
        server.stop()


def caps(binary, work):
    server = Server(binary, work, extra=["--max-uploads-per-address", "4", "--max-sender-uploads", "2"])
    held = []
    try:
        check("collector starts", server.ready())
        held = [stalled_upload(server.port) for _ in range(4)]
        time.sleep(0.3)
        status, fields, answer = request(server.port, "POST", "/v1/uploads", device_batch("fifth"), token=DEVICE)
        check("a fifth upload from one address gets 429", status == 429, f"{status} {answer!r}")
        check("with Retry-After", fields.get("retry-after", "").isdigit(), f"{fields}")
        status, _, answer = request(
            server.port, "POST", "/v1/uploads", device_batch("other"), token=DEVICE, source="127.0.0.2")
        check("another address still gets 202", status == 202, f"{status} {answer!r}")
        held += [stalled_upload(server.port, token=SENDER, source="127.0.0.3") for _ in range(2)]
        time.sleep(0.3)
        status, fields, answer = request(
            server.port, "POST", "/v1/uploads", sender_log(7), token=SENDER, source="127.0.0.4")
        check("a third sender upload at once gets 429", status == 429 and "sender" in answer.decode(), f"{status}")
        status, _, _ = request(server.port, "POST", "/v1/uploads", device_batch("dev"), token=DEVICE, source="127.0.0.5")
        check("the device role is not held by the sender cap", status == 202, f"{status}")
        check("refusals are counted rate_limited", metric(server.port, "arrival_uploads_total", result="rate_limited") == 2)
    finally:
        for s in held:
            s.close()
        server.stop()


def aborted_client(binary, work):
    server = Server(binary, work)
    try:
        check("collector starts", server.ready())
        for _ in range(3):
            s = stalled_upload(server.port, declared=100_000)
            s.sendall(b"x" * 5000)
            s.close()
        # A chunked body cut off before its last chunk.
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(
            (f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {DEVICE}\r\n"
             "Transfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n").encode())
        time.sleep(0.2)
        s.close()
        deadline = time.time() + 5
        while time.time() < deadline and metric(server.port, "arrival_uploads_total", result="aborted") < 4:
            time.sleep(0.1)
        check("clients that hang up mid-body are counted aborted",
              metric(server.port, "arrival_uploads_total", result="aborted") == 4)
        check("not failed", metric(server.port, "arrival_uploads_total", result="failed") == 0)
        statuses = {code: metric(server.port, "http_server_requests_total", http_response_status_code=code)
                    for code in ("400", "500")}
        check("answered 400, never 500", statuses["400"] >= 4 and statuses["500"] == 0, f"{statuses}")
        text = server.log_text()
        check("nothing logged at error", " error " not in text, text[-2000:])
        _, _, body = request(server.port, "GET", "/metrics")
        check("the spool holds none of them", "arrival_spool_uploads 0" in body.decode())
    finally:
        server.stop()


def shutdown(binary, work):
    server = Server(binary, work, extra=["--shutdown-grace", "2"])
    try:
        check("collector starts", server.ready())
        body = sender_log(11)
        status, _, _ = request(server.port, "POST", "/v1/uploads", body, token=SENDER)
        check("an upload before SIGTERM is acknowledged", status == 202)
        s = stalled_upload(server.port)
        time.sleep(0.3)
        started = time.time()
        server.process.send_signal(signal.SIGTERM)
        try:
            code = server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            code = None
        elapsed = time.time() - started
        check("SIGTERM with a stalled upload exits 0", code == 0, f"exit {code}")
        check("within the grace period plus a second", elapsed < 3.0, f"{elapsed:.2f} s")
        s.settimeout(5)
        try:
            status = read_response(s)[0]
        except OSError:
            status = None
        s.close()
        check("the stalled client was told (408) or cut off, never acknowledged", status in (408, 0, None), f"{status}")
    finally:
        server.stop()
    again = Server(binary, work, name="again")
    try:
        check("collector restarts on the same spool", again.ready())
        check("the acknowledged upload is ingested",
              wait_ingested(again.port, hashlib.sha256(sender_log(11)).hexdigest()) is not None)
    finally:
        again.stop()


def full_disk(binary, work):
    if os.geteuid() != 0:
        check("full disk (needs root to mount a tmpfs): skipped", True)
        return
    mount = os.path.join(work, "tmpfs")
    os.makedirs(mount)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount]).returncode != 0:
        check("full disk: could not mount a tmpfs", False)
        return
    server = None
    try:
        server = Server(binary, work, spool=os.path.join(mount, "spool"))
        check("collector starts on a 4 MiB tmpfs", server.ready())
        status, _, _ = request(server.port, "GET", "/readyz")
        check("ready while there is room", status == 200, f"{status}")
        # Fill the disk, so that the next upload cannot be written.
        ballast = os.path.join(mount, "ballast")
        fd = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, os.urandom(64 << 10))
        except OSError:
            pass
        try:
            while True:
                os.write(fd, b"x")
        except OSError:
            pass
        os.close(fd)
        acknowledged = []
        answers = []
        for index in range(6):
            body = device_batch(f"full-{index}", 4000)[: 300 << 10]
            body = body[: body.rfind(b"\n") + 1]
            status, fields, _ = request(server.port, "POST", "/v1/uploads", body, token=DEVICE)
            answers.append((status, fields.get("retry-after")))
            if status in (200, 202):
                acknowledged.append(hashlib.sha256(body).hexdigest())
        check("a full disk answers 503", any(a[0] == 503 for a in answers), f"{answers}")
        check("with Retry-After", all(a[1] and a[1].isdigit() for a in answers if a[0] == 503), f"{answers}")
        check("never 500", all(a[0] != 500 for a in answers), f"{answers}")
        status, _, _ = request(server.port, "GET", "/readyz")
        check("/readyz answers 503 while the disk is full", status == 503, f"{status}")
        check("counted disk_full", metric(server.port, "arrival_uploads_total", result="disk_full") >= 1)
        os.unlink(ballast)
        deadline = time.time() + 10
        while time.time() < deadline and request(server.port, "GET", "/readyz")[0] != 200:
            time.sleep(0.2)
        check("/readyz recovers on its own", request(server.port, "GET", "/readyz")[0] == 200)
        body = device_batch("after-room")
        status, _, _ = request(server.port, "POST", "/v1/uploads", body, token=DEVICE)
        check("uploads resume once room returns", status == 202, f"{status}")
        acknowledged.append(hashlib.sha256(body).hexdigest())
        check("every acknowledged upload is ingested",
              all(wait_ingested(server.port, sha) is not None for sha in acknowledged), f"{acknowledged}")
    finally:
        if server:
            server.stop()
        subprocess.run(["umount", mount])


def role_dedupe(binary, work):
    server = Server(binary, work)
    try:
        check("collector starts", server.ready())
        body = gzip.compress(sender_log(42), mtime=0)
        sha = hashlib.sha256(body).hexdigest()
        status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=DEVICE)
        check("a device token uploads a sender's log", status == 202, f"{status} {answer!r}")
        device = wait_ingested(server.port, sha)
        check("its apns lines are refused", device and device["malformed_lines"] == 20, f"{device}")
        status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=SENDER)
        check("the sender's upload of the same bytes is queued, not a duplicate", status == 202, f"{status} {answer!r}")
        deadline = time.time() + 30
        stored = None
        while time.time() < deadline:
            stored = wait_ingested(server.port, sha)
            if stored and stored["malformed_lines"] == 0:
                break
            time.sleep(0.1)
        check("the sender's records are stored", stored and stored["records"] == 40 and stored["malformed_lines"] == 0,
              f"{stored}")
        status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=DEVICE)
        check("the device token's copy after it is a duplicate", status == 200, f"{status} {answer!r}")
        status, _, report = request(server.port, "GET", "/v1/report?format=json", token=READER)
        sent = json.loads(report)["requests"]["total"] if status == 200 else None
        check("the report counts the sender's 20 requests", sent == 20, f"{status} {sent}")
    finally:
        server.stop()


def rss_kb(pid):
    """The resident set of a process, in KiB (from /proc)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def upload_state(port, sha):
    status, _, body = request(port, "GET", f"/v1/uploads/{sha}", token=READER)
    return json.loads(body)["state"] if status == 200 else str(status)


def millisecond_upload(lines=1_000_000):
    """A device batch of `lines` renders that all share one rendered_at millisecond, gzip."""
    parts = []
    for index in range(lines):
        parts.append(
            '{"v":1,"kind":"render","activity_id":"act-ms-%d","seq":1,'
            '"rendered_at":"2026-11-26T10:00:00.000Z","surface":"lock_screen","device_id":"dev-ms"}\n' % index)
    return gzip.compress("".join(parts).encode(), compresslevel=6, mtime=0)


def gzip_bomb(inflated=1 << 30):
    """One render line repeated until `inflated` bytes, gzip (about a megabyte)."""
    line = (b'{"v":1,"kind":"render","activity_id":"act-bomb","seq":1,'
            b'"rendered_at":"2026-11-26T10:00:00.000Z","surface":"lock_screen"}\n')
    chunk = line * ((1 << 20) // len(line))
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [compressor.compress(chunk) for _ in range(inflated // len(chunk))]
    out.append(compressor.flush())
    return b"".join(out)


SHUTDOWN_GRACE = 2
# Documentation/Collector.md, Shutdown: --shutdown-grace, a second to close connections, and at most
# IngestWorker.abandonAfter (5 s) for the ingest run in flight; a second of slack for process start-up noise.
SHUTDOWN_BOUND = SHUTDOWN_GRACE + 1 + 5 + 1


def fair_queue(binary, work):
    server = Server(binary, work, extra=["--shutdown-grace", str(SHUTDOWN_GRACE)])
    device_shas = []
    try:
        check("collector starts", server.ready())
        bodies = [("devices/ms/one-millisecond.jsonl.gz", millisecond_upload()), ("devices/bomb/bomb.jsonl.gz", gzip_bomb())]
        for name, body in bodies:
            status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=DEVICE,
                                        headers={"X-Upload-Name": name}, timeout=60)
            check(f"the device upload {name} ({len(body) >> 10} KiB) is acknowledged", status == 202,
                  f"{status} {answer!r}")
            device_shas.append(hashlib.sha256(body).hexdigest())
        body = sender_log(39)
        sha = hashlib.sha256(body).hexdigest()
        sent = time.time()
        status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=SENDER,
                                    headers={"X-Upload-Name": "sender/after-the-device-ones.jsonl"})
        check("a sender upload after them is acknowledged", status == 202, f"{status} {answer!r}")
        _, _, metrics_text = request(server.port, "GET", "/metrics")
        check("/metrics shows the queue per role",
              'arrival_ingest_queue_uploads{role="device"}' in metrics_text.decode()
              and 'arrival_ingest_queue_uploads{role="sender"}' in metrics_text.decode(), metrics_text[-600:])
        stored = wait_ingested(server.port, sha, timeout=30)
        elapsed = time.time() - sent
        states = [upload_state(server.port, s) for s in device_shas]
        check("the sender upload is ingested within 30 s of being sent", stored is not None,
              f"after {elapsed:.1f} s; device uploads: {states}")
        preempted = metric(server.port, "arrival_ingest_runs_stopped_total", reason="preempted")
        print(f"     sender ingested after {elapsed:.1f} s; device uploads then: {states}; "
              f"device runs stopped for it: {preempted:.0f}", flush=True)
        started = time.time()
        server.process.send_signal(signal.SIGTERM)
        try:
            code = server.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            code = None
        elapsed = time.time() - started
        print(f"     SIGTERM: exited {code} after {elapsed:.1f} s", flush=True)
        check("SIGTERM exits 0", code == 0, f"exit {code}")
        check(f"within the documented bound ({SHUTDOWN_BOUND} s)", elapsed < SHUTDOWN_BOUND, f"{elapsed:.1f} s")
    finally:
        server.stop()
    again = Server(binary, work, name="again")
    try:
        check("collector restarts on the same spool", again.ready())
        states = [upload_state(again.port, s) for s in device_shas]
        check("the device uploads are still queued or ingested after the restart, never lost",
              all(state in ("queued", "ingested") for state in states), f"{states}")
        # Bounded per upload (--max-lines-device, --max-inflated-bytes-device): both are ingested, each with
        # one malformed line that names the limit, well before the bomb's gigabyte could be read in this build.
        started = time.time()
        stored = [wait_ingested(again.port, s, timeout=180) for s in device_shas]
        print(f"     device uploads ingested after the restart in {time.time() - started:.1f} s: {stored}", flush=True)
        check("the device uploads are ingested, each cut at a limit (one malformed line)",
              all(f and f["malformed_lines"] == 1 for f in stored), f"{stored}")
        check("the million-line one kept --max-lines-device (200,000) lines",
              stored[0] and stored[0]["records"] <= 200_000, f"{stored[0]}")
    finally:
        again.stop()


REPORT_ACTIVITIES = int(os.environ.get("HOSTILE_REPORT_ACTIVITIES", "5000"))
# Documentation/Collector.md, Reports: the collector's RSS with ten report requests at once (5,000 activities:
# 129 MB measured; 20,000: 408 MB).
REPORT_RSS_BOUND_MB = int(os.environ.get("HOSTILE_REPORT_RSS_MB", "400"))
# --max-concurrent-reports (10: every request computed at once, for the figure without the cap).
REPORT_CAP = int(os.environ.get("HOSTILE_REPORT_CAP", "2"))


def reports(binary, work):
    data = os.path.join(work, "simulated")
    store = os.path.join(work, "store.sqlite")
    made = subprocess.run([binary, "simulate", "--out", data, "--activities", str(REPORT_ACTIVITIES)],
                          capture_output=True, text=True, timeout=600)
    check("a simulated fleet is written", made.returncode == 0, made.stderr[-800:])
    loaded = subprocess.run([binary, "ingest", "--db", store, data], capture_output=True, text=True, timeout=900)
    check("and ingested", loaded.returncode == 0, loaded.stderr[-800:])
    server = Server(binary, work, extra=["--max-concurrent-reports", str(REPORT_CAP)])
    try:
        check("collector starts", server.ready())
        pid = server.process.pid
        before = rss_kb(pid)
        answers = [None] * 10
        peak = [before]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], rss_kb(pid))
                time.sleep(0.02)

        def ask(index, days):
            answers[index] = request(server.port, "GET", f"/v1/report?format=html&days={days}", token=READER,
                                     timeout=300)

        sampler = threading.Thread(target=sample)
        sampler.start()
        threads = [threading.Thread(target=ask, args=(i, i + 1)) for i in range(10)]
        started = time.time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done.set()
        sampler.join()
        statuses = [a[0] for a in answers]
        print(f"     ten different reports at once: {statuses}; RSS {before >> 10} MB before, "
              f"{peak[0] >> 10} MB at most; the last answered after {time.time() - started:.1f} s", flush=True)
        check(f"at most {REPORT_CAP} are computed", 1 <= statuses.count(200) <= REPORT_CAP, f"{statuses}")
        check("the rest are answered 503 with Retry-After",
              all(a[0] == 503 and a[1].get("retry-after", "").isdigit() and b'"error"' in a[2]
                  for a in answers if a[0] != 200), f"{[(a[0], a[1].get('retry-after')) for a in answers]}")
        check(f"the collector's RSS stays under {REPORT_RSS_BOUND_MB} MB", peak[0] < REPORT_RSS_BOUND_MB << 10,
              f"{peak[0] >> 10} MB")
        computed = metric(server.port, "arrival_reports_total", result="computed")
        same = [None] * 10

        def ask_same(index):
            same[index] = request(server.port, "GET", "/v1/report?format=html", token=READER, timeout=300)

        threads = [threading.Thread(target=ask_same, args=(i,)) for i in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check("ten identical requests at once are all answered", all(a[0] == 200 for a in same),
              f"{[a[0] for a in same]}")
        check("from one computation", metric(server.port, "arrival_reports_total", result="computed") == computed + 1,
              f"{metric(server.port, 'arrival_reports_total', result='computed') - computed} computed")
        check("with the same bytes", len({a[2] for a in same}) == 1)
        # An upload ingested changes the store: the next report is computed again, not served stale.
        body = sender_log(7001)
        request(server.port, "POST", "/v1/uploads", body, token=SENDER)
        check("an upload is ingested", wait_ingested(server.port, hashlib.sha256(body).hexdigest()) is not None)
        status, _, after = request(server.port, "GET", "/v1/report?format=html", token=READER, timeout=300)
        check("a report after it is computed anew", status == 200 and after != same[0][2]
              and metric(server.port, "arrival_reports_total", result="computed") == computed + 2)
    finally:
        server.stop()


def duplicates(binary, work):
    server = Server(binary, work)
    try:
        check("collector starts", server.ready())
        bodies = [device_batch(f"dup-{n}", 4) for n in range(1500)]
        answers = {}
        lock = threading.Lock()

        def send(chunk):
            for body in chunk:
                status, _, answer = request(server.port, "POST", "/v1/uploads", body, token=DEVICE, timeout=30)
                with lock:
                    answers.setdefault(status, 0)
                    answers[status] += 1

        def round_of(items):
            threads = [threading.Thread(target=send, args=(items[i::16],)) for i in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        round_of(bodies)
        check("1,500 new uploads at once are all queued (202)", answers == {202: 1500}, f"{answers}")
        check("counted queued, none duplicate",
              metric(server.port, "arrival_uploads_total", result="queued") == 1500
              and metric(server.port, "arrival_uploads_total", result="duplicate") == 0,
              f"{metric(server.port, 'arrival_uploads_total', result='duplicate')} duplicate")
        # Each sent again (twice, at once), beside 500 new ones, while the worker ingests.
        answers.clear()
        again = bodies + bodies + [device_batch(f"dup-new-{n}", 4) for n in range(500)]
        random.Random(39).shuffle(again)
        round_of(again)
        check("re-uploads answered 200, new ones 202", answers == {200: 3000, 202: 500}, f"{answers}")
        check("duplicate count exact",
              metric(server.port, "arrival_uploads_total", result="queued") == 2000
              and metric(server.port, "arrival_uploads_total", result="duplicate") == 3000,
              f"queued {metric(server.port, 'arrival_uploads_total', result='queued')}, "
              f"duplicate {metric(server.port, 'arrival_uploads_total', result='duplicate')}")
    finally:
        server.stop()


def raw_request(port, head, body=b"", timeout=10):
    """Sends `head` (bytes, without the blank line) and `body`; (status, headers, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(head + b"\r\n\r\n" + body)
        return read_response(s)
    finally:
        s.close()


def read_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(1)
        if not chunk:
            break
        data += chunk
    return data


def http_rules(binary, work):
    server = Server(binary, work, extra=["--client-address-header", "X-Forwarded-For",
                                         "--max-uploads-per-address", "2", "--max-upload-bytes", "100000"])
    held = []
    try:
        check("collector starts", server.ready())
        # Expect: 100-continue on a valid upload: 100, then the body, then 202.
        body = device_batch("continue")
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        s.sendall((f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {DEVICE}\r\n"
                   f"Expect: 100-continue\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode())
        try:
            first = read_head(s)
        except OSError as error:
            first = repr(error).encode()
        check("Expect: 100-continue on a valid upload gets 100 Continue", first.startswith(b"HTTP/1.1 100"), first)
        s.sendall(body)
        status = read_response(s)[0]
        s.close()
        check("and the upload then 202", status == 202, f"{status}")
        for label, token, length in (("a bad token", "not-a-token-of-this-collector", 10), ("too large", DEVICE, 200000)):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            s.sendall((f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                       f"Expect: 100-continue\r\nContent-Length: {length}\r\n\r\n").encode())
            try:
                first = read_head(s)
            except OSError as error:
                first = repr(error).encode()
            s.close()
            check(f"an upload refused for {label} gets its final status without 100",
                  first.startswith(b"HTTP/1.1 401") or first.startswith(b"HTTP/1.1 413"), first)
        # Transfer-Encoding other than chunked.
        status, fields, answer = raw_request(
            server.port,
            f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {DEVICE}\r\n"
            "Transfer-Encoding: gzip, chunked".encode(),
            b"5\r\nhello\r\n0\r\n\r\n")
        check("Transfer-Encoding: gzip, chunked is refused 501 with a message",
              status == 501 and b"Transfer-Encoding" in answer, f"{status} {answer!r}")
        # X-Upload-Name.
        base = f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {DEVICE}\r\nConnection: close\r\n"
        body = device_batch("names")
        for label, header in (
            ("invalid UTF-8", b"X-Upload-Name: devices/\xff\xfe.jsonl"),
            ("two headers", b"X-Upload-Name: a.jsonl\r\nX-Upload-Name: b.jsonl"),
            (".", b"X-Upload-Name: ."),
            ("..", b"X-Upload-Name: .."),
            ("a . segment", b"X-Upload-Name: devices/./a.jsonl"),
        ):
            status, _, answer = raw_request(
                server.port, base.encode() + header + f"\r\nContent-Length: {len(body)}".encode(), body)
            check(f"X-Upload-Name with {label} is refused 400", status == 400 and b"X-Upload-Name" in answer,
                  f"{status} {answer!r}")
        status, _, answer = raw_request(
            server.port, base.encode() + "X-Upload-Name: devices/é/ok.jsonl".encode() + f"\r\nContent-Length: {len(body)}".encode(), body)
        check("a valid UTF-8 name is taken", status == 202, f"{status} {answer!r}")
        check("refused names are counted bad_name", metric(server.port, "arrival_uploads_total", result="bad_name") == 5)
        # IPv6 clients by /64 (behind a proxy, the address comes from X-Forwarded-For).
        for n in (1, 2):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=60)
            s.sendall((f"POST /v1/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {DEVICE}\r\n"
                       f"X-Forwarded-For: 2001:db8:0:7::{n}\r\nContent-Length: 5000\r\n\r\n").encode() + b"{")
            held.append(s)
        time.sleep(0.3)
        for label, address, expected in (("in the same /64", "2001:db8:0:7:ffff::9", 429),
                                         ("in another /64", "2001:db8:0:8::1", 202),
                                         ("IPv4", "192.0.2.7", 202)):
            status, fields, answer = request(server.port, "POST", "/v1/uploads", device_batch(f"v6-{label}"),
                                             token=DEVICE, headers={"X-Forwarded-For": address})
            check(f"an IPv6 client's upload from {label} gets {expected}", status == expected, f"{status} {answer!r}")
    finally:
        for s in held:
            s.close()
        server.stop()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    started = time.time()
    cases = (second_collector, stalled_clients, caps, aborted_client, shutdown, full_disk, role_dedupe, fair_queue,
             reports, duplicates, http_rules)
    only = set(sys.argv[2:])
    for case in cases:
        if only and case.__name__ not in only:
            continue
        print(f"== {case.__name__}", flush=True)
        work = tempfile.mkdtemp(prefix=f"hostile-{case.__name__}-")
        try:
            case(binary, work)
        except Exception as error:  # a case that breaks is a failure, and the others still run
            check(f"{case.__name__} ran to its end", False, repr(error))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return summary("hostile-suite", started)


def summary(suite, started):
    """Prints the time taken and 'SUITE: N passed, N failed'; the exit status: 1 on any failure."""
    failed = sum(1 for _, ok in results if not ok)
    print(f"({time.time() - started:.0f} s)")
    print(f"{suite}: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

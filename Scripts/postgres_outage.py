#!/usr/bin/env python3
"""PostgreSQL crashes under load (issue 52): what an operator sees and what is kept.

On a throwaway cluster of its own (Scripts/postgres-cluster.sh in a temporary
folder, so that no other test's server is touched):

1. Two collectors (`arrival serve`, a spool each) take a simulated fleet's
   uploads from four clients at once. At 40 % of the uploads the server is
   stopped as a crash stops it (`pg_ctl -m immediate`) and started again
   5 s later. Checked: every upload is acknowledged (200 or 202), also
   while the server is down; meanwhile `/readyz` answers 503 "the store
   cannot be read" and `arrival_store_reachable` is 0; every upload is
   ingested within 300 s of the restart, once (the registry holds each
   upload's bytes once, and a copy of bytes uploaded twice as a skipped
   re-upload); the JSON report equals the
   contract's reference implementation (Scripts/reference) on the fleet;
   each collector logged the outage's beginning at most once and its end as
   often, and at least one of them did; `arrival_store_reachable` is 1 again.
2. `arrival ingest` of the fleet into another database, the server crashed
   while it runs: it exits 1 with a message naming the store and saying to
   run the same command again, and a second
   run, once the server is back, finishes the job: the same report.

Usage: postgres_outage.py PATH-TO-ARRIVAL
Needs Debian's postgresql (as Scripts/postgres-cluster.sh does) and psql.
Prints 'postgres-outage: N passed, N failed' last; exits 1 on any failure.
"""

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile_suite import DEVICE, READER, SENDER, Server, check, free_port, metric, request, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "Scripts", "postgres-cluster.sh")
BEGAN = "the store cannot be written:"
ENDED = "the store is written again after"


class Collector(Server):
    """`arrival serve` on the PostgreSQL store at `url`, with a spool of its own (the suite's Server's stop and log)."""

    def __init__(self, binary, url, work, name, env):
        self.port = free_port()
        self.directory = work
        self.spool = os.path.join(work, f"{name}-spool")
        self.log_path = os.path.join(work, f"{name}.log")
        self.log = open(self.log_path, "w")
        environment = dict(env)
        environment.update(ARRIVAL_DEVICE_TOKENS=DEVICE, ARRIVAL_SENDER_TOKENS=SENDER, ARRIVAL_READ_TOKENS=READER)
        self.process = subprocess.Popen(
            [binary, "serve", "--db", url, "--spool", self.spool, "--port", str(self.port), "--log-level", "info"],
            stdout=self.log, stderr=subprocess.STDOUT, env=environment)

    def ready(self, timeout=60):
        """Ready: the store answers too (/readyz, where the suite's Server asks /healthz)."""
        deadline = time.time() + timeout
        while time.time() < deadline and self.process.poll() is None:
            try:
                if request(self.port, "GET", "/readyz")[0] == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.1)
        return False


def normalised(text, reference=None):
    """The report as sorted JSON; with `reference` (the reference's, normalised), each
    outliers.devices[i].p_value within a relative 1e-9 of the reference's at the same place is
    written as the reference's (contract 3.2: arrival computes it in floating point, the reference
    exactly), so that only a disagreement beyond that shows."""
    report = json.loads(text)
    if reference is not None:
        theirs = (json.loads(reference).get("outliers") or {}).get("devices") or []
        for mine, other in zip((report.get("outliers") or {}).get("devices") or [], theirs):
            a, b = mine.get("p_value"), other.get("p_value")
            if isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 1e-9 * max(abs(a), abs(b)):
                mine["p_value"] = b
    return json.dumps(report, sort_keys=True, indent=1)


def reference_report(fleet):
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "Scripts", "reference", "arrival_reference.py"), "--contract", "3.2",
         fleet], capture_output=True, text=True, check=True)
    return normalised(out.stdout)


def report(binary, url, env, reference=None):
    out = subprocess.run([binary, "report", "--db", url, "--format", "json"], capture_output=True, text=True, env=env)
    return normalised(out.stdout, reference) if out.returncode == 0 else f"exit {out.returncode}: {out.stderr}"


def psql(url, sql, env):
    out = subprocess.run(["psql", "-Atq", url, "-c", sql], capture_output=True, text=True, env=env)
    return out.stdout.strip() if out.returncode == 0 else None


def collectors_under_load(binary, work, cluster, url, env, fleet, expected):
    files = sorted(os.path.join(dirpath, name) for dirpath, _, names in os.walk(fleet) for name in names)
    random.Random(52).shuffle(files)
    first, second = Collector(binary, url, work, "first", env), Collector(binary, url, work, "second", env)
    collectors = [first, second]
    try:
        if not check("both collectors start on the throwaway server", first.ready() and second.ready()):
            return
        answers = {}
        lock = threading.Lock()
        crash_at = int(len(files) * 0.4)
        crashed = threading.Event()
        outage = {}

        def upload(index, path):
            collector = collectors[index % 2]
            name = os.path.relpath(path, fleet)
            token = SENDER if name.startswith("sender") else DEVICE
            with open(path, "rb") as f:
                body = f.read()
            status = None
            for _ in range(3):  # a connection refused by a busy loopback is tried again; a status is final
                try:
                    status = request(collector.port, "POST", "/v1/uploads", body, token=token,
                                     headers={"X-Upload-Name": name}, timeout=60)[0]
                    break
                except OSError:
                    time.sleep(0.2)
            with lock:
                answers[name] = (status, hashlib.sha256(body).hexdigest())

        def client(offset):
            for index in range(offset, len(files), 4):
                if index == crash_at and not crashed.is_set():
                    crashed.set()
                    subprocess.run([CLUSTER, "crash", cluster], check=True)
                    outage["began"] = time.time()
                upload(index, files[index])

        clients = [threading.Thread(target=client, args=(offset,)) for offset in range(4)]
        for thread in clients:
            thread.start()
        crashed.wait(timeout=300)
        # While the server is down: /readyz and the gauge say so (asked until they do, within the 5 s).
        down = {}
        while time.time() < outage.get("began", time.time()) + 4.5:
            for collector in collectors:
                status, _, body = request(collector.port, "GET", "/readyz")
                if status == 503 and b"the store cannot be read" in body and \
                        metric(collector.port, "arrival_store_reachable") == 0:
                    down[collector.port] = True
            if len(down) == 2:
                break
            time.sleep(0.2)
        check("while the server is down, /readyz answers 503 'the store cannot be read' and arrival_store_reachable "
              "is 0 on both collectors", len(down) == 2, f"seen on {len(down)} of 2")
        time.sleep(max(0.0, outage.get("began", time.time()) + 5 - time.time()))
        subprocess.run([CLUSTER, "resume", cluster], check=True)
        restarted = time.time()
        for thread in clients:
            thread.join()
        statuses = [status for status, _ in answers.values()]
        check(f"every one of the {len(files)} uploads is acknowledged (200 or 202), also while the server was down",
              len(answers) == len(files) and all(status in (200, 202) for status in statuses),
              f"{sum(1 for s in statuses if s not in (200, 202))} not acknowledged: "
              f"{sorted(set(map(str, statuses)))}")
        drained = False
        while time.time() < restarted + 300:
            if all(metric(c.port, "arrival_spool_uploads") == 0 for c in collectors):
                drained = True
                break
            time.sleep(0.5)
        check(f"every upload ingested within 300 s of the restart ({time.time() - restarted:.0f} s)", drained)
        hashes = {sha for _, sha in answers.values()}
        stored = psql(url, "SELECT count(*), count(DISTINCT content_sha256) FROM arrival.files", env)
        skipped = psql(url, "SELECT count(*) FROM arrival.skipped_files", env)
        copies = len(files) - len(hashes)  # uploads whose bytes another upload had: noted as skipped re-uploads
        check(f"the registry holds each upload's bytes once ({len(hashes)}), the {copies} copies noted as skipped",
              stored == f"{len(hashes)}|{len(hashes)}" and skipped == str(copies), f"files {stored}, skipped {skipped}")
        mine = report(binary, url, env, expected)
        check("the report equals the reference implementation's on the fleet", mine == expected,
              mine[:400] if not mine.startswith("{") else "differs")
        logs = [collector.log_text() for collector in collectors]
        began = [log.count(BEGAN) for log in logs]
        ended = [log.count(ENDED) for log in logs]
        check("each collector logged the outage's beginning at most once and its end as often, one of them at least",
              all(b <= 1 for b in began) and began == ended and sum(began) >= 1, f"began {began}, ended {ended}")
        check("arrival_store_reachable is 1 again on both collectors",
              all(metric(c.port, "arrival_store_reachable") == 1 for c in collectors))
    finally:
        for collector in collectors:
            collector.stop()


def ingest_through_a_crash(binary, cluster, url, env, fleet, expected):
    base = url.rsplit("/", 1)[0]
    psql(url, "CREATE DATABASE arrival_outage_ingest", env)
    target = base + "/arrival_outage_ingest"
    run = subprocess.Popen([binary, "ingest", fleet, "--db", target], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env)
    # Crashed once the run has stored its first batch, before it ends.
    deadline = time.time() + 120
    while time.time() < deadline and run.poll() is None:
        count = psql(target, "SELECT count(*) FROM arrival.files", env)
        if count and count != "0":
            break
        time.sleep(0.05)
    crashed_mid_run = run.poll() is None
    subprocess.run([CLUSTER, "crash", cluster], check=True)
    _, stderr = run.communicate(timeout=120)
    print(f"     arrival ingest said: {stderr.strip()[-300:]}", flush=True)
    redacted = base.replace("postgres://", "").split("@")[-1]
    check("arrival ingest, the server crashed mid-run, exits 1 with a message naming the store and saying to run it "
          "again",
          crashed_mid_run and run.returncode == 1 and redacted in stderr and "error" in stderr.lower()
          and "run the same command again" in stderr,
          f"mid-run {crashed_mid_run}, exit {run.returncode}: {stderr[-400:]}")
    subprocess.run([CLUSTER, "resume", cluster], check=True)
    again = subprocess.run([binary, "ingest", fleet, "--db", target, "--quiet"], capture_output=True, text=True,
                           env=env)
    check("run again once the server is back, it finishes the job: the reference's report",
          again.returncode == 0 and report(binary, target, env, expected) == expected, f"exit {again.returncode}: {again.stderr}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    binary = os.path.abspath(sys.argv[1])
    started = time.time()
    work = tempfile.mkdtemp(prefix="postgres-outage-")
    cluster = os.path.join(work, "cluster")
    try:
        os.chmod(work, 0o755)
        out = subprocess.run([CLUSTER, "start", cluster], capture_output=True, text=True, check=True).stdout
        env = dict(os.environ)
        for line in out.splitlines():
            key, value = line.removeprefix("export ").split("=", 1)
            env[key] = value
        url = env["ARRIVAL_TEST_POSTGRES_URL"]
        fleet = os.path.join(work, "fleet")
        subprocess.run([binary, "simulate", "--out", fleet, "--activities", "1200", "--seed", "52"], check=True,
                       capture_output=True)
        expected = reference_report(fleet)
        print("== collectors under load", flush=True)
        collectors_under_load(binary, work, cluster, url, env, fleet, expected)
        print("== arrival ingest", flush=True)
        ingest_through_a_crash(binary, cluster, url, env, fleet, expected)
    except Exception as error:
        check("the outage checks ran to their end", False, repr(error))
    finally:
        subprocess.run([CLUSTER, "stop", cluster], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return summary("postgres-outage", started)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Copies a simulated fleet directory, rewriting most `apns` lines of its
sender files into `exchange` lines (contract 2.6) of the three providers.

Usage:
    python3 Scripts/reference/exchangify.py IN_DIR OUT_DIR --seed N
        [--providers apns,fcm,tencent_chat] [--keep 0.15] [--damage 0.01]

IN_DIR is a tree written by `arrival simulate` (sender batches of `apns`
lines, plain or gzip; device trees of render and callback lines). OUT_DIR
must not exist yet (or be empty). Every file is copied byte for byte, except
files holding valid `apns` lines, where each such line is, by a choice seeded
by --seed and the record itself:
  * kept as it is (share --keep),
  * or rewritten as an exchange with one of --providers:
      - `apns`: a faithful HTTP/2 exchange with APNs whose derived record is
        the original record (its `provider` was absent or "apns"): same
        apns_id, sent_at, status, reason, token, seq, event, aps_timestamp,
        payload_bytes (the body is padded to exactly that many UTF-8
        bytes), topic, push_type, priority, environment, latency_ms;
      - `fcm`: a plausible FCM HTTP v1 `messages:send` exchange for the same
        push; APNs errors come back as FCM errors, some with APNs's answer
        relayed in an ApnsError detail, some only as an FcmError code or an
        `error.status`;
      - `tencent_chat`: a plausible Tencent Cloud Chat push (needs the
        record's activity_id as `LaId`); APNs-side errors come back as
        business errors (`ErrorCode`) at HTTP 200, server errors as HTTP 5xx;
    a line that cannot be written faithfully for `apns` (no payload_bytes, a
    token unfit for a URL path, a 200 with a reason, ...) is kept as it is;
  * and a share --damage of the rewritten lines is then broken in one of the
    ways 2.6 makes malformed (no url, a header value that is a number, a
    body that is not JSON, repeats a key or nests past 64, no
    aps.timestamp, a response without status, an unknown provider, ...).
Header names are written in mixed case. The choices depend only on --seed
and the record (not on file order or names), so a record that appears twice
becomes the same exchange twice (still a duplicate record), and two files
with the same bytes still have the same bytes. A rewritten gzip file is
written as one gzip member (member boundaries are not line boundaries, so
nothing changes for ingest). A gzip file that breaks off is rewritten as one
that breaks off right after the same (rewritten) decoded text.
Links and FIFOs are recreated as links and FIFOs; sockets and devices are
left out (with a note on stderr).

With `--providers apns --keep 0 --damage 0` the copy is report-equivalent to
the original: every derived record equals its original line.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import stat
import sys
import zlib
from typing import Any, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arrival_reference as ref  # noqa: E402

PROVIDERS = ("apns", "fcm", "tencent_chat")
# How a sender's log might spell header names.
CASE_STYLES = (str.lower, str.lower, str.title, str.upper,
               lambda s: s.replace("apns", "APNs"))

APNS_HOSTS = {"production": ["api.push.apple.com", "api.push.apple.com:443",
                             "api.push.apple.com:2197", "API.PUSH.APPLE.COM"],
              "sandbox": ["api.sandbox.push.apple.com",
                          "api.development.push.apple.com:443"]}
GATEWAY_HOSTS = ["apns-gateway.internal.example.net:8443", "17.188.143.34"]
FCM_PROJECT = "arrival-demo"
TENCENT_APP = "1400123456"
FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
APNS_ERROR = "type.googleapis.com/google.firebase.fcm.v1.ApnsError"
FILLER = ("Second half under way, pressing high, corner cleared, "
          "substitution warming up, driver two stops away, ")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def hex_of(*parts: Any, n: int = 16) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:n]


# --------------------------------------------------------------------------
# Payloads
# --------------------------------------------------------------------------

def aps_payload(rec: ref.Record, detail: bool = False) -> dict:
    """The APNs payload: aps.timestamp/event/content-state.seq as the record
    says (absent where the record has null); `detail`: an empty
    content-state.detail for padded_body to fill."""
    aps: dict = {"timestamp": rec.aps_timestamp}
    if rec.event is not None:
        aps["event"] = rec.event
    state: dict = {}
    if rec.seq is not None:
        state["seq"] = rec.seq
    if detail:
        state["detail"] = ""
    aps["content-state"] = state
    if rec.event == "end":
        aps["dismissal-date"] = rec.aps_timestamp + 1800
    return {"aps": aps}


def padded_body(payload: dict, size: Optional[int]) -> Optional[str]:
    """The payload's JSON text, padded through content-state.detail to
    exactly `size` UTF-8 bytes (None: as short as it gets). None when the
    payload cannot be that small."""
    text = dumps(payload)
    if size is None:
        return text
    gap = size - len(text.encode("utf-8"))
    if gap < 0:
        return None
    filler = (FILLER * (gap // len(FILLER) + 1))[:gap]  # ASCII: 1 byte each
    payload["aps"]["content-state"]["detail"] = filler
    text = dumps(payload)
    assert len(text.encode("utf-8")) == size
    return text


def cased(rng: random.Random, headers: dict) -> dict:
    style = rng.choice(CASE_STYLES)
    return {style(k): v for k, v in headers.items()}


def priority_header(priority: Optional[int]) -> Optional[str]:
    if priority is None:
        return None
    text = str(priority)
    return text if text.isdigit() and 1 <= len(text) <= 18 else ""  # "": unfit


# --------------------------------------------------------------------------
# apns: a faithful exchange
# --------------------------------------------------------------------------

def apns_exchange(rng: random.Random, rec: ref.Record, raw: dict) -> Optional[dict]:
    token = rec.push_token
    if token == "" or any(c in token for c in "/?#"):
        return None                  # not a /3/device/<token> path
    if rec.status == 200 and rec.reason is not None:
        return None                  # a 200 derives reason null
    prio = priority_header(rec.priority)
    if prio == "":
        return None                  # not 1 to 18 digits
    body = padded_body(aps_payload(rec, detail=True), rec.payload_bytes)
    if body is None or rec.payload_bytes is None:
        return None

    x: dict = {"v": 1, "kind": "exchange", "provider": "apns",
               "sent_at": raw["sent_at"]}
    env = rec.environment
    if env in APNS_HOSTS and rng.random() < 0.8:
        host = rng.choice(APNS_HOSTS[env])          # the URL says it
    else:
        host = rng.choice(APNS_HOSTS["production"] + GATEWAY_HOSTS)
        if env is None:
            host = rng.choice(GATEWAY_HOSTS)        # derives null
        else:
            x["environment"] = env                  # the exchange says it
    if rec.activity_id is not None:
        x["activity_id"] = rec.activity_id
    url = f"https://{host}/3/device/{token}"
    if rng.random() < 0.05:
        url += "?trace=" + hex_of(rec.values, n=8)

    headers = {"authorization": "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMyJ9.e30.c2ln"}
    if rec.topic is not None:
        headers["apns-topic"] = rec.topic
    if rec.push_type is not None:
        headers["apns-push-type"] = rec.push_type
    if prio is not None:
        headers["apns-priority"] = prio
    if rng.random() < 0.3:
        headers["apns-expiration"] = str(rec.aps_timestamp + 3600)
    if rec.apns_id != "" and (rec.status == 0 or rng.random() < 0.5):
        headers["apns-id"] = rec.apns_id             # the sender chose it
    x["request"] = {"method": "POST", "url": url,
                    "headers": cased(rng, headers), "body": body}

    if rec.status == 0:                             # no answer came
        if rng.random() < 0.3:
            x["response"] = None
        if rec.reason is not None:
            x["error"] = rec.reason
    else:
        response: dict = {"status": rec.status}
        if rec.apns_id != "":
            response["headers"] = cased(rng, {"apns-id": rec.apns_id})
        if rec.status != 200:
            if rec.reason is not None:
                answer: dict = {"reason": rec.reason}
                if rec.status == 410:
                    answer["timestamp"] = rec.sent_at - 3_600_000
                response["body"] = dumps(answer)
            elif rng.random() < 0.5:
                response["body"] = "<html><body>upstream error</body></html>"
        x["response"] = response
    if rec.latency_ms is not None:
        x["latency_ms"] = rec.latency_ms
    return x


# --------------------------------------------------------------------------
# fcm and tencent_chat: plausible exchanges
# --------------------------------------------------------------------------

def fcm_response(rng: random.Random, rec: ref.Record) -> Optional[dict]:
    """FCM's answer to the push APNs answered with rec.status/reason."""
    def error(code: int, status: str, message: str, details: Optional[list] = None) -> dict:
        e: dict = {"code": code, "message": message, "status": status}
        if details is not None:
            e["details"] = details
        return {"status": code,
                "headers": {"Content-Type": "application/json; charset=UTF-8"},
                "body": dumps({"error": e})}

    def relayed() -> dict:
        d: dict = {"@type": APNS_ERROR, "statusCode": rec.status}
        if rec.reason is not None:
            d["reason"] = rec.reason
        return d

    s, reason = rec.status, rec.reason
    if s == 0:
        return None
    if s == 200:
        name = (f"projects/{FCM_PROJECT}/messages/0:{rec.sent_at}"
                f"{hex_of(rec.values, n=6)}%{hex_of(rec.push_token, n=16)}")
        return {"status": 200,
                "headers": {"Content-Type": "application/json; charset=UTF-8"},
                "body": dumps({"name": name})}
    r = rng.random()
    if s == 410 or reason == "Unregistered":
        details = [{"@type": FCM_ERROR, "errorCode": "UNREGISTERED"}]
        if r < 0.6:
            details.append(relayed())
        return error(404, "NOT_FOUND", "Requested entity was not found.", details)
    if s == 400 or s == 413:
        details = [{"@type": FCM_ERROR, "errorCode": "INVALID_ARGUMENT"}]
        if r < 0.5:
            details.append(relayed())
        return error(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", details)
    if s == 403:
        return error(401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service",
                     [{"@type": FCM_ERROR, "errorCode": "THIRD_PARTY_AUTH_ERROR"}])
    if s == 429:
        if r < 0.4:
            return error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric "
                         "'Send requests' of service 'fcm.googleapis.com'.")
        if r < 0.8:
            return error(429, "RESOURCE_EXHAUSTED", "Quota exceeded.",
                         [{"@type": FCM_ERROR, "errorCode": "QUOTA_EXCEEDED"}])
        return error(429, "RESOURCE_EXHAUSTED", "APNs throttled the request.",
                     [{"@type": FCM_ERROR, "errorCode": "UNAVAILABLE"}, relayed()])
    if s >= 500:
        if r < 0.5:
            return {"status": 503, "body": dumps({"error": {"status": "UNAVAILABLE"}})}
        return error(500, "INTERNAL", "Internal error encountered.",
                     [{"@type": FCM_ERROR, "errorCode": "INTERNAL"}])
    return error(s, "UNKNOWN", "Unknown error.")


def fcm_exchange(rng: random.Random, rec: ref.Record, raw: dict) -> Optional[dict]:
    if rec.push_token == "":
        return None
    headers = {}
    if rec.priority is not None:
        headers["apns-priority"] = str(rec.priority)
    if rec.topic is not None:
        headers["apns-topic"] = rec.topic
    if rec.push_type is not None:
        headers["apns-push-type"] = rec.push_type
    message = {"token": f"{hex_of(rec.push_token, n=11)}:APA91b{hex_of('fcm', rec.push_token, n=40)}",
               "apns": {"live_activity_token": rec.push_token,
                        "headers": cased(rng, headers),
                        "payload": aps_payload(rec)}}
    x: dict = {"v": 1, "kind": "exchange", "provider": "fcm", "sent_at": raw["sent_at"]}
    if rec.activity_id is not None:
        x["activity_id"] = rec.activity_id
    if rec.environment is not None and rng.random() < 0.5:
        x["environment"] = rec.environment
    x["request"] = {"method": "POST",
                    "url": f"https://fcm.googleapis.com/v1/projects/{FCM_PROJECT}/messages:send",
                    "headers": cased(rng, {"authorization": "Bearer ya29.c.placeholder",
                                           "content-type": "application/json; charset=UTF-8"}),
                    "body": dumps({"message": message})}
    response = fcm_response(rng, rec)
    if response is None:
        x["error"] = rec.reason or "context deadline exceeded"
    else:
        x["response"] = response
    if rec.latency_ms is not None:
        x["latency_ms"] = rec.latency_ms + (rng.randrange(20, 120) if response else 0)
    return x


# Business errors at HTTP 200 (ErrorCode), by what APNs would have said.
TENCENT_ERRORS = {
    "Unregistered": (70107, "To_Account does not exist"),
    "BadDeviceToken": (20003, "invalid UserID"),
    "PayloadTooLarge": (90005, "message body too long"),
    "TooManyRequests": (90026, "request frequency limit exceeded"),
}


def tencent_exchange(rng: random.Random, rec: ref.Record, raw: dict) -> Optional[dict]:
    if rec.activity_id is None or rec.activity_id == "":
        return None                      # LaId is the activity id
    live: dict = {"LaId": rec.activity_id}
    if rec.event is not None:
        live["Event"] = rec.event
    live["ContentState"] = {"seq": rec.seq} if rec.seq is not None else {}
    if rec.event == "end":
        live["DismissalDate"] = rec.aps_timestamp + 1800
    rnd = int(hex_of(rec.values, n=7), 16)
    all_members = rng.random() < 0.2
    body = {"From_Account": "administrator", "MsgRandom": rnd,
            "MsgBody": [{"MsgType": "TIMCustomElem", "MsgContent": {"Data": "live_activity"}}],
            "OfflinePushInfo": {"PushFlag": 0, "Desc": "Live Activity update",
                                "ApnsInfo": {"Sound": "", "BadgeMode": 1, "LiveActivity": live}}}
    if not all_members:
        body = {"SyncOtherMachine": 2, "To_Account": f"user_{hex_of(rec.push_token, n=6)}", **body}
    endpoint = "all_member_push/im_push" if all_members else "openim/sendmsg"
    x: dict = {"v": 1, "kind": "exchange", "provider": "tencent_chat", "sent_at": raw["sent_at"]}
    if rng.random() < 0.3:
        x["activity_id"] = rec.activity_id   # not read for tencent_chat
    if rec.environment is not None:
        x["environment"] = rec.environment
    x["request"] = {"method": "POST",
                    "url": (f"https://console.tim.qq.com/v4/{endpoint}?sdkappid={TENCENT_APP}"
                            f"&identifier=administrator&usersig=eJw.placeholder&random={rnd}"
                            "&contenttype=json"),
                    "headers": cased(rng, {"content-type": "application/json"}),
                    "body": dumps(body)}
    key = ({"TaskId": f"{hex_of('task', rec.values, n=8)}-{hex_of(rnd, n=4)}"} if all_members
           else {"MsgKey": f"{rnd % 100000}_{hex_of(rec.values, n=6)}_{rec.sent_at // 1000}"})
    if rec.status == 0:
        x["error"] = rec.reason or "dial tcp 203.205.239.133:443: i/o timeout"
    elif rec.status == 200:
        x["response"] = {"status": 200, "headers": {"Content-Type": "application/json"},
                         "body": dumps({"ActionStatus": "OK", "ErrorInfo": "", "ErrorCode": 0,
                                        **key})}
    elif rec.status >= 500:
        x["response"] = {"status": rng.choice((500, 502, 504)), "body": ""}
    else:
        code, info = TENCENT_ERRORS.get(rec.reason or "", (80002, "internal error"))
        answer: dict = {"ActionStatus": "FAIL", "ErrorInfo": info, "ErrorCode": code}
        if rng.random() < 0.1:
            answer["ErrorCode"] = str(code)    # a proxy that stringifies: Tencent:unknown
        x["response"] = {"status": 200, "headers": {"Content-Type": "application/json"},
                         "body": dumps(answer)}
    if rec.latency_ms is not None:
        x["latency_ms"] = rec.latency_ms + rng.randrange(50, 300)
    return x


BUILDERS = {"apns": apns_exchange, "fcm": fcm_exchange, "tencent_chat": tencent_exchange}


# --------------------------------------------------------------------------
# Damage: the ways 2.6 makes an exchange line malformed
# --------------------------------------------------------------------------

def _set_body(x: dict, text: str) -> None:
    x["request"]["body"] = text


def _repeat_first_key(x: dict) -> None:
    body = x["request"]["body"]
    first = next(iter(json.loads(body)))
    _set_body(x, body[:-1] + "," + json.dumps(first) + ":null}")


DAMAGES = [
    ("no url", lambda x, rng: x["request"].pop("url")),
    ("url a number", lambda x, rng: x["request"].__setitem__("url", 443)),
    ("header value a number",
     lambda x, rng: x["request"].setdefault("headers", {}).__setitem__("apns-priority", 10)),
    ("body not an object", lambda x, rng: _set_body(x, "[1]")),
    ("body not JSON", lambda x, rng: _set_body(x, x["request"]["body"][:-2])),
    ("repeated key in body", lambda x, rng: _repeat_first_key(x)),
    ("body nested past 64",
     lambda x, rng: _set_body(x, x["request"]["body"][:-1] + ',"deep":' + "[" * 64 + "]" * 64 + "}")),
    ("response without status",
     lambda x, rng: x.__setitem__("response", {"headers": {}, "body": ""})),
    ("unknown provider", lambda x, rng: x.__setitem__("provider", "onesignal")),
    ("sent_at without seconds",
     lambda x, rng: x.__setitem__("sent_at", x["sent_at"][:16] + "Z")),
]


def strip_aps_timestamp(x: dict, rng: random.Random) -> None:
    body = json.loads(x["request"]["body"])
    aps = body["aps"] if x["provider"] == "apns" else body["message"]["apns"]["payload"]["aps"]
    if rng.random() < 0.5:
        del aps["timestamp"]
    else:
        aps["timestamp"] = aps["timestamp"] + 0.5
    _set_body(x, dumps(body))


def empty_token(x: dict, rng: random.Random) -> None:
    if x["provider"] == "apns":
        x["request"]["url"] = x["request"]["url"].split("/3/device/")[0] + "/3/device/"
    elif x["provider"] == "fcm":
        body = json.loads(x["request"]["body"])
        body["message"]["apns"]["live_activity_token"] = ""
        _set_body(x, dumps(body))
    else:
        body = json.loads(x["request"]["body"])
        del body["OfflinePushInfo"]["ApnsInfo"]["LiveActivity"]["LaId"]
        _set_body(x, dumps(body))


def damage(x: dict, rng: random.Random) -> str:
    kinds = DAMAGES + [("no token / LaId", empty_token)]
    if x["provider"] != "tencent_chat":
        kinds.append(("aps.timestamp missing or not an integer", strip_aps_timestamp))
    name, fn = rng.choice(kinds)
    fn(x, rng)
    return name


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------

class Exchangifier:
    def __init__(self, seed: int, providers: list[str], keep: float, damage_share: float):
        self.seed = seed
        self.providers = providers
        self.keep = keep
        self.damage_share = damage_share
        self.counts: dict[str, int] = {}

    def count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def rewrite_line(self, line: bytes) -> Optional[bytes]:
        """The exchange line for a valid apns line, or None to keep it."""
        try:
            rec = ref.parse_line(line)
            raw = json.loads(line)
        except (ref.Malformed, ValueError):
            return None
        if rec.kind != "apns" or rec.provider != "apns":
            return None
        # One generator per record, seeded by --seed and the record's values:
        # the same record always gets the same treatment.
        rng = random.Random(f"{self.seed}:{rec.values!r}")
        if rng.random() < self.keep:
            self.count("kept")
            return None
        # A sender mostly talks to one provider per token; a few requests go
        # another way (a fallback path, a migration).
        stream = random.Random(f"{self.seed}:{rec.push_token}:{rec.topic}")
        order = self.providers[:]
        stream.shuffle(order)
        if rng.random() < 0.1:
            rng.shuffle(order)
        for provider in order:
            x = BUILDERS[provider](rng, rec, raw)
            if x is not None:
                break
        else:
            self.count("unrepresentable")
            return None
        # Unknown fields of the original (e.g. sender_host) ride along.
        known = {spec.name for spec in ref.SCHEMAS["apns"]} | {"v", "kind"}
        for k, v in raw.items():
            if k not in known and k not in x:
                x[k] = v
        if rng.random() < self.damage_share:
            self.count("damaged: " + damage(x, rng))
        else:
            self.count(x["provider"])
        return dumps(x).encode("utf-8")

    def rewrite(self, data: bytes) -> Optional[bytes]:
        """New content for a file, or None when nothing changes."""
        gz = data[:2] == ref.GZIP_MAGIC
        broken = False
        if gz:
            data, broken = ref.gunzip_salvage(data)
        changed = False
        out = []
        for part in data.split(b"\n"):
            cr = part.endswith(b"\r")
            new = self.rewrite_line(part[:-1] if cr else part)
            if new is not None:
                part = new + (b"\r" if cr else b"")
                changed = True
            out.append(part)
        if not changed:
            return None
        text = b"\n".join(out)
        if not gz:
            return text
        if not broken:
            return gzip.compress(text, compresslevel=6, mtime=0)
        # A stream that broke off stays broken, right after the same decoded
        # text: a gzip member flushed but never finished (no final block, no
        # trailer), so a reader decodes all of `text` and then meets the end.
        z = zlib.compressobj(6, zlib.DEFLATED, 31)
        return z.compress(text) + z.flush(zlib.Z_SYNC_FLUSH)

    def copy_tree(self, src: str, dst: str) -> None:
        os.makedirs(dst, exist_ok=True)
        with os.scandir(src) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            target = os.path.join(dst, e.name)
            st = os.lstat(e.path)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(e.path), target)
            elif stat.S_ISDIR(st.st_mode):
                self.copy_tree(e.path, target)
            elif stat.S_ISREG(st.st_mode):
                with open(e.path, "rb") as f:
                    data = f.read()
                new = self.rewrite(data)
                with open(target, "wb") as f:
                    f.write(data if new is None else new)
                os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
            elif stat.S_ISFIFO(st.st_mode):
                os.mkfifo(target)
            else:
                print(f"exchangify: left out {e.path} (socket or device)", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("in_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--providers", default=",".join(PROVIDERS),
                        help="comma-separated subset of apns,fcm,tencent_chat")
    parser.add_argument("--keep", type=float, default=0.15,
                        help="share of apns lines kept as they are (default 0.15)")
    parser.add_argument("--damage", type=float, default=0.01,
                        help="share of exchange lines damaged (default 0.01)")
    args = parser.parse_args()
    providers = [p for p in args.providers.split(",") if p]
    if not providers or any(p not in PROVIDERS for p in providers):
        parser.error(f"--providers: a comma-separated subset of {','.join(PROVIDERS)}")
    if not os.path.isdir(args.in_dir):
        parser.error(f"{args.in_dir}: not a directory")
    if os.path.exists(args.out_dir) and (not os.path.isdir(args.out_dir) or os.listdir(args.out_dir)):
        parser.error(f"{args.out_dir}: exists and is not an empty directory")
    x = Exchangifier(args.seed, providers, args.keep, args.damage)
    x.copy_tree(args.in_dir, args.out_dir)
    summary = ", ".join(f"{k}={v}" for k, v in sorted(x.counts.items()))
    print(f"exchangify: {args.in_dir} -> {args.out_dir} (seed {args.seed}): {summary}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

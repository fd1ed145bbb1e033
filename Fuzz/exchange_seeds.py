"""Seed lines for the fuzz target's `exchange` records (Fuzz/README.md).

`exchange_lines()` gives realistic exchanges of the three providers (APNs,
FCM HTTP v1, Tencent Cloud Chat) as senders log them: successes, refusals,
FCM error bodies with ApnsError / FcmError details, Tencent ActionStatus /
ErrorCode bodies, timeouts with "error", header names in mixed case; then
every way Documentation/InputRecords.md says an exchange can be broken, and
`apns` lines with a `provider`. Scripts/fuzz.sh adds them to the seed corpus.
"""

import copy
import json

TOKEN = "3f9c1e0b7a5d42e8c6b1f0a9d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9"
SENT = "2026-11-21T09:14:03.412Z"
APNS_ID = "1F0C6B52-7E0A-4C47-9B0E-3D2A55E0C1A9"


def dumps(value, spaced=False):
    if spaced:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def aps(seq=7, event="update", timestamp=1795252443):
    a = {"timestamp": timestamp, "event": event, "content-state": {"seq": seq, "eta": "9 min", "driver": "Ana"}}
    a["alert"] = {"title": "Your ride", "body": "Arriving in 9 min"}
    return a


def apns_exchange(**edit):
    line = {
        "v": 1,
        "kind": "exchange",
        "provider": "apns",
        "sent_at": SENT,
        "request": {
            "url": f"https://api.push.apple.com:443/3/device/{TOKEN}",
            "headers": {
                "apns-topic": "com.example.rides.push-type.liveactivity",
                "apns-push-type": "liveactivity",
                "apns-priority": "10",
                "apns-expiration": "0",
                "authorization": "bearer eyJhbGciOiJFUzI1NiJ9.e30.sig",
            },
            "body": dumps({"aps": aps()}),
        },
        "response": {"status": 200, "headers": {"apns-id": APNS_ID, "apns-unique-id": "a2c1"}},
        "latency_ms": 41,
        "activity_id": "ride-4c1d",
    }
    line.update(edit)
    return line


def fcm_body(token=TOKEN, headers=None, payload=None, event="update"):
    return dumps(
        {
            "message": {
                "token": "fcm-registration-token-abc",
                "apns": {
                    "live_activity_token": token,
                    "headers": headers
                    if headers is not None
                    else {"apns-priority": "10", "apns-push-type": "liveactivity", "apns-topic": "com.example.rides.push-type.liveactivity"},
                    "payload": payload if payload is not None else {"aps": aps(seq=3, event=event)},
                },
            }
        }
    )


def fcm_exchange(**edit):
    line = {
        "kind": "exchange",
        "provider": "fcm",
        "sent_at": "2026-11-21T17:14:03.412+08:00",
        "request": {
            "url": "https://fcm.googleapis.com/v1/projects/rides-prod/messages:send",
            "headers": {"Authorization": "Bearer ya29.a0Af", "Content-Type": "application/json; UTF-8"},
            "body": fcm_body(),
        },
        "response": {
            "status": 200,
            "headers": {"content-type": "application/json; charset=UTF-8"},
            "body": dumps({"name": "projects/rides-prod/messages/0:1795252443412%31bd1c9631bd1c96"}, spaced=True),
        },
        "latency_ms": 187,
        "activity_id": "ride-77",
        "environment": "production",
    }
    line.update(edit)
    return line


def fcm_error(status, code, details):
    return {"status": status, "body": dumps({"error": {"code": status, "message": "msg", "status": code, "details": details}}, spaced=True)}


APNS_ERROR = "type.googleapis.com/google.firebase.fcm.v1.ApnsError"
FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"


def tencent_body(la_id="ride-9", event="update", seq=4):
    return dumps(
        {
            "From_Account": "admin",
            "MsgRandom": 1795252443,
            "MsgBody": [{"MsgType": "TIMCustomElem", "MsgContent": {"Data": "la"}}],
            "OfflinePushInfo": {
                "PushFlag": 0,
                "Title": "Ride",
                "ApnsInfo": {
                    "Sound": "default",
                    "LiveActivity": {"LaId": la_id, "Event": event, "ContentState": {"seq": seq, "eta": "3 min"}, "DismissalDate": 1795256000},
                },
            },
        }
    )


def tencent_exchange(**edit):
    line = {
        "v": 1,
        "kind": "exchange",
        "provider": "tencent_chat",
        "sent_at": "2026-11-21T09:14:03.999Z",
        "request": {
            "url": "https://console.tim.qq.com/v4/openim/batchsendmsg?sdkappid=1400000000&identifier=admin&usersig=x&random=99&contenttype=json",
            "body": tencent_body(),
        },
        "response": {
            "status": 200,
            "body": dumps({"ActionStatus": "OK", "ErrorInfo": "", "ErrorCode": 0, "MsgKey": "144115212910464446_1795252443_6", "TaskId": "task-1"}),
        },
        "latency_ms": 95,
    }
    line.update(edit)
    return line


def with_part(line, part, edit):
    """A copy of `line` with `edit` applied to its `part` object (DROP removes a key)."""
    line = copy.deepcopy(line)
    line[part].update(edit)
    for key, value in list(line[part].items()):
        if value is DROP:
            del line[part][key]
    return line


def with_request(line, **edit):
    return with_part(line, "request", edit)


def with_response(line, **edit):
    return with_part(line, "response", edit)


def without(line, key):
    line = copy.deepcopy(line)
    del line[key]
    return line


DROP = object()


def exchange_lines():
    good, broken = [], []

    # APNs: success, headers in mixed case and repeated in other cases, refusals, timeouts.
    good.append(apns_exchange())
    good.append(with_request(apns_exchange(), headers={"APNs-Topic": "com.example.rides.push-type.liveactivity", "APNS-PUSH-TYPE": "liveactivity", "Apns-Priority": "5", "apns-priority": "10", "APNS-ID": "REQUEST-ID"}))
    good.append(with_response(apns_exchange(), status=410, headers={"Apns-Id": APNS_ID}, body=dumps({"reason": "Unregistered", "timestamp": 1795252400000})))
    good.append(with_response(apns_exchange(), status=400, headers={}, body=dumps({"reason": "BadDeviceToken"})))
    good.append(with_response(apns_exchange(), status=413, headers=DROP, body=dumps({"reason": "PayloadTooLarge"}, spaced=True)))
    good.append(with_response(apns_exchange(), status=429, body="not json at all"))
    good.append(with_response(apns_exchange(), status=500, body="[\"reason\"]"))
    good.append(with_response(apns_exchange(), status=200, body="{broken"))
    good.append(apns_exchange(response=None, error="timeout after 10000 ms", latency_ms=None))
    good.append(without(apns_exchange(error="connection reset by peer"), "response"))
    good.append(apns_exchange(environment="sandbox", activity_id=None))
    good.append(with_request(apns_exchange(), url=f"https://api.sandbox.push.apple.com/3/device/{TOKEN}?x=1#frag", headers=DROP))
    good.append(with_request(apns_exchange(), url=f"https://API.Development.Push.Apple.com:2197/3/device/{TOKEN}", headers={"apns-priority": "010", "apns-id": "req"}))
    good.append(with_request(apns_exchange(), url=f"http://localhost:8080/3/device/{TOKEN}", headers={"apns-priority": "1234567890123456789"}))
    good.append(with_request(apns_exchange(), url=f"https://user:pw@api.push.apple.com/3/device/{TOKEN}", headers={"apns-priority": "+5"}))
    good.append(with_request(apns_exchange(), body=dumps({"aps": {"timestamp": 1795252443, "event": "start", "content-state": {"seq": 1}}, "attributes-type": "RideAttributes"})))
    good.append(with_request(apns_exchange(), body=dumps({"aps": {"timestamp": -1, "event": "resume", "content-state": {"seq": 1.5}}}, spaced=True)))
    good.append(with_request(apns_exchange(), body=dumps({"aps": {"timestamp": 9223372036854775807, "event": 3, "content-state": []}, "é": "ü"})))
    good.append(with_request(apns_exchange(), body=json.dumps({"aps": {"timestamp": 1795252443, "event": "end"}, "note": "é\u2028😀"})))

    # FCM: success, ApnsError relayed, FcmError, error.status only, timeouts.
    good.append(fcm_exchange())
    good.append(with_response(fcm_exchange(), body=dumps({"nope": 1})))
    good.append(with_response(fcm_exchange(), **fcm_error(400, "INVALID_ARGUMENT", [
        {"@type": FCM_ERROR, "errorCode": "INVALID_ARGUMENT"},
        {"@type": APNS_ERROR, "statusCode": 400, "reason": "BadDeviceToken"},
    ])))
    good.append(with_response(fcm_exchange(), **fcm_error(404, "NOT_FOUND", [
        {"@type": APNS_ERROR, "statusCode": "410", "reason": "Unregistered"},
        {"@type": APNS_ERROR, "statusCode": 410, "reason": "Unregistered"},
    ])))
    good.append(with_response(fcm_exchange(), **fcm_error(404, "NOT_FOUND", [
        {"@type": APNS_ERROR, "statusCode": 410},
    ])))
    good.append(with_response(fcm_exchange(), **fcm_error(404, "NOT_FOUND", [
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []},
        {"@type": FCM_ERROR, "errorCode": "UNREGISTERED"},
        {"@type": FCM_ERROR, "errorCode": "SENDER_ID_MISMATCH"},
    ])))
    good.append(with_response(fcm_exchange(), **fcm_error(403, "PERMISSION_DENIED", [{"@type": FCM_ERROR}])))
    good.append(with_response(fcm_exchange(), **fcm_error(503, "UNAVAILABLE", [])))
    good.append(with_response(fcm_exchange(), status=429, body=dumps({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}})))
    good.append(with_response(fcm_exchange(), status=500, body="<html>Internal error</html>"))
    good.append(with_response(fcm_exchange(), status=401, body=DROP))
    good.append(fcm_exchange(response=None, error="deadline exceeded"))
    good.append(with_request(fcm_exchange(), url="", body=fcm_body(headers={"APNs-Priority": "5", "APNS-TOPIC": "t"}, event="start")))
    good.append(with_request(fcm_exchange(), body=fcm_body(headers={}, payload={"aps": {"timestamp": 0, "content-state": {"seq": -9223372036854775808}}})))

    # Tencent Cloud Chat: OK, ErrorCode refusals, other statuses, timeouts.
    good.append(tencent_exchange())
    good.append(with_response(tencent_exchange(), body=dumps({"ActionStatus": "FAIL", "ErrorInfo": "invalid LaId", "ErrorCode": 90001})))
    good.append(with_response(tencent_exchange(), body=dumps({"ActionStatus": "OK", "ErrorCode": "0", "TaskId": "task-7"})))
    good.append(with_response(tencent_exchange(), body=dumps({"ActionStatus": "OK", "ErrorCode": -0, "MsgKey": 5, "TaskId": "t"})))
    good.append(with_response(tencent_exchange(), body=dumps({"ActionStatus": "ok", "ErrorCode": 0})))
    good.append(with_response(tencent_exchange(), status=502, body="Bad Gateway"))
    good.append(with_response(tencent_exchange(), status=200, body=DROP))
    good.append(tencent_exchange(response=None, error="i/o timeout", activity_id="ignored", sent_at="1969-12-31T23:59:59.5Z"))
    good.append(with_request(tencent_exchange(), body=tencent_body(event="end", seq=10), headers={"Content-Type": "application/json"}))
    good.append(with_request(tencent_exchange(), body=tencent_body(event="pause", seq="4")))

    # Broken: the exchange's own fields (missing_field, wrong_type, invalid_enum, invalid_time).
    base = apns_exchange()
    broken.append(without(base, "provider"))
    broken.append(apns_exchange(provider="sns"))
    broken.append(apns_exchange(provider=1))
    broken.append(apns_exchange(sent_at="2026-11-21 09:14:03Z"))
    broken.append(without(base, "sent_at"))
    broken.append(without(base, "request"))
    broken.append(apns_exchange(request="GET /3/device"))
    broken.append(apns_exchange(response=[200]))
    broken.append(apns_exchange(error=504))
    broken.append(apns_exchange(latency_ms=41.5))
    broken.append(apns_exchange(activity_id=7))
    broken.append(apns_exchange(environment=True))
    # Broken: inside request and response, and what each provider needs (invalid_exchange).
    broken.append(with_request(base, url=DROP))
    broken.append(with_request(base, url=None))
    broken.append(with_request(base, url=["https://api.push.apple.com"]))
    broken.append(with_request(base, url="https://api.push.apple.com/3/device/"))
    broken.append(with_request(base, url=f"https://api.push.apple.com/3/device/{TOKEN}/"))
    broken.append(with_request(base, url=f"/3/device/{TOKEN}"))
    broken.append(with_request(base, url=f"https://api.push.apple.com/3/devices/{TOKEN}"))
    broken.append(with_request(base, headers=["apns-id"]))
    broken.append(with_request(base, headers={"apns-id": None}))
    broken.append(with_request(base, headers={"apns-priority": 10}))
    broken.append(with_request(base, body=DROP))
    broken.append(with_request(base, body={"aps": aps()}))
    broken.append(with_request(base, body=""))
    broken.append(with_request(base, body="[1]"))
    broken.append(with_request(base, body='{"aps":{"timestamp":1},"aps":{}}'))
    broken.append(with_request(base, body="[" * 64 + "]" * 64))
    broken.append(with_request(base, body='{"a":' * 64 + "1" + "}" * 64))  # depth 64: fine, but no aps
    broken.append(with_request(base, body='{"aps":{"timestamp":1},"b":' + "[" * 64 + "]" * 64 + "}"))  # depth 65
    broken.append(with_request(base, body='{"aps":{"timestamp":1}'))
    broken.append(with_request(base, body='{"aps":{"timestamp":"1795252443"}}'))
    broken.append(with_request(base, body='{"aps":{"timestamp":1.0}}'))
    broken.append(with_request(base, body='{"aps":{}}'))
    broken.append(with_request(base, body='{"aps":[]}'))
    broken.append(with_request(base, body='{"aps":{"timestamp":\\u0031}}'))
    broken.append(with_response(base, status=DROP))
    broken.append(with_response(base, status="200"))
    broken.append(with_response(base, status=200.0))
    broken.append(with_response(base, headers={"apns-id": 1}))
    broken.append(with_response(base, headers="apns-id: x"))
    broken.append(with_response(base, body={"reason": "BadDeviceToken"}))
    broken.append(with_request(fcm_exchange(), body=dumps({"message": {"apns": "x"}})))
    broken.append(with_request(fcm_exchange(), body=dumps({"message": {"token": "x"}})))
    broken.append(with_request(fcm_exchange(), body=fcm_body(token="")))
    broken.append(with_request(fcm_exchange(), body=fcm_body(token=7)))
    broken.append(with_request(fcm_exchange(), body=fcm_body(payload={"aps": {"event": "update"}})))
    broken.append(with_request(fcm_exchange(), body=fcm_body(payload={})))
    broken.append(with_request(fcm_exchange(), body=fcm_body(headers={"apns-priority": 10})))
    broken.append(with_request(fcm_exchange(), body=fcm_body(headers="apns-priority: 10")))
    broken.append(with_request(fcm_exchange(), url=DROP))
    broken.append(with_request(tencent_exchange(), body=tencent_body(la_id="")))
    broken.append(with_request(tencent_exchange(), body=tencent_body(la_id=None)))
    broken.append(with_request(tencent_exchange(), body=dumps({"OfflinePushInfo": {"ApnsInfo": {"LiveActivity": []}}})))
    broken.append(with_request(tencent_exchange(), body=dumps({"OfflinePushInfo": {"ApnsInfo": {}}})))
    broken.append(with_response(tencent_exchange(), status=DROP))

    # `apns` lines with a provider.
    plain = {
        "v": 1, "kind": "apns", "apns_id": APNS_ID, "sent_at": SENT, "status": 200, "push_token": TOKEN,
        "activity_id": "ride-4c1d", "seq": 7, "event": "update", "aps_timestamp": 1795252443, "payload_bytes": 944,
        "topic": "com.example.rides.push-type.liveactivity", "push_type": "liveactivity", "priority": 10,
        "environment": "production", "latency_ms": 41,
    }
    for provider in ["apns", "fcm", "tencent_chat", None, "FCM", 3]:
        good.append(dict(plain, provider=provider))
    good.append(dict(plain, provider="fcm", status=410, reason="FCM:UNREGISTERED", apns_id=""))
    good.append(dict(plain, provider="tencent_chat", status=400, reason="Tencent:90001", push_token="", apns_id="144115212910464446_1795252443_6"))

    good += corner_cases()
    good += broadcast_cases()

    lines = [dumps(line).encode() for line in good + broken]
    # A few whole small files: an exchange and the plain record of the same request, CRLF ends.
    same = dumps(good[0]).encode() + b"\r\n" + dumps(dict(plain, provider="apns", activity_id="ride-4c1d", reason=None)).encode() + b"\n"
    lines.append(same)
    lines.append(b"\n".join(dumps(line).encode() for line in good[19:22]) + b"\n")
    return lines


def broadcast_cases():
    """Contract 3.0's broadcasts, one corner a line: `/4/broadcasts/apps/` exchanges (the channel
    header, apns-request-id before apns-id, the topic from the path, the broadcast hosts, a path
    alone, no channel, an empty one, an activity, a bundle id with `/`), plain broadcast records
    (a token or an activity on one, an empty or numeric channel), `channel_id` on renders and
    callbacks, and `channel_subscription` with and without its channel."""
    body = dumps({"aps": {"timestamp": 1, "event": "update", "content-state": {"seq": 3}}})
    lines = []
    for url in ["https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example", "/4/broadcasts/apps/com.example",
                "https://API-BROADCAST.sandbox.push.apple.com:443/4/broadcasts/apps/com.example?x#y",
                "https://api-broadcast.push.apple.com/4/broadcasts/apps/", "https://h/4/broadcasts/apps/a/b",
                "https://api-broadcast.push.apple.com/3/device/t", "/4/broadcasts/app/com.example"]:
        for headers in [{"apns-channel-id": "Y2gx"}, {"APNS-Channel-Id": "c", "apns-channel-id": "d", "apns-topic": "t"},
                        {}, {"apns-channel-id": ""}, {"apns-channel-id": 5}]:
            line = compact("apns", body, {"status": 200, "headers": {"apns-request-id": "R", "apns-id": "I"}}, headers=headers)
            line["request"]["url"] = url
            lines.append(line)
    line = compact("apns", body, {"status": 400, "headers": {"apns-id": "I"}, "body": dumps({"reason": "BadChannelId"})},
                   headers={"apns-channel-id": "c", "apns-request-id": "Q"})
    line["request"]["url"] = "/4/broadcasts/apps/a"
    lines.append(line)
    lines.append(dict(line, activity_id="a"))
    lines.append(dict(line, activity_id=None, channel_id="ignored"))
    plain = {"kind": "apns", "apns_id": "b", "sent_at": "2026-11-21T09:14:03Z", "status": 200, "aps_timestamp": 1, "seq": 3}
    for extra in [{"channel_id": "c"}, {"channel_id": "c", "push_token": None, "activity_id": None},
                  {"channel_id": "c", "push_token": "t"}, {"channel_id": "c", "activity_id": "a"}, {"channel_id": ""},
                  {"channel_id": "", "push_token": "t"}, {"channel_id": 7, "push_token": "t"}, {"channel_id": None, "push_token": "t"}]:
        lines.append(dict(plain, **extra))
    render = {"kind": "render", "activity_id": "a", "seq": 1, "rendered_at": "2026-11-21T09:14:03Z"}
    for extra in [{"channel_id": "c"}, {"channel_id": ""}, {"channel_id": "", "device_id": 1}, {"channel_id": []}]:
        lines.append(dict(render, **extra))
    callback = {"kind": "callback", "activity_id": "a", "received_at": "2026-11-21T09:14:03Z"}
    for extra in [{"callback": "channel_subscription", "channel_id": "c"}, {"callback": "channel_subscription"},
                  {"callback": "channel_subscription", "channel_id": "", "received_at": "x"},
                  {"callback": "push_token", "push_token": "t", "channel_id": "c"}, {"callback": "content_update", "seq": 1, "channel_id": 0}]:
        lines.append(dict(callback, **extra))
    return lines


def compact(provider, body, response, headers=None, **edit):
    """A short exchange: short lines give libFuzzer's byte mutations better odds of meaning something."""
    request = {"url": "https://api.push.apple.com/3/device/t", "body": body}
    if headers is not None:
        request["headers"] = headers
    line = {"kind": "exchange", "provider": provider, "sent_at": "2026-11-21T09:14:03Z", "request": request}
    if response is not None:
        line["response"] = response
    line.update(edit)
    return line


def corner_cases():
    """Each rule's corners, one line each: the first of two headers in other cases, the response
    read or not read, FCM's detail search, Tencent's ErrorCode, URL forms."""
    apns_body = dumps({"aps": {"timestamp": 1, "event": "end", "content-state": {"seq": 2}}})
    fcm = dumps({"message": {"apns": {"live_activity_token": "t", "headers": {"apns-priority": "5", "APNS-PRIORITY": "10", "Apns-Topic": "a", "apns-topic": "b"}, "payload": {"aps": {"timestamp": 1}}}}})
    tencent = dumps({"OfflinePushInfo": {"ApnsInfo": {"LiveActivity": {"LaId": "l", "Event": "start", "ContentState": {"seq": 1}}}}})
    lines = []
    # APNs: which apns-id, topic, priority counts; a body read only for a status other than 200.
    for headers in [{"apns-id": "A", "APNS-ID": "B"}, {"Apns-Priority": "10", "apns-priority": "5"},
                    {"apns-topic": "t", "APNS-TOPIC": "u", "apns-push-type": "x", "Apns-Push-Type": "y"},
                    {"apns-priority": "1:"}, {"apns-priority": "0010"}, {"apns-priority": "999999999999999999"},
                    {"apns-priority": "1234567890123456789"}, {}]:
        lines.append(compact("apns", apns_body, {"status": 200, "headers": {"apns-id": "R1", "Apns-Id": "R2"}}, headers))
    for response in [{"status": 200, "body": dumps({"reason": "X"})}, {"status": 410, "body": dumps({"reason": "Unregistered"})},
                     {"status": 410, "body": dumps({"reason": 5})}, {"status": 410, "body": '{"reason":"a","reason":"b"}'},
                     {"status": 400, "body": " \n" + dumps({"reason": "BadDeviceToken"}) + "\t"}, {"status": 0}, {"status": -1},
                     {"status": 410, "headers": {"apns-id": ""}}, {"status": 200, "body": None, "headers": None}]:
        lines.append(compact("apns", apns_body, response, {"apns-id": "REQ"}, error="ignored"))
    lines.append(compact("apns", apns_body, None, error="timeout", environment="sandbox"))
    for url in ["https://api.push.apple.com/3/device/abc%2F", "x?https://h/3/device/t", "https://a@b@api.push.apple.com/3/device/t@x",
                "https://[::1]:443/3/device/t", "https:///3/device/t", "a:b://api.push.apple.com/3/device/t",
                "https://api.push.apple.com/3/DEVICE/t", "https://api.push.apple.com#/3/device/t", "://api.push.apple.com/3/device/t",
                "https://API.PUSH.APPLE.COM:abc/3/device/t", "https://api.push.apple.com/3/device/t?", " https://api.push.apple.com/3/device/t ",
                "https://api.sandbox.push.apple.com./3/device/t", "https://x/3/device/t/", "https://x/3/device/?t"]:
        line = compact("apns", apns_body, {"status": 200})
        line["request"]["url"] = url
        lines.append(line)
    # FCM: name at 200; the first ApnsError with an int statusCode; else FcmError's errorCode, else error.status.
    for response in [{"status": 200, "body": dumps({"name": "n"})}, {"status": 200, "body": dumps({"name": 5})},
                     {"status": 200, "body": dumps({"error": {"status": "X"}})},
                     fcm_error(404, "NOT_FOUND", [{"@type": APNS_ERROR, "statusCode": "410"}, {"@type": APNS_ERROR, "statusCode": 410, "reason": "Unregistered"}]),
                     fcm_error(404, "NOT_FOUND", [{"@type": FCM_ERROR, "errorCode": "UNREGISTERED"}, {"@type": APNS_ERROR, "statusCode": 403}]),
                     fcm_error(400, "STATUS", [{"@type": FCM_ERROR}, {"@type": FCM_ERROR, "errorCode": "SECOND"}]),
                     fcm_error(400, "STATUS", [{"@type": FCM_ERROR, "errorCode": 3}]),
                     fcm_error(400, "STATUS", [None, 1, "x", [], {"@type": ["google.firebase.fcm.v1.ApnsError"], "statusCode": 1},
                                               {"@type": "google.firebase.fcm.v1.ApnsError", "statusCode": 4.1e2}]),
                     {"status": 400, "body": dumps({"error": {"status": "S", "details": {"@type": APNS_ERROR, "statusCode": 1}}})},
                     {"status": 400, "body": dumps({"error": {"status": 5}})}, {"status": 400, "body": dumps({"error": None})}]:
        lines.append(compact("fcm", fcm, response))
    # Tencent: 200 only with ActionStatus "OK" and ErrorCode the int 0; MsgKey, else TaskId.
    for body in [{"ActionStatus": "OK", "ErrorCode": 0, "MsgKey": "k", "TaskId": "t"}, {"ActionStatus": "OK", "ErrorCode": "0", "MsgKey": 1, "TaskId": "t"},
                 {"ActionStatus": "FAIL", "ErrorCode": 0, "MsgKey": ""}, {"ActionStatus": "OK", "ErrorCode": 0, "MsgKey": "", "TaskId": "t"}, {"ActionStatus": "OK", "ErrorCode": 1}, {"ActionStatus": "OK"},
                 {"ActionStatus": "OK", "ErrorCode": -9223372036854775808}, {"ActionStatus": "OK", "ErrorCode": 0.0}]:
        lines.append(compact("tencent_chat", tencent, {"status": 200, "body": dumps(body)}))
        lines.append(compact("tencent_chat", tencent, {"status": 503, "body": dumps(body)}))
    lines.append(compact("tencent_chat", tencent, {"status": 200, "body": '{"ActionStatus":"\\u004fK","ErrorCode":-0}'}))
    lines.append(compact("tencent_chat", tencent, None, error="i/o timeout", sent_at="1969-12-31T23:59:59.001Z"))
    lines.append(compact("tencent_chat", tencent, None, sent_at="0000-01-01T00:00:00.999+23:59"))
    return lines

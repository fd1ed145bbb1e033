"""Sends one Live Activity update through Tencent Cloud Chat and logs the exchange as an
arrival `exchange` line. Python 3.9+ with httpx (pip install httpx).

    TENCENT_SDKAPPID=1400000000 TENCENT_USERSIG=<sig> python3 tencent_send.py
"""
import json, os, random, time
from datetime import datetime, timezone

import httpx

base = os.environ.get("TENCENT_BASE_URL", "https://console.tim.qq.com")
url = (f"{base}/v4/openim/sendmsg?sdkappid={os.environ.get('TENCENT_SDKAPPID', '1400000000')}"
       f"&identifier=administrator&usersig={os.environ.get('TENCENT_USERSIG', '')}"
       f"&random={random.randrange(2**32)}&contenttype=json")
body = json.dumps({
    "SyncOtherMachine": 2, "To_Account": "rider-42", "MsgRandom": random.randrange(2**32),
    "MsgBody": [{"MsgType": "TIMCustomElem", "MsgContent": {"Data": "eta"}}],
    "OfflinePushInfo": {"PushFlag": 0, "ApnsInfo": {"LiveActivity": {
        "LaId": "match-9e01", "Event": "update", "ContentState": {"seq": 7, "score": "2-1"}}}},
})

# --- arrival: log what was sent and what came back ---
started = time.time()
line = {"v": 1, "kind": "exchange", "provider": "tencent_chat",
        "sent_at": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="milliseconds"),
        "request": {"url": url, "headers": {"content-type": "application/json"}, "body": body}}
try:
    res = httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=10)
    line["response"] = {"status": res.status_code, "headers": dict(res.headers), "body": res.text}
except httpx.HTTPError as error:
    line["error"] = repr(error)  # no answer: arrival records status 0 with this text
line["latency_ms"] = round((time.time() - started) * 1000)
with open(f"exchanges-{line['sent_at'][:10]}.jsonl", "a", encoding="utf-8") as log:
    log.write(json.dumps(line, ensure_ascii=False) + "\n")

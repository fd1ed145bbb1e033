// Sends one Live Activity update through Firebase Cloud Messaging (HTTP v1) and logs the
// exchange as an arrival `exchange` line. Node 18+ (global fetch), no dependencies.
//
//   FCM_PROJECT=my-project FCM_ACCESS_TOKEN=$(gcloud auth print-access-token) \
//   LIVE_ACTIVITY_TOKEN=<hex> node fcm-send.mjs
import { appendFileSync } from "node:fs";

const url = `${process.env.FCM_BASE_URL ?? "https://fcm.googleapis.com"}/v1/projects/${process.env.FCM_PROJECT}/messages:send`;
const seq = 7; // your own counter, also carried in content-state
const body = JSON.stringify({
  message: {
    token: process.env.FCM_REGISTRATION_TOKEN ?? "device-registration-token",
    apns: {
      live_activity_token: process.env.LIVE_ACTIVITY_TOKEN,
      headers: { "apns-priority": "10", "apns-push-type": "liveactivity",
                 "apns-topic": "com.example.delivery.push-type.liveactivity" },
      payload: { aps: { event: "update", timestamp: Math.floor(Date.now() / 1000),
                        "content-state": { seq, eta: "12 min" } } },
    },
  },
});
const headers = { "content-type": "application/json", authorization: `Bearer ${process.env.FCM_ACCESS_TOKEN}` };

// --- arrival: log what was sent and what came back (about ten lines) ---
const started = Date.now();
const line = { v: 1, kind: "exchange", provider: "fcm", sent_at: new Date(started).toISOString(),
               activity_id: "order-71c2", request: { url, headers: { "content-type": headers["content-type"] }, body } };
try {
  const res = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
  line.response = { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
} catch (error) {
  line.error = String(error.cause ?? error); // no answer: arrival records status 0 with this text
}
line.latency_ms = Date.now() - started;
appendFileSync(`exchanges-${line.sent_at.slice(0, 10)}.jsonl`, JSON.stringify(line) + "\n");

#!/usr/bin/env bash
# Runs the README's sender examples (Examples/senders: Node fetch to FCM, Go net/http to
# APNs, Python httpx to Tencent Cloud Chat) against a local stand-in for the three
# services, then once against a port nobody listens on, and ingests what they logged:
# every line must be a valid exchange, and arrival must derive the expected records.
#
#   Scripts/sender-examples.sh [path/to/arrival]
# Needs node (18+), go and python3 with httpx; a missing one fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
arrival="$(realpath "${1:-.build/debug/arrival}")"
examples="$PWD/Examples/senders"
work=$(mktemp -d)
trap 'kill "${mock:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
for tool in node go python3; do
    command -v "$tool" >/dev/null || { echo "sender-examples: $tool is missing" >&2; exit 1; }
done
python3 -c "import httpx" 2>/dev/null || { echo "sender-examples: python3 lacks httpx (pip install httpx)" >&2; exit 1; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$examples/mock_providers.py" "$port" &
mock=$!
for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    sleep 0.1
done
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

export GOCACHE="$work/go-cache" GOPATH="$work/go" GOFLAGS=-mod=mod
cd "$work"
token=3f9c1e0b7a5d42e8c6b1f0a9d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9
for base in "http://127.0.0.1:$port" "http://127.0.0.1:$closed"; do
    FCM_BASE_URL=$base FCM_PROJECT=rides-prod FCM_ACCESS_TOKEN=x LIVE_ACTIVITY_TOKEN=$token node "$examples/fcm-send.mjs"
    APNS_BASE_URL=$base APNS_JWT=x LIVE_ACTIVITY_TOKEN=$token go run "$examples/apns_send.go"
    TENCENT_BASE_URL=$base python3 "$examples/tencent_send.py"
done
"$arrival" ingest --strict --quiet --db store.sqlite exchanges-*.jsonl
"$arrival" report --db store.sqlite >report.json
python3 - report.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
requests, providers = report["requests"], report["breakdowns"]["provider"]
problems = []
if requests["total"] != 6 or requests["accepted"] != 3:
    problems.append(f"expected 6 requests, 3 accepted: {requests}")
if requests["by_reason"] and sum(requests["by_reason"].values()) != 3:
    problems.append(f"expected 3 transport errors: {requests['by_reason']}")
for name in ("apns", "fcm", "tencent_chat"):
    counts = providers.get(name)
    if not counts or counts["sent"] != 1 or counts["accepted"] != 1:
        problems.append(f"provider {name}: expected one update, accepted: {counts}")
print("sender-examples: " + ("; ".join(problems) if problems else "6 exchanges logged by Node, Go and Python, all derived as expected"))
sys.exit(1 if problems else 0)
PY

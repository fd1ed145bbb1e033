#!/usr/bin/env bash
# Load on the collector over loopback (README, "The collector"): 64 clients
# upload distinct ~10 KB device batches for SECONDS with wrk, then the spool
# drains; and `arrival ingest` reads files of the same shape, for the worker's
# drain rate to be compared with.
#
#   Benchmarks/collector/run.sh [SECONDS] [CONNECTIONS]     (defaults: 20 64)
#
# Needs wrk (Debian: apt-get install wrk). Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-20}
connections=${2:-64}
swift build -c release --product arrival >/dev/null
arrival=.build/release/arrival
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export TOKEN=bench-device-token-0123456789
ARRIVAL_DEVICE_TOKENS=$TOKEN ARRIVAL_READ_TOKENS=bench-read-token-0123456789 \
    "$arrival" serve --db "$work/store.sqlite" --spool "$work/spool" --port "$port" --log-level warning \
    >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done

metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v name="$1" '$1 == name {print $2}'; }
echo "wrk: $connections connections, $seconds s, 2 threads"
wrk -t2 -c"$connections" -d"${seconds}s" --timeout 10s -s Benchmarks/collector/upload.lua \
    "http://127.0.0.1:$port" | grep -E '^(acknowledged|latency|non-2xx)'
rss=$(awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$server/status")
queued=$(metric arrival_spool_uploads)
started=$(date +%s.%N)
while [ "$(metric arrival_spool_uploads)" != "0.0" ]; do sleep 0.2; done
drained=$(echo "$(date +%s.%N) - $started" | bc)
records=$(sqlite3 "$work/store.sqlite" 'SELECT count(*) FROM renders')
echo "server peak RSS: $rss MB"
printf 'spool left at the end of the load: %.0f uploads, drained in %.2f s\n' "$queued" "$drained"
printf 'stored: %s render records\n' "$records"
ingested=$(metric arrival_uploads_ingested_total)
echo "uploads ingested by the worker: $ingested"

# The same shape of files through arrival ingest, for the drain rate's yardstick.
python3 - "$work/files" <<'PY'
import os, sys
out = sys.argv[1]
os.makedirs(out)
pad = "x" * 150
for n in range(5000):
    activity = f"file-{n}"
    lines = [f'{{"v":1,"kind":"render","activity_id":"{activity}","seq":{seq},"rendered_at":"2026-11-21T08:{seq % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z","surface":"lock_screen","device_id":"{activity}","os_version":"18.1","app_version":"4.2.0","note":"{pad}"}}' for seq in range(1, 41)]
    with open(os.path.join(out, f"{activity}.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
PY
started=$(date +%s.%N)
"$arrival" ingest --quiet --db "$work/ingest.sqlite" "$work/files"
elapsed=$(echo "$(date +%s.%N) - $started" | bc)
printf 'arrival ingest of 5,000 such files (200,000 records): %.2f s, %.0f records/s\n' "$elapsed" \
    "$(echo "200000 / $elapsed" | bc)"

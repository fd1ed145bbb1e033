-- wrk script: each request uploads a distinct ~10 KB device batch (40 render
-- records of one activity) with the device token, as the kit's uploader does.
-- Environment: TOKEN; PREFIX (default "bench") starts every activity id, so that
-- several wrk processes at once send distinct batches.
local counter = 0
local thread_id = 0
local lines = 40

function setup(thread)
    thread_id = thread_id + 1
    thread:set("id", thread_id)
end

function init(args)
    counter = 0
end

local pad = string.rep("x", 150)

request = function()
    counter = counter + 1
    local activity = string.format("%s-%d-%d", os.getenv("PREFIX") or "bench", id, counter)
    local parts = {}
    for seq = 1, lines do
        parts[seq] = string.format(
            '{"v":1,"kind":"render","activity_id":"%s","seq":%d,"rendered_at":"2026-11-21T08:%02d:%02d.%03dZ","surface":"lock_screen","device_id":"%s","os_version":"18.1","app_version":"4.2.0","note":"%s"}',
            activity, seq, seq % 60, counter % 60, counter % 1000, activity, pad)
    end
    local body = table.concat(parts, "\n") .. "\n"
    local headers = {}
    headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
    headers["X-Upload-Name"] = "beacons/" .. activity .. ".jsonl"
    headers["Content-Type"] = "application/octet-stream"
    return wrk.format("POST", "/v1/uploads", headers, body)
end

done = function(summary, latency, requests)
    local ok = summary.requests - summary.errors.status - summary.errors.connect - summary.errors.read
        - summary.errors.write - summary.errors.timeout
    io.write(string.format("acknowledged: %d of %d requests in %.2f s: %.0f uploads/s\n", ok, summary.requests,
        summary.duration / 1e6, ok / (summary.duration / 1e6)))
    io.write(string.format("latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n", latency:percentile(50) / 1000,
        latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
    io.write(string.format("non-2xx answers: %d, socket errors: %d\n", summary.errors.status,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end

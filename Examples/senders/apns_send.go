// Sends one Live Activity update straight to APNs and logs the exchange as an arrival
// `exchange` line. Go 1.19+, standard library only (net/http speaks HTTP/2 to APNs over TLS).
//
//	APNS_JWT=<provider token> LIVE_ACTIVITY_TOKEN=<hex> go run apns_send.go
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	base := os.Getenv("APNS_BASE_URL")
	if base == "" {
		base = "https://api.push.apple.com"
	}
	url := base + "/3/device/" + os.Getenv("LIVE_ACTIVITY_TOKEN")
	body := fmt.Sprintf(`{"aps":{"event":"update","timestamp":%d,"content-state":{"seq":7,"eta":"4 min"}}}`, time.Now().Unix())
	headers := map[string]string{"apns-topic": "com.example.rides.push-type.liveactivity",
		"apns-push-type": "liveactivity", "apns-priority": "10"}
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for name, value := range headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("authorization", "bearer "+os.Getenv("APNS_JWT"))

	// --- arrival: log what was sent and what came back ---
	started := time.Now()
	line := map[string]any{"v": 1, "kind": "exchange", "provider": "apns", "activity_id": "ride-4c1d",
		"sent_at": started.UTC().Format(time.RFC3339Nano),
		"request": map[string]any{"url": url, "headers": headers, "body": body}}
	client := &http.Client{Timeout: 10 * time.Second}
	if res, err := client.Do(req); err != nil {
		line["error"] = err.Error() // no answer: arrival records status 0 with this text
	} else {
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		line["response"] = map[string]any{"status": res.StatusCode,
			"headers": map[string]string{"apns-id": res.Header.Get("apns-id")}, "body": string(answer)}
	}
	line["latency_ms"] = time.Since(started).Milliseconds()
	file, _ := os.OpenFile("exchanges-"+started.UTC().Format("2006-01-02")+".jsonl",
		os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	defer file.Close()
	encoded, _ := json.Marshal(line) // one Write of one whole line: appends from several processes do not interleave
	file.Write(append(encoded, '\n'))
}

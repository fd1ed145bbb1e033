import ArrivalIngest
import ArrivalModel
import ArrivalSender
import ArrivalTestSupport
import Foundation
import Testing

@Suite("Broadcast recording")
struct BroadcastRecordingTests {
    /// 2026-11-21T08:00:00Z.
    static let sentAt = date(ms: 1_795_248_000_000)
    static let channel = "dHN/MQ+x/A=="
    static let payload = Data(
        #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":12,"score":"2-1"}}}"#.utf8)

    static func broadcast(
        path: String = "/4/broadcasts/apps/com.example.scores", headers: [String: String]? = nil,
        response: APNsExchange.Response? = .init(status: 200, headers: ["apns-request-id": "R-1"])
    ) -> APNsExchange {
        APNsExchange(
            sentAt: sentAt,
            request: .init(
                path: path,
                headers: headers ?? [
                    "apns-channel-id": channel, "apns-push-type": "liveactivity", "apns-priority": "10",
                    "authorization": "bearer secret",
                ],
                payload: payload),
            response: response, latency: 0.021)
    }

    @Test("A broadcast becomes an apns record with channel_id, without push_token or activity_id")
    func record() throws {
        let record = try APNsLogRecord(exchange: Self.broadcast())
        #expect(record.isBroadcast && record.channelID == Self.channel)
        #expect(record.pushToken == "" && record.activityID == nil)
        #expect(record.apnsID == "R-1" && record.status == 200 && record.seq == 12)
        // No apns-topic header: the bundle id from the path.
        #expect(record.topic == "com.example.scores")
        #expect(
            String(decoding: record.jsonLine(), as: UTF8.self)
                == #"{"v":1,"kind":"apns","apns_id":"R-1","sent_at":"2026-11-21T08:00:00.000Z","status":200,"seq":12,"event":"update","aps_timestamp":1795248000,"payload_bytes":\#(Self.payload.count),"topic":"com.example.scores","push_type":"liveactivity","priority":10,"latency_ms":21,"channel_id":"dHN/MQ+x/A=="}"#
                + "\n")
    }

    @Test("apns_id is apns-request-id, then the answer's apns-id, then the request's apns-request-id and apns-id")
    func apnsIDOrder() throws {
        var headers = [
            "apns-channel-id": Self.channel, "apns-push-type": "liveactivity", "apns-request-id": "Q-1",
            "apns-id": "Q-2", "apns-topic": "com.example.scores.push-type.liveactivity",
        ]
        let answered = try APNsLogRecord(
            exchange: Self.broadcast(
                headers: headers, response: .init(status: 200, headers: ["APNs-Request-Id": "R-1", "apns-id": "R-2"])))
        #expect(answered.apnsID == "R-1" && answered.topic == "com.example.scores.push-type.liveactivity")
        let onlyID = try APNsLogRecord(
            exchange: Self.broadcast(headers: headers, response: .init(status: 200, headers: ["apns-id": "R-2"])))
        #expect(onlyID.apnsID == "R-2")
        let unanswered = try APNsLogRecord(exchange: Self.broadcast(headers: headers, response: nil))
        #expect(unanswered.apnsID == "Q-1" && unanswered.status == 0)
        headers["apns-request-id"] = nil
        #expect(try APNsLogRecord(exchange: Self.broadcast(headers: headers, response: nil)).apnsID == "Q-2")
        let tooLarge = try APNsLogRecord(
            exchange: Self.broadcast(
                headers: headers, response: .init(status: 413, body: Data(#"{"reason":"PayloadTooLarge"}"#.utf8))))
        #expect(tooLarge.status == 413 && tooLarge.reason == "PayloadTooLarge" && tooLarge.isBroadcast)
    }

    @Test("A broadcast without a channel id, or given an activity id, is refused with what to do")
    func refusals() {
        #expect(throws: APNsLogRecord.Failure.noChannelID(path: "/4/broadcasts/apps/com.example.scores")) {
            try APNsLogRecord(exchange: Self.broadcast(headers: ["apns-push-type": "liveactivity"]))
        }
        #expect(throws: APNsLogRecord.Failure.noChannelID(path: "/4/broadcasts/apps/com.example.scores")) {
            try APNsLogRecord(exchange: Self.broadcast(headers: ["apns-channel-id": ""]))
        }
        #expect(throws: APNsLogRecord.Failure.activityIDOnBroadcast) {
            try APNsLogRecord(exchange: Self.broadcast(), activityID: "match-1")
        }
        // A path with nothing after /apps/ is neither a broadcast nor a device push.
        #expect(throws: APNsLogRecord.Failure.noDeviceToken(path: "/4/broadcasts/apps/")) {
            try APNsLogRecord(exchange: Self.broadcast(path: "/4/broadcasts/apps/"))
        }
    }

    @Test("As an exchange, a broadcast goes to the broadcast host of its environment, credentials redacted")
    func exchangeLines() throws {
        let production = PushExchange(Self.broadcast())
        #expect(production.request.url == "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.scores")
        let sandbox = PushExchange(Self.broadcast(), environment: "sandbox")
        #expect(
            sandbox.request.url == "https://api-broadcast.sandbox.push.apple.com/4/broadcasts/apps/com.example.scores")
        let device = PushExchange(
            APNsExchange(
                sentAt: Self.sentAt, request: .init(path: "/3/device/abc", headers: [:], payload: Self.payload),
                response: nil))
        #expect(device.request.url == "https://api.push.apple.com/3/device/abc")

        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = APNsResponseRecorder(.init(directory: directory, apnsLines: .exchange))
        let record = try recorder.record(Self.broadcast())
        try recorder.close()
        #expect(record.channelID == Self.channel)
        var written: [String] = []
        _ = try LineReader().read(path: directory.path + "/2026-11-21/apns-08.jsonl.gz") { line in
            written.append(line.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
        #expect(written.count == 1)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: Any])
        let request = try #require(json["request"] as? [String: Any])
        let headers = try #require(request["headers"] as? [String: String])
        #expect(json["kind"] as? String == "exchange" && json["provider"] as? String == "apns")
        #expect(
            request["url"] as? String == "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.scores")
        #expect(headers["apns-channel-id"] == Self.channel && headers["authorization"] == "REDACTED")
        #expect(((json["response"] as? [String: Any])?["headers"] as? [String: String])?["apns-request-id"] == "R-1")
        #expect(json["activity_id"] == nil)
    }

    @Test("An exchange that cannot make a broadcast record is refused before it is logged")
    func exchangeValidation() {
        func exchange(_ headers: [String: String], activityID: String? = nil) -> PushExchange {
            PushExchange(
                provider: .apns, sentAt: Self.sentAt,
                request: .init(
                    url: "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.scores", headers: headers,
                    body: Self.payload),
                response: nil, activityID: activityID)
        }
        #expect(throws: PushExchange.Failure.noChannelID(url: exchange([:]).request.url)) {
            try exchange(["apns-push-type": "liveactivity"]).validate()
        }
        #expect(throws: PushExchange.Failure.activityIDOnBroadcast) {
            try exchange(["APNs-Channel-Id": Self.channel], activityID: "match-1").validate()
        }
        #expect(throws: Never.self) { try exchange(["APNs-Channel-Id": Self.channel]).validate() }
        #expect(PushExchange.apnsBroadcastBundleID(url: "/4/broadcasts/apps/com.x?debug#f") == "com.x")
        #expect(PushExchange.apnsBroadcastBundleID(url: "https://h:443/4/broadcasts/apps/a/b") == nil)
    }
}

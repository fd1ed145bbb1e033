import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalSender

@Suite("PushExchange recording")
struct PushExchangeRecordingTests {
    /// 2026-11-21T08:00:00Z.
    static let sentAt = date(ms: 1_795_248_000_000)
    static let activityPayload =
        #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":3,"eta":"8 min","note":"café \"front\" door\n2nd floor"}}}"#

    /// An FCM HTTP v1 `messages:send` of a Live Activity update, with the
    /// header names in the mixed case senders write them.
    static let fcmBody = Data(
        #"{"message":{"token":"fcm-registration-token","apns":{"live_activity_token":"5f2c1a9e0b7d4c3e","headers":{"APNs-Priority":"10","apns-push-type":"liveactivity","apns-topic":"com.example.delivery.push-type.liveactivity"},"payload":\#(activityPayload)}}}"#
            .utf8)

    static func fcm(response: PushExchange.Response?, error: String? = nil) -> PushExchange {
        PushExchange(
            provider: .fcm, sentAt: sentAt,
            request: .init(
                url: "https://fcm.googleapis.com/v1/projects/example-app/messages:send",
                headers: [
                    "Content-Type": "application/json; charset=UTF-8", "Authorization": "Bearer ya29.secret",
                    "x-goog-api-client": "arrival-test",
                ],
                body: fcmBody),
            response: response, transportError: error, latency: 0.042, activityID: "order-1")
    }

    static let tencentBody = Data(
        #"{"From_Account":"administrator","To_Account":["user-17"],"MsgRandom":7,"MsgBody":[{"MsgType":"TIMCustomElem","MsgContent":{"Data":"la"}}],"OfflinePushInfo":{"PushFlag":0,"ApnsInfo":{"LiveActivity":{"LaId":"order-1","Event":"end","ContentState":{"seq":4,"status":"delivered"},"DismissalDate":1795251600}}}}"#
            .utf8)

    static func tencent(response: PushExchange.Response?) -> PushExchange {
        PushExchange(
            provider: .tencentChat, sentAt: sentAt.addingTimeInterval(1.5),
            request: .init(
                url:
                    "https://console.tim.qq.com/v4/timpush/batch?sdkappid=1400000001&identifier=administrator&usersig=eJwtzE0LgjAY&random=99&contenttype=json",
                headers: ["Content-Type": "application/json"], body: tencentBody),
            response: response, latency: 0.31, environment: "production")
    }

    static let fcmError = Data(
        #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"},{"@type":"type.googleapis.com/google.firebase.fcm.v1.ApnsError","statusCode":410,"reason":"Unregistered"}]}}"#
            .utf8)

    /// Every line of every batch under `directory`, in file-name order.
    func writtenLines(_ directory: URL) throws -> [String] {
        var lines: [String] = []
        for path in InputWalker(paths: [directory.path]).files.sorted() {
            _ = try LineReader().read(path: path) { line in
                lines.append(line.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "<too long>")
            }
        }
        return lines
    }

    func object(_ line: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(value as? [String: Any])
    }

    @Test(
        "An FCM exchange is one exchange line: fields in the contract's order, headers sorted, the Authorization header redacted"
    )
    func exactFCMLine() throws {
        let line = try Self.fcm(
            response: .init(status: 200, body: Data(#"{"name":"projects/example-app/messages/0:17"}"#.utf8))
        )
        .redactingCredentials().jsonLine()
        let expected =
            #"{"v":1,"kind":"exchange","provider":"fcm","sent_at":"2026-11-21T08:00:00.000Z","request":{"url":"https://fcm.googleapis.com/v1/projects/example-app/messages:send","headers":{"Authorization":"REDACTED","Content-Type":"application/json; charset=UTF-8","x-goog-api-client":"arrival-test"},"body":"{\"message\":{\"token\":\"fcm-registration-token\",\"apns\":{\"live_activity_token\":\"5f2c1a9e0b7d4c3e\",\"headers\":{\"APNs-Priority\":\"10\",\"apns-push-type\":\"liveactivity\",\"apns-topic\":\"com.example.delivery.push-type.liveactivity\"},\"payload\":{\"aps\":{\"event\":\"update\",\"timestamp\":1795248000,\"content-state\":{\"seq\":3,\"eta\":\"8 min\",\"note\":\"café \\\"front\\\" door\\n2nd floor\"}}}}}}"},"response":{"status":200,"headers":{},"body":"{\"name\":\"projects/example-app/messages/0:17\"}"},"latency_ms":42,"activity_id":"order-1"}"#
            + "\n"
        #expect(String(decoding: line, as: UTF8.self) == expected)
    }

    @Test(
        "Recorded exchanges of all three providers: every line is JSON, and headers and bodies come back byte for byte")
    func roundTrip() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = APNsResponseRecorder(
            .init(directory: directory, redactsCredentials: false))
        let exchanges = [
            Self.fcm(response: .init(status: 200, body: Data(#"{"name":"projects/example-app/messages/0:17"}"#.utf8))),
            Self.fcm(response: .init(status: 404, headers: ["Content-Type": "application/json"], body: Self.fcmError)),
            Self.fcm(response: nil, error: "request timed out after 10s"),
            Self.tencent(
                response: .init(
                    status: 200,
                    body: Data(#"{"ActionStatus":"FAIL","ErrorInfo":"To_Account not found","ErrorCode":70107}"#.utf8))),
        ]
        for exchange in exchanges { try recorder.record(exchange) }
        try recorder.close()
        let lines = try writtenLines(directory)
        #expect(lines.count == exchanges.count)
        for (line, exchange) in zip(lines, exchanges) {
            let json = try object(line)
            #expect(json["v"] as? Int == 1 && json["kind"] as? String == "exchange")
            #expect(json["provider"] as? String == exchange.provider.rawValue)
            let request = try #require(json["request"] as? [String: Any])
            #expect(request["url"] as? String == exchange.request.url)
            #expect(request["headers"] as? [String: String] == exchange.request.headers)
            #expect(Data((try #require(request["body"] as? String)).utf8) == exchange.request.body)
            if let response = exchange.response {
                let answer = try #require(json["response"] as? [String: Any])
                #expect(answer["status"] as? Int == response.status)
                #expect(answer["headers"] as? [String: String] == response.headers)
                #expect(Data((try #require(answer["body"] as? String)).utf8) == response.body)
                #expect(json["error"] == nil)
            } else {
                #expect(json["response"] == nil)
                #expect(json["error"] as? String == exchange.transportError)
            }
            #expect(json["latency_ms"] as? Int == Int((exchange.latency ?? 0) * 1000 + 0.5))
            #expect(json["environment"] as? String == exchange.environment)
        }
        // The sorted header order is in the text itself.
        #expect(lines[0].contains(#""headers":{"Authorization":"Bearer ya29.secret","Content-Type":"#))
        #expect(lines[3].contains("usersig=eJwtzE0LgjAY&"))
    }

    @Test("Credentials are redacted by default: the Authorization header and Tencent's usersig, nothing else")
    func redaction() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = APNsResponseRecorder(.init(directory: directory, environment: "sandbox"))
        try recorder.record(Self.fcm(response: .init(status: 200)))
        try recorder.record(Self.tencent(response: .init(status: 200)))
        try recorder.close()
        let lines = try writtenLines(directory)
        let fcm = try #require(try object(lines[0])["request"] as? [String: Any])
        #expect(
            fcm["headers"] as? [String: String] == [
                "Authorization": "REDACTED", "Content-Type": "application/json; charset=UTF-8",
                "x-goog-api-client": "arrival-test",
            ])
        let tencent = try #require(try object(lines[1])["request"] as? [String: Any])
        #expect(
            tencent["url"] as? String
                == "https://console.tim.qq.com/v4/timpush/batch?sdkappid=1400000001&identifier=administrator&usersig=REDACTED&random=99&contenttype=json"
        )
        // The configured environment fills in only where the exchange has none.
        #expect(try object(lines[0])["environment"] as? String == "sandbox")
        #expect(try object(lines[1])["environment"] as? String == "production")
        #expect(PushExchange.redactingQuery("https://x/y?a=1#usersig=2") == "https://x/y?a=1#usersig=2")
        #expect(PushExchange.redactingQuery("https://x/y?UserSig=abc") == "https://x/y?UserSig=REDACTED")
    }

    @Test("A direct APNs exchange is written as an exchange line when asked, with its URL on the configured host")
    func apnsAsExchange() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let payload = Data(Self.activityPayload.utf8)
        let exchange = APNsExchange(
            sentAt: Self.sentAt,
            request: .init(
                path: "/3/device/5f2c1a9e0b7d4c3e",
                headers: [
                    "apns-topic": "com.example.delivery.push-type.liveactivity", "apns-push-type": "liveactivity",
                    "APNs-Priority": "5", "authorization": "bearer eyJhbGciOiJFUzI1NiJ9.x.y",
                ],
                payload: payload),
            response: .init(
                status: 410, headers: ["apns-id": "8E3A4F1C-2B7D-4A55-9E61-0C8D4B2E7F10"],
                body: Data(#"{"reason":"Unregistered","timestamp":1795247000000}"#.utf8)),
            latency: 0.02)
        var lines: [String] = []
        for environment in [nil, "sandbox"] {
            let directory = directory.appendingPathComponent(environment ?? "production")
            let recorder = APNsResponseRecorder(
                .init(directory: directory, environment: environment, apnsLines: .exchange))
            let record = try recorder.record(exchange, activityID: "order-1")
            #expect(record.status == 410 && record.reason == "Unregistered")
            try recorder.close()
            lines += try writtenLines(directory)
        }
        #expect(lines.count == 2)
        let production = try object(lines[0])
        #expect(production["provider"] as? String == "apns")
        #expect(production["environment"] == nil)
        #expect(production["activity_id"] as? String == "order-1")
        let request = try #require(production["request"] as? [String: Any])
        #expect(request["url"] as? String == "https://api.push.apple.com/3/device/5f2c1a9e0b7d4c3e")
        #expect(Data((try #require(request["body"] as? String)).utf8) == payload)
        #expect((request["headers"] as? [String: String])?["authorization"] == "REDACTED")
        #expect(lines[0].contains(#""headers":{"APNs-Priority":"5","apns-push-type":"liveactivity","#))
        let sandbox = try object(lines[1])
        #expect(sandbox["environment"] as? String == "sandbox")
        #expect(
            (sandbox["request"] as? [String: Any])?["url"] as? String
                == "https://api.sandbox.push.apple.com/3/device/5f2c1a9e0b7d4c3e")
        // Without the option the recorder writes the derived apns record, as before.
        let plain = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: plain) }
        let recorder = APNsResponseRecorder(.init(directory: plain))
        try recorder.record(exchange)
        try recorder.close()
        #expect(try object(try #require(try writtenLines(plain).first))["kind"] as? String == "apns")
    }

    @Test("A response body that is not UTF-8 is left out; a request body that is not UTF-8 is refused")
    func bodiesThatAreNotText() throws {
        var exchange = Self.fcm(response: .init(status: 502, body: Data([0x3C, 0xFF, 0xFE, 0x3E])))
        let line = try object(String(decoding: try exchange.jsonLine(), as: UTF8.self))
        let response = try #require(line["response"] as? [String: Any])
        #expect(response["status"] as? Int == 502 && response["body"] == nil)
        exchange.request.body = Data([0x7B, 0xC3, 0x28, 0x7D])
        #expect(throws: PushExchange.Failure.requestBodyNotText) { try exchange.jsonLine() }
        // Control characters in a body (a pretty-printed request, a NUL in a
        // response) are escaped in the line, and come back as they were.
        exchange.request.body = Data(
            "{\n\t\"message\": {\"apns\": {\"live_activity_token\": \"t\",\r\n\"payload\": {\"aps\": {\"timestamp\": 1}}}}\n}"
                .utf8)
        exchange.response = .init(status: 500, body: Data("oops\u{0}\u{1}".utf8))
        let escaped = try exchange.jsonLine()
        #expect(!escaped.dropLast().contains(where: { $0 < 0x20 }))
        let json = try object(String(decoding: escaped, as: UTF8.self))
        let request = try #require(json["request"] as? [String: Any])
        #expect(Data((try #require(request["body"] as? String)).utf8) == exchange.request.body)
        let answer = try #require(json["response"] as? [String: Any])
        #expect(Data((try #require(answer["body"] as? String)).utf8) == Data("oops\u{0}\u{1}".utf8))
    }

    @Test(
        "An exchange the pipeline could derive nothing from is refused with the reason",
        arguments: [
            (
                PushProvider.apns, "https://api.push.apple.com/3/device/", #"{"aps":{"timestamp":1}}"#,
                PushExchange.Failure.noDeviceToken(url: "https://api.push.apple.com/3/device/")
            ),
            (
                .apns, "https://api.push.apple.com/3/device/ab/cd", #"{"aps":{"timestamp":1}}"#,
                .noDeviceToken(url: "https://api.push.apple.com/3/device/ab/cd")
            ),
            (.apns, "https://api.push.apple.com:443/3/device/ab?x=1", #"{"aps":{"timestamp":"1"}}"#, .noTimestamp),
            (.apns, "https://api.push.apple.com/3/device/ab", #"{"aps":{"timestamp":1},}"#, .requestBodyNotJSONObject),
            (.apns, "https://api.push.apple.com/3/device/ab", #"[1]"#, .requestBodyNotJSONObject),
            (
                .apns, "https://api.push.apple.com/3/device/ab", #"{"aps":{"timestamp":1,"timestamp":2}}"#,
                .requestBodyNotJSONObject
            ),
            (.apns, "https://api.push.apple.com/3/device/ab", #"{"aps":{"timestamp":1e3}}"#, .noTimestamp),
            (
                .apns, "https://api.push.apple.com/3/device/ab", #"{"aps":{"timestamp":9223372036854775808}}"#,
                .noTimestamp
            ),
            (
                .fcm, "https://fcm.googleapis.com/v1/projects/p/messages:send",
                #"{"message":{"apns":{"live_activity_token":"","payload":{"aps":{"timestamp":1}}}}}"#,
                .noLiveActivityToken
            ),
            (
                .fcm, "https://fcm.googleapis.com/v1/projects/p/messages:send",
                #"{"message":{"apns":{"live_activity_token":"t","headers":{"apns-priority":10},"payload":{"aps":{"timestamp":1}}}}}"#,
                .invalidAPNsHeaders
            ),
            (
                .fcm, "https://fcm.googleapis.com/v1/projects/p/messages:send",
                #"{"message":{"apns":{"live_activity_token":"t","payload":{"aps":{"timestamp":1.0}}}}}"#, .noTimestamp
            ),
            (
                .tencentChat, "https://console.tim.qq.com/v4/timpush/batch",
                #"{"OfflinePushInfo":{"ApnsInfo":{"LiveActivity":{"LaId":"","Event":"update"}}}}"#, .noLiveActivityID
            ),
            (
                .tencentChat, "https://console.tim.qq.com/v4/timpush/batch", #"{"OfflinePushInfo":{}}"#,
                .noLiveActivityID
            ),
        ] as [(PushProvider, String, String, PushExchange.Failure)])
    func refused(provider: PushProvider, url: String, body: String, failure: PushExchange.Failure) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = APNsResponseRecorder(.init(directory: directory))
        let exchange = PushExchange(
            provider: provider, sentAt: Self.sentAt, request: .init(url: url, body: Data(body.utf8)),
            response: .init(status: 200))
        #expect(throws: APNsResponseRecorder.Failure.self) { try recorder.record(exchange) }
        #expect(throws: failure) { try exchange.validate() }
        try recorder.close()
        #expect(try writtenLines(directory).isEmpty)
    }

    @Test("A nesting of 64 levels is an object the pipeline reads; 65 is not")
    func nesting() throws {
        func body(_ depth: Int) -> Data {
            let inner = String(repeating: #"{"a":"#, count: depth - 2) + "1" + String(repeating: "}", count: depth - 2)
            return Data(#"{"aps":{"timestamp":1,"content-state":\#(inner)}}"#.utf8)
        }
        var exchange = PushExchange(
            provider: .apns, sentAt: Self.sentAt,
            request: .init(url: "https://api.push.apple.com/3/device/ab", body: body(64)), response: nil)
        _ = try exchange.validate()
        exchange.request.body = body(65)
        #expect(throws: PushExchange.Failure.requestBodyNotJSONObject) { try exchange.validate() }
    }

    @Test("Exchange batches rotate by size, never overwrite, and a crashed batch is renamed on the next start")
    func rotationAndRecovery() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var names: [[String]] = []
        for run in 0..<2 {
            let recorder = APNsResponseRecorder(.init(directory: directory, maxBatchBytes: 2000))
            for n in 0..<6 {
                var exchange = n % 2 == 0 ? Self.fcm(response: .init(status: 200)) : Self.tencent(response: nil)
                exchange.sentAt = Self.sentAt.addingTimeInterval(Double(run * 10 + n))
                try recorder.record(exchange)
            }
            try recorder.close()
            names.append(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/2026-11-21").sorted())
        }
        #expect(names[0].count >= 3)  // six ~900-byte lines, 2000 bytes a batch
        #expect(names[0].allSatisfy { $0.hasPrefix("apns-08") && $0.hasSuffix(".jsonl.gz") })
        #expect(names[1].count == 2 * names[0].count)
        #expect(Set(names[0]).isSubset(of: Set(names[1])))
        let lines = try writtenLines(directory)
        #expect(lines.count == 12)
        for line in lines { #expect(try object(line)["kind"] as? String == "exchange") }

        // A crash after flush: the hidden batch is renamed by the next recorder and decodes whole.
        let crashed = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: crashed) }
        let leftover = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: leftover) }
        let recorder = APNsResponseRecorder(.init(directory: crashed))
        for n in 0..<3 {
            var exchange = Self.fcm(response: .init(status: 200))
            exchange.sentAt = Self.sentAt.addingTimeInterval(Double(n))
            try recorder.record(exchange)
        }
        try recorder.flush()
        try FileManager.default.createDirectory(
            atPath: leftover.path + "/2026-11-21", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: crashed.path + "/2026-11-21/.apns-08.jsonl.gz.open",
            toPath: leftover.path + "/2026-11-21/.apns-08.jsonl.gz.open")
        _ = APNsResponseRecorder(.init(directory: leftover))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: leftover.path + "/2026-11-21") == ["apns-08.jsonl.gz"])
        var recovered: [String] = []
        let result = try LineReader().read(path: leftover.path + "/2026-11-21/apns-08.jsonl.gz") { line in
            recovered.append(line.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
        #expect(recovered.count == 3)
        #expect(result.truncatedGzip)
        try recorder.close()
    }
}

import ArrivalIngest
import ArrivalModel
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// `exchange` lines (Documentation/InputRecords.md#exchange): the `apns`
/// record derived for each provider, and every way an exchange is broken.
@Suite("Exchange records")
struct ExchangeDecodingTests {
    static let token = "3f9c1e0b7a5d42e8c6b1f0a9d8e7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9"
    static let apnsBody = #"{"aps":{"timestamp":1795252443,"event":"update","content-state":{"seq":7,"eta":"9 min"}}}"#

    /// An exchange line; `edit` changes the JSON object before it is written.
    static func line(
        provider: String = "apns", body: String = apnsBody,
        url: Any = "https://api.push.apple.com/3/device/\(token)",
        requestHeaders: Any? = ["apns-topic": "com.example.rides.push-type.liveactivity"],
        response: Any? = ["status": 200, "headers": ["apns-id": "1F0C6B52-7E0A-4C47-9B0E-3D2A55E0C1A9"]],
        _ edit: (inout [String: Any]) -> Void = { _ in }
    ) -> String {
        var request: [String: Any] = ["url": url, "body": body]
        if let requestHeaders { request["headers"] = requestHeaders }
        var object: [String: Any] = [
            "v": 1, "kind": "exchange", "provider": provider, "sent_at": "2026-11-21T09:14:03.412Z",
            "request": request, "latency_ms": 41,
        ]
        if let response { object["response"] = response }
        edit(&object)
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ line: String) -> (RecordDecoder.Outcome, String?) {
        var decoder = RecordDecoder()
        let outcome = decoder.decode(line)
        return (outcome, decoder.lastProblem)
    }

    static func derived(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> APNSRecord? {
        let (outcome, problem) = decode(line)
        guard case .record(.apns(let record)) = outcome else {
            Issue.record("expected an apns record, got \(outcome) (\(problem ?? "-"))", sourceLocation: sourceLocation)
            return nil
        }
        return record
    }

    // MARK: - APNs

    @Test("APNs: token from the URL path, apns-id from the response, payload size, environment from the host")
    func apnsAccepted() throws {
        let record = try #require(
            Self.derived(
                Self.line(requestHeaders: [
                    "APNs-Topic": "com.example.rides.push-type.liveactivity", "apns-push-type": "liveactivity",
                    "apns-priority": "10", "apns-id": "REQUEST-ID",
                ])))
        #expect(record.pushToken == Self.token)
        #expect(record.apnsID == "1F0C6B52-7E0A-4C47-9B0E-3D2A55E0C1A9")
        #expect(record.status == 200 && record.reason == nil)
        #expect(record.seq == 7 && record.event == "update" && record.apsTimestamp == 1_795_252_443)
        #expect(record.payloadBytes == Int64(Self.apnsBody.utf8.count))
        #expect(record.topic == "com.example.rides.push-type.liveactivity" && record.pushType == "liveactivity")
        #expect(record.priority == 10 && record.environment == "production" && record.latencyMS == 41)
        #expect(record.provider == nil && record.activityID == nil)
        #expect(record.sentAt == 1_795_252_443_412)
    }

    @Test("APNs: a refusal's reason from the body; the request's apns-id when the response has none")
    func apnsRefused() throws {
        let record = try #require(
            Self.derived(
                Self.line(
                    requestHeaders: ["apns-id": "REQUEST-ID"],
                    response: ["status": 410, "body": #"{"reason":"Unregistered","timestamp":1795252400000}"#])))
        #expect(record.status == 410 && record.reason == "Unregistered" && record.apnsID == "REQUEST-ID")
        let noID = try #require(Self.derived(Self.line(requestHeaders: nil, response: ["status": 413])))
        #expect(noID.status == 413 && noID.reason == nil && noID.apnsID == "")
        // A body that is not a JSON object counts as absent.
        let html = try #require(Self.derived(Self.line(response: ["status": 500, "body": "<html>oops</html>"])))
        #expect(html.status == 500 && html.reason == nil)
    }

    @Test(
        "APNs: no response is status 0 with the transport error; sandbox hosts, ports, queries, the exchange's environment"
    )
    func apnsTimeoutAndHosts() throws {
        let timeout = try #require(Self.derived(Self.line(response: nil) { $0["error"] = "timeout after 10 s" }))
        #expect(timeout.status == 0 && timeout.reason == "timeout after 10 s" && timeout.apnsID == "")
        let sandbox = try #require(
            Self.derived(Self.line(url: "https://API.Sandbox.Push.Apple.com:2197/3/device/abc?x=1#f")))
        #expect(sandbox.environment == "sandbox" && sandbox.pushToken == "abc")
        let development = try #require(
            Self.derived(Self.line(url: "https://api.development.push.apple.com/3/device/ab")))
        #expect(development.environment == "sandbox")
        let other = try #require(Self.derived(Self.line(url: "http://localhost:8443/3/device/ab")))
        #expect(other.environment == nil)
        let given = try #require(Self.derived(Self.line { $0["environment"] = "staging" }))
        #expect(given.environment == "staging")
    }

    @Test("An apns-priority that is not 1 to 18 ASCII digits is null; header names match in any case, first one wins")
    func priorityAndHeaderCase() throws {
        for (value, expected) in [("ten", nil), ("", nil), ("5", 5), ("0010", 10), ("1234567890123456789", nil)]
            as [(String, Int64?)]
        {
            let record = try #require(Self.derived(Self.line(requestHeaders: ["apns-priority": value])))
            #expect(record.priority == expected, "apns-priority \(value)")
        }
        // Two spellings of one header: the first in the object's order counts.
        let text = Self.line(requestHeaders: ["apns-topic": "first", "zzz": "x"])
            .replacingOccurrences(of: #""zzz":"x""#, with: #""APNS-TOPIC":"second""#)
        #expect(Self.derived(text)?.topic == "first")
    }

    @Test("The payload's event and seq are null when they are not what the contract allows")
    func loosePayloadFields() throws {
        let record = try #require(
            Self.derived(Self.line(body: #"{"aps":{"timestamp":5,"event":"resume","content-state":{"seq":"7"}}}"#)))
        #expect(record.event == nil && record.seq == nil && record.apsTimestamp == 5)
    }

    // MARK: - FCM

    static let fcmURL = "https://fcm.googleapis.com/v1/projects/rides-prod/messages:send"
    static func fcmBody(
        token: String = token,
        headers: String =
            #"{"apns-push-type":"liveactivity","apns-priority":"5","apns-topic":"com.example.rides.push-type.liveactivity"}"#
    ) -> String {
        #"{"message":{"token":"fcm-registration-token","apns":{"live_activity_token":"\#(token)","headers":\#(headers),"payload":{"aps":{"timestamp":1795252443,"event":"update","content-state":{"seq":8}}}}}}"#
    }

    static func fcm(status: Int?, body: String? = nil, _ edit: (inout [String: Any]) -> Void = { _ in }) -> String {
        var response: [String: Any]?
        if let status {
            response = ["status": status]
            if let body { response?["body"] = body }
        }
        return line(
            provider: "fcm", body: fcmBody(), url: fcmURL, requestHeaders: ["Authorization": "Bearer x"],
            response: response, edit)
    }

    @Test("FCM success: the message name is the apns_id; no payload size")
    func fcmSuccess() throws {
        let record = try #require(
            Self.derived(Self.fcm(status: 200, body: #"{"name":"projects/rides-prod/messages/0:1795252443412%abc"}"#)))
        #expect(record.status == 200 && record.reason == nil && record.provider == .fcm)
        #expect(record.apnsID == "projects/rides-prod/messages/0:1795252443412%abc")
        #expect(record.pushToken == Self.token && record.payloadBytes == nil && record.seq == 8)
        #expect(record.priority == 5 && record.pushType == "liveactivity")
        #expect(record.topic == "com.example.rides.push-type.liveactivity")
    }

    @Test("FCM errors: APNs's relayed answer first, then FCM's errorCode, then error.status")
    func fcmErrors() throws {
        let unregistered =
            #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"},{"@type":"type.googleapis.com/google.firebase.fcm.v1.ApnsError","statusCode":410,"reason":"Unregistered"}]}}"#
        let relayed = try #require(Self.derived(Self.fcm(status: 404, body: unregistered)))
        #expect(relayed.status == 410 && relayed.reason == "Unregistered" && relayed.apnsID == "")
        let auth =
            #"{"error":{"code":401,"status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"THIRD_PARTY_AUTH_ERROR"}]}}"#
        let third = try #require(Self.derived(Self.fcm(status: 401, body: auth)))
        #expect(third.status == 401 && third.reason == "FCM:THIRD_PARTY_AUTH_ERROR")
        let quota = #"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}"#
        let limited = try #require(Self.derived(Self.fcm(status: 429, body: quota)))
        #expect(limited.status == 429 && limited.reason == "FCM:RESOURCE_EXHAUSTED")
        let bare = try #require(Self.derived(Self.fcm(status: 503, body: "Service Unavailable")))
        #expect(bare.status == 503 && bare.reason == nil)
        // An ApnsError without an integer statusCode is not APNs's answer.
        let partial =
            #"{"error":{"status":"INTERNAL","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.ApnsError","statusCode":"410"}]}}"#
        let internalError = try #require(Self.derived(Self.fcm(status: 500, body: partial)))
        #expect(internalError.status == 500 && internalError.reason == "FCM:INTERNAL")
        let timeout = try #require(Self.derived(Self.fcm(status: nil) { $0["error"] = "deadline exceeded" }))
        #expect(timeout.status == 0 && timeout.reason == "deadline exceeded")
    }

    // MARK: - Tencent Cloud Chat

    static let tencentBody =
        #"{"From_Account":"ops","To_Account":"u1","MsgBody":[],"OfflinePushInfo":{"PushFlag":0,"ApnsInfo":{"LiveActivity":{"LaId":"ride-4c1d","Event":"update","ContentState":{"seq":9,"eta":"4 min"}}}}}"#

    static func tencent(status: Int?, body: String? = nil) -> String {
        var response: [String: Any]?
        if let status {
            response = ["status": status]
            if let body { response?["body"] = body }
        }
        return line(
            provider: "tencent_chat", body: tencentBody,
            url: "https://console.tim.qq.com/v4/openim/sendmsg?sdkappid=1400000000&contenttype=json",
            requestHeaders: nil, response: response
        ) { $0["activity_id"] = "not-used" }
    }

    @Test("Tencent: LaId is the activity, no token, the timestamp is sent_at's second, MsgKey the apns_id")
    func tencentSuccess() throws {
        let record = try #require(
            Self.derived(
                Self.tencent(
                    status: 200,
                    body:
                        #"{"ActionStatus":"OK","ErrorInfo":"","ErrorCode":0,"MsgTime":1795252443,"MsgKey":"1795252443_1_1"}"#
                )))
        #expect(record.status == 200 && record.reason == nil && record.provider == .tencentChat)
        #expect(
            record.activityID == "ride-4c1d" && record.pushToken == "" && record.seq == 9 && record.event == "update")
        #expect(record.apsTimestamp == 1_795_252_443 && record.pushType == "liveactivity")
        #expect(record.apnsID == "1795252443_1_1" && record.topic == nil && record.priority == nil)
    }

    @Test("Tencent: a business error at HTTP 200 is 400 Tencent:<code>; other statuses and timeouts as given")
    func tencentErrors() throws {
        let business = try #require(
            Self.derived(
                Self.tencent(
                    status: 200,
                    body: #"{"ActionStatus":"FAIL","ErrorInfo":"invalid LaId","ErrorCode":70107,"TaskId":"task-9"}"#)))
        #expect(business.status == 400 && business.reason == "Tencent:70107" && business.apnsID == "task-9")
        let unknown = try #require(Self.derived(Self.tencent(status: 200, body: "not json")))
        #expect(unknown.status == 400 && unknown.reason == "Tencent:unknown" && unknown.apnsID == "")
        let server = try #require(Self.derived(Self.tencent(status: 500, body: "Internal Server Error")))
        #expect(server.status == 500 && server.reason == nil)
        let timeout = try #require(Self.derived(Self.tencent(status: nil)))
        #expect(timeout.status == 0 && timeout.reason == nil)
    }

    // MARK: - Fixtures checked against the reference implementation

    /// `Fixtures/Exchanges/NAME.jsonl`, shaped like real provider answers, and
    /// the records (or causes) `Scripts/reference` derives from each line.
    @Test(
        "Each fixture line gives what the Python reference derives from it",
        arguments: ["apns", "fcm", "tencent", "broken"])
    func fixtureAgreesWithReference(_ name: String) throws {
        let lines = try String(contentsOfFile: fixture("Exchanges/\(name).jsonl", in: .module), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let expected = try String(
            contentsOfFile: fixture("Exchanges/\(name).expected.jsonl", in: .module), encoding: .utf8
        )
        .split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(expected.count > 5)
        for entry in expected {
            let number = entry["line"] as! Int
            let (outcome, problem) = Self.decode(lines[number - 1])
            if let cause = entry["malformed"] as? String {
                #expect(
                    outcome == .malformed(MalformedCause(rawValue: cause)!), "\(name):\(number) (\(problem ?? "-"))")
                continue
            }
            guard case .record(.apns(let record)) = outcome else {
                Issue.record("\(name):\(number): expected a record, got \(outcome) (\(problem ?? "-"))")
                continue
            }
            let fields = entry["record"] as! [String: Any]
            func text(_ key: String) -> String? { fields[key] as? String }
            func int(_ key: String) -> Int64? { (fields[key] as? NSNumber)?.int64Value }
            let want = APNSRecord(
                apnsID: text("apns_id")!, sentAt: int("sent_at")!, status: int("status")!, reason: text("reason"),
                pushToken: text("push_token")!, activityID: text("activity_id"), seq: int("seq"), event: text("event"),
                apsTimestamp: int("aps_timestamp")!, payloadBytes: int("payload_bytes"), topic: text("topic"),
                pushType: text("push_type"), priority: int("priority"), environment: text("environment"),
                latencyMS: int("latency_ms"), provider: text("provider").flatMap(PushProvider.init(rawValue:)))
            #expect(record == want, "\(name):\(number)")
        }
    }

    // MARK: - Broken exchanges

    static let broken: [(name: String, line: String, cause: MalformedCause, problem: String)] = [
        ("no URL", line { $0["request"] = ["body": apnsBody] }, .invalidExchange, "request.url: required"),
        ("URL a number", line(url: 443), .invalidExchange, "request.url: expected a string"),
        (
            "header value a number", line(requestHeaders: ["apns-priority": 10]), .invalidExchange,
            "request.headers.apns-priority: a header value must be a string"
        ),
        (
            "headers an array", line(requestHeaders: ["apns-priority"]), .invalidExchange,
            "request.headers: expected an object"
        ),
        (
            "response header a boolean", line(response: ["status": 200, "headers": ["apns-id": true]]),
            .invalidExchange, "response.headers.apns-id"
        ),
        (
            "body not an object", line(body: "[1,2]"), .invalidExchange,
            "request.body: not a JSON object (not_an_object)"
        ),
        ("body not JSON", line(body: "{aps:1}"), .invalidExchange, "request.body: not a JSON object (invalid_json)"),
        (
            "repeated key inside the body", line(body: #"{"aps":{"timestamp":1,"timestamp":2}}"#), .invalidExchange,
            "(duplicate_key)"
        ),
        (
            "body nested past 64",
            line(
                body: #"{"aps":{"timestamp":1},"x":"# + String(repeating: "[", count: 64)
                    + String(repeating: "]", count: 64) + "}"),
            .invalidExchange, "(too_deep)"
        ),
        (
            "path with no token", line(url: "https://api.push.apple.com/3/device/"), .invalidExchange,
            "request.url: expected https://HOST[:PORT]/3/device/TOKEN"
        ),
        (
            "token with a slash", line(url: "https://api.push.apple.com/3/device/ab/cd"), .invalidExchange,
            "request.url"
        ),
        ("URL without a scheme", line(url: "api.push.apple.com/3/device/ab"), .invalidExchange, "request.url"),
        (
            "no aps.timestamp", line(body: #"{"aps":{"event":"update"}}"#), .invalidExchange,
            "request.body: aps.timestamp: required"
        ),
        (
            "fractional aps.timestamp", line(body: #"{"aps":{"timestamp":1.5}}"#), .invalidExchange,
            "got a number"
        ),
        ("response without status", line(response: ["headers": [:]]), .invalidExchange, "response.status: required"),
        (
            "status a string", line(response: ["status": "200"]), .invalidExchange,
            "response.status: expected an integer"
        ),
        (
            "no request body", line { $0["request"] = ["url": "https://api.push.apple.com/3/device/ab"] },
            .invalidExchange, "request.body: required"
        ),
        (
            "FCM without live_activity_token",
            line(provider: "fcm", body: fcmBody(token: ""), url: fcmURL), .invalidExchange,
            "message.apns.live_activity_token"
        ),
        (
            "FCM apns headers with a number",
            line(provider: "fcm", body: fcmBody(headers: #"{"apns-priority":10}"#), url: fcmURL),
            .invalidExchange, "message.apns.headers.apns-priority"
        ),
        (
            "Tencent without LaId",
            line(
                provider: "tencent_chat", body: #"{"OfflinePushInfo":{"ApnsInfo":{"LiveActivity":{"Event":"end"}}}}"#,
                url: "x"),
            .invalidExchange, "LiveActivity.LaId"
        ),
        (
            "unknown provider", line(provider: "sns"), .invalidEnum,
            #"provider: "sns" is not one of apns, fcm, tencent_chat"#
        ),
        ("no provider", line { $0["provider"] = nil }, .missingField, "provider: required"),
        ("no sent_at", line { $0["sent_at"] = nil }, .missingField, "sent_at: required"),
        ("request a string", line { $0["request"] = "GET /" }, .wrongType, "request: expected an object"),
        ("response a number", line { $0["response"] = 200 }, .wrongType, "response: expected an object"),
        ("latency a string", line { $0["latency_ms"] = "41" }, .wrongType, "latency_ms: expected an integer"),
    ]

    @Test("Every way an exchange is broken gets its cause and names the field", arguments: broken.indices)
    func brokenExchange(_ index: Int) {
        let (name, line, cause, problem) = Self.broken[index]
        let (outcome, shown) = Self.decode(line)
        #expect(outcome == .malformed(cause), "\(name)")
        #expect(shown?.contains(problem) == true, "\(name): \(shown ?? "no problem")")
    }

    @Test("An explicit \"provider\":\"apns\" on an apns line is the same record as none; other values are enumerated")
    func providerOnApnsLines() throws {
        let plain =
            #"{"kind":"apns","apns_id":"a","sent_at":"2026-11-21T09:00:00Z","status":200,"push_token":"ab","aps_timestamp":1}"#
        let explicit = plain.replacingOccurrences(of: "}", with: #","provider":"apns"}"#)
        let fcm = plain.replacingOccurrences(of: "}", with: #","provider":"fcm"}"#)
        let bad = plain.replacingOccurrences(of: "}", with: #","provider":"APNS"}"#)
        #expect(Self.derived(plain) == Self.derived(explicit))
        #expect(Self.derived(fcm)?.provider == .fcm)
        #expect(Self.decode(bad).0 == .malformed(.invalidEnum))
    }

    @Test("An exchange and the plain apns record it stands for are one record")
    func exchangeEqualsPlainRecord() throws {
        let exchange = Self.line(requestHeaders: [
            "apns-topic": "com.example.rides.push-type.liveactivity", "apns-priority": "10",
        ]) { $0["activity_id"] = "ride-4c1d" }
        let record = try #require(Self.derived(exchange))
        let plain = """
            {"v":1,"kind":"apns","apns_id":"1F0C6B52-7E0A-4C47-9B0E-3D2A55E0C1A9","sent_at":"2026-11-21T17:14:03.412+08:00",\
            "status":200,"push_token":"\(Self.token)","activity_id":"ride-4c1d","seq":7,"event":"update",\
            "aps_timestamp":1795252443,"payload_bytes":\(Self.apnsBody.utf8.count),\
            "topic":"com.example.rides.push-type.liveactivity","priority":10,"environment":"production",\
            "latency_ms":41,"provider":"apns"}
            """
        #expect(Self.derived(plain) == record)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data((exchange + "\n").utf8).write(to: directory.appendingPathComponent("exchanges.jsonl"))
        try Data((plain + "\n").utf8).write(to: directory.appendingPathComponent("records.jsonl"))
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [directory.path])
        #expect(summary.records[.apns] == 1 && summary.duplicateRecords == 1)
    }
}

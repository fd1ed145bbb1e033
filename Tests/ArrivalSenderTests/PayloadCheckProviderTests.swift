import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalSender

@Suite("PayloadCheck for FCM and Tencent Cloud Chat")
struct PayloadCheckProviderTests {
    /// 2026-11-21T08:00:00Z, the payloads' own timestamp.
    static let now = Date(timeIntervalSince1970: 1_795_248_000)
    static let ok = #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":12}}}"#

    func codes(_ body: String, _ provider: PushProvider, topic: String? = nil) -> [String] {
        PayloadCheck.check(body: Data(body.utf8), provider: provider, topic: topic, now: Self.now)
            .map { "\($0.level.rawValue):\($0.code.rawValue)" }
    }

    /// An FCM `messages:send` body around `payload`, with `apns` members before it.
    static func fcm(
        payload: String = ok, token: String = #""5f2c1a9e0b7d4c3e""#,
        headers: String = #"{"apns-priority":"10","apns-push-type":"liveactivity"}"#
    ) -> String {
        #"{"message":{"token":"fcm-token","apns":{"live_activity_token":\#(token),"headers":\#(headers),"payload":\#(payload)}}}"#
    }

    @Test(
        "FCM: message.apns.payload is judged by every APNs payload rule (the same findings as the bare payload)",
        // A body that spans lines is a different case inside an FCM message.
        arguments: PayloadCheckTests.payloadCases.filter { $0.0 != "not-json-multiline.json" })
    func fcmPayloadRules(file: String, expected: [String]) throws {
        let payload = String(decoding: try fixtureData("payloads/" + file), as: UTF8.self)
        #expect(codes(Self.fcm(payload: payload), .fcm) == expected)
        #expect(codes(payload, .apns) == expected)
    }

    @Test("FCM: a finding inside the payload says so; the size is the payload's, not the whole body's")
    func fcmPayloadMessages() throws {
        let findings = PayloadCheck.check(
            body: Data(
                Self.fcm(payload: try String(contentsOfFile: fixture("payloads/near-limit.json"), encoding: .utf8)).utf8
            ),
            provider: .fcm, now: Self.now)
        #expect(findings.first?.message.hasPrefix("message.apns.payload: payload is 3721 bytes") == true)
        // Whitespace between tokens does not count: FCM re-encodes the payload.
        let spaced = Self.fcm(
            payload:
                "{\n  \"aps\" : {\"event\": \"update\",\n \"timestamp\": 1795248000,  \"content-state\": {\"seq\": 1, \"text\": \"a  b\"}}\n}"
        )
        #expect(codes(spaced, .fcm) == [])
        let padded = Self.fcm(
            payload: #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":1}},"pad":""#
                + String(repeating: " ", count: 3600) + #""}"#)
        #expect(codes(padded, .fcm) == ["warning:payload_near_limit"])  // spaces inside a string do count
    }

    @Test(
        "FCM: message.apns, a non-empty live_activity_token and apns-push-type liveactivity (any case) are required",
        arguments: [
            (#"{"message":{"token":"t","notification":{"title":"hi"}}}"#, ["error:missing_fcm_apns"]),
            (#"{"message":{"apns":"x"}}"#, ["error:missing_fcm_apns"]),
            (PayloadCheckProviderTests.fcm(token: #""""#), ["error:missing_live_activity_token"]),
            (PayloadCheckProviderTests.fcm(token: "null"), ["error:missing_live_activity_token"]),
            (PayloadCheckProviderTests.fcm(token: "12"), ["error:missing_live_activity_token"]),
            (PayloadCheckProviderTests.fcm(headers: #"{"APNS-PUSH-TYPE":"liveactivity"}"#), []),
            (
                PayloadCheckProviderTests.fcm(headers: #"{"Apns-Push-Type":"alert"}"#),
                ["error:push_type_not_liveactivity"]
            ),
            (PayloadCheckProviderTests.fcm(headers: #"{"apns-priority":"10"}"#), ["error:push_type_not_liveactivity"]),
            (PayloadCheckProviderTests.fcm(headers: "[]"), ["error:push_type_not_liveactivity"]),
            (
                #"{"message":{"apns":{"live_activity_token":"ab","payload":\#(PayloadCheckProviderTests.ok)}}}"#,
                ["error:push_type_not_liveactivity"]
            ),
            (
                PayloadCheckProviderTests.fcm(headers: #"{"apns-push-type":"liveactivity","apns-priority":10}"#),
                ["error:header_not_string"]
            ),
            (
                #"{"message":{"apns":{"live_activity_token":"ab","headers":{"apns-push-type":"liveactivity"}}}}"#,
                ["error:missing_fcm_payload"]
            ),
            (PayloadCheckProviderTests.fcm(payload: "[]"), ["error:missing_fcm_payload"]),
            ("[1]", ["error:not_json"]),
        ] as [(String, [String])])
    func fcmRules(body: String, expected: [String]) {
        #expect(codes(body, .fcm) == expected)
    }

    @Test("FCM: the topic is --topic, else the apns-topic header; either needs .push-type.liveactivity")
    func fcmTopic() {
        let withHeader = Self.fcm(headers: #"{"apns-push-type":"liveactivity","APNs-Topic":"com.example.delivery"}"#)
        #expect(codes(withHeader, .fcm) == ["error:topic_without_suffix"])
        #expect(codes(withHeader, .fcm, topic: "com.example.delivery.push-type.liveactivity") == [])
        #expect(codes(Self.fcm(), .fcm, topic: "com.example.delivery") == ["error:topic_without_suffix"])
        #expect(codes(Self.fcm(), .fcm) == [])
    }

    @Test("FCM: a syntax error is placed by line and column in the whole body")
    func fcmSyntax() {
        let findings = PayloadCheck.check(
            body: Data("{\"message\": {\n  \"apns\": {\"live_activity_token\": \"ab\",}\n}}".utf8), provider: .fcm,
            now: Self.now)
        #expect(findings.map(\.code) == [.notJSON])
        #expect(findings.first?.message.contains("syntax error at line 2, column 40") == true)
    }

    /// A Tencent Cloud Chat push whose `LiveActivity` object has `members`.
    static func tencent(_ members: String) -> String {
        #"{"From_Account":"administrator","To_Account":["user-17"],"MsgBody":[],"OfflinePushInfo":{"PushFlag":0,"ApnsInfo":{"LiveActivity":{\#(members)}}}}"#
    }

    @Test(
        "Tencent Cloud Chat: LaId of 1 to 64 bytes, Event update or end, a ContentState object, DismissalDate only with end",
        arguments: [
            (PayloadCheckProviderTests.tencent(#""LaId":"order-1","Event":"update","ContentState":{"seq":3}"#), []),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"end","ContentState":{"seq":4},"DismissalDate":1795251600"#), []
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"\#(String(repeating: "a", count: 64))","Event":"update","ContentState":{"seq":3}"#),
                []
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"\#(String(repeating: "é", count: 33))","Event":"update","ContentState":{"seq":3}"#),
                ["error:invalid_la_id"]
            ),
            (
                PayloadCheckProviderTests.tencent(#""LaId":"","Event":"update","ContentState":{"seq":3}"#),
                ["error:invalid_la_id"]
            ),
            (PayloadCheckProviderTests.tencent(#""Event":"update","ContentState":{"seq":3}"#), ["error:invalid_la_id"]),
            (
                PayloadCheckProviderTests.tencent(#""LaId":7,"Event":"update","ContentState":{"seq":3}"#),
                ["error:invalid_la_id"]
            ),
            (PayloadCheckProviderTests.tencent(#""LaId":"order-1","ContentState":{"seq":3}"#), ["error:missing_event"]),
            (
                PayloadCheckProviderTests.tencent(#""LaId":"order-1","Event":"start","ContentState":{"seq":3}"#),
                ["error:invalid_event"]
            ),
            (
                PayloadCheckProviderTests.tencent(#""LaId":"order-1","Event":1,"ContentState":{"seq":3}"#),
                ["error:invalid_event"]
            ),
            (PayloadCheckProviderTests.tencent(#""LaId":"order-1","Event":"update""#), ["error:missing_content_state"]),
            (
                PayloadCheckProviderTests.tencent(#""LaId":"order-1","Event":"update","ContentState":"{}""#),
                ["error:missing_content_state"]
            ),
            (
                PayloadCheckProviderTests.tencent(#""LaId":"order-1","Event":"update","ContentState":{"eta":3}"#),
                ["warning:missing_seq"]
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"update","ContentState":{"seq":3},"DismissalDate":1795251600"#),
                ["error:dismissal_date_without_end"]
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"end","ContentState":{"seq":3},"DismissalDate":"1795251600""#),
                ["error:dismissal_date_not_integer"]
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"end","ContentState":{"seq":3},"DismissalDate":1795251600.5"#),
                ["error:dismissal_date_not_integer"]
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"end","ContentState":{"seq":3},"DismissalDate":1795251600000"#),
                ["error:dismissal_date_in_milliseconds"]
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"end","ContentState":{"seq":3},"DismissalDate":1"#),
                ["warning:dismissal_date_in_past"]
            ),
            (
                PayloadCheckProviderTests.tencent(
                    #""LaId":"order-1","Event":"end","ContentState":{"seq":3},"DismissalDate":null"#),
                []
            ),
            (#"{"OfflinePushInfo":{"ApnsInfo":{}}}"#, ["error:missing_live_activity"]),
            (#"{"OfflinePushInfo":{"ApnsInfo":{"LiveActivity":[]}}}"#, ["error:missing_live_activity"]),
            (#"{"MsgBody":[]}"#, ["error:missing_live_activity"]),
            (#"{"OfflinePushInfo":{"ApnsInfo":{"LiveActivity":{"LaId":"a",}}}}"#, ["error:not_json"]),
        ] as [(String, [String])])
    func tencentRules(body: String, expected: [String]) {
        #expect(codes(body, .tencentChat) == expected)
    }

    @Test("Tencent Cloud Chat: each message names the field by its whole path")
    func tencentMessages() {
        let missing = PayloadCheck.check(body: Data(#"{"OfflinePushInfo":{}}"#.utf8), provider: .tencentChat)
        #expect(missing.first?.message.hasPrefix("OfflinePushInfo has no ApnsInfo object") == true)
        let long = PayloadCheck.check(
            body: Data(
                Self.tencent(#""LaId":"\#(String(repeating: "x", count: 65))","Event":"end","ContentState":{"seq":1}"#)
                    .utf8),
            provider: .tencentChat)
        #expect(
            long.first?.description
                == "error: invalid_la_id: OfflinePushInfo.ApnsInfo.LiveActivity.LaId is 65 bytes; Tencent Cloud Chat takes at most 64. Use a shorter activity id."
        )
    }

    @Test("StrictJSON finds a member's value by its path, escaped names included, and compacts text outside strings")
    func valueRange() {
        let text = Array(#"{"a" : {"x":[1,{"b":2}], "\u0062" : {"c" : "d e"} }, "b":0}"#.utf8)
        func slice(_ path: [String]) -> String? {
            StrictJSON.range(of: path, in: text).map { String(decoding: text[$0], as: UTF8.self) }
        }
        #expect(slice(["a", "b"]) == #"{"c" : "d e"}"#)
        #expect(slice(["a", "b", "c"]) == #""d e""#)
        #expect(slice(["b"]) == "0")
        #expect(slice(["a", "y"]) == nil)
        #expect(slice(["b", "c"]) == nil)
        #expect(
            String(decoding: StrictJSON.compact(Array(#"{ "c" : "d e\" f" , "g":[ 1 , 2 ] }"#.utf8)), as: UTF8.self)
                == #"{"c":"d e\" f","g":[1,2]}"#)
    }
}

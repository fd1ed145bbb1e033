import ArrivalHandOff
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest
@testable import ArrivalStore

/// Contract 3.0's broadcast channels as lines: broadcast records, the
/// `/4/broadcasts/apps/...` exchange, `channel_id` on renders and callbacks,
/// `channel_subscription`, and every way such a line is malformed (with the
/// causes the reference implementation gives: Scripts/reference, "Readings
/// for contract 3.0").
@Suite("Broadcast records")
struct BroadcastDecodingTests {
    static let sent = #""sent_at":"2026-11-21T09:00:00Z","status":200,"aps_timestamp":1795251600"#

    static func decode(_ line: String) -> (RecordDecoder.Outcome, String?) {
        var decoder = RecordDecoder()
        let outcome = decoder.decode(line)
        return (outcome, decoder.lastProblem)
    }

    @Test("A broadcast names a channel and neither a token nor an activity")
    func broadcastRecord() {
        let (outcome, _) = Self.decode(
            #"{"kind":"apns","apns_id":"b1",\#(Self.sent),"seq":4,"channel_id":"match-7","payload_bytes":4700}"#)
        let want = APNSRecord(
            apnsID: "b1", sentAt: 1_795_251_600_000, status: 200, pushToken: nil, seq: 4, apsTimestamp: 1_795_251_600,
            payloadBytes: 4700, channelID: "match-7")
        #expect(outcome == .record(.apns(want)))
        #expect(want.isBroadcast)
        // Null token and activity are allowed, as absent ones are.
        let (nulls, _) = Self.decode(
            #"{"kind":"apns","apns_id":"b1",\#(Self.sent),"seq":4,"channel_id":"match-7","payload_bytes":4700,"push_token":null,"activity_id":null}"#
        )
        #expect(nulls == .record(.apns(want)))
    }

    @Test("Renders and callbacks carry the channel; channel_subscription needs one")
    func evidence() {
        let (render, _) = Self.decode(
            #"{"kind":"render","activity_id":"a","seq":2,"rendered_at":"2026-11-21T09:00:01Z","channel_id":"c"}"#)
        #expect(
            render
                == .record(
                    .render(RenderRecord(activityID: "a", seq: 2, renderedAt: 1_795_251_601_000, channelID: "c"))))
        let (subscription, _) = Self.decode(
            #"{"kind":"callback","callback":"channel_subscription","activity_id":"a","channel_id":"c","received_at":"2026-11-21T09:00:00Z"}"#
        )
        #expect(
            subscription
                == .record(
                    .callback(
                        CallbackRecord(
                            callback: .channelSubscription, activityID: "a", receivedAt: 1_795_251_600_000,
                            channelID: "c"))))
    }

    static let malformed: [(line: String, cause: MalformedCause, problem: String)] = [
        (
            #"{"kind":"apns","apns_id":"b",\#(sent),"push_token":"ab","channel_id":"c"}"#, .wrongType,
            #"push_token: expected absent or null on a broadcast (a line with a channel_id), got a string ("ab")"#
        ),
        (
            #"{"kind":"apns","apns_id":"b",\#(sent),"activity_id":"a","channel_id":"c"}"#, .wrongType,
            #"activity_id: expected absent or null on a broadcast (a line with a channel_id), got a string ("a")"#
        ),
        // Not a broadcast (the channel is empty), so it lacks its token first.
        (
            #"{"kind":"apns","apns_id":"b",\#(sent),"channel_id":""}"#, .missingField,
            "push_token: required, but absent"
        ),
        (
            #"{"kind":"apns","apns_id":"b",\#(sent),"push_token":"ab","channel_id":""}"#, .wrongType,
            #"channel_id: expected a non-empty string, got a string ("")"#
        ),
        (
            #"{"kind":"apns","apns_id":"b",\#(sent),"push_token":"ab","channel_id":7}"#, .wrongType,
            "channel_id: expected a non-empty string, got an integer (7)"
        ),
        // After surface, before the device fields (the contract's table order).
        (
            #"{"kind":"render","activity_id":"a","seq":1,"rendered_at":"2026-11-21T09:00:00Z","channel_id":"","device_id":5}"#,
            .wrongType, #"channel_id: expected a non-empty string, got a string ("")"#
        ),
        (
            #"{"kind":"callback","callback":"channel_subscription","activity_id":"a","received_at":"2026-11-21T09:00:00Z"}"#,
            .missingField, "channel_id: required for a channel_subscription callback, but absent"
        ),
        // After state, before received_at.
        (
            #"{"kind":"callback","callback":"channel_subscription","activity_id":"a","channel_id":"","received_at":"x"}"#,
            .wrongType, #"channel_id: expected a non-empty string, got a string ("")"#
        ),
    ]

    @Test("A broadcast with a token or an activity, and an empty or non-string channel, are malformed at that field")
    func malformedLines() {
        for (line, cause, problem) in Self.malformed {
            let (outcome, shown) = Self.decode(line)
            #expect(outcome == .malformed(cause), "\(line)")
            #expect(shown == problem, "\(line)")
        }
    }

    @Test("A /4/broadcasts/apps/ exchange: channel from apns-channel-id, apns-request-id, topic from the path")
    func broadcastExchange() throws {
        let line = ExchangeDecodingTests.line(
            url: "https://api-broadcast.sandbox.push.apple.com/4/broadcasts/apps/com.example.sports",
            requestHeaders: ["apns-channel-id": "dGVzdA==", "apns-push-type": "liveactivity", "apns-id": "REQ"],
            response: ["status": 200, "headers": ["apns-request-id": "B-1", "apns-id": "A-1"]])
        let record = try #require(ExchangeDecodingTests.derived(line))
        #expect(record.channelID == "dGVzdA==" && record.pushToken == nil && record.activityID == nil)
        #expect(record.apnsID == "B-1" && record.topic == "com.example.sports" && record.environment == "sandbox")
        #expect(record.seq == 7 && record.status == 200)
        // Without apns-request-id in the answer, the answer's apns-id; a path alone names no environment.
        let pathOnly = try #require(
            ExchangeDecodingTests.derived(
                ExchangeDecodingTests.line(
                    url: "/4/broadcasts/apps/com.example.sports",
                    requestHeaders: [
                        "apns-channel-id": "c", "apns-topic": "com.example.sports.push-type.liveactivity",
                    ],
                    response: ["status": 200, "headers": ["apns-id": "A-1"]])))
        #expect(pathOnly.apnsID == "A-1" && pathOnly.environment == nil)
        #expect(pathOnly.topic == "com.example.sports.push-type.liveactivity")
        // A device push to a broadcast host is still a device push, its channel header not read.
        let device = try #require(
            ExchangeDecodingTests.derived(
                ExchangeDecodingTests.line(
                    url: "https://api-broadcast.push.apple.com/3/device/ab", requestHeaders: ["apns-channel-id": "c"])))
        #expect(device.pushToken == "ab" && device.channelID == nil && device.environment == "production")
    }

    @Test("A broadcast exchange without a channel, or naming an activity, is invalid_exchange")
    func brokenBroadcastExchange() {
        let url = "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example"
        for line in [
            ExchangeDecodingTests.line(url: url, requestHeaders: [:]),
            ExchangeDecodingTests.line(url: url, requestHeaders: ["apns-channel-id": ""]),
            ExchangeDecodingTests.line(url: url, requestHeaders: ["apns-channel-id": "c"]) { $0["activity_id"] = "a" },
            ExchangeDecodingTests.line(url: "https://api-broadcast.push.apple.com/4/broadcasts/apps/"),
            ExchangeDecodingTests.line(url: "https://api-broadcast.push.apple.com/4/broadcasts/apps/a/b"),
        ] {
            #expect(Self.decode(line).0 == .malformed(.invalidExchange), "\(line)")
        }
    }

    @Test("The channel is part of a record's identity; without one a record hashes as before 3.0")
    func identity() {
        var batch = RowBatch()
        let plain = RenderRecord(activityID: "a", seq: 1, renderedAt: 5)
        var withChannel = plain
        withChannel.channelID = "c"
        batch.append(Record.render(plain))
        batch.append(Record.render(withChannel))
        #expect(batch.rows[0].key & 0xF_FFFF == plain.contentHash & 0xF_FFFF)
        #expect(batch.rows[1].key & 0xF_FFFF == withChannel.contentHash & 0xF_FFFF)
        #expect(batch.rows[0].key != batch.rows[1].key)
        let subscription = CallbackRecord(
            callback: .channelSubscription, activityID: "a", receivedAt: 5, channelID: "c")
        batch.append(Record.callback(subscription))
        #expect(batch.rows[2].key & 0xF_FFFF == subscription.contentHash & 0xF_FFFF)
        // A channel is not a provider of the same text.
        var fcm = APNSRecord(apnsID: "x", sentAt: 1, status: 200, pushToken: "t", apsTimestamp: 1, provider: .fcm)
        batch.append(Record.apns(fcm))
        #expect(batch.rows[3].key & 0xF_FFFF == fcm.contentHash & 0xF_FFFF)
        fcm.channelID = "fcm"
        fcm.provider = nil
        fcm.pushToken = nil
        batch.append(Record.apns(fcm))
        #expect(batch.rows[4].key & 0xF_FFFF == fcm.contentHash & 0xF_FFFF)
        #expect(batch.rows[3].key != batch.rows[4].key)
    }
}

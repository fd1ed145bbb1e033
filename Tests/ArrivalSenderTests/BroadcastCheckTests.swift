import ArrivalSender
import ArrivalTestSupport
import Foundation
import Testing

@Suite("Broadcast checks")
struct BroadcastCheckTests {
    /// 2026-11-21T08:00:00Z.
    static let now = date(ms: 1_795_248_000_000)
    static let url = "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.scores"
    static let headers = [
        "apns-channel-id": "dHN/MQ+x/A==", "apns-push-type": "liveactivity", "apns-priority": "10",
        "apns-topic": "com.example.scores.push-type.liveactivity",
    ]

    /// An update payload of exactly `bytes` bytes.
    static func payload(bytes: Int, event: String = "update") -> Data {
        let head = #"{"aps":{"event":"\#(event)","timestamp":1795248000,"content-state":{"seq":4,"text":""#
        let tail = #""}}}"#
        return Data((head + String(repeating: "x", count: bytes - head.utf8.count - tail.utf8.count) + tail).utf8)
    }

    static func codes(
        url: String? = url, headers: [String: String] = headers, payload: Data = payload(bytes: 600)
    ) -> [String] {
        PayloadCheck.check(broadcast: .init(url: url, headers: headers, payload: payload), now: now).map {
            "\($0.level.rawValue):\($0.code.rawValue)"
        }
    }

    @Test("A good broadcast has no findings; one without URL or topic is judged on what is given")
    func good() {
        #expect(Self.codes() == [])
        var headers = Self.headers
        headers["apns-topic"] = nil
        #expect(Self.codes(url: nil, headers: headers) == [])
        #expect(Self.codes(url: "/4/broadcasts/apps/com.example.scores") == [])
        #expect(
            Self.codes(url: "https://API-Broadcast.sandbox.push.apple.com:443/4/broadcasts/apps/com.example.scores")
                == [])
    }

    @Test("The broadcast limit is 5,120 bytes, with a warning above 4,608, where a device push fails at 4,096")
    func sizes() throws {
        #expect(Self.codes(payload: Self.payload(bytes: 4600)) == [])
        #expect(
            PayloadCheck.check(payload: Self.payload(bytes: 4600), now: Self.now).map(\.code) == [.payloadTooLarge])
        #expect(Self.codes(payload: Self.payload(bytes: 4609)) == ["warning:payload_near_limit"])
        #expect(Self.codes(payload: Self.payload(bytes: 5120)) == ["warning:payload_near_limit"])
        let over = PayloadCheck.check(
            broadcast: .init(url: Self.url, headers: Self.headers, payload: Self.payload(bytes: 5121)), now: Self.now)
        #expect(over.map(\.code) == [.payloadTooLarge])
        #expect(over.first?.message.hasPrefix("payload is 5121 bytes, over the 5120-byte limit") == true)
    }

    @Test("No channel id, an empty one, a device token or a URL that is no broadcast's is an error")
    func requestErrors() {
        var headers = Self.headers
        headers["apns-channel-id"] = nil
        #expect(Self.codes(headers: headers) == ["error:missing_channel_id"])
        headers["APNs-Channel-ID"] = ""
        #expect(Self.codes(headers: headers) == ["error:missing_channel_id"])
        #expect(
            Self.codes(url: "https://api.push.apple.com/3/device/5f2c1a9e0b7d") == ["error:device_token_on_broadcast"])
        #expect(
            Self.codes(url: "https://api.push.apple.com/4/broadcasts/apps/com.example.scores") == [
                "error:not_broadcast_url"
            ])
        #expect(
            Self.codes(url: "https://api-broadcast.push.apple.com/4/broadcasts/apps/") == ["error:not_broadcast_url"])
    }

    @Test("The headers a Live Activity broadcast needs: push type liveactivity, a topic of the URL's app")
    func headerErrors() {
        var headers = Self.headers
        headers["apns-push-type"] = nil
        #expect(Self.codes(headers: headers) == ["error:push_type_not_liveactivity"])
        headers["apns-push-type"] = "alert"
        #expect(Self.codes(headers: headers) == ["error:push_type_not_liveactivity"])
        headers["apns-push-type"] = "LiveActivity"
        #expect(Self.codes(headers: headers) == [])
        headers["apns-topic"] = "com.example.scores"
        #expect(Self.codes(headers: headers) == ["error:topic_without_suffix"])
        headers["apns-topic"] = "com.example.news.push-type.liveactivity"
        #expect(Self.codes(headers: headers) == ["error:topic_not_bundle"])
    }

    @Test("A broadcast cannot start an activity; the payload rules still apply")
    func payloadRules() {
        #expect(Self.codes(payload: Self.payload(bytes: 700, event: "start")).contains("error:broadcast_start"))
        #expect(!Self.codes().contains("error:broadcast_start"))
        #expect(
            Self.codes(payload: Data(#"{"aps":{"event":"update","content-state":{"seq":1}}}"#.utf8)) == [
                "error:missing_timestamp"
            ])
        #expect(Self.codes(payload: Data("{\"aps\":".utf8)) == ["error:not_json"])
    }

    @Test("A logged exchange or a request object is read as the request; a payload is not")
    func loggedRequests() throws {
        let body = String(decoding: Self.payload(bytes: 300), as: UTF8.self)
        let exchange = try JSONSerialization.data(withJSONObject: [
            "v": 1, "kind": "exchange", "provider": "apns", "sent_at": "2026-11-21T08:00:00Z",
            "request": ["url": Self.url, "headers": Self.headers.merging(["x": "1"]) { a, _ in a }, "body": body],
        ])
        let request = try #require(PayloadCheck.BroadcastRequest(logged: exchange))
        #expect(request.url == Self.url && request.headers["apns-channel-id"] == "dHN/MQ+x/A==")
        #expect(request.payload == Data(body.utf8))
        let bare = try JSONSerialization.data(withJSONObject: ["url": "/3/device/ab", "body": body])
        let device = try #require(PayloadCheck.BroadcastRequest(logged: bare))
        #expect(
            PayloadCheck.check(broadcast: device, now: Self.now).map(\.code) == [
                .deviceTokenOnBroadcast, .missingChannelID, .pushTypeNotLiveActivity,
            ])
        #expect(PayloadCheck.BroadcastRequest(logged: Self.payload(bytes: 300)) == nil)
    }

    @Test("aps.input-push-channel on a push-to-start must be a non-empty channel id; elsewhere it is ignored")
    func inputPushChannel() {
        func codes(_ aps: String) -> [PayloadCheck.Code] {
            PayloadCheck.check(
                payload: Data(
                    #"{"aps":{\#(aps),"timestamp":1795248000,"content-state":{"seq":0},"attributes-type":"A","attributes":{}}}"#
                        .utf8), now: Self.now
            ).map(\.code)
        }
        #expect(codes(#""event":"start","input-push-channel":"dHN/MQ+x/A==""#) == [])
        #expect(codes(#""event":"start","input-push-channel":"""#) == [.invalidInputPushChannel])
        #expect(codes(#""event":"start","input-push-channel":7"#) == [.invalidInputPushChannel])
        let update = PayloadCheck.check(
            payload: Data(
                #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":1},"input-push-channel":"c"}}"#
                    .utf8), now: Self.now)
        #expect(update.map(\.level) == [.warning] && update.map(\.code) == [.invalidInputPushChannel])
    }
}

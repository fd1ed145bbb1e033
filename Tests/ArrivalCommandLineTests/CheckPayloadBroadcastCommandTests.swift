import ArrivalTestSupport
import Foundation
import Testing

@Suite("arrival check-payload --broadcast")
struct CheckPayloadBroadcastCommandTests {
    static let payload =
        #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":4,"score":"2-1"}}}"#

    func file(_ directory: URL, _ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("Headers from the command line or a logged exchange; exit 1 on an error, 0 with warnings only")
    func broadcasts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let payload = try file(directory, "payload.json", Self.payload)
        let good = try run(
            "arrival",
            [
                "check-payload", "--broadcast", "--channel-id", "dHN/MQ+x/A==", "--header",
                "apns-push-type: liveactivity",
                "--url", "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.scores", payload,
            ])
        #expect(good.status == 0)
        #expect(good.stdout == "\(payload): \(Self.payload.utf8.count) bytes, 0 errors, 0 warnings\n")
        let noChannel = try run(
            "arrival", ["check-payload", "--broadcast", "--header", "apns-push-type:liveactivity", payload])
        #expect(noChannel.status == 1)
        #expect(noChannel.stdout.hasPrefix("error: missing_channel_id: there is no apns-channel-id header"))
        let device = try run(
            "arrival",
            [
                "check-payload", "--broadcast", "--channel-id", "c", "--header", "apns-push-type: liveactivity",
                "--url", "https://api.push.apple.com/3/device/5f2c", payload,
            ])
        #expect(device.status == 1 && device.stdout.contains("error: device_token_on_broadcast"))

        // 4,700 bytes: over a device push's 4,096, within a broadcast's 5,120 (a warning above 4,608).
        let head = #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":4,"t":""#
        let large = head + String(repeating: "x", count: 4700 - head.utf8.count - 4) + #""}}}"#
        let exchange = try JSONSerialization.data(withJSONObject: [
            "kind": "exchange", "provider": "apns",
            "request": [
                "url": "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.scores",
                "headers": ["APNs-Channel-Id": "dHN/MQ+x/A==", "apns-push-type": "liveactivity"], "body": large,
            ],
        ])
        let logged = try file(directory, "exchange.json", String(decoding: exchange, as: UTF8.self))
        let near = try run("arrival", ["check-payload", "--broadcast", logged])
        #expect(near.status == 0)
        #expect(near.stdout.hasPrefix("warning: payload_near_limit: payload is 4700 bytes"))
        #expect(near.stdout.hasSuffix("exchange.json: 4700 bytes, 0 errors, 1 warning\n"))
        let asDevicePush = try run("arrival", ["check-payload", try file(directory, "large.json", large)])
        #expect(asDevicePush.status == 1 && asDevicePush.stdout.contains("error: payload_too_large"))
    }

    @Test("Broadcast options without --broadcast, or with another provider, are bad usage")
    func usage() throws {
        let channelOnly = try run("arrival", ["check-payload", "--channel-id", "c", "/dev/null"])
        #expect(channelOnly.status == 2 && channelOnly.stderr.contains("add --broadcast"))
        let fcm = try run("arrival", ["check-payload", "--broadcast", "--provider", "fcm", "/dev/null"])
        #expect(fcm.status == 2 && fcm.stderr.contains("leave out --provider fcm"))
        let header = try run("arrival", ["check-payload", "--broadcast", "--header", "no colon", "/dev/null"])
        #expect(header.status == 2 && header.stderr.contains("is not 'name: value'"))
    }
}

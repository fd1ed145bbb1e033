import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalSender
import ArrivalTestSupport
import Foundation
import Testing

/// Contract 3.0's broadcast channels through the whole kit and pipeline: the
/// app reports a subscription, the widget's render carries the channel, the
/// sender's recorder logs a broadcast (as a record and as an exchange), and
/// the report counts an update per open subscriber under its channel.
@Suite("Broadcast channels, kit to report")
struct ChannelEndToEndTests {
    @Test(
        "A subscription, a channel render and a recorded broadcast make one rendered channel update",
        arguments: [
            APNsResponseRecorder.APNsLineKind.apns, .exchange,
        ])
    func endToEnd(lines: APNsResponseRecorder.APNsLineKind) throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let uploads = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: uploads) }
        let channel = "bWF0Y2gtNw=="
        let start = Date(timeIntervalSince1970: 1_795_255_200)

        let app = BeaconWriter(.init(container: container, role: .app))
        #expect(app.reportChannelSubscription(activityID: "M1", channelID: channel, at: start))
        #expect(!app.reportChannelSubscription(activityID: "M1", channelID: ""))
        let widget = BeaconWriter(.init(container: container, role: .widget))
        widget.render(activityID: "M1", seq: 3, surface: "lock_screen", channelID: channel, at: start + 61)
        app.rotateNow()
        widget.rotateNow()
        for file in try FileManager.default.subpathsOfDirectory(atPath: container.path) where file.hasSuffix(".jsonl") {
            try FileManager.default.copyItem(
                atPath: container.appendingPathComponent(file).path,
                toPath: uploads.appendingPathComponent(UUID().uuidString + ".jsonl").path)
        }

        let recorder = APNsResponseRecorder(
            .init(directory: uploads.appendingPathComponent("sender"), environment: "production", apnsLines: lines))
        try recorder.record(
            APNsExchange(
                sentAt: start + 60,
                request: .init(
                    path: "/4/broadcasts/apps/com.example.sports",
                    headers: ["apns-channel-id": channel, "apns-push-type": "liveactivity", "apns-priority": "10"],
                    payload: Data(#"{"aps":{"event":"update","timestamp":1795255260,"content-state":{"seq":3}}}"#.utf8)),
                response: .init(status: 200, headers: ["apns-request-id": "B-3"]), latency: 0.04))
        try recorder.close()

        let (report, summary) = try ingestAndReport([uploads.path])
        #expect(summary.malformedLines == 0)
        #expect(report.requests.broadcasts == 1 && report.requests.accepted == 1)
        #expect(report.updates.sent == 1 && report.updates.rendered == 1)
        let entry = try #require(report.breakdowns["channel"]?[ExactString(channel)])
        #expect(entry.rendered == 1 && entry.arrivalRate == 1)
        #expect(report.latency.p50 == 1_000)
    }
}

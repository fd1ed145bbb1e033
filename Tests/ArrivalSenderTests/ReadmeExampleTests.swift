import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalSender
import ArrivalTestSupport
import Foundation
import Testing

/// The Foundation-only code of Documentation/Instrumenting.md, line for
/// line, so that page cannot drift from an API that compiles. (The SwiftUI
/// and ActivityKit lines around it cannot be compiled here.)
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("Widget, app and sender snippets compile and produce records the pipeline ingests")
    func snippets() async throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let uploads = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: uploads) }

        // Widget extension (Documentation/Instrumenting.md: "In the widget extension").
        BeaconWriter.shared = BeaconWriter(.init(container: container, role: .widget))
        BeaconWriter.shared?.render(activityID: "A1", seq: 7, surface: RenderBeacon.Surface.lockScreen)

        // App (Documentation/Instrumenting.md: "In the app").
        let installID = "4f3a9c1e2b7d6a05"
        let writer = BeaconWriter(
            .init(
                container: container, role: .app,
                device: DeviceInfo(deviceID: installID, osVersion: "18.1", appVersion: "4.2.0")
            ))
        writer.write(CallbackReport(.contentUpdate(activityID: "A1", seq: 7)))
        BeaconWriter.shared?.flush()
        writer.rotateNow()  // only so this test has a closed file to collect

        @Sendable func upload(_ body: Data) async throws -> Bool {
            try body.write(to: uploads.appendingPathComponent(UUID().uuidString + ".jsonl.gz"))
            return true
        }
        let collector = BeaconCollector(container: container)
        if let batch = collector.makeBatch() {
            if try await upload(batch.gzip) {
                collector.confirmUpload(of: batch)
            }
        }

        // Sender (Documentation/Instrumenting.md: "In the sender").
        let payload = Data(#"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":7}}}"#.utf8)
        let topic = "com.example.delivery.push-type.liveactivity"
        let token = "5f2c1a9e0b7d4c3e"
        let sentAt = Date()
        let sendLog = uploads.appendingPathComponent("sender")
        let recorder = APNsResponseRecorder(.init(directory: sendLog, environment: "production"))

        for finding in PayloadCheck.check(payload: payload, topic: topic) where finding.level == .error {
            print(finding)  // fix the payload instead of sending it
        }
        try recorder.record(
            APNsExchange(
                sentAt: sentAt,
                request: .init(
                    path: "/3/device/\(token)",
                    headers: ["apns-topic": topic, "apns-push-type": "liveactivity", "apns-priority": "10"],
                    payload: payload),
                response: .init(status: 200, headers: ["apns-id": "8E3A4F1C-2B7D-4A55-9E61-0C8D4B2E7F10"]),
                latency: Date().timeIntervalSince(sentAt)
            ), activityID: "A1")

        // A sender through a provider (Documentation/Instrumenting.md: "record the raw exchange instead").
        let accessToken = "ya29.an-oauth-access-token"
        let fcmBody = Data(
            #"{"message":{"apns":{"live_activity_token":"5f2c1a9e0b7d4c3e","headers":{"apns-push-type":"liveactivity","apns-priority":"10"},"payload":{"aps":{"timestamp":1795248060,"event":"update","content-state":{"seq":8}}}}}}"#
                .utf8)
        let httpStatus = 200
        let responseHeaders = ["Content-Type": "application/json"]
        let responseBody = Data(#"{"name":"projects/my-app/messages/0:1795248060000"}"#.utf8)
        try recorder.record(
            PushExchange(
                provider: .fcm, sentAt: sentAt,
                request: .init(
                    url: "https://fcm.googleapis.com/v1/projects/my-app/messages:send",
                    headers: ["Authorization": "Bearer \(accessToken)", "Content-Type": "application/json"],
                    body: fcmBody),  // the bytes sent
                response: .init(status: httpStatus, headers: responseHeaders, body: responseBody),
                latency: Date().timeIntervalSince(sentAt), activityID: "order-3f9a"))
        try recorder.close()

        let (report, summary) = try ingestAndReport([uploads.path])
        // The widget's live file stays (this process is alive); the app's rotated one was uploaded. The FCM
        // exchange is stored as the apns record it derives.
        #expect(summary.records == [.callback: 1, .apns: 2])
        #expect(report.requests.accepted == 2)
        BeaconWriter.shared = nil
    }
}

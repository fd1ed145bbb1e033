import ArrivalBeacons
import ArrivalTestSupport
import Foundation
import Testing

@Suite("Beacon records of broadcast channels", .timeLimit(.minutes(1)))
struct ChannelBeaconTests {
    /// 2026-11-21T08:00:00.123Z
    static let morning = date(ms: 1_795_248_000_123)
    static let channel = ChannelID("dHN/MQ+x/A==")!

    static func text(_ line: [UInt8]) -> String { String(decoding: line, as: UTF8.self) }

    @Test("A channel id is never empty: the contract makes a record with \"channel_id\": \"\" malformed")
    func channelIDs() {
        #expect(ChannelID("") == nil)
        #expect(ChannelID(nil as String?) == nil)
        #expect(ChannelID("c29tZUNoYW5uZWw=")?.rawValue == "c29tZUNoYW5uZWw=")
        #expect(ChannelID(Optional("x"))?.description == "x")
    }

    @Test("A render beacon carries channel_id after surface, where the contract's table puts it; none without one")
    func renderLine() {
        let device = DeviceInfo(deviceID: "d1", osVersion: "18.2")
        let line = RenderBeacon(
            activityID: "match-1", seq: 7, renderedAt: Self.morning, surface: RenderBeacon.Surface.lockScreen,
            channel: Self.channel, device: device
        ).jsonLine()
        #expect(
            Self.text(line)
                == #"{"v":1,"kind":"render","activity_id":"match-1","seq":7,"rendered_at":"2026-11-21T08:00:00.123Z","surface":"lock_screen","channel_id":"dHN/MQ+x/A==","device_id":"d1","os_version":"18.2"}"#
                + "\n")
        let plain = RenderBeacon(activityID: "match-1", seq: 7, renderedAt: Self.morning).jsonLine()
        #expect(!Self.text(plain).contains("channel_id"))
    }

    @Test("channel_subscription names the activity and its channel; other callbacks may carry channel_id too")
    func callbackLines() {
        let subscription = CallbackReport(
            .channelSubscription(activityID: "match-1", channel: Self.channel), receivedAt: Self.morning,
            device: DeviceInfo(appVersion: "7.1.0"))
        #expect(
            Self.text(subscription.jsonLine())
                == #"{"v":1,"kind":"callback","callback":"channel_subscription","activity_id":"match-1","channel_id":"dHN/MQ+x/A==","received_at":"2026-11-21T08:00:00.123Z","app_version":"7.1.0"}"#
                + "\n")
        // The case's own channel is the one written, once, even with another on the report.
        let doubled = CallbackReport(
            .channelSubscription(activityID: "match-1", channel: Self.channel), receivedAt: Self.morning,
            channel: ChannelID("other"))
        #expect(Self.text(doubled.jsonLine()).components(separatedBy: "channel_id").count == 2)
        #expect(!Self.text(doubled.jsonLine()).contains("other"))
        let update = CallbackReport(
            .contentUpdate(activityID: "match-1", seq: 9), receivedAt: Self.morning, channel: Self.channel)
        #expect(
            Self.text(update.jsonLine())
                == #"{"v":1,"kind":"callback","callback":"content_update","activity_id":"match-1","seq":9,"channel_id":"dHN/MQ+x/A==","received_at":"2026-11-21T08:00:00.123Z"}"#
                + "\n")
        let state = CallbackReport(.activityState(activityID: "match-1", state: .ended), receivedAt: Self.morning)
        #expect(!Self.text(state.jsonLine()).contains("channel_id"))
    }

    @Test("The writer reports a subscription, refuses one with an empty channel id, and tags renders with a channel")
    func writer() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        var configuration = BeaconWriter.Configuration(container: container, role: .app)
        configuration.processID = 77
        configuration.now = { Self.morning }
        let app = BeaconWriter(configuration)
        #expect(app.reportChannelSubscription(activityID: "match-1", channelID: "dHN/MQ+x/A==", at: Self.morning))
        #expect(!app.reportChannelSubscription(activityID: "match-2", channelID: "", at: Self.morning))
        app.flush()
        var widgetConfiguration = BeaconWriter.Configuration(container: container, role: .widget)
        widgetConfiguration.processID = 78
        widgetConfiguration.now = { Self.morning }
        let widget = BeaconWriter(widgetConfiguration)
        widget.render(
            activityID: "match-1", seq: 1, surface: "lock_screen", channelID: "dHN/MQ+x/A==", at: Self.morning)
        widget.render(activityID: "match-2", seq: 1, surface: "lock_screen", channelID: "", at: Self.morning)
        widget.flush()
        let day = container.path + "/LiveActivityBeacons/2026-11-21/"
        #expect(
            try lines(ofFile: day + "app-77.jsonl") == [
                #"{"v":1,"kind":"callback","callback":"channel_subscription","activity_id":"match-1","channel_id":"dHN/MQ+x/A==","received_at":"2026-11-21T08:00:00.123Z"}"#
            ])
        let renders = try lines(ofFile: day + "widget-78.jsonl")
        #expect(renders.count == 2)
        #expect(renders[0].contains(#""surface":"lock_screen","channel_id":"dHN/MQ+x/A==""#))
        #expect(!renders[1].contains("channel_id"))
        #expect(app.statistics.written == 1 && widget.statistics.written == 2)
    }
}

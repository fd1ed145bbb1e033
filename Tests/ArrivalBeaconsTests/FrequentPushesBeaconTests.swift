import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

/// Contract 3.1: the kit writes the user's "More Frequent Updates" switch
/// (`frequent_pushes`) on every render beacon and callback it records, from a
/// provider the writer reads (ActivityKit on iOS, nothing on Linux).
@Suite("frequent_pushes on beacons and callbacks", .timeLimit(.minutes(1)))
struct FrequentPushesBeaconTests {
    /// 2026-11-21T08:00:00.123Z
    static let morning = date(ms: 1_795_248_000_123)

    static func text(_ line: [UInt8]) -> String { String(decoding: line, as: UTF8.self) }

    /// A writer of `role` into `container` whose switch reads `value`.
    static func writer(
        _ container: URL, _ role: BeaconProcessRole, processID: Int32,
        frequentPushes value: @escaping FrequentPushes.Provider
    ) -> BeaconWriter {
        var configuration = BeaconWriter.Configuration(
            container: container, role: role, device: DeviceInfo(deviceID: "d1", appVersion: "4.2.0"))
        configuration.processID = processID
        configuration.now = { Self.morning }
        configuration.frequentPushes = value
        return BeaconWriter(configuration)
    }

    @Test("A record writes frequent_pushes after the device fields, where the contract's table puts it")
    func recordLines() {
        let render = RenderBeacon(
            activityID: "order-1", seq: 4, renderedAt: Self.morning, surface: RenderBeacon.Surface.lockScreen,
            device: DeviceInfo(deviceID: "d1", osVersion: "18.2"), frequentPushes: .disabled)
        #expect(
            Self.text(render.jsonLine())
                == #"{"v":1,"kind":"render","activity_id":"order-1","seq":4,"rendered_at":"2026-11-21T08:00:00.123Z","surface":"lock_screen","device_id":"d1","os_version":"18.2","frequent_pushes":"disabled"}"#
                + "\n")
        let callback = CallbackReport(
            .contentUpdate(activityID: "order-1", seq: 4), receivedAt: Self.morning,
            device: DeviceInfo(appVersion: "4.2.0"), frequentPushes: .enabled)
        #expect(
            Self.text(callback.jsonLine())
                == #"{"v":1,"kind":"callback","callback":"content_update","activity_id":"order-1","seq":4,"received_at":"2026-11-21T08:00:00.123Z","app_version":"4.2.0","frequent_pushes":"enabled"}"#
                + "\n")
        // The record's own value wins over the writer's; without either there is no field.
        #expect(Self.text(render.jsonLine(frequentPushes: .enabled)).contains(#""frequent_pushes":"disabled""#))
        let plain = RenderBeacon(activityID: "order-1", seq: 4, renderedAt: Self.morning)
        #expect(Self.text(plain.jsonLine(frequentPushes: .enabled)).hasSuffix(#","frequent_pushes":"enabled"}"# + "\n"))
        #expect(!Self.text(plain.jsonLine()).contains("frequent_pushes"))
        #expect(FrequentPushes(enabled: true) == .enabled && FrequentPushes(enabled: false) == .disabled)
    }

    @Test("The writer's provider is written on every render and callback it records")
    func writerWritesTheSwitch() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let widget = Self.writer(container, .widget, processID: 41) { .disabled }
        widget.render(activityID: "order-1", seq: 1, surface: "lock_screen", at: Self.morning)
        widget.render(activityID: "match-1", seq: 2, channelID: "dHN/MQ+x/A==", at: Self.morning)
        // A beacon that sets its own switch keeps it.
        widget.write(RenderBeacon(activityID: "order-1", seq: 3, renderedAt: Self.morning, frequentPushes: .enabled))
        widget.flush()
        let app = Self.writer(container, .app, processID: 42) { .enabled }
        app.write(CallbackReport(.pushToStartToken(token: "80e1c2d3"), receivedAt: Self.morning))
        app.write(CallbackReport(.pushToken(activityID: "order-1", token: "00ff"), receivedAt: Self.morning))
        app.write(CallbackReport(.contentUpdate(activityID: "order-1", seq: 1), receivedAt: Self.morning))
        app.write(CallbackReport(.activityState(activityID: "order-1", state: .ended), receivedAt: Self.morning))
        #expect(app.reportChannelSubscription(activityID: "match-1", channelID: "dHN/MQ+x/A==", at: Self.morning))
        app.flush()

        let day = container.path + "/LiveActivityBeacons/2026-11-21/"
        let renders = try lines(ofFile: day + "widget-41.jsonl")
        #expect(renders.count == 3)
        #expect(renders[0].hasSuffix(#""device_id":"d1","app_version":"4.2.0","frequent_pushes":"disabled"}"#))
        #expect(renders[1].hasSuffix(#""frequent_pushes":"disabled"}"#))
        #expect(renders[2].hasSuffix(#""frequent_pushes":"enabled"}"#))
        let callbacks = try lines(ofFile: day + "app-42.jsonl")
        #expect(callbacks.count == 5)
        for line in callbacks {
            #expect(line.hasSuffix(#""app_version":"4.2.0","frequent_pushes":"enabled"}"#), "\(line)")
        }

        // The pipeline's decoder reads the value back on both kinds.
        var decoder = RecordDecoder()
        if case .record(.render(let render)) = decoder.decode(renders[0]) {
            #expect(render.frequentPushes == "disabled")
        } else {
            Issue.record("the render did not decode: \(renders[0])")
        }
        if case .record(.callback(let callback)) = decoder.decode(callbacks[2]) {
            #expect(callback.frequentPushes == "enabled" && callback.seq == 1)
        } else {
            Issue.record("the callback did not decode: \(callbacks[2])")
        }
    }

    @Test("A provider that says nil writes no frequent_pushes, and the switch is read when each record is written")
    func nilOmitsTheField() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let silent = Self.writer(container, .widget, processID: 43) { nil }
        silent.render(activityID: "order-1", seq: 1, surface: "lock_screen", at: Self.morning)
        silent.write(CallbackReport(.contentUpdate(activityID: "order-1", seq: 1), receivedAt: Self.morning))
        silent.flush()
        let day = container.path + "/LiveActivityBeacons/2026-11-21/"
        let written = try lines(ofFile: day + "widget-43.jsonl")
        #expect(written.count == 2)
        #expect(written.allSatisfy { !$0.contains("frequent_pushes") })

        // The user flips the switch between two records: each carries what it said then.
        let switchOn = Switch(true)
        let flipping = Self.writer(container, .app, processID: 44) { FrequentPushes(enabled: switchOn.value) }
        flipping.write(CallbackReport(.contentUpdate(activityID: "order-1", seq: 2), receivedAt: Self.morning))
        flipping.flush()
        switchOn.value = false
        flipping.write(CallbackReport(.contentUpdate(activityID: "order-1", seq: 3), receivedAt: Self.morning))
        flipping.flush()
        let flipped = try lines(ofFile: day + "app-44.jsonl")
        #expect(flipped.count == 2)
        #expect(flipped.first?.hasSuffix(#""frequent_pushes":"enabled"}"#) == true)
        #expect(flipped.last?.hasSuffix(#""frequent_pushes":"disabled"}"#) == true)
    }

    #if !canImport(ActivityKit)
        @Test("Without ActivityKit the default provider says nil, so a default writer writes no frequent_pushes")
        func noActivityKit() throws {
            #expect(FrequentPushes.system() == nil)
            let container = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: container) }
            var configuration = BeaconWriter.Configuration(container: container, role: .widget)
            configuration.processID = 45
            configuration.now = { Self.morning }
            let writer = BeaconWriter(configuration)
            writer.render(activityID: "order-1", seq: 1, surface: "lock_screen", at: Self.morning)
            writer.write(CallbackReport(.contentUpdate(activityID: "order-1", seq: 1), receivedAt: Self.morning))
            writer.flush()
            let written = try lines(ofFile: container.path + "/LiveActivityBeacons/2026-11-21/widget-45.jsonl")
            #expect(written.count == 2 && written.allSatisfy { !$0.contains("frequent_pushes") })
        }
    #endif
}

/// A switch the test flips while a writer reads it from its queue.
private final class Switch: @unchecked Sendable {
    private let lock = NSLock()
    private var state: Bool

    init(_ state: Bool) { self.state = state }

    var value: Bool {
        get {
            lock.lock()
            defer { lock.unlock() }
            return state
        }
        set {
            lock.lock()
            state = newValue
            lock.unlock()
        }
    }
}

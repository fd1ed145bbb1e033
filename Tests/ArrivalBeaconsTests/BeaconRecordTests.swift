import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalBeacons

@Suite("Beacon records")
struct BeaconRecordTests {
    static let activity = "7C1E0B9A-3F2D-4E55-9A61-2B8D4C0E7F13"
    static let device = DeviceInfo(
        deviceID: "4f3a9c1e2b7d6a05", osVersion: "18.1", deviceModel: "iPhone16,2", appVersion: "4.2.0")

    /// The records of `records/expected.jsonl`, in its order.
    static func records() -> [[UInt8]] {
        [
            RenderBeacon(
                activityID: activity, seq: 3, renderedAt: date(ms: 1_795_248_000_123),
                surface: RenderBeacon.Surface.lockScreen
            )
            .jsonLine(defaults: device),
            RenderBeacon(activityID: "a\"b\\c\n\t\u{01}\u{1F} é😀", seq: 0, renderedAt: date(ms: 0)).jsonLine(),
            RenderBeacon(
                activityID: "leap", seq: Int.max, renderedAt: date(ms: 1_835_481_599_999), surface: "smart_stack_v2",
                device: DeviceInfo(deviceID: "record's own")
            )
            .jsonLine(defaults: DeviceInfo(deviceID: "the writer's", osVersion: "18.1")),
            CallbackReport(
                .pushToken(
                    activityID: activity, token: CallbackReport.hex(Data([0x00, 0xFF, 0x10, 0xAB, 0xCD, 0xEF]))),
                receivedAt: date(ms: 1_795_248_001_500), device: DeviceInfo(deviceID: "4f3a9c1e2b7d6a05")
            ).jsonLine(),
            CallbackReport(.pushToStartToken(token: "80e1c2d3"), receivedAt: date(ms: 1_795_247_940_000)).jsonLine(),
            CallbackReport(.contentUpdate(activityID: activity, seq: 4), receivedAt: date(ms: 1_795_248_300_007))
                .jsonLine(),
            CallbackReport(
                .activityState(activityID: activity, state: .dismissed), receivedAt: date(ms: 1_798_761_599_999)
            ).jsonLine(),
        ]
    }

    @Test(
        "Records encode exactly the contract's fields, in its order, with RFC 3339 millisecond times and JSON escaping")
    func exactBytes() throws {
        let expected = try lines(ofFile: fixture("records/expected.jsonl", in: .module))
        let actual = Self.records().map { String(decoding: $0, as: UTF8.self) }
        #expect(actual.allSatisfy { $0.hasSuffix("\n") })
        #expect(actual.map { String($0.dropLast()) } == expected)
    }

    @Test("The pipeline's decoder reads every record back with the values that were written")
    func pipelineDecodesThem() throws {
        var decoder = RecordDecoder()
        let outcomes = Self.records().map { decoder.decode(String(decoding: $0.dropLast(), as: UTF8.self)) }
        guard outcomes.count == 7 else {
            Issue.record("expected 7 records")
            return
        }
        #expect(
            outcomes[0]
                == .record(
                    .render(
                        RenderRecord(
                            activityID: Self.activity, seq: 3, renderedAt: 1_795_248_000_123, surface: "lock_screen",
                            deviceID: "4f3a9c1e2b7d6a05", osVersion: "18.1", deviceModel: "iPhone16,2",
                            appVersion: "4.2.0"))))
        #expect(outcomes[1].render?.activityID == "a\"b\\c\n\t\u{01}\u{1F} é😀")
        #expect(outcomes[2].render?.seq == Int64.max)
        #expect(outcomes[2].render?.deviceID == "record's own")
        #expect(outcomes[2].render?.osVersion == "18.1")
        guard case .record(.callback(let token)) = outcomes[3], case .record(.callback(let start)) = outcomes[4],
            case .record(.callback(let content)) = outcomes[5], case .record(.callback(let state)) = outcomes[6]
        else {
            Issue.record("callbacks did not decode: \(outcomes[3...])")
            return
        }
        #expect(
            token.callback == .pushToken && token.pushToken == "00ff10abcdef" && token.receivedAt == 1_795_248_001_500)
        #expect(start.callback == .pushToStartToken && start.activityID == nil)
        #expect(content.callback == .contentUpdate && content.seq == 4)
        #expect(state.callback == .activityState && state.state == "dismissed")
    }

    @Test("Times: milliseconds truncated, whole milliseconds kept despite floating point, days across leap years")
    func times() {
        #expect(BeaconTime.text(Date(timeIntervalSince1970: 1_795_248_000.123_9)) == "2026-11-21T08:00:00.123Z")
        #expect(BeaconTime.text(Date(timeIntervalSince1970: 1_795_248_000.123)) == "2026-11-21T08:00:00.123Z")
        #expect(BeaconTime.text(Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(BeaconTime.text(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(BeaconTime.dayNumber(text: "2028-02-29") == 21_243)
        #expect(BeaconTime.dayNumber(text: "2026-02-29") == nil)
        #expect(BeaconTime.dayNumber(text: "2026-1-01") == nil)
        #expect(BeaconTime.dayText(21_243) == "2028-02-29")
        // Every millisecond of a whole day formats to a time the pipeline parses back to the same instant.
        var decoder = RecordDecoder()
        for ms in stride(from: Int64(1_835_395_200_000), to: 1_835_481_600_000, by: 3_600_007) {
            let line = RenderBeacon(activityID: "t", seq: 1, renderedAt: date(ms: ms)).jsonLine()
            #expect(decoder.decode(String(decoding: line.dropLast(), as: UTF8.self)).render?.renderedAt == ms)
        }
    }

    @Test("File names: live, rotated, and anything else rejected")
    func fileNames() {
        #expect(BeaconFileName("widget-4411.jsonl") == BeaconFileName(role: .widget, processID: 4411))
        #expect(BeaconFileName("app-7.3.jsonl") == BeaconFileName(role: .app, processID: 7, rotation: 3))
        for bad in [
            "widget-.jsonl", "widget-12.jsonl.gz", "widget-12.0.jsonl", "other-12.jsonl", "widget--1.jsonl",
            "widget-1.2.3.jsonl", "widget-99999999999.jsonl", "widget-12.jsonl.open",
        ] {
            #expect(BeaconFileName(bad) == nil, "\(bad)")
        }
        #expect(BeaconFileName(role: .widget, processID: 5, rotation: 2).text == "widget-5.2.jsonl")
    }
}

/// The app-side observer's mapping of ActivityKit states, which compiles on
/// Linux: every state by the name its case reads, `pending` included.
@Suite("Activity states the app reports")
struct ActivityStateReportTests {
    /// A stand-in for ActivityKit's `ActivityState` (iOS only), with a case the contract does not name.
    enum ActivityState { case active, ended, dismissed, stale, pending, somethingNewer }

    @Test("Each ActivityKit state is named as the contract names it; one it does not name is left out")
    func names() {
        #expect(CallbackReport.ActivityStateName(observed: ActivityState.pending) == .pending)
        #expect(CallbackReport.ActivityStateName(observed: ActivityState.dismissed) == .dismissed)
        #expect(CallbackReport.ActivityStateName(observed: ActivityState.active) == .active)
        #expect(CallbackReport.ActivityStateName(observed: ActivityState.somethingNewer) == nil)
        #expect(
            CallbackReport.ActivityStateName.allCases.map(\.rawValue) == [
                "active", "ended", "dismissed", "stale", "pending",
            ])
    }

    @Test("A pending state, written when the app observed it, is an activity_state record the pipeline reads")
    func pendingRoundTrip() throws {
        let observed = Date(timeIntervalSince1970: 1_795_248_000.25)
        let line = CallbackReport(.activityState(activityID: "A1", state: .pending), receivedAt: observed).jsonLine()
        var decoder = RecordDecoder()
        let outcome = decoder.decode(String(decoding: line.dropLast(), as: UTF8.self))
        guard case .record(.callback(let record)) = outcome else {
            Issue.record("not read back: \(outcome)")
            return
        }
        #expect(record.callback == .activityState && record.state == "pending")
        #expect(record.receivedAt == 1_795_248_000_250)
    }
}

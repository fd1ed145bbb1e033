import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// One test per metric group of Documentation/Metrics.md, on hand-made fixtures.
@Suite("Metrics")
struct MetricTests {
    @Test("requests: totals, by_reason keys, oversize failures and risk")
    func requests() throws {
        // 10 requests, 3 accepted; q4 413+PayloadTooLarge and q5 bare 413 are oversize failures;
        // q1 (3585 bytes, accepted) is at risk, q2 (3584) is not.
        let (report, _) = try ingestAndReport([fixture("metrics/requests.jsonl")])
        #expect(report.requests.total == 10)
        #expect(report.requests.accepted == 3)
        #expect(report.requests.rejected == 7)
        #expect(report.requests.acceptanceRate == 0.3)
        #expect(
            report.requests.byReason == [
                "PayloadTooLarge": 1, "HTTP413": 1, "NoResponse": 1, "connection reset": 1, "HTTP500": 1,
                "TooManyRequests": 1, "BadDeviceToken": 1,
            ])
        #expect(report.requests.oversizeFailures == 2)
        #expect(report.requests.oversizeRisk == 1)
    }

    @Test("window: --day keeps requests and updates by sent_at, from inclusive, to exclusive")
    func window() throws {
        let day = try #require(ReportWindow.day("2026-11-21"))
        let (report, _) = try ingestAndReport([fixture("metrics/requests.jsonl")], window: day)
        #expect(report.requests.total == 9)  // q0 at 2026-11-20T23:59:59.999Z is outside
        #expect(report.requests.byReason["BadDeviceToken"] == nil)
        #expect(report.updates == counts(sent: 9, accepted: 3, lost: 3))
        #expect(report.jsonText().contains("\"from\": \"2026-11-21T00:00:00Z\""))

        let edge = ReportWindow(from: day.from - 1, to: day.from)
        let (only, _) = try ingestAndReport([fixture("metrics/requests.jsonl")], window: edge)
        #expect(only.requests.total == 1)
        #expect(only.jsonText().contains("\"from\": \"2026-11-20T23:59:59.999Z\""))
    }

    @Test(
        "A tie on acceptance and sent_at goes to the smaller apns_id, in either ingest order, whole and in partitions",
        arguments: [false, true])
    func tieOnApnsID(partitioned: Bool) throws {
        // Two accepted requests of update (T, 1) at the same instant: "t-a" direct to
        // APNs, "t-b" through FCM. "t-a" decides, whichever was stored first, so the
        // update counts under APNs in breakdowns.provider.
        let a =
            #"{"v":1,"kind":"apns","apns_id":"t-a","sent_at":"2026-11-21T12:00:00Z","status":200,"push_token":"ab01","activity_id":"T","seq":1,"aps_timestamp":5}"#
        let b =
            #"{"v":1,"kind":"apns","apns_id":"t-b","sent_at":"2026-11-21T12:00:00Z","status":200,"push_token":"ab01","activity_id":"T","seq":1,"aps_timestamp":9,"provider":"fcm"}"#
        // Another update first, so that the tie is not on the first rows read.
        let other =
            #"{"v":1,"kind":"apns","apns_id":"o-1","sent_at":"2026-11-21T11:00:00Z","status":200,"push_token":"ab02","activity_id":"U","seq":1,"aps_timestamp":1}"#
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func report(_ lines: [String], _ name: String) throws -> Report {
            let path = directory.appendingPathComponent(name + ".jsonl").path
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            let store = try SQLiteStore(path: directory.appendingPathComponent(name + ".sqlite").path)
            _ = try IngestPipeline(store: store).ingest(paths: [path])
            var builder = ReportBuilder(store: store)
            if partitioned { builder.partitioning = PartitionPolicy(rowsPerPartition: 1) }
            return try builder.build(window: nil)
        }
        let first = try report([other, a, b], "ab")
        let second = try report([other, b, a], "ba")
        #expect(first.jsonText() == second.jsonText())
        let providers = first.breakdowns["provider"] ?? [:]
        #expect(providers.keys.map(\.text).sorted() == ["apns"])
        #expect(providers["apns"]?.sent == 2)
    }

    @Test("attribution through push_token callbacks; unattributed and seq-less requests")
    func attribution() throws {
        // t1 → Y (earliest callback), t2 → A2 (same time: smaller id), t3 and t9 unknown.
        // t-4 (Y, no seq) and t-5 (no activity, unknown token, no seq) lack seq: 2.
        // t-3 and t-5 are unattributed: 2. Updates: (Y,1) rendered, (A2,1) and (Q,2) lost.
        let (report, _) = try ingestAndReport([fixture("metrics/attribution.jsonl")])
        #expect(report.dataQuality.unattributed == 2)
        #expect(report.dataQuality.apnsWithoutSeq == 2)
        #expect(report.requests.total == 6)
        #expect(report.updates == counts(sent: 3, accepted: 3, rendered: 1, lost: 2))
        #expect(report.callbacks.tokenExpected == 1)
        #expect(report.callbacks.tokenReceived == 1)
    }

    @Test("callbacks: content-update and token callback loss")
    func callbacks() throws {
        // Rendered: K1/1, K1/2, K2/1. content_update for K1/1 (twice) and K2/1: 2 of 3.
        // Activities with a rendered update: K1, K2; only K2 reported its push token.
        let (report, _) = try ingestAndReport([fixture("metrics/callbacks.jsonl")])
        #expect(report.callbacks.contentUpdateExpected == 3)
        #expect(report.callbacks.contentUpdateReceived == 2)
        #expect(report.callbacks.callbackLossRate == 1 - 2.0 / 3.0)
        #expect(report.callbacks.tokenExpected == 2)
        #expect(report.callbacks.tokenReceived == 1)
        #expect(report.callbacks.tokenCallbackLossRate == 0.5)
    }

    @Test("latency: first render, nearest rank, negatives clamped and counted")
    func latency() throws {
        // Latencies 100…1000 ms, seq3's later second render ignored, seq11 rendered 50 ms before
        // it was sent → 0 and one clock_skew_negative. n = 11: ranks 6, 10, 11.
        let (report, _) = try ingestAndReport([fixture("metrics/latency.jsonl")])
        #expect(report.latency == Report.Latency(count: 11, p50: 500, p90: 900, p99: 1000))
        #expect(report.dataQuality.clockSkewNegative == 1)
    }

    @Test("breakdowns: app and priority from the earliest accepted request, versions from device evidence")
    func breakdowns() throws {
        let (report, _) = try ingestAndReport([fixture("metrics/breakdowns.jsonl")])
        #expect(
            report.breakdowns["app"] == [
                "com.example.food": counts(sent: 2, accepted: 2, rendered: 2),
                // P2's seq 2: its seq 1 rendered later, and still seq 2 never showed.
                "com.example.plain": counts(sent: 1, accepted: 1, lost: 1, causes: [.unexplained: 1]),
                "unknown": counts(sent: 1, accepted: 1, lost: 1),
            ])
        #expect(
            report.breakdowns["priority"] == [
                "10": counts(sent: 2, accepted: 2, rendered: 2),
                "unknown": counts(sent: 2, accepted: 2, lost: 2, causes: [.deviceSilent: 1, .unexplained: 1]),
            ])
        // P: render and callback at the same instant carry 18.1 and 17.5 → the smaller, 17.5.
        #expect(
            report.breakdowns["os_version"] == [
                "17.5": counts(sent: 1, accepted: 1, rendered: 1),
                "18.2": counts(sent: 2, accepted: 2, rendered: 1, lost: 1, causes: [.unexplained: 1]),
                "unknown": counts(sent: 1, accepted: 1, lost: 1),
            ])
        // P2: its callback at 11:00 (3.1) is earlier than its render (3.0).
        #expect(
            report.breakdowns["app_version"] == [
                "2.0": counts(sent: 1, accepted: 1, rendered: 1),
                "3.1": counts(sent: 2, accepted: 2, rendered: 1, lost: 1, causes: [.unexplained: 1]),
                "unknown": counts(sent: 1, accepted: 1, lost: 1),
            ])
    }

    @Test("breakdowns: a priority per value however many values a sender uses")
    func manyPriorities() throws {
        // 20 values (past the short list the summary looks along first), value v on v + 1 updates.
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var lines: [String] = []
        for value in 0..<20 {
            for seq in 0...value {
                lines.append(
                    #"{"v":1,"kind":"apns","apns_id":"p\#(value)-\#(seq)","sent_at":"2026-11-21T12:00:00Z","#
                        + #""status":200,"push_token":"aa","activity_id":"A\#(value)","seq":\#(seq),"#
                        + #""aps_timestamp":\#(seq),"priority":\#(value * 7)}"#)
            }
        }
        let file = directory.appendingPathComponent("priorities.jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        let (report, _) = try ingestAndReport([file.path])
        var expected: [ExactString: UpdateCounts] = [:]
        for value in 0..<20 {
            expected[ExactString(String(value * 7))] = counts(sent: value + 1, accepted: value + 1, lost: value + 1)
        }
        #expect(report.breakdowns["priority"] == expected)
    }
}

@Suite("Values are compared by code point")
struct CodePointTests {
    @Test("Canonically equivalent spellings stay apart; the app suffix is cut by code point")
    func canonicalEquivalents() throws {
        // "é" precomposed and "e" + U+0301 are two activities; "K" and the Kelvin sign two
        // reasons and two OS versions. The topic ends in U+0600 before the suffix.
        let (report, _) = try ingestAndReport([fixture("metrics/unicode.jsonl")])
        #expect(report.callbacks.tokenExpected == 2)
        #expect(report.updates.rendered == 2)
        #expect(report.requests.byReason == ["K": 1, "\u{212A}": 1])
        #expect(report.breakdowns["os_version"]?.count == 2)
        #expect(report.breakdowns["app"]?.keys.map(\.text).sorted() == ["unknown", "x\u{0600}"])
        #expect(report.jsonText().contains("\"x\u{0600}\": {"))
    }
}

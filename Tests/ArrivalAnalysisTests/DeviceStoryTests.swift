import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis
@testable import ArrivalStore

/// Contract 3.0's device story on the hand-written `Fixtures/lifecycle`
/// files: dismissals and device ends, each loss cause, push-to-start, dead
/// tokens, and the ties the contract settles (a dismissal at the accept
/// time, an end before a dismissal and the reverse, a token callback at
/// the accept time, two token callbacks at once, a device clock behind).
@Suite("Contract 3.0: dismissals, loss causes, starts, dead tokens")
struct DeviceStoryTests {
    static func store(in directory: URL) throws -> SQLiteStore {
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fixture("lifecycle")])
        return store
    }

    /// "activity#seq" → "outcome" or "lost/cause", for every accepted update.
    static func outcomes(_ store: SQLiteStore, partitionRows: Int? = nil) throws -> [String: String] {
        var result: [String: String] = [:]
        func note(_ analysis: DeliveryAnalysis) {
            for u in analysis.updates where u.accepted {
                let name = "\(analysis.activityNames[Int(u.activity)])#\(u.seq)"
                result[name] = (u.outcome?.name ?? "-") + (u.lossCause.map { "/" + $0.name } ?? "")
            }
        }
        if let partitionRows {
            // The pair's other side: the same file through a connection of its own.
            let same = try SQLiteStore(path: store.path)
            try PartitionedAnalyses.forEachPair(
                store, nil, same, nil, partitioning: PartitionPolicy(rowsPerPartition: partitionRows)
            ) { a, _ in note(a) }
        } else {
            note(try store.read { try DeliveryAnalysis(snapshot: $0, window: nil) })
        }
        return result
    }

    static let expected: [String: String] = [
        // Dismissed at 08:10: an update accepted at that very instant is not after it.
        "L1#1": "rendered", "L1#2": "lost/device_silent", "L1#3": "dismissed",
        // An `end` sent after the dismissal: the dismissal came before that end.
        "L1#4": "dismissed",
        // Ended (08:05), then dismissed (08:06): ended.
        "L2#1": "rendered", "L2#2": "ended",
        // Dismissed (08:05), then ended (08:06): dismissed.
        "L3#1": "rendered", "L3#2": "dismissed",
        // Both at 08:05: the dismissal is not earlier than the end.
        "L4#1": "rendered", "L4#2": "ended",
        // The app saw it, the widget never drew it.
        "L5#1": "lost/not_rendered",
        // The token rotated at the accept time itself: already the newest.
        "L6#1": "lost/old_token",
        // Two token callbacks at 10:00: the greatest token (b604) is the newest.
        "L6#2": "lost/device_silent", "L6#3": "lost/old_token",
        // Dismissed hours later (the app was opened again).
        "L7#1": "lost/closed_later",
        // The device's last word came before the send.
        "L8#1": "lost/device_silent",
        // The device spoke after the send, and still nothing showed.
        "L9#1": "lost/unexplained",
        // A device clock two hours behind: its dismissal (07:10) reads as before the send (09:05).
        "L10#1": "rendered", "L10#2": "dismissed",
        // Push-to-start.
        "S1#1": "rendered", "S2#1": "lost/device_silent", "S3#1": "lost/unexplained",
        // Sent to the push-to-start token after the device (clock behind) reported its update token.
        "S5#1": "lost/old_token",
        // Dead tokens: what became of the updates themselves.
        "T1#2": "lost/device_silent", "T1#4": "lost/device_silent", "T3#2": "lost/device_silent",
    ]

    @Test("Every update's outcome and loss cause, whole and in partitions")
    func outcomesAndCauses() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        #expect(try Self.outcomes(store) == Self.expected)
        #expect(try Self.outcomes(store, partitionRows: 3) == Self.expected)
    }

    @Test("The newest token at a send, whatever order the app's token callbacks were uploaded in")
    func tokenCallbacksOutOfOrder() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fixture("token-order", in: .module)])
        // Callbacks stored c3 (11:00), c2 (10:00), c1 (08:00). At 09:00 the newest is c1, the one
        // sent (and the device spoke later: unexplained); at 10:30 c2, not the c1 sent (old_token);
        // at 11:30 c3, the one sent, and nothing came later (device_silent); at 07:00 none was known.
        let expected = [
            "R#1": "lost/unexplained", "R#2": "lost/old_token", "R#3": "lost/device_silent",
            "R#4": "lost/unexplained",
        ]
        #expect(try Self.outcomes(store) == expected)
        #expect(try Self.outcomes(store, partitionRows: 2) == expected)
    }

    @Test("The report equals the reference implementation's (recorded in Fixtures/reports/lifecycle.schema2.json)")
    func reportEqualsReference() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let recorded =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: fixture("reports/lifecycle.schema2.json", in: .module))))
            as! NSDictionary
        for rows in [nil, 3] as [Int?] {
            var builder = ReportBuilder(store: store)
            if let rows { builder.partitioning = PartitionPolicy(rowsPerPartition: rows) }
            let text = try builder.build(window: nil).jsonText()
            let mine = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! NSDictionary
            #expect(mine == recorded, "partitions of \(rows.map(String.init) ?? "all")")
        }
    }

    /// `Fixtures/stores/lifecycle-before-3.0.store`: `Fixtures/lifecycle` ingested by arrival 0.9 at
    /// 8b3e63a (before contract 3.0: migrations up to 0008, report schema 1), then `VACUUM`ed to
    /// 1 KiB pages and journal_mode DELETE so that the fixture is one small file.
    @Test("A store written before contract 3.0 upgrades in place when read and reports schema 2 without re-ingesting")
    func storeFromBefore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        try FileManager.default.copyItem(atPath: fixture("stores/lifecycle-before-3.0.store"), toPath: path)
        // As `arrival report` opens it: for reading, which upgrades it in place first.
        let store = try SQLiteStore(readingAt: path)
        let text = try ReportBuilder(store: store).build(window: nil).jsonText()
        let mine = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! NSDictionary
        let recorded =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: fixture("reports/lifecycle.schema2.json", in: .module))))
            as! NSDictionary
        #expect(mine == recorded)
        #expect(text.contains(#""schema": "arrival.report/2""#))
        // The views were made anew too (dashboards read them).
        #expect(try store.viewSQL("update_outcomes")?.contains("loss_cause") == true)
    }

    @Test("Starts: accepted, appeared, update token and its latency (a token before the accept time counts 0)")
    func starts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try ReportBuilder(store: try Self.store(in: directory)).build(window: nil)
        // L1, L10, S1 to S5 are starts; S4 was refused; S2 never appeared; S1 and S5 got a token.
        #expect(report.starts.sent == 7 && report.starts.accepted == 6 && report.starts.appeared == 5)
        #expect(report.starts.updateTokenReceived == 2)
        #expect(report.starts.updateTokenLatency == Report.Latency(count: 2, p50: 0, p90: 2000, p99: 2000))
    }

    @Test("Requests to dead tokens: strictly after the death, attributed or not, never to an empty token")
    func deadTokens() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let builder = ReportBuilder(store: store)
        // dd01 died at 12:00 (t2 at the same instant is not after it; t3, t4 are); dd02 died
        // at 13:00 and got t6 the next day, without an activity.
        #expect(try builder.build(window: nil).requests.toDeadTokens == 3)
        #expect(try builder.build(window: ReportWindow.day("2026-11-21")).requests.toDeadTokens == 2)
        #expect(try builder.build(window: ReportWindow.day("2026-11-22")).requests.toDeadTokens == 1)
        #expect(try store.deadTokens().map(\.requestsAfter).reduce(0, +) == 3)
    }
}

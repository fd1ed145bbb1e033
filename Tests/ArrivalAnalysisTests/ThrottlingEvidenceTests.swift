import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis

/// Contract 3.1 on a hand-made store whose figures are worked out in the
/// comments of `Fixtures/throttling/throttling.jsonl`'s maker and here: the
/// priority-10 load of the hour before, the "More Frequent Updates" switch,
/// and the channel rule for update tokens, whole and in partitions, in the
/// report, the SQL views, `lost` and `activity`.
@Suite("Throttling evidence (contract 3.1)")
struct ThrottlingEvidenceTests {
    static func store(in directory: URL) throws -> SQLiteStore {
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fixture("throttling", in: .module)])
        return store
    }

    static func key(_ text: String) -> ExactString { ExactString(text) }

    @Test("Both breakdowns and the channel rule, the same in one analysis and in partitions of 3 requests")
    func breakdownsAndChannelRule() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        var builder = ReportBuilder(store: store)
        builder.partitioning = PartitionPolicy(rowsPerPartition: .max)
        let whole = try builder.build(window: nil)
        builder.partitioning = PartitionPolicy(rowsPerPartition: 3)
        let split = try builder.build(window: nil, sampling: false)
        #expect(split.analysis == nil)
        #expect(split.report.jsonText() == whole.jsonText())

        // A1-5 (0-4 others before), A6 (5), A7 (6), A8 (6); A11 and A12 at one instant count neither;
        // B2 counts B1 exactly an hour before; C1, D1, E1 alone. Priority 5, a rejection and F1 (no
        // priority) are in no bucket.
        let load = try #require(whole.breakdowns["priority_10_last_hour"])
        #expect(Set(load.keys) == [Self.key("0-4"), Self.key("5-14")])
        #expect(load[Self.key("0-4")]?.accepted == 12)
        #expect(load[Self.key("0-4")]?.rendered == 11)
        #expect(load[Self.key("0-4")]?.superseded == 1)
        #expect(load[Self.key("5-14")]?.accepted == 3)
        #expect(load[Self.key("5-14")]?.superseded == 3)
        #expect(load[Self.key("5-14")]?.arrivalRate == 0)

        // The earliest evidence that says: A enabled, B disabled, C "alpha" (two at its first
        // instant: the smaller), F disabled from a callback before a render that says nothing.
        let switches = try #require(whole.breakdowns["frequent_pushes"])
        #expect(switches[Self.key("enabled")]?.sent == 12)
        #expect(switches[Self.key("enabled")]?.accepted == 11)
        #expect(switches[Self.key("disabled")]?.sent == 3)
        #expect(switches[Self.key("alpha")]?.sent == 1)
        #expect(switches[Self.key("unknown")]?.sent == 2)
        #expect(switches[Self.key("zeta")] == nil)

        // D follows a channel: no update token is expected of it, as activity or as start.
        #expect(whole.callbacks.tokenExpected == 5)
        #expect(whole.callbacks.tokenReceived == 1)
        #expect(whole.starts.appeared == 2)
        #expect(whole.starts.updateTokenExpected == 1)
        #expect(whole.starts.updateTokenReceived == 1)
        #expect(whole.starts.updateTokenRate == 1)
        // Field for field the reference implementation's report of the same files
        // (`python3 Scripts/reference/arrival_reference.py --contract 3.2 Fixtures/throttling`).
        let mine = try JSONSerialization.jsonObject(with: Data(whole.jsonText().utf8)) as! NSDictionary
        let recorded =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: fixture("reports/throttling.schema2.json", in: .module))))
            as! NSDictionary
        #expect(mine == recorded)
    }

    @Test("The SQL views give every update the analysis' priority-10 count, switch and subscription")
    func viewsAgree() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let (fromViews, fromAnalysis, _) = try ViewAgreementTests.outcomes(store)
        #expect(fromViews.count == 18)
        #expect(fromViews == fromAnalysis)
        #expect(fromViews[ExactString("A#7")]?.contains("p10:6 fp:enabled sub:false") == true)
        #expect(fromViews[ExactString("D#1")]?.contains("p10:0 fp:- sub:true") == true)
        #expect(fromViews[ExactString("F#1")]?.contains("p10:-1 fp:disabled") == true)
    }

    @Test("A frequent_pushes that is not a string makes the line malformed (wrong_type); the rest is kept")
    func malformedSwitch() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fixture("throttling", in: .module)])
        let report = try ReportBuilder(store: store).build(window: nil)
        #expect(report.dataQuality.malformedByCause[ExactString("wrong_type")] == 2)
        #expect(report.updates.sent == 18)
    }

    @Test("The markdown section lists the buckets in their natural order, as evidence")
    func markdownSection() throws {
        var report = Report(window: nil)
        report.schema = 2
        for (bucket, rendered) in [("120+", 1), ("5-14", 7), ("0-4", 9), ("15-29", 4)] {
            var counts = UpdateCounts()
            counts.sent = 10
            counts.accepted = 10
            counts.rendered = rendered
            counts.lost = 10 - rendered
            report.breakdowns["priority_10_last_hour", default: [:]][ExactString(bucket)] = counts
        }
        let text = report.markdownText()
        let section = try #require(text.range(of: "## Is Apple throttling these updates?"))
        let rows = text[section.upperBound...].split(separator: "\n").filter { $0.hasPrefix("| ") }.dropFirst()
        #expect(
            rows.prefix(4).map { $0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces) } == [
                "0-4", "5-14", "15-29", "120+",
            ])
        #expect(text.contains("evidence, not a verdict"))
        #expect(!text.contains("is throttling"))
    }
}

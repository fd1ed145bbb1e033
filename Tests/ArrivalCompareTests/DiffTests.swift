import ArrivalAnalysis
import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

@Suite("Diff")
struct DiffTests {
    @Test("A batch diffed with itself shows no change, down to the records")
    func selfDiff() throws {
        let a = try ComparisonSide.load(SimulatedBatches.baseline, window: nil, detail: true)
        let b = try ComparisonSide.load(SimulatedBatches.baseline, window: nil, detail: true)
        var diff = ReportDiff(a, b)
        diff.records = try RecordDiff(a, b)
        // Every figure: batches are analysed by today's contract (report schema 2); the
        // broadcast figures only when a side has a broadcast (these batches have none).
        #expect(diff.metrics.count == Metric.all.count - Metric.broadcastOnly.count)
        #expect(diff.metrics.allSatisfy { $0.verdict == .unchanged })
        #expect(diff.reasons.allSatisfy { $0.status == .unchanged })
        #expect(diff.breakdowns.isEmpty)
        let records = try #require(diff.records)
        #expect(records.apns.same == a.report.requests.total)
        #expect(records.updates.same == a.report.updates.sent)
        #expect(records.isEmpty && diff.isEmpty)
        #expect(diff.text(color: false).contains("0 answered differently, 0 only in A, 0 only in B"))
    }

    @Test("Sides without render beacons are said to have none, not compared as 0 % arrival in silence")
    func noRenderBeacons() throws {
        var senderOnly = Report(window: nil)
        senderOnly.requests.total = 100
        senderOnly.requests.accepted = 100
        senderOnly.updates.sent = 100
        senderOnly.updates.accepted = 100
        senderOnly.updates.lost = 100
        var withRenders = senderOnly
        withRenders.updates.lost = 10
        withRenders.updates.rendered = 90
        let side = ReportDiff.Side(path: "x", source: .reportJSON, window: nil)
        let neither = ReportDiff(
            a: senderOnly, samplesA: nil, b: senderOnly, samplesB: nil, sideA: side, sideB: side)
        #expect(neither.notes.count == 1 && neither.notes[0].hasPrefix("Neither side has a rendered update"))
        #expect(neither.text(color: false).contains("Note: Neither side has a rendered update"))
        #expect(neither.markdownText().contains("> **Note:** Neither side"))
        let one = ReportDiff(a: senderOnly, samplesA: nil, b: withRenders, samplesB: nil, sideA: side, sideB: side)
        #expect(one.notes == [one.notes[0]] && one.notes[0].hasPrefix("A has no rendered update"))
        let both = ReportDiff(a: withRenders, samplesA: nil, b: withRenders, samplesB: nil, sideA: side, sideB: side)
        #expect(both.notes.isEmpty && !both.text(color: false).contains("Note:"))
    }

    @Test("An injected regression is called worse, and noise is not")
    func regressionVersusNoise() throws {
        let baseline = try ComparisonSide.load(SimulatedBatches.baseline, window: nil)
        let stale = try ComparisonSide.load(SimulatedBatches.staleTimestamps, window: nil)
        let noise = try ComparisonSide.load(SimulatedBatches.noise, window: nil)
        let worse = ReportDiff(baseline, stale)
        let staleShare = try #require(worse.metrics.first { $0.metric.id == "updates.stale_share" })
        #expect(staleShare.verdict == .worse)
        #expect(staleShare.significance?.method == .activityClusters)
        let calm = ReportDiff(baseline, noise)
        #expect(
            !calm.metrics.contains { $0.verdict == .worse && $0.metric.kind == .rate && abs($0.absolute ?? 0) > 0.01 })
    }

    @Test("A saved report reads back equal when keys and values start with U+FEFF or hold controls")
    func reportJSONKeepsEveryScalar() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("odd.jsonl").path
        let lines = [
            #"{"v":1,"kind":"apns","apns_id":"a1","sent_at":"2026-11-21T08:00:00Z","status":400,"#
                + #""reason":"\ufeffBad\u0001","push_token":"t","activity_id":"x","seq":1,"aps_timestamp":1}"#,
            #"{"v":1,"kind":"render","activity_id":"x","seq":1,"rendered_at":"2026-11-21T08:00:01Z","#
                + #""app_version":"\ufeff4.2.1"}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let (report, summary) = try ingestAndReport([path])
        #expect(summary.newRecords == 2 && summary.malformedLines == 0)
        #expect(report.requests.byReason.keys.contains { $0.text == "\u{FEFF}Bad\u{01}" })
        let read = try Report(jsonData: Data(report.jsonText().utf8))
        #expect(read == report)
    }

    @Test("A report JSON side gives the same figures as its store, tested binomially")
    func reportJSONSide() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let batches = try ComparisonSide.load(SimulatedBatches.baseline, window: nil)
        let json = directory.appendingPathComponent("report.json")
        try Data(batches.report.jsonText().utf8).write(to: json)
        #expect(try ComparisonSide.classify(json.path) == .reportJSON)
        let fromJSON = try ComparisonSide.load(json.path, window: nil)
        #expect(fromJSON.report == batches.report)
        #expect(fromJSON.samples == nil)
        let diff = ReportDiff(fromJSON, batches)
        #expect(diff.metrics.allSatisfy { $0.verdict == .unchanged })
        #expect(diff.metrics.compactMap(\.significance).allSatisfy { $0.method == .binomial })
    }

    @Test("A store side is read without being written")
    func storeSide() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("user.sqlite").path
        do {
            let store = try SQLiteStore(path: path)
            _ = try IngestPipeline(store: store).ingest(paths: [SimulatedBatches.baseline])
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(try ComparisonSide.classify(path) == .store)
        let side = try ComparisonSide.load(path, window: nil)
        let batches = try ComparisonSide.load(SimulatedBatches.baseline, window: nil)
        #expect(side.report == batches.report)
        #expect(side.samples == batches.samples)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("Record diff: same apns_id answered differently, and records on one side only")
    func recordDiff() throws {
        let a = try ComparisonSide.load(fixture("compare/before.jsonl", in: .module), window: nil, detail: true)
        let b = try ComparisonSide.load(fixture("compare/after.jsonl", in: .module), window: nil, detail: true)
        let records = try RecordDiff(a, b, limit: 10)
        // before: r1 200, r2 200, r3 200; after: r1 200, r2 410 Unregistered, r4 200.
        #expect(records.apns.same == 1)
        #expect(records.apns.changed == 1)
        #expect(records.apnsChangedRows.first?.b.reason == "Unregistered")
        #expect(records.apns.onlyInA == 1 && records.apnsOnlyInARows.first?.apnsID == "r3")
        #expect(records.apns.onlyInB == 1 && records.apnsOnlyInBRows.first?.apnsID == "r4")
        // Updates: seq 1 rendered on both; seq 2 rendered → not_accepted; seq 3 only in A; seq 4 only in B.
        #expect(records.updates.same == 1)
        #expect(records.updates.changed == 1)
        #expect(records.transitions == ["rendered → not_accepted": 1])
        #expect(records.updates.onlyInA == 1 && records.updates.onlyInB == 1)
        #expect(records.updateRows.map(\.seq) == [2, 3, 4])
    }

    @Test("Missing and corrupt sides are refused with a message naming the file")
    func unreadableSides() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: ComparisonError.self) {
            try ComparisonSide.load(directory.appendingPathComponent("missing").path, window: nil)
        }
        let garbage = directory.appendingPathComponent("garbage.jsonl")
        try Data("not json\n{\"kind\":\"apns\"}\n".utf8).write(to: garbage)
        do {
            _ = try ComparisonSide.load(garbage.path, window: nil)
            Issue.record("a batch without one valid record was accepted")
        } catch {
            #expect(error.description.contains("garbage.jsonl"))
            #expect(error.description.contains("no valid apns record"))
        }
        let cut = directory.appendingPathComponent("cut.json")
        try Data("{\n  \"schema\": \"arrival.report/1\",\n  \"requests\": {".utf8).write(to: cut)
        do {
            _ = try ComparisonSide.load(cut.path, window: nil)
            Issue.record("a cut report JSON was accepted")
        } catch {
            guard case .notAReport = error else {
                Issue.record("expected notAReport, got \(error)")
                return
            }
            #expect(error.description.contains("cut.json"))
        }
        let notAStore = directory.appendingPathComponent("other.sqlite")
        do {
            let connection = try Connection(path: notAStore.path)
            try connection.execute("CREATE TABLE t (x)")
        }
        #expect(throws: ComparisonError.self) { try ComparisonSide.load(notAStore.path, window: nil) }
    }

    @Test("The JSON output is stable and names every metric")
    func jsonOutput() throws {
        let a = try ComparisonSide.load(SimulatedBatches.baseline, window: nil)
        let b = try ComparisonSide.load(SimulatedBatches.lostCallbacks, window: nil)
        let text = ReportDiff(a, b).jsonText()
        #expect(text == ReportDiff(a, b).jsonText())
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["schema"] as? String == "arrival.diff/1")
        let metrics = try #require(object["metrics"] as? [[String: Any]])
        // Every figure both sides' schema has, in report order (no broadcast on either side: none of theirs).
        #expect(
            metrics.compactMap { $0["metric"] as? String }
                == Metric.all.filter { !Metric.broadcastOnly.contains($0) }.map(\.id))
        let loss = try #require(metrics.first { $0["metric"] as? String == "callbacks.callback_loss_rate" })
        #expect(loss["verdict"] as? String == "worse")
    }
}

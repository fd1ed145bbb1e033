import ArrivalAnalysis
import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// Saved reports of schema 2 (contract 3.0) beside schema 1: read back,
/// compared with the new figures absent (never 0) on a schema-1 side, and
/// gated with a plain failure when a side lacks a rule's figure.
///
/// The schema-1 report is the sample day as arrival saved it before
/// contract 3.0 (`Fixtures/reports/sample.schema1.json`); the schema-2 report is the sample day as the reference implementation
/// reports it by contract 3.0 (`Scripts/reference/arrival_reference.py
/// --contract 3.0 SampleData`), as another tool, or a later arrival, saves it.
@Suite("Report schema 2 in diff and gate")
struct ReportSchema2Tests {
    static let schema2 = fixture("reports/sample.schema2.json", in: .module)

    /// The sample day's report as arrival 1.x saved it (`arrival.report/1`,
    /// recorded before contract 3.0), in a folder of its own.
    func schema1() throws -> (Report, URL) {
        let directory = try makeTemporaryDirectory()
        let file = directory.appendingPathComponent("sample.schema1.json")
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture("reports/sample.schema1.json", in: .module)))
        try data.write(to: file)
        let report = try Report(jsonData: data)
        #expect(report.schema == 1)
        return (report, file)
    }

    @Test("A schema-2 report reads back with every new figure")
    func decode() throws {
        let report = try Report(jsonData: try Data(contentsOf: URL(fileURLWithPath: Self.schema2)))
        #expect(report.schema == 2)
        #expect(report.updates.dismissed == 19 && report.updates.lost == 14)
        #expect(report.updates.lostByCause.notRendered == 5 && report.updates.lostByCause.deviceSilent == 7)
        #expect(
            report.starts.accepted == 116 && report.starts.appeared == 115 && report.starts.updateTokenReceived == 97)
        #expect(report.starts.updateTokenLatency.count == 97)
        #expect(report.requests.toDeadTokens == 11 && report.requests.broadcasts == 0)
        #expect(report.breakdowns["app"]?.values.map(\.dismissed).reduce(0, +) == 19)
        #expect(Metric.named("updates.lost_by_cause.not_rendered")?.value(in: report) == 5)
        #expect(Metric.named("starts.appearance_rate")?.value(in: report) == 115.0 / 116.0)
        // A schema-2 report that lacks one of its keys is refused, naming it.
        var object = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.schema2))) as? [String: Any])
        var updates = try #require(object["updates"] as? [String: Any])
        updates["lost_by_cause"] = nil
        object["updates"] = updates
        #expect {
            _ = try Report(jsonData: try JSONSerialization.data(withJSONObject: object))
        } throws: { error in
            "\(error)".contains("updates.lost_by_cause")
        }
    }

    @Test("Diff of schema 1 with schema 2: the new figures are absent on A, never 0, and a note says why")
    func diffAcrossSchemas() throws {
        let (_, file) = try schema1()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let diff = ReportDiff(
            try ComparisonSide.load(file.path, window: nil), try ComparisonSide.load(Self.schema2, window: nil))
        let notRendered = try #require(diff.metrics.first { $0.metric.id == "updates.lost_by_cause.not_rendered" })
        #expect(notRendered.verdict == .absent && !notRendered.presentA && notRendered.presentB)
        #expect(notRendered.a == nil && notRendered.b == 5)
        let text = diff.text(color: false)
        #expect(text.contains("A is a report of schema 1"))
        let row = try #require(text.split(separator: "\n").first { $0.contains("updates.lost_by_cause.not_rendered") })
        #expect(row.contains("absent") && row.contains("5"))
        // Two schema-1 sides list none of the schema-2 figures.
        let same = ReportDiff(
            try ComparisonSide.load(file.path, window: nil), try ComparisonSide.load(file.path, window: nil))
        #expect(!same.metrics.contains { $0.metric.since == 2 })
        #expect(same.notes.isEmpty)
    }

    @Test("A gate rule on a figure a side lacks fails, saying which side and why; on schema 2 it is measured")
    func gateAcrossSchemas() throws {
        let (_, file) = try schema1()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let schema1 = try ComparisonSide.load(file.path, window: nil)
        let schema2 = try ComparisonSide.load(Self.schema2, window: nil)
        let floor = try GateRule.parse("updates.lost_by_cause.not_rendered <= 10")
        let regression = try GateRule.parse("starts.appearance_rate drop <= 1")
        let config = GateConfig(rules: [floor, regression], minSample: 0)

        let onSchema2 = GateEvaluation(config: config, current: schema2, baseline: schema2)
        #expect(onSchema2.results.map(\.verdict) == [.pass, .pass])

        let currentLacks = GateEvaluation(config: config, current: schema1, baseline: schema2)
        #expect(currentLacks.results.map(\.verdict) == [.fail, .fail])
        #expect(currentLacks.results[0].detail.contains("not in the current side's report"))

        let baselineLacks = GateEvaluation(config: config, current: schema2, baseline: schema1)
        #expect(baselineLacks.results.map(\.verdict) == [.pass, .fail])
        #expect(baselineLacks.results[1].detail.contains("not in the baseline's report"))
        #expect(!baselineLacks.passed)
    }
}

import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// The JSON report over the bundled SampleData/ must not change by accident.
/// Re-record on purpose with `RECORD_GOLDEN=1 swift test --filter Golden`.
@Suite("Golden report")
struct GoldenReportTests {
    @Test("The report over SampleData/ matches the golden file")
    func sampleData() throws {
        let sample = samplePaths
        let golden = packageRoot.appendingPathComponent(
            "Tests/ArrivalAnalysisTests/Fixtures/golden/sample-report.json")
        let (report, _) = try ingestAndReport(sample)
        let text = report.jsonText()
        if ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" {
            try Data(text.utf8).write(to: golden)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(text == expected)
        // The sample is meant to show every outcome and the common failures.
        #expect(report.updates.rendered > 0 && report.updates.ended > 0 && report.updates.expired > 0)
        #expect(report.updates.staleTimestamp > 0 && report.updates.superseded > 0 && report.updates.lost > 0)
        #expect(report.dataQuality.malformedByCause["truncated_gzip"] == 1)
        #expect(report.dataQuality.filesSkippedAsDuplicate == 1)
    }

    @Test("Markdown names the headline figures")
    func markdown() throws {
        let sample = samplePaths
        let (report, _) = try ingestAndReport(sample)
        let text = report.markdownText()
        #expect(text.contains("| arrival rate |"))
        #expect(text.contains("## Rejected requests by APNs reason"))
        #expect(text.contains("PayloadTooLarge"))
    }
}

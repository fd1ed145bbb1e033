import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import Foundation
import Testing

@testable import ArrivalAnalysis
@testable import ArrivalStore

/// The SQL views (for dashboards) and the in-memory analysis (for reports)
/// state the same rules twice; they must give every update the same outcome.
@Suite("SQL views and report analysis agree")
struct ViewAgreementTests {
    @Test("Every update gets the same outcome, accept time and app from both")
    func sameOutcomes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try Ingestor(store: store).ingest(
            paths: [
                fixture("outcomes"), fixture("metrics"), fixture("dedup"),
            ] + GoldenReportTests.samplePaths)
        var fromViews: [ExactString: String] = [:]
        let analysis = try store.read { snapshot in
            try snapshot.forEachViewOutcome { activity, seq, outcome, at, app, priority in
                fromViews[ExactString("\(activity)#\(seq)")] = "\(outcome ?? "-") \(at) \(app) \(priority ?? -1)"
            }
            return try DeliveryAnalysis(snapshot: snapshot, window: nil)
        }
        var fromAnalysis: [ExactString: String] = [:]
        for u in analysis.updates {
            let outcome = u.outcome?.name ?? "-"
            fromAnalysis[ExactString("\(analysis.activityNames[Int(u.activity)])#\(u.seq)")] =
                "\(outcome) \(u.at) \(analysis.apps[Int(u.app)]) \(u.priority ?? -1)"
        }
        #expect(fromViews.count > 1500)
        #expect(fromViews.count == fromAnalysis.count)
        let differing = fromViews.filter { fromAnalysis[$0.key] != $0.value }.prefix(5)
        #expect(
            differing.isEmpty,
            "first differences: \(differing.map { "\($0.key): views \($0.value), analysis \(fromAnalysis[$0.key] ?? "missing")" })"
        )
    }
}

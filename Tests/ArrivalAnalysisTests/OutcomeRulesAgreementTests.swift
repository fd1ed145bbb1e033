import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis
@testable import ArrivalStore

/// The SQL views (for dashboards) and the in-memory analysis (for reports)
/// state the same rules twice; they must give every update the same outcome.
@Suite("SQL views and report analysis agree")
struct ViewAgreementTests {
    @Test("Every update gets the same outcome, loss cause, accept time and app from both")
    func sameOutcomes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A lifecycle fleet: dismissals, device ends, rotated tokens, undrawn content states.
        var config = SimulationConfig(activities: 300, seed: 5)
        config.lifecycle = true
        let fleet = directory.appendingPathComponent("fleet")
        _ = try FleetSimulator(config: config).run(outputDirectory: fleet.path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(
            paths: [
                fixture("outcomes"), fixture("metrics"), fixture("dedup"), fixture("lifecycle"), fleet.path,
            ] + samplePaths)
        let (fromViews, fromAnalysis, seen) = try Self.outcomes(store)
        // Every outcome and every loss cause occurs, so each rule is compared.
        for name in Outcome.allCases.map(\.name) + LossCause.allCases.map(\.name) {
            #expect(seen.contains(name), "no update is \(name)")
        }
        #expect(fromViews.count > 1500)
        Self.expectAgreement(fromViews, fromAnalysis)
    }

    /// The views and the analysis give the same updates the same line; the first five differences are shown.
    static func expectAgreement(
        _ fromViews: [ExactString: String], _ fromAnalysis: [ExactString: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(fromViews.count == fromAnalysis.count, sourceLocation: sourceLocation)
        let differing = fromViews.filter { fromAnalysis[$0.key] != $0.value }.prefix(5)
        #expect(
            differing.isEmpty,
            "first differences: \(differing.map { "\($0.key): views \($0.value), analysis \(fromAnalysis[$0.key] ?? "missing")" })",
            sourceLocation: sourceLocation
        )
    }

    /// Every update's outcome, loss cause, accept time, app, priority and
    /// channel, and (contract 3.1) its priority-10 count of the hour before,
    /// its activity's "More Frequent Updates" switch and whether the
    /// activity is subscribed to a channel, from the views and from the analysis.
    static func outcomes(_ store: SQLiteStore) throws -> (
        views: [ExactString: String], analysis: [ExactString: String], seen: Set<String>
    ) {
        var fromViews: [ExactString: String] = [:]
        let analysis = try store.read { snapshot in
            try snapshot.forEachViewOutcome { v in
                fromViews[ExactString("\(v.activityID)#\(v.seq)")] =
                    "\(v.outcome ?? "-") \(v.lossCause ?? "-") \(v.at) \(v.app) \(v.priority ?? -1) \(v.channel ?? "-") "
                    + "p10:\(v.priority10LastHour ?? -1) fp:\(v.frequentPushes ?? "-") sub:\(v.subscribed)"
            }
            return try DeliveryAnalysis(snapshot: snapshot, window: nil)
        }
        var fromAnalysis: [ExactString: String] = [:]
        var seen: Set<String> = []
        for u in analysis.updates {
            let outcome = u.outcome?.name ?? "-"
            let cause = u.lossCause?.name ?? "-"
            seen.insert(outcome)
            seen.insert(cause)
            let channel = u.channel < 0 ? "-" : analysis.broadcasts.channels[Int(u.channel)].text
            let activity = analysis.activities[Int(u.activity)]
            fromAnalysis[ExactString("\(analysis.activityNames[Int(u.activity)])#\(u.seq)")] =
                "\(outcome) \(cause) \(u.at) \(analysis.apps[Int(u.app)]) \(u.priority ?? -1) \(channel) "
                + "p10:\(u.recentPriority10) fp:\(activity.frequentPushes?.value ?? "-") sub:\(activity.subscribed)"
        }
        return (fromViews, fromAnalysis, seen)
    }

    @Test("On a fleet with a priority-10 budget, channels and a lifecycle: the same counts of the hour before")
    func sameOutcomesWithBudget() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = SimulationConfig(activities: 300, seed: 9)
        config.budget = true
        config.channels = true
        config.lifecycle = true
        let fleet = directory.appendingPathComponent("fleet")
        _ = try FleetSimulator(config: config).run(outputDirectory: fleet.path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fleet.path])
        let (fromViews, fromAnalysis, _) = try Self.outcomes(store)
        // The budget shows: updates with 30 or more priority-10 updates in the hour before, and both
        // values of the switch.
        let counts = fromViews.values.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("p10:") }.flatMap { Int($0.dropFirst(4)) }
        }
        #expect(counts.filter { $0 >= 30 }.count > 100, "\(counts.max() ?? -1)")
        #expect(fromViews.values.contains { $0.contains("fp:disabled") })
        #expect(fromViews.values.contains { $0.contains("fp:enabled") })
        Self.expectAgreement(fromViews, fromAnalysis)
    }

    @Test("On a broadcast fleet too: the views expand broadcasts over the same open subscribers")
    func sameOutcomesWithBroadcasts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fixture("broadcasts")])
        let (fromViews, fromAnalysis, seen) = try Self.outcomes(store)
        for name in ["rendered", "ended", "dismissed", "expired", "stale_timestamp", "superseded", "lost"] {
            #expect(seen.contains(name), "no update is \(name)")
        }
        #expect(fromViews.values.filter { !$0.contains(" - p10:") }.count > 150, "updates decided by a broadcast")
        Self.expectAgreement(fromViews, fromAnalysis)
    }
}

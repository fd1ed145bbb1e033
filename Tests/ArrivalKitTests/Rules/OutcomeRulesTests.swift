import ArrivalModel
import ArrivalStore
import Foundation
import Testing

/// The rule function itself: each rule, and which wins when several hold.
@Suite("Outcome rule function")
struct OutcomeRulesTests {
    /// An accepted update at 10:00 of an activity started at 08:00, nothing else known.
    func outcome(
        rendered: Bool = false, at: Int64 = 36_000_000, isEnd: Bool = false, apsTimestamp: Int64 = 100,
        startedAt: Int64? = 28_800_000, endedAt: Int64? = nil, earlierMax: Int64? = nil, laterRendered: Bool = false
    ) -> Outcome {
        OutcomeRules.outcome(
            rendered: rendered, acceptedAt: at, isEnd: isEnd, apsTimestamp: apsTimestamp,
            activityStartedAt: startedAt, activityEndedAt: endedAt, earlierMaxTimestamp: earlierMax,
            laterRendered: laterRendered)
    }

    @Test("Each rule on its own")
    func eachRule() {
        #expect(outcome(rendered: true) == .rendered)
        #expect(outcome(endedAt: 35_999_999) == .ended)
        #expect(outcome(endedAt: 36_000_000) == .lost)  // at the end itself: not after it
        #expect(outcome(at: 28_800_000 + Contract.activityLifetimeMS + 1) == .expired)
        #expect(outcome(at: 28_800_000 + Contract.activityLifetimeMS) == .lost)  // exactly 8 hours: still live
        #expect(outcome(earlierMax: 100) == .staleTimestamp)  // equal is not newer
        #expect(outcome(earlierMax: 99) == .lost)
        #expect(outcome(isEnd: true, earlierMax: 100) == .lost)  // an end is never stale
        #expect(outcome(laterRendered: true) == .superseded)
        #expect(outcome() == .lost)
    }

    @Test("The first rule that holds decides")
    func precedence() {
        #expect(outcome(rendered: true, endedAt: 0, earlierMax: 200, laterRendered: true) == .rendered)
        #expect(outcome(at: 28_800_000 + Contract.activityLifetimeMS + 1, endedAt: 0) == .ended)
        #expect(outcome(at: 28_800_000 + Contract.activityLifetimeMS + 1, earlierMax: 200) == .expired)
        #expect(outcome(earlierMax: 200, laterRendered: true) == .staleTimestamp)
    }

    @Test("Names, order and deliverable are the contract's")
    func vocabulary() {
        #expect(
            Outcome.allCases.map(\.name) == ["rendered", "ended", "expired", "stale_timestamp", "superseded", "lost"])
        #expect(
            Set(Outcome.displayOrder) == Set(Outcome.allCases) && Outcome.displayOrder.count == Outcome.allCases.count)
        #expect(Outcome.allCases.filter(\.isDeliverable) == [.rendered, .superseded, .lost])
        var counts = UpdateCounts()
        for (index, outcome) in Outcome.allCases.enumerated() { counts[outcome] = index + 1 }
        #expect(counts.rendered == 1 && counts.ended == 2 && counts.expired == 3)
        #expect(counts.staleTimestamp == 4 && counts.superseded == 5 && counts.lost == 6)
        #expect(counts.deliverable == 1 + 5 + 6)
    }

    @Test("A store whose views came from other rules gets today's views when it opens")
    func viewsRecreated() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("views.sqlite").path
        _ = try Store(path: path)
        // Stand in for an older arrival: a different update_outcomes and no view version.
        let old = try Store(path: path)
        try old.replaceViewForTesting("update_outcomes", sql: "CREATE VIEW update_outcomes AS SELECT 1 AS stale")
        #expect(try old.viewSQL("update_outcomes")?.contains("stale_timestamp") == false)
        let reopened = try Store(path: path)
        let sql = try #require(try reopened.viewSQL("update_outcomes"))
        #expect(sql.contains("'stale_timestamp'") && sql.contains("\(Contract.activityLifetimeMS)"))
    }
}

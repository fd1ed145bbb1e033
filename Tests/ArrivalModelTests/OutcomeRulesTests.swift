import ArrivalModel
import Foundation
import Testing

/// The rule function itself: each rule, and which wins when several hold.
@Suite("Outcome rule function")
struct OutcomeRulesTests {
    /// An accepted update at 10:00 of an activity started at 08:00, nothing else known.
    func outcome(
        rendered: Bool = false, at: Int64 = 36_000_000, isEnd: Bool = false, apsTimestamp: Int64 = 100,
        startedAt: Int64? = 28_800_000, endedAt: Int64? = nil, dismissedAt: Int64? = nil, earlierMax: Int64? = nil,
        laterRendered: Bool = false
    ) -> Outcome {
        OutcomeRules.outcome(
            rendered: rendered, acceptedAt: at, isEnd: isEnd, apsTimestamp: apsTimestamp,
            activityStartedAt: startedAt, activityEndedAt: endedAt, activityDismissedAt: dismissedAt,
            earlierMaxTimestamp: earlierMax, laterRendered: laterRendered)
    }

    /// The loss cause of a lost update accepted at 10:00, nothing else known.
    func cause(
        at: Int64 = 36_000_000, contentCallback: Bool = false, withToken: Bool = true, newestMatches: Bool? = nil,
        dismissedAt: Int64? = nil, lastEnded: Int64? = nil, lastDevice: Int64? = nil
    ) -> LossCause {
        OutcomeRules.lossCause(
            acceptedAt: at, hasContentCallback: contentCallback, sentWithToken: withToken,
            newestTokenMatches: newestMatches, activityDismissedAt: dismissedAt, lastEndedCallbackAt: lastEnded,
            lastDeviceAt: lastDevice)
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
        #expect(outcome(dismissedAt: 35_999_999) == .dismissed)
        #expect(outcome(dismissedAt: 36_000_000) == .lost)  // dismissed at the accept time: not after it
        #expect(outcome(dismissedAt: 36_000_001) == .lost)
    }

    @Test("A dismissal counts only before any end: end before dismissal, the reverse, both at once")
    func dismissalAgainstEnd() {
        // Dismissed, then ended: the user's dismissal came first.
        #expect(outcome(endedAt: 35_000_000, dismissedAt: 34_000_000) == .dismissed)
        // Ended, then dismissed (the system removes an ended activity): the end decides.
        #expect(outcome(endedAt: 34_000_000, dismissedAt: 35_000_000) == .ended)
        // Both at the same instant: the dismissal is not earlier than the end.
        #expect(outcome(endedAt: 34_000_000, dismissedAt: 34_000_000) == .ended)
        // An update between the dismissal and a later end: dismissed all the same.
        #expect(outcome(endedAt: 37_000_000, dismissedAt: 35_000_000) == .dismissed)
        // Rendered beats a dismissal (the render proves it showed).
        #expect(outcome(rendered: true, dismissedAt: 0) == .rendered)
        // A dismissal beats expiry and a stale timestamp.
        #expect(outcome(at: 28_800_000 + Contract.activityLifetimeMS + 1, dismissedAt: 30_000_000) == .dismissed)
        #expect(outcome(dismissedAt: 30_000_000, earlierMax: 200) == .dismissed)
    }

    @Test("Each loss cause on its own, and the first that holds decides")
    func lossCauses() {
        #expect(cause(contentCallback: true, newestMatches: false, dismissedAt: 40_000_000) == .notRendered)
        #expect(cause(newestMatches: false, dismissedAt: 40_000_000) == .oldToken)
        #expect(cause(withToken: false, newestMatches: false) == .deviceSilent)  // an empty token is no old token
        #expect(cause(newestMatches: true, dismissedAt: 40_000_000) == .closedLater)
        #expect(cause(newestMatches: nil, dismissedAt: 40_000_000) == .closedLater)  // no token callback known yet
        #expect(cause(lastEnded: 36_000_001) == .closedLater)
        // A dismissal or last word at the accept time itself is not later.
        #expect(cause(dismissedAt: 36_000_000, lastDevice: 36_000_000) == .deviceSilent)
        #expect(cause(lastEnded: 36_000_000) == .deviceSilent)
        #expect(cause(lastDevice: 36_000_001) == .unexplained)
        #expect(cause() == .deviceSilent)
        #expect(LossCause.allCases.map(\.name) == LossCauses.keys)
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
            Outcome.allCases.map(\.name) == [
                "rendered", "dismissed", "ended", "expired", "stale_timestamp", "superseded", "lost",
            ])
        #expect(
            Set(Outcome.displayOrder) == Set(Outcome.allCases) && Outcome.displayOrder.count == Outcome.allCases.count)
        #expect(Outcome.allCases.filter(\.isDeliverable) == [.rendered, .superseded, .lost])
        var counts = UpdateCounts()
        for (index, outcome) in Outcome.allCases.enumerated() { counts[outcome] = index + 1 }
        #expect(counts.rendered == 1 && counts.dismissed == 2 && counts.ended == 3 && counts.expired == 4)
        #expect(counts.staleTimestamp == 5 && counts.superseded == 6 && counts.lost == 7)
        #expect(counts.deliverable == 1 + 6 + 7)
    }
}

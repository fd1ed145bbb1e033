import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Testing

/// One test per outcome rule of Documentation/Outcomes.md, each on a hand-made
/// fixture whose expected counts are worked out in the comments.
@Suite("Outcome rules")
struct OutcomeRuleTests {
    @Test("1 rendered: a render with the same (activity_id, seq) exists")
    func rendered() throws {
        // One accepted start update, rendered on two surfaces: one update, rendered once.
        let (report, _) = try ingestAndReport([fixture("outcomes/rendered.jsonl")])
        #expect(report.updates == counts(sent: 1, accepted: 1, rendered: 1))
        #expect(report.updates.arrivalRate == 1.0)
        #expect(report.latency.count == 1)
        #expect(report.latency.p50 == 1250)  // first render 1.25 s after the accept time
    }

    @Test("2 ended: accepted after the activity's earliest accepted end, and not that end")
    func ended() throws {
        // seq1 rendered; seq2 is the end (08:10), not ended itself, lost; seq3 at 08:20 is ended;
        // seq4 is an end APNs refused (410), so it sets no end and has no outcome.
        let (report, _) = try ingestAndReport([fixture("outcomes/ended.jsonl")])
        #expect(report.updates == counts(sent: 4, accepted: 3, rendered: 1, ended: 1, lost: 1))
        #expect(report.updates.arrivalRate == 0.5)
    }

    @Test("3 expired: accepted more than 28,800 s after the activity start")
    func expired() throws {
        // Start 08:00:00 (the accepted start update). seq3 at exactly +8 h is not expired (lost);
        // seq2 at +8 h +1 ms is expired.
        let (report, _) = try ingestAndReport([fixture("outcomes/expired.jsonl")])
        #expect(report.updates == counts(sent: 3, accepted: 3, rendered: 1, expired: 1, lost: 1))
    }

    @Test("4 stale_timestamp: aps_timestamp not newer than an earlier accepted update's")
    func staleTimestamp() throws {
        // seq2 equal (200), seq3 older (150): stale. seq4 and seq5 share the accept time 08:05 and
        // timestamp 300: seq4 comes first by seq, so only seq5 is stale. seq6 is an end with an old
        // timestamp, which the device does not check: lost, not stale.
        let (report, _) = try ingestAndReport([fixture("outcomes/stale.jsonl")])
        #expect(report.updates == counts(sent: 6, accepted: 6, rendered: 1, stale: 3, lost: 2))
        #expect(report.updates.arrivalRate == 1.0 / 3.0)
    }

    @Test("5 superseded: a later accepted update of the activity was rendered")
    func superseded() throws {
        // seq1 and seq2 superseded by rendered seq3; seq4 lost although seq6 (status 0, never
        // accepted) rendered later: only accepted updates supersede.
        let (report, _) = try ingestAndReport([fixture("outcomes/superseded.jsonl")])
        // The lost one: seq 3's render came later, and still it never showed.
        #expect(
            report.updates
                == counts(sent: 6, accepted: 4, rendered: 1, superseded: 2, lost: 1, causes: [.unexplained: 1]))
        #expect(report.updates.arrivalRate == 0.25)
        #expect(report.updates.effectiveArrivalRate == 0.75)
        #expect(report.requests.byReason == ["Unregistered": 1, "NoResponse": 1])
    }

    @Test("6 lost: accepted and none of the above")
    func lost() throws {
        let (report, _) = try ingestAndReport([fixture("outcomes/lost.jsonl")])
        #expect(report.updates == counts(sent: 1, accepted: 1, lost: 1))
        #expect(report.updates.arrivalRate == 0.0)
        #expect(report.updates.effectiveArrivalRate == 0.0)
    }

    @Test("Rates are null when their denominator is zero")
    func nullRates() throws {
        let (report, _) = try ingestAndReport(
            [fixture("metrics/requests.jsonl")], window: ReportWindow.day("2026-11-25"))
        #expect(report.requests.acceptanceRate == nil)
        #expect(report.updates.arrivalRate == nil)
        #expect(report.callbacks.callbackLossRate == nil)
        #expect(report.latency == Report.Latency(count: 0, p50: nil, p90: nil, p99: nil))
    }
}

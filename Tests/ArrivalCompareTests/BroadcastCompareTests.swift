import ArrivalCompare
import ArrivalModel
import Testing

/// `diff` and `gate` on broadcast channels (contract 3.0): a figure of one
/// breakdown entry is a metric (`breakdowns.channel.<id>.<figure>`), and the
/// diff ranks channel entries with the other breakdowns.
@Suite("Broadcast channels in diff and gate")
struct BroadcastCompareTests {
    static func report(rendered: Int, lost: Int, channel: String = "match.7/x+y=") -> Report {
        var report = Report(window: nil)
        report.schema = 2
        var counts = UpdateCounts()
        counts.sent = rendered + lost
        counts.accepted = rendered + lost
        counts.rendered = rendered
        counts.lost = lost
        counts.lostByCause.deviceSilent = lost
        report.updates = counts
        report.requests.broadcasts = 3
        report.breakdowns["channel"] = [ExactString(channel): counts]
        return report
    }

    @Test("A breakdown entry's figures are metrics, whatever dots or slashes the key holds")
    func metrics() throws {
        let report = Self.report(rendered: 30, lost: 10)
        let rate = try #require(Metric.named("breakdowns.channel.match.7/x+y=.arrival_rate"))
        #expect(rate.value(in: report) == 0.75 && rate.sampleSize(in: report) == 40)
        let cause = try #require(Metric.named("breakdowns.channel.match.7/x+y=.lost_by_cause.device_silent"))
        #expect(cause.value(in: report) == 10)
        // A channel the report lacks: no updates, an undefined rate.
        #expect(Metric.named("breakdowns.channel.other.arrival_rate")?.value(in: report) == nil)
        #expect(Metric.named("breakdowns.channel.other.sent")?.value(in: report) == 0)
        // A schema-1 report has no channel breakdown at all.
        var older = report
        older.schema = 1
        #expect(rate.isPresent(in: older) == false)
        #expect(Metric.named("breakdowns.app.com.example.sports.sent") != nil)
        for bad in ["breakdowns.channel.arrival_rate", "breakdowns.channel.x.bogus", "breakdowns.nope.x.sent"] {
            #expect(Metric.named(bad) == nil, "\(bad)")
        }
    }

    @Test("The diff ranks a channel's arrival change; broadcast counts show only when a side has broadcasts")
    func diff() {
        let side = ReportDiff.Side(path: "a", source: .reportJSON, window: nil)
        let diff = ReportDiff(
            a: Self.report(rendered: 90, lost: 10), samplesA: nil, b: Self.report(rendered: 50, lost: 50),
            samplesB: nil, sideA: side, sideB: side)
        #expect(diff.breakdowns.map { "\($0.dimension) \($0.key)" } == ["channel match.7/x+y="])
        #expect(diff.metrics.contains { $0.metric == Metric.requestsBroadcasts })
        var none = Self.report(rendered: 90, lost: 10)
        none.requests.broadcasts = 0
        let quiet = ReportDiff(a: none, samplesA: nil, b: none, samplesB: nil, sideA: side, sideB: side)
        #expect(!quiet.metrics.contains { $0.metric == Metric.requestsBroadcasts })
    }
}

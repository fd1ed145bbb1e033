import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// Contract 3.0's broadcasts in the analysis, on records worked out by hand:
/// which open subscribers a broadcast stands for, how request and update
/// metrics count it, and that partitions give the same figures.
@Suite("Broadcast analysis")
struct BroadcastAnalysisTests {
    static func at(_ minutes: Int) -> String {
        RFC3339.format(milliseconds: 1_795_248_000_000 + Int64(minutes) * 60_000)
    }

    static func broadcast(
        _ id: String, seq: Int?, minute: Int, channel: String = "match", status: Int = 200,
        event: String = "update", bytes: Int = 300
    ) -> String {
        let seqField = seq.map { #","seq":\#($0)"# } ?? ""
        return
            #"{"kind":"apns","apns_id":"\#(id)","sent_at":"\#(at(minute))","status":\#(status),"channel_id":"\#(channel)","aps_timestamp":\#(1_795_248_000 + (seq ?? 0))\#(seqField),"event":"\#(event)","payload_bytes":\#(bytes),"topic":"com.example.sports.push-type.liveactivity"}"#
    }

    static func render(_ activity: String, seq: Int, minute: Int, channel: String? = nil) -> String {
        let channelField = channel.map { #","channel_id":"\#($0)""# } ?? ""
        return
            #"{"kind":"render","activity_id":"\#(activity)","seq":\#(seq),"rendered_at":"\#(at(minute))"\#(channelField)}"#
    }

    static func callback(_ activity: String, _ fields: String, minute: Int) -> String {
        #"{"kind":"callback","activity_id":"\#(activity)",\#(fields),"received_at":"\#(at(minute))"}"#
    }

    /// Three activities follow channel "match":
    /// - A subscribes at minute 0 (a callback), renders seq 1 and 3, then says nothing more;
    /// - B is seen at minute 8 (a state callback), known to follow the channel only from its render of seq 1
    ///   at minute 12, and is dismissed at minute 20;
    /// - C subscribes at minute 30 and renders seq 9.
    /// Broadcasts: seq 1 at minute 10 (A and B open; C not started), seq 2 at 20 (A only: B's dismissal is
    /// at 20), seq 3 at 40 (A, C) of 4,600 bytes (not a risk for a broadcast), a seq-less one at 45 (A, C:
    /// no update), seq 4 at 50 refused (A, C), seq 5 at 60 (A, C) of 4,700 bytes (a risk), seq 9 at minute
    /// 500 (C only: A opened at 0, over 8 hours before). D follows "quiet", whose one broadcast (minute 5)
    /// came before D was seen (minute 6): without subscribers.
    /// Updates: (A,1) (B,1) (A,3) (C,9) rendered; (A,2) (C,3) (C,5) superseded by a later render of their
    /// activity; (A,5) lost (A said nothing after minute 41); (A,4) (C,4) never accepted. The reference
    /// implementation gives the same report (checked when this test was written).
    static let lines = [
        callback("A", #""callback":"channel_subscription","channel_id":"match""#, minute: 0),
        callback("B", #""callback":"activity_state","state":"active""#, minute: 8),
        broadcast("b1", seq: 1, minute: 10),
        render("A", seq: 1, minute: 11),
        render("B", seq: 1, minute: 12, channel: "match"),
        callback("B", #""callback":"activity_state","state":"dismissed""#, minute: 20),
        broadcast("b2", seq: 2, minute: 20),
        callback("C", #""callback":"channel_subscription","channel_id":"match""#, minute: 30),
        broadcast("b3", seq: 3, minute: 40, bytes: 4600),
        render("A", seq: 3, minute: 41),
        broadcast("b0", seq: nil, minute: 45),
        broadcast("b4", seq: 4, minute: 50, status: 429),
        broadcast("b5", seq: 5, minute: 60, bytes: 4700),
        broadcast("b9", seq: 9, minute: 500),
        render("C", seq: 9, minute: 501),
        broadcast("q1", seq: 1, minute: 5, channel: "quiet"),
        callback("D", #""callback":"channel_subscription","channel_id":"quiet""#, minute: 6),
    ]

    func report(partitioned: Bool) throws -> Report {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        var builder = ReportBuilder(store: store)
        if partitioned { builder.partitioning = PartitionPolicy(rowsPerPartition: 1) }
        return try builder.build(window: nil)
    }

    static func store(in directory: URL) throws -> SQLiteStore {
        let path = directory.appendingPathComponent("b.jsonl").path
        try (Self.lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("b.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [path])
        #expect(summary.malformedLines == 0)
        return store
    }

    @Test("arrival lost names the channel of a lost broadcast update and filters by channel")
    func lostByChannel() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let builder = ReportBuilder(store: try Self.store(in: directory))
        let lost = try builder.lostUpdates(window: nil, channels: ["match"])
        #expect(
            lost.map { "\($0.activityID) \($0.seq) \($0.channel ?? "-") \($0.cause.name)" } == [
                "A 5 match device_silent"
            ])
        #expect(lost.first?.pushToken == "")
        #expect(try builder.lostUpdates(window: nil, channels: ["quiet"]).isEmpty)
    }

    @Test("arrival activity shows the broadcasts that stood for the activity, and the report's outcomes")
    func activityStory() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let story = try store.read { try ActivityStory(records: $0.activityRecords("C")) }
        // C opened at minute 30: b3, b0 (no seq), b4, b5 and b9 reached it; b1, b2 came before.
        let broadcasts = story.timeline.filter { $0.kind == .request }
        #expect(broadcasts.map(\.seq) == [3, nil, 4, 5, 9])
        #expect(broadcasts.allSatisfy { $0.what.contains("broadcast to channel match") })
        #expect(
            story.updates.map { "\($0.seq) \($0.outcome?.name ?? "-") \($0.channel ?? "-") \($0.requests)" } == [
                "3 superseded match 1", "4 - match 1", "5 superseded match 1", "9 rendered match 1",
            ])
        // B was dismissed at minute 20: only b1 stood for it.
        let b = try store.read { try ActivityStory(records: $0.activityRecords("B")) }
        #expect(b.timeline.filter { $0.kind == .request }.map(\.seq) == [1])
        #expect(b.updates.map { $0.outcome?.name } == ["rendered"])
    }

    @Test(
        "A broadcast stands for the subscribers open at its sent_at; requests count it once", arguments: [false, true])
    func figures(partitioned: Bool) throws {
        let report = try report(partitioned: partitioned)
        #expect(report.requests.total == 8 && report.requests.broadcasts == 8)
        #expect(report.requests.accepted == 7 && report.requests.byReason == ["HTTP429": 1])
        #expect(report.requests.oversizeRisk == 1)
        #expect(report.dataQuality.unattributed == 0 && report.dataQuality.apnsWithoutSeq == 1)
        #expect(report.dataQuality.broadcastsWithoutSubscribers == 1)
        #expect(report.updates.sent == 10 && report.updates.accepted == 8)
        #expect(report.updates.rendered == 4 && report.updates.superseded == 3 && report.updates.lost == 1)
        #expect(report.updates.lostByCause.deviceSilent == 1)
        #expect(report.breakdowns["channel"]?.keys.map(\.text) == ["match"])
        #expect(report.breakdowns["channel"]?["match"] == report.updates)
        #expect(report.latency.count == 4)
        // Beside the JSON: per channel its broadcasts, the subscribers they stood for, latency.
        let match = try #require(report.channels["match"])
        #expect(match.broadcasts == 7 && match.accepted == 6 && match.subscribers == 3 && match.latency.count == 4)
        #expect(report.channels["quiet"]?.broadcasts == 1 && report.channels["quiet"]?.subscribers == 0)
        let markdown = report.markdownText()
        #expect(markdown.contains("## Broadcast channels"))
        #expect(markdown.contains("| match | 7 (6) | 3 | 10 | 4 | 50.0% |"))
        #expect(markdown.contains("1 of 8 broadcasts stood for no activity"))
    }
}

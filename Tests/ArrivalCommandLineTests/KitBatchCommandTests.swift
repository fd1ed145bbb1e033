import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

/// The kit's batch (``BeaconCollector``) as `arrival ingest` reads it, beside
/// the library's ingest of the same file.
/// The time limit catches a hang only: its children share the machine with every other test's.
@Suite("Kit batches through arrival ingest", .timeLimit(.minutes(10)))
struct KitBatchCommandTests {
    /// 2026-11-21T08:00:00Z
    static let morning = date(ms: 1_795_248_000_000)

    @Test(
        "Collector → gzip batch → ingest (library and `arrival ingest`) round-trips every record, across rotated files and days"
    )
    func roundTrip() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let clock = TestClock(date(ms: 1_795_305_000_000))  // 2026-11-21T23:50:00Z
        func writer(_ role: BeaconProcessRole, pid: Int32, maxFileBytes: Int? = nil) -> BeaconWriter {
            var configuration = BeaconWriter.Configuration(container: container, role: role)
            configuration.processID = pid
            if let maxFileBytes { configuration.maxFileBytes = maxFileBytes }
            configuration.maxPending = 10_000
            configuration.now = { clock.now }
            return BeaconWriter(configuration)
        }
        let widget = writer(.widget, pid: 501, maxFileBytes: 50_000)
        let app = writer(.app, pid: 502)
        var expectedRenders: Set<String> = []
        for seq in 0..<1500 {
            let activity = "activity-\(seq % 17)"
            widget.write(RenderBeacon(activityID: activity, seq: seq, renderedAt: Self.morning, surface: "lock_screen"))
            app.write(CallbackReport(.contentUpdate(activityID: activity, seq: seq), receivedAt: Self.morning))
            expectedRenders.insert("\(activity)#\(seq)")
            if seq == 700 {
                widget.flush()
                app.flush()
                clock.advance(by: 900)  // past midnight: the rest goes to 2026-11-22
            }
        }
        widget.flush()
        app.flush()
        // Both processes gone (the pids are made up).
        let collector = BeaconCollector(
            container: container, maxBatchBytes: 100 << 20, now: { clock.now },
            isProcessAlive: { _ in false })
        let batch = try #require(collector.makeBatch())
        #expect(batch.files.count >= 6)  // two days, rotated widget files
        #expect(batch.gzip.count * 5 < batch.files.reduce(0) { $0 + $1.bytes })  // compressed, not just wrapped
        let path = container.path + "/" + batch.suggestedFileName
        try batch.gzip.write(to: URL(fileURLWithPath: path))
        let outcomes = try decodeLines(path: path)
        let renders = outcomes.compactMap { $0.render }.map { "\($0.activityID)#\($0.seq)" }
        #expect(Set(renders) == expectedRenders && renders.count == 1500)
        let (report, summary) = try ingestAndReport([path])
        #expect(summary.records == [.render: 1500, .callback: 1500])
        #expect(summary.malformedLines == 0)
        #expect(report.dataQuality.duplicateRecords == 0)
        // The same through the command line.
        let cli = try run("arrival", ["ingest", path, "--db", container.path + "/cli.sqlite"])
        #expect(cli.status == 0, "\(cli)")
        #expect(cli.stdout.contains("new records: 3000 (apns 0, render 1500, callback 1500)"))
        #expect(cli.stdout.contains("malformed lines: 0"))
    }
}

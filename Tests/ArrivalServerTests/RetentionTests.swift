import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalStores
import ArrivalTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import ArrivalServer

/// `arrival serve --retain DAYS`: a prune at start and once a day, driven by
/// an injected clock and pause (no test waits for a day, or for anything).
@Suite("Collector retention")
struct RetentionTests {
    @Test("Prunes at start and after each day's pause, before now minus DAYS, as arrival prune does")
    func daily() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try PruneFixtures.writeEdgeCases(into: directory)
        let served = directory.appendingPathComponent("served.sqlite").path
        let byHand = directory.appendingPathComponent("by-hand.sqlite").path
        for db in [served, byHand] {
            _ = try IngestPipeline(store: try SQLiteStore(path: db)).ingest(paths: [input])
        }
        var configuration = Collector.Configuration()
        configuration.store = .sqlite(path: served)
        configuration.spoolPath = directory.appendingPathComponent("spool").path
        configuration.retainDays = 2
        let collector = try Collector(configuration: configuration)
        #expect(collector.services(logger: Logger(label: "test")).contains { $0 is Retention })

        let day: Int64 = 86_400_000
        let start = try #require(RFC3339.parseMilliseconds("2026-11-23T10:00:00Z"))
        let pauses = Mutex<[Duration]>([])
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let retention = Retention(
            engine: collector.engine, days: 2, logger: logger,
            now: { start + Int64(pauses.withLock { $0.count }) * day },
            pause: { duration in
                let count = pauses.withLock {
                    $0.append(duration)
                    return $0.count
                }
                if count == 2 { throw CancellationError() }
            })
        try await retention.run()
        #expect(pauses.withLock { $0 } == [Retention.interval, Retention.interval])

        // The same two prunes by hand (2026-11-21T10:00 and 2026-11-22T10:00), as `arrival prune --no-vacuum`
        // makes them, leave the same store.
        for cut in ["2026-11-21T10:00:00Z", "2026-11-22T10:00:00Z"] {
            _ = try StoreLocation.sqlite(path: byHand).prune(
                before: try #require(RFC3339.parseMilliseconds(cut)), vacuum: false)
        }
        let reports = try [served, byHand].map {
            try ReportBuilder(store: try SQLiteStore(readingAt: $0)).build(window: nil)
        }
        #expect(reports[0].jsonText() == reports[1].jsonText())
        // What stays: the requests that killed a token (its death), at the earliest instant.
        #expect(reports[0].requests.total == 3, "\(reports[0].jsonText())")
    }

    @Test("The cut is now minus DAYS")
    func cut() {
        #expect(Retention.cut(now: 10 * 86_400_000 + 5, days: 3) == 7 * 86_400_000 + 5)
    }
}

import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import Foundation
import Logging
import ServiceLifecycle

/// Drains the spool: each upload in arrival order, ingested and then
/// removed. On SIGTERM it finishes the run it is on and stops; what is
/// queued stays for the next start.
struct IngestWorker: Service {
    let spool: Spool
    let engine: StoreEngine
    let metrics: CollectorMetrics
    let logger: Logger

    func run() async throws {
        for await _ in spool.arrivals.cancelOnGracefulShutdown() {
            await drain()
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
        }
    }

    /// Uploads ingested per run, at most: a backlog of small device batches
    /// is read as `arrival ingest` reads a directory of them, committed every
    /// 2,000 files (``IngestPipeline/Options``), and taken out of the spool when
    /// the run ends. Fewer, longer runs keep the reading thread and the
    /// writer both busy; an upload is readable as ingested from its commit
    /// on.
    static let uploadsPerRun = 10_000
    /// …and at most this many bytes of uploads (at least one upload), so a
    /// run, which SIGTERM lets finish, lasts seconds.
    static let bytesPerRun = 64 << 20

    private func drain() async {
        var failures = 0
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let entries = spool.next(Self.uploadsPerRun, maxBytes: Self.bytesPerRun)
            if entries.isEmpty { return }
            let started = ContinuousClock.now
            switch await engine.ingest(
                entries.map {
                    let location = spool.location(of: $0)
                    return ($0, location.path, location.range)
                })
            {
            case .success(let summary):
                // An upload the ingest could not read stays queued (it is
                // retried); the others are stored and leave the spool.
                let unreadable = Set(summary.unreadable.map(\.path))
                for entry in entries where !unreadable.contains(entry.name) {
                    spool.remove(entry)
                }
                spool.checkpoint()
                metrics.ingested(
                    summary, uploads: entries.count - unreadable.count,
                    seconds: (ContinuousClock.now - started).inSeconds)
                logger.debug(
                    "ingested uploads",
                    metadata: [
                        "uploads": "\(entries.count - unreadable.count)", "records": "\(summary.newRecords)",
                        "duplicates": "\(summary.duplicateRecords)",
                    ])
                if let first = summary.unreadable.first {
                    failures += 1
                    metrics.ingestFailed()
                    logger.error("upload '\(first.path)' not ingested (attempt \(failures)): \(first.reason)")
                    if await !backOff(failures) { return }
                } else {
                    failures = 0
                }
            case .failure(let error):
                failures += 1
                metrics.ingestFailed()
                logger.error("uploads not ingested (attempt \(failures)): \(error)")
                if await !backOff(failures) { return }
            }
        }
    }

    /// Waits before trying again (1, 2, 4 … 60 s); false when shutting down.
    private func backOff(_ failures: Int) async -> Bool {
        let seconds = min(60, 1 << min(failures - 1, 6))
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(seconds)) }
        return !Task.isShuttingDownGracefully && !Task.isCancelled
    }
}

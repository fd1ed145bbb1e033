import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import Foundation
import Logging
import ServiceLifecycle

/// The collector's access to the store, off the request threads: one
/// writer (the ingest worker's serial queue, one connection), readers on a
/// concurrent queue (a read-only snapshot each), and the upload registry
/// (one read-only connection behind a lock).
final class StoreEngine: @unchecked Sendable {
    let storePath: String
    private let writer = DispatchQueue(label: "arrival.ingest")
    private let readers = DispatchQueue(label: "arrival.read", attributes: .concurrent)
    /// Used only on `writer`.
    private let store: Store
    private let registryLock = NSLock()
    private let registry: UploadRegistry

    init(storePath: String) throws {
        self.storePath = storePath
        // Creates the store (or brings it to this arrival's schema) before anything reads it.
        store = try Store(path: storePath)
        registry = try UploadRegistry(storePath: storePath)
    }

    /// Whether the store answers a read (what `/readyz` asks).
    var isReadable: Bool {
        do {
            _ = try ingestedFile(sha256: String(repeating: "0", count: 64))
            return true
        } catch {
            return false
        }
    }

    /// Ingests uploads on the writer's queue, in one run of `arrival ingest`:
    /// each upload is one all-or-nothing file of it, and all are committed
    /// when it returns.
    func ingest(_ uploads: [(entry: Spool.Entry, path: String, range: Range<Int>)]) async -> Result<
        IngestSummary, any Error
    > {
        await withCheckedContinuation { continuation in
            writer.async {
                continuation.resume(
                    returning: Result {
                        try Ingestor(store: self.store).ingest(
                            uploads.map {
                                Ingestor.NamedFile(
                                    path: $0.path, name: $0.entry.name,
                                    senderRecordsAllowed: $0.entry.role.mayUploadSenderRecords, range: $0.range,
                                    sha256: $0.entry.sha256)
                            })
                    })
            }
        }
    }

    /// Runs `body` on a read-only snapshot of the store, off the request's thread.
    func read<T: Sendable>(_ body: @escaping @Sendable (Store) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readers.async { [storePath] in
                continuation.resume(with: Result { try body(try Store(readingAt: storePath)) })
            }
        }
    }

    func ingestedFile(sha256: String) throws -> IngestedFile? {
        try registryLock.withLock { try registry.ingestedFile(sha256: sha256) }
    }

    /// Whether the stored copy of these bytes had lines refused for the device token that sent it.
    func hasRefusedLines(sha256: String) throws -> Bool {
        try registryLock.withLock { try registry.hasRefusedLines(sha256: sha256) }
    }
}

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
    /// 2,000 files (``Ingestor/Options``), and taken out of the spool when
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

/// Recomputes today's (UTC) per-app rates for `/metrics` every few seconds,
/// so a scrape never waits for an analysis.
struct RatesRefresher: Service {
    let engine: StoreEngine
    let metrics: CollectorMetrics
    let everySeconds: Int
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let day = now - now % 86_400_000
            do {
                // Not awaited past SIGTERM: an analysis of a large day must not hold the shutdown.
                let report = try await untilGracefulShutdown {
                    try await engine.read { store in
                        try ReportBuilder(store: store).build(window: ReportWindow(from: day, to: day + 86_400_000))
                    }
                }
                guard let report else { return }
                metrics.dailyRates(report)
            } catch {
                logger.warning("today's rates not computed: \(error)")
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(max(1, everySeconds))) }
        }
    }
}

/// The result of `work`, or nil as soon as graceful shutdown begins: the
/// work then goes on unawaited and its result is dropped.
func untilGracefulShutdown<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T? {
    let outcome = FirstOutcome<T?>()
    return try await withGracefulShutdownHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.wait(continuation)
            Task {
                do {
                    outcome.resolve(.success(try await work()))
                } catch {
                    outcome.resolve(.failure(error))
                }
            }
        }
    } onGracefulShutdown: {
        outcome.resolve(.success(nil))
    }
}

/// A continuation resumed once, with the first outcome that comes (which
/// may come before the continuation is there; later ones are dropped).
private final class FirstOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var result: Result<T, any Error>?

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = lock.withLock {
            if result == nil { self.continuation = continuation }
            return result
        }
        if let early { continuation.resume(with: early) }
    }

    func resolve(_ outcome: Result<T, any Error>) {
        let waiting: CheckedContinuation<T, any Error>? = lock.withLock {
            guard result == nil else { return nil }
            result = outcome
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: outcome)
    }
}

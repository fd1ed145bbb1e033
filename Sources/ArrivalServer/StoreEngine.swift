import ArrivalIngest
import ArrivalStore
import ArrivalStores
import CDispatch
import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The collector's access to the store, off the request threads: one
/// writer (the ingest worker's serial queue, one connection), readers on a
/// concurrent queue (a read-only snapshot each), and the upload registry
/// (one read-only connection behind a lock).
///
/// The store is a SQLite file, or a PostgreSQL store (a `postgres://` URL):
/// then several collectors, each with its own spool, and `arrival ingest`
/// may write it at once (Documentation/PostgreSQL.md).
/// `@unchecked Sendable`: the writer is used only on `writer`, the registry only on `registryQueue`, `committedRuns` and `writeFailure` only under `generationLock`.
final class StoreEngine: @unchecked Sendable {
    /// The store as logs and messages name it (a URL without its password).
    let label: String
    private let writer = DispatchQueue(label: "arrival.ingest")
    private let readers = DispatchQueue(label: "arrival.read", attributes: .concurrent)
    private let location: StoreLocation
    /// Where the upload registry is asked, one question at a time: off Swift
    /// concurrency's few threads, so a store slow to answer (up to
    /// `ARRIVAL_DB_TIMEOUT` on PostgreSQL) holds the questions waiting on it,
    /// never the collector's other requests.
    private let registryQueue = DispatchQueue(label: "arrival.registry")

    /// The writer role, used only on `writer`; the registry only on
    /// `registryQueue`. Each connection is made again after a failure: a
    /// server that restarted (a managed database's failover) is written
    /// again once it is back.
    private let store: Reconnecting<StoreWriting>
    private let registry: Reconnecting<any UploadLookup>

    init(location: StoreLocation) throws {
        self.location = location
        label = location.label
        // Creates the store (or brings it to this arrival's schema) before anything reads it.
        store = Reconnecting { try location.openWriter() }
        try store.connect()
        registry = Reconnecting { try location.openUploadRegistry() }
        try registry.connect()
    }

    /// Counts the worker's runs that may have changed the store: a report
    /// cached at one generation is served again only at the same one.
    private let generationLock = NSLock()
    private var committedRuns: UInt64 = 0

    /// What tells one state of the store from another, cheaply: the
    /// worker's runs, and for a SQLite file the size and change time of the
    /// file and its write-ahead log (so a commit of `arrival ingest`, or of
    /// another collector on the same file, changes it too). On PostgreSQL
    /// other writers' commits are not seen here: a cached report is then
    /// also bounded in age (``ReportCache``).
    var changeState: String {
        let runs = generationLock.withLock { committedRuns }
        let files = location.stateFiles
        guard !files.isEmpty else { return "runs \(runs)" }
        return "runs \(runs) " + files.map(Self.fileState).joined(separator: " ")
    }

    /// The worker committed a run (or may have).
    func noteCommitted() {
        generationLock.withLock { committedRuns &+= 1 }
    }

    /// A time the store could not be written: ingest runs failed on it as a
    /// whole (``StoreLocation/isStoreWide(_:)``) from `since` on.
    struct Outage: Sendable {
        var since: ContinuousClock.Instant
        /// The last failure's reason.
        var reason: String
        /// The runs that failed on it.
        var failedRuns: Int
    }

    /// The outage under way, if any: `/readyz` says so. Under `generationLock`.
    private var outage: Outage?
    /// Whether the store answered the last time it was asked (an ingest run,
    /// the upload registry, `/readyz`). Under `generationLock`.
    private var reachable = true

    /// The last run wrote the store (or failed on its uploads, not on the
    /// store): the outage this ends, if one was under way.
    func noteWritten() -> Outage? {
        generationLock.withLock {
            reachable = true
            defer { outage = nil }
            return outage
        }
    }

    /// The last run failed on the store as a whole: true when this begins an
    /// outage (the first failure since the store was last written).
    func noteWriteFailed(_ error: any Error) -> Bool {
        generationLock.withLock {
            if StoreLocation.isUnreachable(error) { reachable = false }
            guard outage == nil else {
                outage?.reason = "\(error)"
                outage?.failedRuns += 1
                return false
            }
            outage = Outage(since: .now, reason: "\(error)", failedRuns: 1)
            return true
        }
    }

    /// Why the store cannot be written now; nil when the last run could.
    var cannotWrite: String? { generationLock.withLock { outage?.reason } }

    /// Whether the store answered the last time it was asked (`arrival_store_reachable`).
    var isReachable: Bool { generationLock.withLock { reachable } }

    /// Notes whether the store answered a question: `error` nil, or one it gave (``StoreLocation/isUnreachable(_:)``).
    private func noteAnswer(_ error: (any Error)?) {
        let answered = error.map { !StoreLocation.isUnreachable($0) } ?? true
        generationLock.withLock { reachable = answered }
    }

    private static func fileState(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "-" }
        #if canImport(Darwin)
            let changed = info.st_mtimespec
        #else
            let changed = info.st_mtim
        #endif
        return "\(info.st_size)@\(changed.tv_sec).\(changed.tv_nsec)"
    }

    /// Whether the store answers a read (what `/readyz` asks).
    var isReadable: Bool {
        get async {
            do {
                _ = try await ingestedFile(sha256: String(repeating: "0", count: 64))
                return true
            } catch {
                return false
            }
        }
    }

    /// Whether reads go to a server that other collectors and jobs share (PostgreSQL): they are spaced out more.
    var readsServer: Bool { location.readsServer }

    /// Ingests uploads on the writer's queue, in one run of `arrival ingest`:
    /// each upload is one all-or-nothing file of it, and all are committed
    /// when it returns (but those a stopped run names unfinished, see
    /// ``runOptions(limits:stop:)``).
    func ingest(
        _ uploads: [(entry: Spool.Entry, path: String, range: Range<Int>)],
        options: IngestPipeline.Options = IngestPipeline.Options()
    ) async -> Result<IngestSummary, any Error> {
        await withCheckedContinuation { continuation in
            writer.async {
                let files = uploads.map {
                    NamedFile(
                        path: $0.path, name: $0.entry.name, senderRecordsAllowed: $0.entry.role.mayUploadSenderRecords,
                        range: $0.range, sha256: $0.entry.sha256)
                }
                continuation.resume(
                    returning: Result {
                        try self.store.use { store in
                            try IngestPipeline(writer: store.writer, registry: store.registry, options: options)
                                .ingest(files)
                        }
                    })
            }
        }
    }

    /// Prunes the store before `cut` (`StoreLocation.prune(before:vacuum:)`)
    /// on the writer's queue, between ingest runs, so the collector's own
    /// writer never waits for it; without a vacuum: a SQLite file keeps the
    /// freed pages for the next ingests.
    func prune(before cut: Int64) async -> Result<PruneSummary, any Error> {
        let result = await withCheckedContinuation { continuation in
            writer.async {
                continuation.resume(returning: Result { try self.location.prune(before: cut, vacuum: false) })
            }
        }
        noteCommitted()
        return result
    }

    /// Runs `body` with the store's reader role (``StoreLocation/openReader()``:
    /// the SQLite file read-only, or the PostgreSQL store read in place), off
    /// the request's thread.
    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readers.async { [self] in
                continuation.resume(with: Result { try body(try self.location.openReader()) })
            }
        }
    }

    func ingestedFile(sha256: String) async throws -> IngestedFile? {
        try await onRegistry { registry in try registry.use { try $0.ingestedFile(sha256: sha256) } }
    }

    /// Whether the stored copy of these bytes had lines refused for the device token that sent it.
    func hasRefusedLines(sha256: String) async throws -> Bool {
        try await onRegistry { registry in try registry.use { try $0.refusedLines(sha256: sha256) } }
    }

    private func onRegistry<T: Sendable>(
        _ body: @escaping @Sendable (Reconnecting<any UploadLookup>) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            registryQueue.async {
                let result = Result { try body(self.registry) }
                if case .failure(let error) = result { self.noteAnswer(error) } else { self.noteAnswer(nil) }
                continuation.resume(with: result)
            }
        }
    }
}

/// A connection made when first needed and made again after a failure. Used
/// by one thread at a time (the caller's queue or lock).
/// `@unchecked Sendable`: `current` is used by one thread at a time, its owner's serial queue (`writer` or `registryQueue`).
final class Reconnecting<Connection>: @unchecked Sendable {
    private let make: () throws -> Connection
    private var current: Connection?

    init(_ make: @escaping () throws -> Connection) {
        self.make = make
    }

    /// Connects now (at start, so that a store that cannot be reached stops the collector with its reason).
    func connect() throws {
        if current == nil { current = try make() }
    }

    /// Runs `body` on the connection; after an error the next call connects anew.
    func use<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try current ?? make()
        current = connection
        do {
            return try body(connection)
        } catch {
            current = nil
            throw error
        }
    }
}

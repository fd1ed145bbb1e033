import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalPostgres
import ArrivalStore
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
final class StoreEngine: @unchecked Sendable {
    /// The store as logs and messages name it (a URL without its password).
    let label: String
    private let writer = DispatchQueue(label: "arrival.ingest")
    private let readers = DispatchQueue(label: "arrival.read", attributes: .concurrent)
    private let engine: Engine
    /// Where the upload registry is asked, one question at a time: off Swift
    /// concurrency's few threads, so a store slow to answer (up to
    /// `ARRIVAL_DB_TIMEOUT` on PostgreSQL) holds the questions waiting on it,
    /// never the collector's other requests.
    private let registryQueue = DispatchQueue(label: "arrival.registry")

    private enum Engine {
        /// Used only on `writer`; the registry only on `registryQueue`.
        case sqlite(path: String, store: Store, registry: UploadRegistry)
        /// The writer used only on `writer`; the registry only on `registryQueue`.
        /// Each connection is made again after a failure: a server that
        /// restarted (a managed database's failover) is written again once it is back.
        case postgres(PostgresLocation, store: Reconnecting<PostgresStore>, registry: Reconnecting<PostgresRegistry>)
    }

    init(storePath: String) throws {
        if PostgresLocation.isURL(storePath) {
            let location = try PostgresLocation(url: storePath)
            label = location.redacted
            // Migrates the store before anything reads it.
            let store = Reconnecting { try PostgresStore(location) }
            try store.connect()
            let registry = Reconnecting { try PostgresRegistry(location) }
            try registry.connect()
            engine = .postgres(location, store: store, registry: registry)
        } else {
            label = storePath
            // Creates the store (or brings it to this arrival's schema) before anything reads it.
            let store = try Store(path: storePath)
            engine = .sqlite(path: storePath, store: store, registry: try UploadRegistry(storePath: storePath))
        }
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
        guard case .sqlite(let path, _, _) = engine else { return "runs \(runs)" }
        return "runs \(runs) " + [path, path + "-wal"].map(Self.fileState).joined(separator: " ")
    }

    /// The worker committed a run (or may have).
    func noteCommitted() {
        generationLock.withLock { committedRuns &+= 1 }
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

    /// Whether reading a snapshot copies the store first (PostgreSQL): reads are then spaced out more.
    var readsCopy: Bool {
        if case .postgres = engine { return true }
        return false
    }

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
                        switch self.engine {
                        case .sqlite(_, let store, _):
                            return try IngestPipeline(store: store, options: options).ingest(files)
                        case .postgres(let location, let store, _):
                            return try store.use { store in
                                try IngestPipeline(
                                    writer: store, registry: { try? PostgresRegistry(location) }, options: options
                                )
                                .ingest(files)
                            }
                        }
                    })
            }
        }
    }

    /// Runs `body` on a read-only snapshot of the store, off the request's
    /// thread: the SQLite file itself, or a PostgreSQL store's snapshot copied
    /// into a temporary file (``PostgresSnapshot``), deleted afterwards; with
    /// `relevantTo`, only what the outcomes of that window's updates rest on
    /// is copied (a report of it is right in its updates and breakdowns only).
    func read<T: Sendable>(relevantTo window: ReportWindow? = nil, _ body: @escaping @Sendable (Store) throws -> T)
        async throws -> T
    {
        try await withCheckedThrowingContinuation { continuation in
            readers.async { [self] in
                continuation.resume(
                    with: Result {
                        switch self.engine {
                        case .sqlite(let path, _, _):
                            return try body(try Store(readingAt: path))
                        case .postgres(let location, _, _):
                            let directory = try PostgresSnapshot.copyToTemporaryDirectory(
                                from: location, relevantTo: window)
                            defer { try? FileManager.default.removeItem(at: directory) }
                            return try body(
                                try Store(readingAt: directory.appendingPathComponent(PostgresSnapshot.fileName).path))
                        }
                    })
            }
        }
    }

    func ingestedFile(sha256: String) async throws -> IngestedFile? {
        try await onRegistry { engine in
            switch engine {
            case .sqlite(_, _, let registry): try registry.ingestedFile(sha256: sha256)
            case .postgres(_, _, let registry): try registry.use { try $0.ingestedFile(sha256: sha256) }
            }
        }
    }

    /// Whether the stored copy of these bytes had lines refused for the device token that sent it.
    func hasRefusedLines(sha256: String) async throws -> Bool {
        try await onRegistry { engine in
            switch engine {
            case .sqlite(_, _, let registry): try registry.hasRefusedLines(sha256: sha256)
            case .postgres(_, _, let registry): try registry.use { try $0.refusedLines(sha256: sha256) }
            }
        }
    }

    private func onRegistry<T: Sendable>(_ body: @escaping @Sendable (Engine) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            registryQueue.async { continuation.resume(with: Result { try body(self.engine) }) }
        }
    }
}

/// A connection made when first needed and made again after a failure. Used
/// by one thread at a time (the caller's queue or lock).
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

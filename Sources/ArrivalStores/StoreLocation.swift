package import ArrivalModel
package import ArrivalPostgres
package import ArrivalStore
package import Foundation

/// Where the store is, read once from `--db` or `ARRIVAL_DB`: the one place
/// that knows which engines there are. Everything else (the command line,
/// the collector, ingest) takes a location and asks it for the store's
/// roles: the writer and its registry (``openWriter()``), the reader
/// (``openReader()``), and file removal. A third engine is a case
/// here and a module implementing the roles (Documentation/Architecture.md,
/// "Adding an engine").
package enum StoreLocation: Sendable, Equatable {
    /// A SQLite file (created by the first writer).
    case sqlite(path: String)
    /// A PostgreSQL store, named by a `postgres://` URL.
    case postgres(PostgresLocation)

    /// Why a name is no store's.
    package enum ParseError: Error {
        /// The name is empty.
        case empty
        /// A server's URL that cannot be read (its description never holds the URL, which may hold a password).
        case unreadableURL(any Error)
    }

    /// The store `name` names: a `postgres://` URL, else a SQLite file's path.
    package init(parsing name: String) throws(ParseError) {
        if name.isEmpty { throw .empty }
        guard Self.namesServer(name) else {
            self = .sqlite(path: name)
            return
        }
        do {
            self = .postgres(try PostgresLocation(url: name))
        } catch {
            throw .unreadableURL(error)
        }
    }

    /// Whether `name` names a server's store (read through a local copy of
    /// one snapshot), even by a URL that cannot be read.
    package static func namesServer(_ name: String) -> Bool {
        PostgresLocation.isURL(name)
    }

    /// The store as messages and logs name it: a path, or a URL without its password.
    package var label: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let location): location.redacted
        }
    }

    /// Whether the store is known not to exist: a SQLite file that is not
    /// there (a server's store is known only by connecting).
    package var isMissing: Bool {
        switch self {
        case .sqlite(let path): !FileManager.default.fileExists(atPath: path)
        case .postgres: false
        }
    }

    /// Whether the store is read over a connection to a server, which other
    /// collectors and jobs share: the collector's own reads are spaced out
    /// more there.
    package var readsServer: Bool {
        switch self {
        case .sqlite: false
        case .postgres: true
        }
    }

    /// The local files whose size and change time tell one state of the
    /// store from another: a SQLite file and its write-ahead log; none for a
    /// server, whose other writers' commits are not seen here.
    package var stateFiles: [String] {
        switch self {
        case .sqlite(let path): [path, path + "-wal"]
        case .postgres: []
        }
    }

    /// The writer role and the registry look-up ingest's reading thread
    /// makes for itself: what ``IngestPipeline`` takes. Opening it creates
    /// the store, or brings it to this arrival's schema.
    package func openWriter() throws -> StoreWriting {
        switch self {
        case .sqlite(let path):
            try StoreWriting(writer: SQLiteStore(path: path), registry: { FileRegistryLookup(storePath: path) })
        case .postgres(let location):
            // Several writers may share it: one transaction a file, admission on a connection of its own.
            try StoreWriting(writer: PostgresStore(location), registry: { try? PostgresRegistry(location) })
        }
    }

    /// The upload registry the collector asks whether an upload's bytes are stored.
    package func openUploadRegistry() throws -> any UploadLookup {
        switch self {
        case .sqlite(let path): try UploadRegistry(storePath: path)
        case .postgres(let location): try PostgresRegistry(location)
        }
    }

    /// The reader role (``StoreReader``): the SQLite file itself, opened
    /// read-only, or the server's tables read in place through cursors
    /// (``PostgresReader``). Throws when a SQLite file is not there or is no
    /// arrival store; a server's store is checked when first read.
    package func openReader() throws -> any StoreReader {
        switch self {
        case .sqlite(let path): try SQLiteStore(readingAt: path)
        case .postgres(let location): PostgresReader(location)
        }
    }

    /// The store as one local SQLite file, for `arrival files`, which reads
    /// the file registry whole and plans a removal with the SQLite store's
    /// own queries: the file itself, or a copy of one snapshot of a server's
    /// store in a temporary directory, deleted with the returned value; with
    /// `registryOnly`, a copy of the registry alone (the listing's).
    package func openLocalCopy(registryOnly: Bool = false) throws -> ReadableStore {
        switch self {
        case .sqlite(let path):
            ReadableStore(path: path, label: path)
        case .postgres(let location):
            try ReadableStore(snapshotOf: location, registryOnly: registryOnly)
        }
    }

    /// Removes what no report of a window from `before` on reads, and keeps
    /// what such a report still reads (``PruneRule``): afterwards every
    /// report of a window from `before` on is the same but for the
    /// store-wide data quality counts, and the file registry still knows
    /// every file ingested. With `vacuum`, a SQLite file then gives the
    /// freed space back to the file system (`VACUUM` rewrites it); without,
    /// its next ingests reuse the freed pages. A server's store reuses its
    /// space after its own autovacuum.
    package func prune(before: Int64, vacuum: Bool) throws -> PruneSummary {
        switch self {
        case .sqlite(let path):
            try SQLiteStore(path: path).prune(before: before, vacuum: vacuum)
        case .postgres(let location):
            try PostgresPrune.prune(location, before: before)
        }
    }

    /// Stores the rows of one of Apple's exports (issue 54), each of its days
    /// replacing that day's rows of the same kind (and channel).
    package func importAppleMetrics(
        kind: AppleMetricsKind, _ rows: AppleMetrics, sha256: String, at now: Int64
    ) throws -> AppleImportOutcome {
        switch self {
        case .sqlite(let path):
            try SQLiteStore(path: path).importAppleMetrics(
                kind: kind, delivery: rows.delivery, broadcasts: rows.broadcasts, sha256: sha256, at: now)
        case .postgres(let location):
            try PostgresAppleMetrics.importRows(
                location, kind: kind, delivery: rows.delivery, broadcasts: rows.broadcasts, sha256: sha256, at: now)
        }
    }

    /// Apple's stored rows of the days in [from, to) (all without bounds), read only.
    package func appleMetrics(from: Int64?, to: Int64?) throws -> AppleMetrics {
        switch self {
        case .sqlite(let path): try SQLiteStore(readingAt: path).appleMetrics(from: from, to: to)
        case .postgres(let location): try PostgresAppleMetrics.metrics(location, from: from, to: to)
        }
    }

    /// Removes the files with these ids from the store. `plan` is the
    /// removal planned on the read-only `reader` the command chose them on
    /// (``openLocalCopy()``): a server's store, read through a copy,
    /// says only which files it still had, and the plan counts those.
    package func removeFiles(ids: [Int64], plannedOn reader: SQLiteStore) throws -> FileRemoval {
        switch self {
        case .sqlite(let path):
            return try SQLiteStore(path: path).removeFiles(ids: ids)
        case .postgres(let location):
            // What the snapshot counted, for the files the store still had.
            var plan = try reader.removalPlan(ids: ids)
            let removed = try PostgresStore(location).removeFiles(ids: plan.entries.map(\.file.id))
            plan.entries.removeAll { !removed.contains($0.file.id) }
            return plan
        }
    }
}

/// A store's writer role, with the look-up at its file registry that
/// ingest's reading thread opens on a connection of its own (nil: none;
/// every file is decoded and the writer decides).
package struct StoreWriting {
    package let writer: any StoreWriter
    package let registry: @Sendable () -> (any StoredFiles)?
}

/// A store opened for reading by path: a SQLite file as given, or a
/// snapshot of a server's store copied into a temporary SQLite file,
/// deleted when this goes (unless ``keepCopy()`` took it).
package final class ReadableStore {
    package let path: String
    /// The store as messages name it.
    package let label: String
    private var directory: URL?

    init(path: String, label: String) {
        self.path = path
        self.label = label
        directory = nil
    }

    init(snapshotOf location: PostgresLocation, registryOnly: Bool) throws {
        let directory = try PostgresSnapshot.copyToTemporaryDirectory(from: location, registryOnly: registryOnly)
        self.directory = directory
        path = directory.appendingPathComponent(PostgresSnapshot.fileName).path
        label = location.redacted
    }

    /// The temporary directory of a copy, which the caller now deletes; nil when the store was read in place.
    package func keepCopy() -> URL? {
        defer { directory = nil }
        return directory
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }
}

extension StoreLocation {
    /// Whether an ingest run's `error` concerns the store as a whole (it
    /// cannot be reached, answered in time, or written: a full or read-only
    /// disk, a lock held, a server shutting down) rather than the uploads the
    /// run held. The collector backs off on the first and sets nothing
    /// aside for it; the second it pins on the upload that fails alone.
    /// An error of neither engine (a file the run could not read, say) is
    /// the run's.
    package static func isStoreWide(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError {
            return SQLiteStore.refusalCodes.contains(error.code & 0xFF) == false
        }
        if let error = error as? PostgresStoreError {
            return PostgresStore.refusalReason(error) == nil
        }
        return false
    }

    /// Whether `error` says the store did not answer at all: a PostgreSQL
    /// server that could not be connected to, closed the connection, did not
    /// answer in time or is shutting down or starting (SQLSTATE classes 08
    /// and 57P), or a SQLite file that cannot be opened. A store that
    /// answered with a refusal or a failure of its own (a full disk, a
    /// read-only transaction) is reachable. What the collector's
    /// `arrival_store_reachable` gauge says.
    package static func isUnreachable(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.cannotOpen }
        if let error = error as? PostgresStoreError {
            guard let state = error.sqlState else { return true }
            return state.hasPrefix("08") || state.hasPrefix("57P")
        }
        return false
    }
}

package import ArrivalHandOff
package import ArrivalModel
import CSQLite

/// The store's writer role: what ingest asks of a store it writes files
/// into, whatever the engine. ``SQLiteStore`` (SQLite, one writer at a time,
/// several files a transaction, each file's commit known when it finishes)
/// and the PostgreSQL store of `ArrivalPostgres` (several writers at once,
/// several files a transaction merged at its commit, so each file's commit
/// is known then) implement it; the ingest's writer stage (`BatchWriter`)
/// is written against it alone.
///
/// Every method is called from one thread, the writer's, one file at a time.
package protocol StoreWriter: AnyObject {
    associatedtype File: FileWriter

    /// A store that lives for one run (the sides of `diff`): a file it
    /// cannot read ends the run instead of being skipped.
    var isThrowaway: Bool { get }

    /// Whether bytes with this content hash are stored, and from which path.
    func status(ofContent sha256: String, at path: String) throws -> ContentStatus

    /// The stored file with these bytes when an upload with a device token
    /// stored it with lines refused for that token (it is replaced, not skipped).
    func restrictedCopy(ofContent sha256: String) throws -> Int64?

    /// Notes that `path` held bytes stored from another path; whether the pair is new.
    @discardableResult
    func recordSkippedDuplicate(sha256: String, path: String, at now: Int64) throws -> Bool

    /// Starts storing one file: all of it is stored or none.
    func beginFile(path: String, now: Int64, replaces: Bool) throws -> File

    /// Removes the earlier versions a file that grew replaces, inside that
    /// file's transaction (begun just before): how many were removed.
    func removeReplacedVersions(ids: [Int64]) throws -> Int

    /// Makes the files finished since the last call durable, and returns
    /// what committing did to those whose ``FileWriter/finish(sha256:byteCount:lines:gzip:)``
    /// left it to the batch's commit (said nil), in the order they finished.
    func commitFiles() throws -> [FileCommit]

    /// As ``commitFiles()``, between commits of a run: a store that commits
    /// batches in the background (PostgreSQL's lanes) starts committing the
    /// files finished and returns without waiting for the newest, so that
    /// storing them overlaps reading the next. Returns what committing did
    /// to the oldest files not yet handed over (a prefix of them, in order);
    /// a later call returns the rest. The last call of a run is ``commitFiles()``.
    func commitFilesSoFar() throws -> [FileCommit]

    /// Whether ``FileWriter/finish(sha256:byteCount:lines:gzip:)`` (or the
    /// batch's commit) claims the bytes itself, and says when they were
    /// stored already: the writer then
    /// need not ask ``status(ofContent:at:)`` first (a round trip a file).
    var claimsBytesAtFinish: Bool { get }

    /// Takes the store alone for a large first load, when the engine can and
    /// the store holds nothing yet (``IngestPipeline/Options/bulkLoadWhenNew``):
    /// whether it did. Then nothing else reads the store until
    /// ``endBulkLoad()``. An engine without such a mode keeps the default, false.
    func beginBulkLoad() -> Bool

    /// Ends what ``beginBulkLoad()`` began (called only after it said true).
    func endBulkLoad()

    /// The store's reason when `error`, thrown while one file was written,
    /// is the store refusing that file (a rule of the store's: a trigger, a
    /// constraint, a value it cannot hold) and, once that file is rolled
    /// back, the other files of the batch stand: the writer sets the file
    /// aside and goes on (WRITE-PATH: a failure belongs to the smallest thing
    /// that failed). Nil when the error concerns the store as a whole (no
    /// connection, a full or read-only disk, a lost transaction): the run
    /// stops, and nothing is blamed on the file. Asked after the file's
    /// rollback. An engine that cannot tell keeps the default, nil.
    func refusal(of error: any Error) -> String?
}

/// Whether bytes with a content hash are stored, and from which path: what
/// a writer answers (``StoreWriter/status(ofContent:at:)``), whatever its engine.
package enum ContentStatus: Equatable, Sendable {
    case new
    /// The same bytes were ingested from this very path: a silent no-op.
    case alreadyIngestedHere
    /// The same bytes were ingested from another path: skipped and counted.
    case alreadyIngestedFrom(String)
}

/// One file being stored (``StoreWriter/beginFile(path:now:replaces:)``).
package protocol FileWriter {
    /// Stores the rows of `batch` that are not already stored (its
    /// malformed lines are given one by one to ``noteMalformed(line:cause:problem:)``).
    /// Returns how many of each kind were new when the engine knows it by
    /// now, else nil (it is known at ``finish(sha256:byteCount:lines:gzip:)``).
    mutating func store(_ batch: RowBatch) throws -> [Int]?

    mutating func noteMalformed(line: Int, cause: MalformedCause, problem: String?) throws

    /// Registers the file as holding the bytes with this hash and makes it
    /// part of the store. `.new` when it was stored; otherwise the same
    /// bytes were stored meanwhile by another writer (from `path` or another
    /// path), and nothing of this file was kept. Nil when that is settled
    /// at the batch's commit (``StoreWriter/commitFiles()`` returns it).
    mutating func finish(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit?

    /// Leaves no trace of the file.
    mutating func rollback()
}

/// What committing a file did.
package struct FileCommit: Sendable, Equatable {
    /// `.new`: stored; else the bytes were already stored and this file was rolled back.
    package var status: ContentStatus
    /// New records of each kind (``RecordKind/index``) when the engine counts
    /// them at commit; nil when ``FileWriter/store(_:)`` said so batch by batch.
    package var newByKind: [Int]?
    /// The store's reason when it refused the file at the batch's commit
    /// (``StoreWriter/refusal(of:)``): nothing of it was kept, the other files were.
    package var refused: String?

    package init(status: ContentStatus, newByKind: [Int]? = nil, refused: String? = nil) {
        self.status = status
        self.newByKind = newByKind
        self.refused = refused
    }
}

extension SQLiteStore: StoreWriter {
    /// Each file's commit was known when it finished.
    package func commitFiles() throws -> [FileCommit] {
        try commitBatch()
        return []
    }

    package func removeReplacedVersions(ids: [Int64]) throws -> Int {
        try replaceEarlierVersions(ids: ids).entries.count
    }

    /// The primary result codes of a file's refusal (``refusal(of:)``): a
    /// constraint, a type mismatch, a value too big.
    package static let refusalCodes: Set<Int32> = [SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG]

    /// A constraint (a trigger's `RAISE(ABORT…)` or `RAISE(FAIL…)`, a `CHECK`,
    /// `NOT NULL` or `UNIQUE` of an operator's), a type mismatch or a value
    /// too big is the file's; anything else (a full or read-only disk, I/O,
    /// a lock, a corrupt file) is the store's. A trigger's `RAISE(ROLLBACK…)`
    /// ends the batch with the file: the store's too, so the run stops rather
    /// than count files it no longer holds.
    package func refusal(of error: any Error) -> String? {
        guard let error = error as? DatabaseError, Self.refusalCodes.contains(error.code & 0xFF) else { return nil }
        guard batchIntact else {
            abandonBatch()
            return nil
        }
        return error.message
    }
}

extension FileTransaction: FileWriter {
    package func store(_ batch: RowBatch) throws -> [Int]? {
        try insertRows(of: batch)
    }

    package func noteMalformed(line: Int, cause: MalformedCause, problem: String?) throws {
        try addMalformed(line: line, cause: cause, problem: problem)
    }

    package func finish(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit? {
        try commit(sha256: sha256, byteCount: byteCount, lines: lines, gzip: gzip)
        return FileCommit(status: .new)
    }
}

extension StoreWriter {
    package var claimsBytesAtFinish: Bool { false }

    package func commitFilesSoFar() throws -> [FileCommit] { try commitFiles() }

    package func refusal(of error: any Error) -> String? { nil }

    package func beginBulkLoad() -> Bool { false }

    package func endBulkLoad() {}
}

import ArrivalModel
import CSQLite

/// The ingest side of the `files` registry: whether bytes were ingested
/// before, re-uploads under another path, and the batch transaction that
/// holds whole files.
extension Store {
    public enum FileStatus: Equatable, Sendable {
        case new
        /// The same bytes were ingested from this very path: a silent no-op.
        case alreadyIngestedHere
        /// The same bytes were ingested from another path: skipped and counted.
        case alreadyIngestedFrom(String)
    }

    public func status(ofContent sha256: String, at path: String) throws(DatabaseError) -> FileStatus {
        // Sees files of the open batch too: the same connection reads its own writes.
        let statement = try recordStatements().fileStatus
        statement.bind(1, sha256)
        defer { statement.reset() }
        guard try statement.step() else { return .new }
        let first = statement.string(0) ?? ""
        // Paths compare byte for byte: canonically equivalent names are different files.
        return first.utf8.elementsEqual(path.utf8) ? .alreadyIngestedHere : .alreadyIngestedFrom(first)
    }

    /// Records that `path` held content already ingested from elsewhere;
    /// returns whether this (content, path) pair is new.
    @discardableResult
    public func recordSkippedDuplicate(sha256: String, path: String, at now: Int64) throws(DatabaseError) -> Bool {
        let statement = try connection.prepare(
            """
            INSERT INTO skipped_files (content_sha256, path, first_seen_at) VALUES (?, ?, ?)
            ON CONFLICT DO NOTHING
            """)
        statement.bind(1, sha256)
        statement.bind(2, path)
        statement.bind(3, now)
        try statement.run()
        return connection.changes > 0
    }

    /// Starts one file's part of the open batch transaction (begun here if
    /// none is open). A file is either released into the batch whole or
    /// rolled back whole; the batch commits several whole files at once
    /// (``commitBatch()``), so a run killed at any moment leaves no part of
    /// any file, and small files do not each pay for a commit.
    ///
    /// How a file is rolled back depends on what it changes. A file that
    /// only adds rows (`replaces: false`, every file but one that grew since
    /// an earlier version of it was stored) is undone by deleting what it
    /// added: its records have ids past the largest stored when it began (the
    /// batch holds the store's write lock, and ids only grow), its
    /// `record_repeats` rows rowids past the largest, its malformed lines
    /// and its registry row its file id. No savepoint: a savepoint makes
    /// SQLite copy every page the file touches to its statement journal
    /// first, which for a tree of small device files was 17.5 GB of writes
    /// for a 174 MB store (Benchmarks/whole-job/README.md). A file that
    /// replaces earlier versions deletes other files' rows, so it gets a
    /// savepoint.
    ///
    /// The file's registry row is written now, so its records can name it,
    /// under a placeholder hash: its bytes are known only once the file was
    /// read to its end (``FileTransaction/commit(sha256:byteCount:lines:gzip:)``).
    package func beginFile(path: String, now: Int64, replaces: Bool = false) throws(DatabaseError)
        -> FileTransaction
    {
        if !batchOpen {
            try connection.execute("BEGIN IMMEDIATE")
            batchOpen = true
        }
        let statements = try recordStatements()
        let undo: FileTransaction.Undo
        if replaces {
            try statements.savepoint.run()
            undo = .savepoint
        } else {
            undo = .rowsAfter(try statements.lastRowIDs())
        }
        do {
            let insert = statements.insertFile
            insert.bind(1, FileTransaction.pendingHash)
            insert.bind(2, path)
            insert.bind(3, now)
            try insert.run()
            let fileID = sqlite3_last_insert_rowid(connection.handle)
            return try FileTransaction(store: self, fileID: fileID, undo: undo)
        } catch {
            if undo == .savepoint { try? connection.execute("ROLLBACK TO arrival_file; RELEASE arrival_file") }
            throw error
        }
    }

    /// Rolls back the whole open batch: the last resort when a file cannot
    /// be undone alone.
    func abandonBatch() {
        guard batchOpen else { return }
        try? connection.execute("ROLLBACK")
        batchOpen = false
    }

    /// Commits the files released since the last commit.
    public func commitBatch() throws(DatabaseError) {
        guard batchOpen else { return }
        try connection.execute("COMMIT")
        batchOpen = false
    }
}

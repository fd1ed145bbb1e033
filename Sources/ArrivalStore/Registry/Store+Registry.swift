import CSQLite

/// The ingest side of the `files` registry: whether bytes were ingested
/// before, re-uploads under another path, and the batch transaction that
/// holds whole files.
extension SQLiteStore {
    package func status(ofContent sha256: String, at path: String) throws(DatabaseError) -> ContentStatus {
        // Sees files of the open batch too: the same connection reads its own writes.
        let statement = try recordStatements().fileStatus
        statement.bind(1, sha256)
        defer { statement.reset() }
        guard try statement.step() else { return .new }
        let first = statement.string(0) ?? ""
        // Paths compare byte for byte: canonically equivalent names are different files.
        return first.utf8.elementsEqual(path.utf8) ? .alreadyIngestedHere : .alreadyIngestedFrom(first)
    }

    /// The stored file with these bytes when an upload with a device token
    /// stored it with lines refused for that token (`kind_not_allowed`):
    /// bytes sent again with a sender token are not its duplicate but take
    /// its place (Documentation/Collector.md, "Duplicates and roles").
    package func restrictedCopy(ofContent sha256: String) throws(DatabaseError) -> Int64? {
        let statement = try connection.prepare(Self.restrictedCopySQL)
        statement.bind(1, sha256)
        guard try statement.step() else { return nil }
        return statement.int(0)
    }

    /// The stored file of a content hash that has a `kind_not_allowed` line.
    package static let restrictedCopySQL = """
        SELECT id FROM files WHERE content_sha256 = ?
            AND EXISTS (SELECT 1 FROM malformed_lines WHERE file_id = files.id AND cause = 'kind_not_allowed')
        """

    /// Records that `path` held content already ingested from elsewhere;
    /// returns whether this (content, path) pair is new.
    @discardableResult
    package func recordSkippedDuplicate(sha256: String, path: String, at now: Int64) throws(DatabaseError) -> Bool {
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
    /// first, and over a tree of small device files those copies would
    /// outweigh the store many times. A file that replaces earlier versions
    /// deletes other files' rows, so it gets a savepoint.
    ///
    /// The file's registry row is written now, so its records can name it,
    /// under a placeholder hash: its bytes are known only once the file was
    /// read to its end (``FileTransaction/commit(sha256:byteCount:lines:gzip:)``).
    ///
    /// Foreign keys are not enforced inside the batch (they are again once it
    /// ends). Setting the file's hash changes a parent key (`skipped_files`
    /// references it), and with enforcement on SQLite must be able to undo
    /// that one statement alone, so it would first copy every page the
    /// statement touches to a statement journal, several pages per file.
    /// The batch cannot break a key:
    /// every row it adds names the file being written, whose registry row
    /// exists from here on, or a hash found in the registry; files it
    /// replaces are removed children first. Tests check every ingest path
    /// with `PRAGMA foreign_key_check`.
    package func beginFile(path: String, now: Int64, replaces: Bool = false) throws(DatabaseError)
        -> FileTransaction
    {
        let begins = !batchOpen
        if begins {
            // A no-op inside a transaction, so set before it begins.
            try connection.execute("PRAGMA foreign_keys = OFF")
            do {
                try connection.execute("BEGIN IMMEDIATE")
            } catch {
                try? connection.execute("PRAGMA foreign_keys = ON")
                throw error
            }
            batchOpen = true
        }
        let statements = try recordStatements()
        if isBulkLoading && statements.deferred == nil && !keyIndexDeferralTried {
            // Once per load: its first transaction fills empty tables.
            keyIndexDeferralTried = true
            do {
                _ = try statements.deferKeyIndexes(limits: deferredKeyLimits)
            } catch {
                abandonBatch()
                throw error
            }
        }
        if begins && statements.deferred == nil {
            do {
                try statements.ensureKeyIndexes()
            } catch {
                abandonBatch()
                throw error
            }
        }
        let undo: FileTransaction.Undo
        if replaces {
            // A savepoint cannot undo what the directories noted: replacing
            // a stored file needs the indexes (never so in a first load).
            try statements.buildKeyIndexes()
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

    /// Whether the batch transaction the files of this run go into is still
    /// open (a file's rollback failed, or a trigger's `RAISE(ROLLBACK…)` ended it: not).
    var batchIntact: Bool { batchOpen && sqlite3_get_autocommit(connection.handle) == 0 }

    /// Rolls back the whole open batch: the last resort when a file cannot
    /// be undone alone.
    func abandonBatch() {
        guard batchOpen else { return }
        try? connection.execute("ROLLBACK")
        cachedStatements?.forgetDeferral()
        batchOpen = false
        try? connection.execute("PRAGMA foreign_keys = ON")
    }

    /// Commits the files released since the last commit. A `record_key`
    /// index a first load put off stays off until the next write
    /// transaction (``RecordStatements/ensureKeyIndexes()``).
    package func commitBatch() throws(DatabaseError) {
        guard batchOpen else { return }
        try connection.execute("COMMIT")
        batchOpen = false
        cachedStatements?.forgetDeferral()
        try connection.execute("PRAGMA foreign_keys = ON")
    }

    /// Whether SQLite enforces foreign keys on the store's connection now
    /// (off only inside an ingest batch; tests).
    package var enforcesForeignKeys: Bool {
        get throws(DatabaseError) {
            let query = try connection.prepare("PRAGMA foreign_keys")
            defer { query.reset() }
            return try query.step() && query.int(0) == 1
        }
    }
}

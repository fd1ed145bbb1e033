import CSQLite

/// The first load of a store: one process, pages written once.
///
/// In WAL mode every page a transaction writes goes to the log first and is
/// copied into the database by the checkpoint that follows: for the first
/// ingest of a store, a transaction of hundreds of megabytes, that copy runs
/// alone after the last row is in, and doubles what reaches the disk. With a
/// rollback journal, pages past the end of the database as it was when the
/// transaction began are written in place and journaled not at all, and a
/// store that holds no file yet is nearly all such pages. The price is that
/// nobody else may read the store meanwhile, which is why this is taken only
/// when nobody else has it open and it holds nothing to read yet.
/// Benchmarks/README.md ("The first load of a store") has the measurement.
extension SQLiteStore {
    /// Switches to a rollback journal and an exclusive lock held until
    /// ``endBulkLoad()``, when the store holds no file and no other
    /// connection has it open; returns whether it did. Otherwise nothing
    /// changes: the store stays in WAL mode, shared with other readers and
    /// writers as always.
    ///
    /// Safe under the store's guarantees: a run killed meanwhile leaves a
    /// hot journal that the next connection to open the store rolls back
    /// (truncating the file to what was committed), and ``init(path:throwaway:)``
    /// puts that store back in WAL mode. Another process that opens the store
    /// meanwhile waits for the lock (up to the busy timeout), as it waits for
    /// another writer.
    package func beginBulkLoad() -> Bool {
        guard !isThrowaway, !isBulkLoading, !batchOpen, path != ":memory:", !path.isEmpty else { return false }
        // Asked at once: another connection means the store is shared, not a reason to wait.
        sqlite3_busy_timeout(connection.handle, 0)
        defer { sqlite3_busy_timeout(connection.handle, Int32(clamping: Connection.busyTimeoutMilliseconds)) }
        do {
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
            // Fails (busy) while any other connection has the file open.
            let switched = try connection.prepare("PRAGMA journal_mode = TRUNCATE")
            let mode = try switched.step() ? switched.string(0) : nil
            switched.reset()
            guard mode == "truncate" else {
                try? connection.execute("PRAGMA locking_mode = NORMAL")
                return false
            }
            isBulkLoading = true
            keyIndexDeferralTried = false
            try connection.execute("PRAGMA synchronous = FULL")
            // Asked under the lock, so nobody can have added a file since.
            let files = try connection.prepare("SELECT EXISTS (SELECT 1 FROM files)")
            let holdsFiles = try files.step() && files.int(0) != 0
            files.reset()
            if holdsFiles {
                endBulkLoad()
                return false
            }
            return true
        } catch {
            if isBulkLoading {
                endBulkLoad()
            } else {
                try? connection.execute("PRAGMA locking_mode = NORMAL")
            }
            return false
        }
    }

    /// Back to WAL mode and shared locks, after committing what is open. A
    /// failure here leaves a consistent store in rollback mode, which the
    /// next connection to open it switches back to WAL.
    package func endBulkLoad() {
        guard isBulkLoading else { return }
        isBulkLoading = false
        // The lock is let go at the next access after the mode changes; then WAL takes the lock a moment.
        try? connection.execute(
            """
            PRAGMA locking_mode = NORMAL;
            SELECT count(*) FROM sqlite_schema;
            """)
        try? connection.retryingWhileBusy { () throws(DatabaseError) in
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        try? connection.execute("PRAGMA synchronous = NORMAL")
    }
}

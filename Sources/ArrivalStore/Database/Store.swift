import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one owner of an arrival SQLite database: it opens the file, applies
/// the migrations, and offers the operations ingest and report need.
///
/// WAL journal with `synchronous=NORMAL` (a first load may hold the store
/// alone with a rollback journal instead: `Store+BulkLoad.swift`); each file is ingested in one
/// transaction together with its registry row, so a run killed at any moment
/// leaves either the whole file or nothing of it, and running it again
/// completes the job.
package final class SQLiteStore {
    package let path: String
    /// Opened with `throwaway: true` (see ``init(path:throwaway:)``).
    package let isThrowaway: Bool
    let connection: Connection
    /// The prepared statements of ingest, made on first use and kept.
    var cachedStatements: RecordStatements?
    /// Whether a batch transaction of whole files is open.
    var batchOpen = false
    /// Whether this connection holds the store alone with a rollback journal
    /// (``beginBulkLoad()``).
    package internal(set) var isBulkLoading = false
    /// Whether this bulk load already had its chance to put the key indexes
    /// off (its first transaction; ``RecordStatements/deferKeyIndexes(limits:)``).
    var keyIndexDeferralTried = false
    /// How much a bulk load may keep in memory while its key indexes are put off (tests set less).
    package var deferredKeyLimits = DeferredKeyIndex.Limits()

    /// `PRAGMA application_id` of every arrival store, 'ARRV': what tells an
    /// arrival store from any other SQLite database (`file(1)` shows it too).
    package static let applicationID: Int32 = 0x4152_5256

    /// Opens (creating if needed) the store at `path`; `":memory:"` for a
    /// throwaway one.
    ///
    /// A new store is marked with ``applicationID``; a store of an older
    /// arrival (migrations table, no mark) is marked on the way. Any other
    /// SQLite database that holds tables is refused untouched: arrival never
    /// adds its tables to a file it did not make.
    ///
    /// A `throwaway` store (the temporary one `arrival diff` ingests batches
    /// into) has no journal and skips the fsyncs: it is deleted after the
    /// run, or as soon as its ingest fails, so surviving a power cut or a
    /// rollback buys nothing. A user's store is never opened this way.
    package init(path: String, throwaway: Bool = false) throws(DatabaseError) {
        self.path = path
        self.isThrowaway = throwaway
        try Self.checkDirectory(of: path)
        do throws(DatabaseError) {
            connection = try Connection(path: path)
            // Before anything is written: a file that is no store is left untouched.
            if case .foreign(let tables) = try Self.identity(of: connection, path: path) {
                throw Self.foreignDatabase(path, tables: tables)
            }
            // Pages of 32 KiB for a new store (an existing one keeps its own):
            // fewer pages to fetch, spill and write per row inserted, and
            // reports read as fast (Benchmarks/README.md has the comparison).
            try connection.execute("PRAGMA page_size = 32768")
            // A throwaway store has no journal and keeps the file to itself:
            // no WAL to copy pages through, no fsync. Without a journal a
            // rollback cannot restore pages, which is safe only because ingest
            // rolls a file back just before it throws, and a side that threw
            // is deleted unread (``ComparisonSide``). Benchmarks/README.md has
            // the measurement.
            // Another process making the same new store may hold the lock
            // that switching the journal mode needs, and SQLite does not
            // always wait for it there: retry until the busy timeout.
            try connection.retryingWhileBusy { () throws(DatabaseError) in
                try connection.execute(
                    throwaway
                        ? """
                        PRAGMA journal_mode = OFF;
                        PRAGMA synchronous = OFF;
                        PRAGMA locking_mode = EXCLUSIVE;
                        """
                        : """
                        PRAGMA journal_mode = WAL;
                        PRAGMA synchronous = NORMAL;
                        """)
            }
            try connection.execute(
                """
                PRAGMA foreign_keys = ON;
                PRAGMA cache_size = -65536;
                PRAGMA temp_store = FILE;
                """)
            try upgradeSchema()
        } catch {
            if error.hint != nil { throw error }
            throw DatabaseError(
                code: error.code, message: error.message, context: "opening the store '\(path)'", path: path)
        }
    }

    /// Runs SQL of an operator's own on the store, outside any ingest (a
    /// trigger added or dropped, say; the tests of a store that refuses a file).
    package func executeOperatorSQL(_ sql: String) throws(DatabaseError) {
        try connection.execute(sql)
    }

    /// Opens an existing store for reading only: nothing is migrated or
    /// written, so `arrival report`, `diff` and `gate` work on a store in a
    /// read-only directory, and never change a file that is no store. Fails
    /// when the file is missing, empty, no arrival store, or one written by
    /// an older arrival that still lacks migrations.
    ///
    /// The connection is `query_only` from its first statement. Where the
    /// file and its directory are writable it is opened read-write at the
    /// file level all the same: a connection opened read-only cannot remove
    /// the `-wal` and `-shm` files a WAL store gets while read, and would leave
    /// them beside every store it reported on. Where they are not, SQLite
    /// opens it read-only, and a directory that cannot take the `-shm` file
    /// is read as an immutable file.
    package init(readingAt path: String) throws(DatabaseError) {
        self.path = path
        self.isThrowaway = false
        let context = "opening '\(path)' for reading"
        guard access(path, F_OK) == 0 else {
            throw DatabaseError(
                code: SQLITE_CANTOPEN, message: "no store at '\(path)'", context: context,
                hint: "run 'arrival ingest PATH… --db \(path)' first, or pass --db with the store's path.", path: path)
        }
        Self.upgradeIfOlder(path)
        let identity: Identity
        do throws(DatabaseError) {
            var opened = try Connection(path: path, create: false)
            do {
                try opened.execute("PRAGMA query_only = ON")
                identity = try Self.identity(of: opened, path: path)
            } catch let error where error.code == SQLITE_READONLY || error.code == SQLITE_CANTOPEN {
                // A WAL store in a directory this process cannot write: SQLite
                // cannot make the shared-memory file beside it. Nobody can be
                // writing it then (a writer needs that file too), so read it
                // as the immutable file it is.
                opened = try Connection(path: path, readOnly: true, immutable: true)
                try opened.execute("PRAGMA query_only = ON")
                identity = try Self.identity(of: opened, path: path)
            }
            connection = opened
        } catch {
            if error.hint != nil { throw error }
            throw DatabaseError(code: error.code, message: error.message, context: context, path: path)
        }
        switch identity {
        case .empty:
            throw DatabaseError(
                code: SQLITE_ERROR, message: "'\(path)' is empty, not an arrival store", context: context,
                hint: "run 'arrival ingest PATH… --db \(path)' to fill it, or pass --db with the store's path.",
                path: path)
        case .foreign(let tables):
            throw Self.foreignDatabase(path, tables: tables)
        case .arrival, .olderArrival:
            break
        }
        let applied: [String]
        do {
            try connection.execute("PRAGMA cache_size = -65536")
            applied = try Self.migrationNames(connection)
        } catch let error as DatabaseError {
            throw DatabaseError(code: error.code, message: error.message, context: context, path: path)
        } catch {
            throw DatabaseError(code: SQLITE_ERROR, message: "\(error)", context: context, path: path)
        }
        let missing = Migrations.all.map(\.name).filter { !applied.contains($0) }
        guard missing.isEmpty else {
            throw DatabaseError(
                code: SQLITE_ERROR,
                message:
                    "'\(path)' was written by an older arrival (missing migrations \(missing.joined(separator: ", "))) and could not be upgraded here",
                context: context,
                hint:
                    "run 'arrival ingest --db \(path)' once (with an empty directory) as a user who can write the store; nothing is re-ingested.",
                path: path)
        }
    }

    /// Upgrades a store written by an older arrival in place before it is
    /// read: its migrations and SQL views only (what a report needs is
    /// stored already; no record is read again). Does nothing to a current
    /// store, a file that is no store, or one this process cannot write (the
    /// read then says what to run).
    private static func upgradeIfOlder(_ path: String) {
        let stale: Bool
        do {
            let probe = try Connection(path: path, create: false)
            try probe.execute("PRAGMA query_only = ON")
            switch try identity(of: probe, path: path) {
            case .arrival, .olderArrival:
                let applied = try migrationNames(probe)
                let views = try viewsVersion(of: probe)
                stale = Migrations.all.contains { !applied.contains($0.name) } || views != viewsVersion
            case .empty, .foreign:
                stale = false
            }
        } catch {
            return
        }
        if stale { _ = try? SQLiteStore(path: path) }
    }

    /// What a database file is, told before anything is written to it.
    enum Identity: Equatable {
        /// Marked with ``SQLiteStore/applicationID``.
        case arrival
        /// Made by an arrival before the mark: it has `arrival_migrations`.
        case olderArrival
        /// No tables yet (a new or an empty file).
        case empty
        /// Tables of something else.
        case foreign(tables: [String])
    }

    static func identity(of connection: Connection, path: String) throws(DatabaseError) -> Identity {
        let id = try connection.prepare("PRAGMA application_id")
        let mark = try id.step() ? id.int(0) : 0
        id.reset()
        if mark == Int64(applicationID) { return .arrival }
        let list = try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        var tables: [String] = []
        while try list.step() { tables.append(list.string(0) ?? "") }
        list.reset()
        if mark == 0 && tables.contains("arrival_migrations") { return .olderArrival }
        if mark == 0 && tables.isEmpty { return .empty }
        return .foreign(tables: tables)
    }

    static func foreignDatabase(_ path: String, tables: [String]) -> DatabaseError {
        let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
        return DatabaseError(
            code: SQLITE_ERROR,
            message: "'\(path)' is an SQLite database but no arrival store"
                + (tables.isEmpty ? " (it is marked by another application)" : " (it holds \(shown))"),
            context: "opening the store '\(path)'",
            hint: "arrival leaves it untouched. Pass --db with an arrival store, or with a new file name to make one.",
            path: path)
    }

    /// Fails with a message a user can act on when the store's directory is
    /// missing (SQLite would say only "unable to open database file").
    private static func checkDirectory(of path: String) throws(DatabaseError) {
        guard path != ":memory:", !path.isEmpty else { return }
        let directory = path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) : "."
        let checked = directory.isEmpty ? "/" : directory
        var info = stat()
        if stat(checked, &info) != 0 {
            throw DatabaseError(
                code: SQLITE_CANTOPEN, message: "the directory '\(checked)' of the store '\(path)' does not exist",
                context: "opening the store '\(path)'",
                hint: "create it (mkdir -p '\(checked)'), or pass --db with a file in an existing directory.",
                path: path)
        }
        if info.st_mode & S_IFMT != S_IFDIR {
            throw DatabaseError(
                code: SQLITE_CANTOPEN, message: "'\(checked)' in the store's path '\(path)' is not a directory",
                context: "opening the store '\(path)'", hint: "pass --db with a file in an existing directory.",
                path: path)
        }
    }

    func recordStatements() throws(DatabaseError) -> RecordStatements {
        if let cachedStatements { return cachedStatements }
        let made = try RecordStatements(connection: connection)
        cachedStatements = made
        return made
    }
}

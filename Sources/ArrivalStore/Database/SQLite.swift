public import CSQLite
import Foundation

/// A failed SQLite call, with the statement or step it came from.
public struct DatabaseError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var context: String
    /// What to do, when the store knows better than general advice (see
    /// `DatabaseError+Diagnostic.swift`).
    public var hint: String?
    /// The store's path, when the error is about the store as a whole.
    public var path: String?

    /// The store's file could not be opened (SQLITE_CANTOPEN): it is not there to be reached.
    package var cannotOpen: Bool { code & 0xFF == SQLITE_CANTOPEN }

    public var description: String {
        if hint != nil { return message }
        return "SQLite error \(code) (\(message)) while \(context)"
    }
}

/// A thin owner of one `sqlite3` connection from the system's libsqlite3.
/// Not thread-safe: one thread at a time.
@usableFromInline
final class Connection {
    let handle: OpaquePointer
    /// Held by whichever thread uses the connection while a cursor's rows
    /// are read on another (``Statement/forEachFetchedRow(kinds:_:)``).
    let lock = NSLock()

    /// Process-wide settings, applied once before the first connection opens.
    private static let configured: Bool = {
        _ = csqlite_disable_memstatus()
        return true
    }()

    /// Opens `path`, creating it when `create`; `immutable` (read-only only)
    /// reads it as a file nobody changes: no locks, no shared-memory file
    /// (see ``SQLiteStore/init(readingAt:)``).
    init(path: String, readOnly: Bool = false, create: Bool = true, immutable: Bool = false) throws(DatabaseError) {
        _ = Self.configured
        var db: OpaquePointer?
        var flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
            | SQLITE_OPEN_NOMUTEX
        var name = path
        if immutable {
            flags |= SQLITE_OPEN_URI
            // A URI's path: only %, ? and # need escaping.
            let escaped = path.replacingOccurrences(of: "%", with: "%25")
                .replacingOccurrences(of: "?", with: "%3f").replacingOccurrences(of: "#", with: "%23")
            name = "file:" + escaped + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw DatabaseError(code: rc, message: message, context: "opening '\(path)'")
        }
        handle = db
        self.path = path
        sqlite3_busy_timeout(db, Int32(clamping: Connection.busyTimeoutMilliseconds))
    }

    /// How long a statement waits for another connection's lock before it
    /// fails with `SQLITE_BUSY`: long enough for another process's batch of
    /// whole files (a file is one transaction, so a large one holds the lock
    /// while it is written). `ARRIVAL_BUSY_TIMEOUT_MS` overrides it.
    static let busyTimeoutMilliseconds: Int = {
        if let text = ProcessInfo.processInfo.environment["ARRIVAL_BUSY_TIMEOUT_MS"], let value = Int(text), value >= 0
        {
            return value
        }
        return 600_000
    }()

    /// Runs `body` again while it fails with `SQLITE_BUSY`, for at most the
    /// busy timeout: for the calls where SQLite returns busy at once instead
    /// of waiting (changing the journal mode of a file another process is
    /// setting up).
    func retryingWhileBusy(_ body: () throws(DatabaseError) -> Void) throws(DatabaseError) {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Connection.busyTimeoutMilliseconds)
        while true {
            do {
                return try body()
            } catch  where error.code & 0xFF == SQLITE_BUSY && clock.now < deadline {
                usleep(10_000)
            }
        }
    }

    /// The file this connection opened.
    let path: String

    /// The error for a failed call: a lock that outlasted the busy timeout
    /// says who holds it and what to do.
    func failure(_ rc: Int32, context: String) -> DatabaseError {
        if rc & 0xFF == SQLITE_BUSY {
            let waited = Connection.busyTimeoutMilliseconds
            let shown = waited < 10_000 ? "\(waited) ms" : "\(waited / 1000) s"
            return DatabaseError(
                code: rc,
                message: "another arrival process is writing the store '\(path)' (waited \(shown) for its lock)",
                context: context,
                hint: "run again when it has finished (the other ingest or collector); nothing of this run's "
                    + "unfinished file was stored. ARRIVAL_BUSY_TIMEOUT_MS sets how long to wait.",
                path: path)
        }
        return DatabaseError(code: rc, message: lastError, context: context)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws(DatabaseError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            let statement = sql.split(separator: "\n").first.map(String.init) ?? sql
            let context = "running \(statement.trimmingCharacters(in: .whitespaces).prefix(80))"
            if rc & 0xFF == SQLITE_BUSY { throw failure(rc, context: context) }
            throw DatabaseError(code: rc, message: message, context: context)
        }
    }

    @usableFromInline
    func prepare(_ sql: String) throws(DatabaseError) -> Statement {
        try Statement(connection: self, sql: sql)
    }

    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last row an INSERT on this connection added.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }
}

/// A prepared statement, reused across rows: bind, step, reset.
///
/// The type is `package` so the row views of ``StoreSnapshot`` can name it;
/// its calls stay internal to the store.
public final class Statement {
    @usableFromInline let handle: OpaquePointer
    unowned let connection: Connection
    let sql: String
    /// Whether a parameter points at memory the caller owns (``bindStaticText(_:_:count:)``)
    /// since the bindings were last cleared.
    private var holdsStaticText = false

    init(connection: Connection, sql: String) throws(DatabaseError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw connection.failure(rc, context: "preparing \(sql.prefix(120))")
        }
        self.handle = stmt
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    @inline(__always)
    func bind(_ index: Int32, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(handle, index)
            return
        }
        value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                _ = sqlite3_bind_text(
                    handle, index, chars.baseAddress ?? emptyCString, Int32(chars.count), csqlite_transient())
            }
        }
    }

    @inline(__always)
    func bindNull(_ index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    /// Binds `count` bytes at `text` without copying them: they must stay
    /// unchanged until the statement is stepped and rebound or cleared.
    @inline(__always)
    func bindStaticText(_ index: Int32, _ text: UnsafeRawPointer, count: Int32) {
        holdsStaticText = true
        sqlite3_bind_text(handle, index, text.assumingMemoryBound(to: CChar.self), count, nil)
    }

    /// Lets go of memory the parameters point at (``bindStaticText(_:_:count:)``);
    /// a statement that holds none is left as it is: the ingest clears every
    /// statement of a record kind after each batch, used or not, and a 64-row
    /// insert has 1,344 parameters to walk for nothing.
    func clearBindings() {
        guard holdsStaticText else { return }
        holdsStaticText = false
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows.
    func run() throws(DatabaseError) {
        defer { sqlite3_reset(handle) }
        let rc = sqlite3_step(handle)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else {
            throw connection.failure(rc, context: "running \(sql.prefix(120))")
        }
    }

    /// Steps once; returns whether a row is available. Call ``reset()`` when done.
    func step() throws(DatabaseError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        sqlite3_reset(handle)
        throw connection.failure(rc, context: "querying \(sql.prefix(120))")
    }

    func reset() {
        sqlite3_reset(handle)
    }

    // The column readers are `@inlinable`: the analysis (another module)
    // calls them for every column of every row.
    @inlinable
    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    @inlinable
    func optionalInt(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    @inlinable
    func string(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Runs a query and calls `body` for each row.
    @usableFromInline
    func forEachRow(_ body: (Statement) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while try step() { try body(self) }
    }
}

/// One NUL byte: the address to bind an empty string at (a null pointer would bind SQL NULL).
nonisolated(unsafe) let emptyCString: UnsafePointer<CChar> = {
    let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return UnsafePointer(pointer)
}()

extension DatabaseError {
    /// An error with SQLite's result code `code` (what callers outside this module classify by, as the tests do).
    package init(resultCode code: Int32, message: String, context: String) {
        self.init(code: code, message: message, context: context)
    }
}

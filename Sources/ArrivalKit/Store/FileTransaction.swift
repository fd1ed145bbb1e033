/// The savepoint of one file being ingested. Records are inserted with
/// prepared statements reused for every row; ``commit(lines:gzip:)`` writes
/// the file's registry counts and releases the file into the store's batch
/// transaction, ``rollback()`` leaves no trace of it.
final class FileTransaction {
    private let store: Store
    let fileID: Int64
    private(set) var inserted = 0
    private(set) var duplicates = 0
    private(set) var malformed = 0
    private var finished = false

    private let statements: RecordStatements

    init(store: Store, fileID: Int64) throws(DatabaseError) {
        self.store = store
        self.fileID = fileID
        self.statements = try store.recordStatements()
    }

    /// Stores `record` unless an equal record is already stored; returns
    /// whether it was new. `key` overrides the record's own (tests use it to
    /// force a collision).
    @discardableResult
    func insert(_ record: Record, key: UInt64? = nil) throws(DatabaseError) -> Bool {
        let new = try statements.insert(record, fileID: fileID, key: key)
        if new { inserted += 1 } else { duplicates += 1 }
        return new
    }

    /// Stores every row of `batch` that is not already stored; returns how
    /// many of each kind were new (indexed by ``RecordKind/index``).
    func insertRows(of batch: RowBatch) throws(DatabaseError) -> [Int] {
        var new = [0, 0, 0]
        try statements.insertRows(of: batch, fileID: fileID) { row, isNew in
            if isNew { new[row.kind.index] += 1 }
        }
        let total = new[0] + new[1] + new[2]
        inserted += total
        duplicates += batch.rows.count - total
        return new
    }

    func addMalformed(line: Int, cause: MalformedCause) throws(DatabaseError) {
        statements.malformed.bind(1, fileID)
        statements.malformed.bind(2, Int64(line))
        statements.malformed.bind(3, cause.rawValue)
        try statements.malformed.run()
        malformed += 1
    }

    func commit(lines: Int, gzip: Bool) throws(DatabaseError) {
        let statement = statements.finishFile
        statement.bind(1, Int64(lines))
        statement.bind(2, Int64(inserted))
        statement.bind(3, Int64(duplicates))
        statement.bind(4, Int64(malformed))
        statement.bind(5, Int64(gzip ? 1 : 0))
        statement.bind(6, fileID)
        try statement.run()
        try statements.release.run()
        finished = true
    }

    func rollback() {
        guard !finished else { return }
        try? store.connection.execute("ROLLBACK TO arrival_file; RELEASE arrival_file")
        finished = true
    }

    deinit {
        rollback()
    }
}

/// The prepared statements of ingest, made once per store and reused for every row.
final class RecordStatements {
    private let insertAPNS: Statement
    private let sameAPNS: Statement
    private let insertRender: Statement
    private let sameRender: Statement
    private let insertCallback: Statement
    private let sameCallback: Statement
    let malformed: Statement
    // The per-file statements of the registry, also made once: a device tree
    // has tens of thousands of small files.
    let fileStatus: Statement
    let insertFile: Statement
    let finishFile: Statement
    let savepoint: Statement
    let release: Statement
    private let connection: Connection

    init(connection: Connection) throws(DatabaseError) {
        self.connection = connection
        let apnsColumns = ["apns_id", "sent_at", "status", "reason", "push_token", "activity_id", "seq", "event",
                           "aps_timestamp", "payload_bytes", "topic", "push_type", "priority", "environment", "latency_ms"]
        let renderColumns = ["activity_id", "seq", "rendered_at", "surface", "device_id", "os_version", "device_model",
                             "app_version"]
        let callbackColumns = ["callback", "activity_id", "push_token", "seq", "state", "received_at", "device_id",
                               "os_version", "device_model", "app_version"]
        func insert(_ table: String, _ columns: [String]) throws(DatabaseError) -> Statement {
            let placeholders = Array(repeating: "?", count: columns.count + 2).joined(separator: ", ")
            return try connection.prepare("""
                INSERT INTO \(table) (record_key, file_id, \(columns.joined(separator: ", ")))
                VALUES (\(placeholders)) ON CONFLICT (record_key) DO NOTHING
                """)
        }
        // `IS` compares NULL equal to NULL: the contract's "absent equal to null".
        func same(_ table: String, _ columns: [String]) throws(DatabaseError) -> Statement {
            let conditions = columns.enumerated().map { "\($0.element) IS ?\($0.offset + 3)" }
            return try connection.prepare("""
                SELECT 1 FROM \(table) WHERE record_key = ?1 AND \(conditions.joined(separator: " AND "))
                """)
        }
        insertAPNS = try insert("apns", apnsColumns)
        sameAPNS = try same("apns", apnsColumns)
        insertRender = try insert("renders", renderColumns)
        sameRender = try same("renders", renderColumns)
        insertCallback = try insert("callbacks", callbackColumns)
        sameCallback = try same("callbacks", callbackColumns)
        malformed = try connection.prepare("INSERT INTO malformed_lines (file_id, line, cause) VALUES (?, ?, ?)")
        fileStatus = try connection.prepare("SELECT path FROM files WHERE content_sha256 = ?")
        insertFile = try connection.prepare("""
            INSERT INTO files (content_sha256, path, byte_count, gzip, line_count, record_count,
                               duplicate_count, malformed_count, ingested_at)
            VALUES (?, ?, ?, ?, 0, 0, 0, 0, ?)
            """)
        finishFile = try connection.prepare("""
            UPDATE files SET line_count = ?, record_count = ?, duplicate_count = ?, malformed_count = ?, gzip = ?
            WHERE id = ?
            """)
        savepoint = try connection.prepare("SAVEPOINT arrival_file")
        release = try connection.prepare("RELEASE arrival_file")
    }

    /// Stores `record` unless an equal one is stored; `key` overrides its
    /// own (tests use it to force a collision).
    func insert(_ record: Record, fileID: Int64, key: UInt64? = nil) throws(DatabaseError) -> Bool {
        var batch = RowBatch(capacity: 1)
        batch.append(record)
        var new = false
        try insertRows(of: batch, fileID: fileID, keys: key.map { [$0] }) { _, isNew in new = isNew }
        return new
    }

    func insert(_ r: APNSRecord, fileID: Int64, key: UInt64? = nil) throws(DatabaseError) -> Bool {
        try insert(.apns(r), fileID: fileID, key: key)
    }

    /// Inserts the rows of `batch`, binding strings straight from its arena,
    /// and tells `done` whether each was new.
    func insertRows(
        of batch: RowBatch, fileID: Int64, keys: [UInt64]? = nil, _ done: (RowBatch.Row, Bool) -> Void
    ) throws(DatabaseError) {
        try batch.bytes.withUnsafeBufferPointer { (arena) throws(DatabaseError) in
            // The arena is never empty-addressed: an empty string binds as '' not NULL.
            let base = UnsafeRawPointer(arena.baseAddress ?? UnsafePointer(emptyBytes))
            for (index, row) in batch.rows.enumerated() {
                let cells = batch.cells(of: row)
                let (insert, same) = statements(for: row.kind)
                let new = try insertProbing(key: keys?[index] ?? row.key, insert: insert, same: same, fileID: fileID) { s in
                    s.bind(cells, from: 3, arena: base)
                }
                done(row, new)
            }
        }
        // The arena goes back to the reader: leave no statement pointing into it.
        for statement in [insertAPNS, sameAPNS, insertRender, sameRender, insertCallback, sameCallback] {
            statement.clearBindings()
        }
    }

    private func statements(for kind: RecordKind) -> (insert: Statement, same: Statement) {
        switch kind {
        case .apns: (insertAPNS, sameAPNS)
        case .render: (insertRender, sameRender)
        case .callback: (insertCallback, sameCallback)
        }
    }

    /// Inserts at `key`; when the key is taken, either by an equal record (a
    /// duplicate) or, rarely, by a different record with the same hash (then
    /// the next key is tried: open addressing, so lookups stay exact).
    private func insertProbing(
        key: UInt64, insert: Statement, same: Statement, fileID: Int64, bindFields: (Statement) -> Void
    ) throws(DatabaseError) -> Bool {
        var slot = Int64(bitPattern: key)
        bindFields(insert)
        insert.bind(2, fileID)
        while true {
            insert.bind(1, slot)
            try insert.run()
            if connection.changes > 0 { return true }
            bindFields(same)
            same.bind(1, slot)
            let equal = try same.step()
            same.reset()
            if equal { return false }
            slot = slot &+ 1
        }
    }
}

nonisolated(unsafe) private let emptyBytes: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}()

extension Statement {
    /// Binds `cells` to the parameters from `first` on; strings point into
    /// `arena`, which must outlive the statement's next step (SQLITE_STATIC).
    @inline(__always)
    func bind(_ cells: ArraySlice<RowBatch.Cell>, from first: Int32, arena: UnsafeRawPointer) {
        var index = first
        for cell in cells {
            switch cell {
            case .int(let value): bind(index, value)
            case .noInt, .noText: bindNull(index)
            case .text(let offset, let count): bindStaticText(index, arena + Int(offset), count: count)
            }
            index += 1
        }
    }
}

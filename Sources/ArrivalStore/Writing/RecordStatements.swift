import ArrivalHandOff
import ArrivalModel

/// The stored record a row was found equal to: its key and its row's id.
struct StoredRecord: Equatable {
    var key: Int64
    var id: Int64
}

/// The prepared statements of ingest, made once per store and reused for every row.
final class RecordStatements {
    /// The statements that store rows of one kind.
    final class KindStatements {
        let kind: RecordKind
        /// Inserts of 64 and of 8 rows at once, largest first: one statement
        /// run per many rows spares SQLite its per-run work (opening cursors,
        /// checking the schema, halting); see Benchmarks/README.md.
        let multi: [(rows: Int, statement: Statement)]
        let single: Statement
        /// The id of the row stored at a key, when it equals the row bound.
        let same: Statement
        /// The keys of the rows with ids in a range: the rows one multi-row
        /// insert added, when it skipped some.
        let keysInRange: Statement

        init(kind: RecordKind, connection: Connection) throws(DatabaseError) {
            self.kind = kind
            let table = kind.table
            let columns = kind.columns
            func insert(rows: Int) throws(DatabaseError) -> Statement {
                let row = "(" + Array(repeating: "?", count: columns.count + 2).joined(separator: ", ") + ")"
                let values = Array(repeating: row, count: rows).joined(separator: ", ")
                let names = "record_key, file_id, " + columns.joined(separator: ", ")
                // A single row aborts on a NOT NULL or CHECK violation. Many rows
                // at once skip any row that breaks a constraint (OR IGNORE), so
                // the statement can never stop half done and SQLite keeps no
                // statement journal for it; a skipped row is then retried
                // alone, which either finds it a duplicate or fails loudly.
                return try connection.prepare(
                    rows == 1
                        // No conflict target (the key is the only unique column bound), so that
                        // it is made even while the key's index is put off, when it is not used.
                        ? "INSERT INTO \(table) (\(names)) VALUES \(values) ON CONFLICT DO NOTHING"
                        : "INSERT OR IGNORE INTO \(table) (\(names)) VALUES \(values)")
            }
            multi = [(64, try insert(rows: 64)), (8, try insert(rows: 8))]
            single = try insert(rows: 1)
            let row = "(" + Array(repeating: "?", count: columns.count + 2).joined(separator: ", ") + ")"
            let names = "record_key, file_id, " + columns.joined(separator: ", ")
            ignoringOne = try connection.prepare("INSERT OR IGNORE INTO \(table) (\(names)) VALUES \(row)")
            strictOne = try connection.prepare("INSERT INTO \(table) (\(names)) VALUES \(row)")
            // `IS` compares NULL equal to NULL: the contract's "absent equal to null".
            let conditions = columns.enumerated().map { "\($0.element) IS ?\($0.offset + 3)" }
            same = try connection.prepare(
                """
                SELECT id FROM \(table) WHERE record_key = ?1 AND \(conditions.joined(separator: " AND "))
                """)
            keysInRange = try connection.prepare("SELECT record_key FROM \(table) WHERE id BETWEEN ? AND ?")
            sameAt = try connection.prepare(
                """
                SELECT 1 FROM \(table) WHERE id = ?1 AND \(conditions.joined(separator: " AND "))
                """)
        }

        // While the key indexes are put off (``DeferredKeyIndex``), where
        // `single` and `same` cannot be used: an insert of one row that
        // skips it on a constraint, one that fails on it, and whether the
        // row with an id equals the row bound.
        let ignoringOne: Statement
        let strictOne: Statement
        let sameAt: Statement

        var all: [Statement] { multi.map(\.statement) + [single, same, keysInRange, ignoringOne, strictOne, sameAt] }
    }

    private let apns: KindStatements
    private let renders: KindStatements
    private let callbacks: KindStatements
    let malformed: Statement
    let repeated: Statement
    // The per-file statements of the registry, also made once: a device tree
    // has tens of thousands of small files.
    let fileStatus: Statement
    let insertFile: Statement
    let finishFile: Statement
    let savepoint: Statement
    let release: Statement
    /// Which of the `record_key` indexes the store has (``ensureKeyIndexes()``).
    let keyIndexNames: Statement
    /// The largest ids of the record tables.
    private let lastIDs: Statement
    /// The deletes that undo a file that only added rows, in the order run.
    private let undoFile: [Statement]
    let connection: Connection
    /// The unique indexes on `record_key` while they are put off, and the
    /// keys kept in their stead (nil: the indexes are there).
    var deferred: DeferredKeyIndex?

    init(connection: Connection) throws(DatabaseError) {
        self.connection = connection
        apns = try KindStatements(kind: .apns, connection: connection)
        renders = try KindStatements(kind: .render, connection: connection)
        callbacks = try KindStatements(kind: .callback, connection: connection)
        repeated = try connection.prepare(
            """
            INSERT INTO record_repeats (file_id, kind, record_id, repeats) VALUES (?, ?, ?, 1)
            ON CONFLICT (file_id, kind, record_id) DO UPDATE SET repeats = repeats + 1
            """)
        malformed = try connection.prepare(
            "INSERT INTO malformed_lines (file_id, line, cause, problem) VALUES (?, ?, ?, ?)")
        fileStatus = try connection.prepare("SELECT path FROM files WHERE content_sha256 = ?")
        insertFile = try connection.prepare(
            """
            INSERT INTO files (content_sha256, path, byte_count, gzip, line_count, record_count,
                               duplicate_count, malformed_count, ingested_at)
            VALUES (?, ?, 0, 0, 0, 0, 0, 0, ?)
            """)
        finishFile = try connection.prepare(
            """
            UPDATE files SET content_sha256 = ?, byte_count = ?, line_count = ?, record_count = ?, duplicate_count = ?,
                             malformed_count = ?, gzip = ?
            WHERE id = ?
            """)
        keyIndexNames = try connection.prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND name IN ("
                + Migrations.recordKeyIndexNames.map { "'\($0)'" }.joined(separator: ", ") + ")")
        savepoint = try connection.prepare("SAVEPOINT arrival_file")
        release = try connection.prepare("RELEASE arrival_file")
        lastIDs = try connection.prepare(
            """
            SELECT (SELECT max(id) FROM apns), (SELECT max(id) FROM renders), (SELECT max(id) FROM callbacks)
            """)
        // ?1 the largest id before the file, ?2 its file id. Each is a range
        // of a primary key (those of record_repeats and malformed_lines begin
        // with file_id).
        undoFile = try [
            "DELETE FROM apns WHERE id > ?1 AND file_id = ?2",
            "DELETE FROM renders WHERE id > ?1 AND file_id = ?2",
            "DELETE FROM callbacks WHERE id > ?1 AND file_id = ?2",
            "DELETE FROM record_repeats WHERE file_id = ?2",
            "DELETE FROM malformed_lines WHERE file_id = ?2",
            "DELETE FROM files WHERE id = ?2",
        ].map { (sql) throws(DatabaseError) in try connection.prepare(sql) }
    }

    /// The largest id of each record table (0 when empty): rows added later
    /// have larger ones.
    struct RowIDs: Equatable {
        var apns: Int64
        var renders: Int64
        var callbacks: Int64
    }

    func lastRowIDs() throws(DatabaseError) -> RowIDs {
        defer { lastIDs.reset() }
        guard try lastIDs.step() else { return RowIDs(apns: 0, renders: 0, callbacks: 0) }
        return RowIDs(apns: lastIDs.int(0), renders: lastIDs.int(1), callbacks: lastIDs.int(2))
    }

    /// Deletes the rows file `fileID` added after `last`, and its registry row.
    func deleteRows(after last: RowIDs, fileID: Int64) throws(DatabaseError) {
        let after = [last.apns, last.renders, last.callbacks, 0, 0, 0]
        for (statement, id) in zip(undoFile, after) {
            statement.bind(1, id)
            statement.bind(2, fileID)
            try statement.run()
        }
        deferred?.forgetRows(after: [last.apns, last.renders, last.callbacks])
    }

    /// Stores `record` unless an equal one is stored; `key` overrides its
    /// own (tests use it to force a collision).
    func insert(_ record: Record, fileID: Int64, key: UInt64? = nil) throws(DatabaseError) -> Bool {
        var batch = RowBatch(capacity: 1)
        batch.append(record)
        var new = false
        try insertRows(of: batch, fileID: fileID, keys: key.map { [$0] }) { _, stored in new = stored == nil }
        return new
    }

    /// Inserts the rows of `batch`, binding strings straight from its arena,
    /// and tells `done`, in row order, for each row nil when it was new, or
    /// the equal record already stored. `keys`
    /// overrides the rows' own keys (tests use it to force collisions).
    ///
    /// Runs of rows of one kind go in by 64 or 8 at a time. When such an
    /// insert adds fewer rows than it was given, the keys it did add are read
    /// back (its rows have consecutive ids) and each row it skipped goes
    /// through ``insertProbing``: a duplicate, or a collision moved on to the
    /// next free key.
    func insertRows(
        of batch: RowBatch, fileID: Int64, keys: [UInt64]? = nil,
        _ done: (_ row: RowBatch.Row, _ stored: StoredRecord?) throws(DatabaseError) -> Void
    ) throws(DatabaseError) {
        guard batch.keyed == batch.rows.count else {
            // The reader computes the keys before handing a batch on; a batch
            // that missed it is keyed here rather than stored under key 0.
            assertionFailure("a batch reached the store before RowBatch.computeKeys()")
            var keyedBatch = batch
            keyedBatch.computeKeys()
            return try insertRows(of: keyedBatch, fileID: fileID, keys: keys, done)
        }
        if deferred != nil { try makeRoomForKeys(of: batch) }
        let rows = batch.rows
        // The kinds whose statements were bound (indexed by ``RecordKind/index``).
        var bound = [false, false, false]
        // The arena goes back to the reader: leave no statement pointing into it.
        defer {
            for statements in [apns, renders, callbacks] where bound[statements.kind.index] {
                for statement in statements.all { statement.clearBindings() }
            }
        }
        try batch.bytes.withUnsafeBufferPointer { (arena) throws(DatabaseError) in
            // The arena is never empty-addressed: an empty string binds as '' not NULL.
            let base = arena.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(emptyCString)
            func key(_ index: Int) -> Int64 { Int64(bitPattern: keys?[index] ?? rows[index].key) }
            var index = 0
            while index < rows.count {
                let statements = self.statements(for: rows[index].kind)
                bound[statements.kind.index] = true
                var run = 1
                while index + run < rows.count, run < 64, rows[index + run].kind == statements.kind { run += 1 }
                let span = index..<(index + run)
                if let deferred, try deferred.keepsKeys(of: statements.kind, keys: span.lazy.map(key), statements: self)
                {
                    try insertRunDeferred(
                        span, of: batch, fileID: fileID, keys: keys, arena: base, directory: deferred, done)
                    index += run
                    continue
                }
                guard let (count, insert) = statements.multi.first(where: { $0.rows <= run }) else {
                    let row = rows[index]
                    let stored = try insertProbing(
                        key: key(index), hash: row.hash, statements: statements, fileID: fileID
                    ) { s in
                        s.bind(batch.cells(of: row), from: 3, arena: base)
                    }
                    try done(row, stored)
                    index += 1
                    continue
                }
                let stride = Int32(statements.kind.columnCount + 2)
                for offset in 0..<count {
                    let first = Int32(offset) * stride
                    insert.bind(first + 1, key(index + offset))
                    insert.bind(first + 2, fileID)
                    insert.bind(batch.cells(of: rows[index + offset]), from: first + 3, arena: base)
                }
                try insert.run()
                let added = connection.changes
                if added == count {
                    for offset in 0..<count { try done(rows[index + offset], nil) }
                } else {
                    var addedKeys: Set<Int64> = []
                    if added > 0 {
                        let last = connection.lastInsertRowID
                        let range = statements.keysInRange
                        range.bind(1, last - Int64(added) + 1)
                        range.bind(2, last)
                        defer { range.reset() }
                        while try range.step() { addedKeys.insert(range.int(0)) }
                    }
                    for offset in 0..<count {
                        let row = rows[index + offset]
                        // The first row with an added key is the one that added it.
                        if addedKeys.remove(key(index + offset)) != nil {
                            try done(row, nil)
                            continue
                        }
                        let stored = try insertProbing(
                            key: key(index + offset), hash: row.hash, statements: statements, fileID: fileID
                        ) {
                            s in
                            s.bind(batch.cells(of: row), from: 3, arena: base)
                        }
                        try done(row, stored)
                    }
                    assert(addedKeys.isEmpty, "every row a multi-row insert added is one of its rows")
                }
                index += count
            }
        }
    }

    func statements(for kind: RecordKind) -> KindStatements {
        switch kind {
        case .apns: apns
        case .render: renders
        case .callback: callbacks
        }
    }

    /// Inserts one row at `key`; when the key is taken, either by an equal
    /// record (a duplicate) or, rarely, by a different record with the same
    /// key (then the next key is tried, ``nextRecordKey(after:hash:)``: open
    /// addressing, so lookups stay exact). Returns nil when the row was new,
    /// else the equal record stored before.
    private func insertProbing(
        key: Int64, hash: UInt64, statements: KindStatements, fileID: Int64, bindFields: (Statement) -> Void
    ) throws(DatabaseError) -> StoredRecord? {
        let insert = statements.single
        let same = statements.same
        var slot = key
        bindFields(insert)
        insert.bind(2, fileID)
        while true {
            insert.bind(1, slot)
            try insert.run()
            if connection.changes > 0 { return nil }
            bindFields(same)
            same.bind(1, slot)
            let equal = try same.step()
            let id = equal ? same.int(0) : 0
            same.reset()
            if equal { return StoredRecord(key: slot, id: id) }
            slot = Int64(bitPattern: nextRecordKey(after: UInt64(bitPattern: slot), hash: hash))
        }
    }
}

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

import ArrivalHandOff
import ArrivalModel
import CSQLite

extension Migrations {
    /// Migrations that are code, not SQL: run after their entry's SQL, in the
    /// same transaction.
    static func code(_ name: String, connection: Connection) throws(DatabaseError) {
        switch name {
        case "0011_record_keys_by_window": try rekeyRecords(connection)
        default: break
        }
    }

    /// Every stored record's `record_key` computed again by
    /// ``recordKey(time:hash:)`` as it is now (the time's window and 42 bits
    /// of the content hash, where it was the millisecond and 20 bits), so
    /// that a record ingested from now on finds its stored equal at the
    /// key it computes. The unique indexes are dropped while the keys
    /// change (an old key may equal a new one) and made again after.
    ///
    /// Rows are read in id order, a batch at a time, and hashed as ingest
    /// hashes them; a key another row took in this pass sends a row on to
    /// the next one (``nextRecordKey(after:hash:)``), as ingest would. The
    /// new keys wait in a temporary table, so memory stays one batch
    /// whatever the store's size.
    static func rekeyRecords(_ connection: Connection) throws(DatabaseError) {
        for kind in RecordKind.allCases {
            let index = recordKeyIndexNames[kind.index]
            let existed = try connection.prepare(
                "SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = '\(index)'"
            ).step()
            try connection.execute(
                """
                DROP INDEX IF EXISTS \(index);
                CREATE TEMP TABLE arrival_rekey (id INTEGER PRIMARY KEY, record_key INTEGER NOT NULL UNIQUE);
                """)
            try computeKeys(of: kind, connection: connection)
            try connection.execute(
                """
                UPDATE \(kind.table) SET record_key = arrival_rekey.record_key
                    FROM temp.arrival_rekey WHERE arrival_rekey.id = \(kind.table).id;
                DROP TABLE temp.arrival_rekey;
                """)
            if existed { try connection.execute("CREATE UNIQUE INDEX \(index) ON \(kind.table) (record_key)") }
        }
    }

    /// Fills `temp.arrival_rekey` with each row of `kind`'s table and its new key.
    private static func computeKeys(of kind: RecordKind, connection: Connection) throws(DatabaseError) {
        // The columns of migrations after this one (`frequent_pushes`, 0013) do not exist yet: read as NULL,
        // which the hash leaves out (``RecordKind/laterColumns``).
        let columns = kind.columns.map { $0 == "frequent_pushes" ? "NULL" : $0 }
        let read = try connection.prepare(
            "SELECT id, \(columns.joined(separator: ", ")) FROM \(kind.table) WHERE id > ? ORDER BY id LIMIT 4096")
        let insert = try connection.prepare("INSERT OR IGNORE INTO temp.arrival_rekey (id, record_key) VALUES (?, ?)")
        let integer = kind.integerColumns
        var batch = RowBatch(capacity: 4096)
        var ids: [Int64] = []
        var last: Int64 = 0
        while true {
            batch.removeAll()
            ids.removeAll(keepingCapacity: true)
            read.bind(1, last)
            while try read.step() {
                ids.append(read.int(0))
                let mark = batch.mark
                for column in 0..<kind.columnCount {
                    let index = Int32(column + 1)
                    if sqlite3_column_type(read.handle, index) == SQLITE_NULL {
                        batch.append(integer.contains(column) ? .noInt : .noText)
                    } else if integer.contains(column) {
                        batch.append(.int(read.int(index)))
                    } else {
                        let text = sqlite3_column_text(read.handle, index)
                        let count = Int(sqlite3_column_bytes(read.handle, index))
                        batch.appendText(UnsafeBufferPointer(start: text, count: count))
                    }
                }
                batch.finishRow(mark, kind: kind, line: ids.count)
            }
            read.reset()
            guard let lastID = ids.last else { return }
            last = lastID
            batch.computeKeys()
            for (row, id) in zip(batch.rows, ids) {
                var key = row.key
                while true {
                    insert.bind(1, id)
                    insert.bind(2, Int64(bitPattern: key))
                    try insert.run()
                    if connection.changes > 0 { break }
                    key = nextRecordKey(after: key, hash: row.hash)
                }
            }
        }
    }
}

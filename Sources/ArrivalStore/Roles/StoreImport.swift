import ArrivalModel

/// Rows copied into a new SQLite store as another engine's store holds them:
/// `arrival files` reads a PostgreSQL store's registry (and, for a removal's
/// plan, its records) from a local copy of one consistent snapshot
/// (`ArrivalPostgres`, `PostgresSnapshot`), with the SQLite store's own
/// listing and plan. Reports read the engine in place (``StoreReader``).
///
/// Rows keep their ids, so their order is the other store's. A record's
/// `record_key` (the de-duplication key of a SQLite store's own ingest) is
/// its id: a copy is read, never ingested into.
package final class StoreImport {
    /// The tables rows are copied into, with their columns in binding order.
    package enum Table: CaseIterable, Sendable {
        case files, skippedFiles, malformedLines, recordRepeats, apns, renders, callbacks

        package var name: String {
            switch self {
            case .files: "files"
            case .skippedFiles: "skipped_files"
            case .malformedLines: "malformed_lines"
            case .recordRepeats: "record_repeats"
            case .apns: "apns"
            case .renders: "renders"
            case .callbacks: "callbacks"
            }
        }

        /// The columns given, in order (a record table's are `id`, `file_id`,
        /// then its kind's contract fields, ``RecordKind/columns``).
        package var columns: [String] {
            switch self {
            case .files:
                [
                    "id", "content_sha256", "path", "byte_count", "gzip", "line_count", "record_count",
                    "duplicate_count", "malformed_count", "ingested_at",
                ]
            case .skippedFiles: ["content_sha256", "path", "first_seen_at"]
            case .malformedLines: ["file_id", "line", "cause", "problem"]
            case .recordRepeats: ["file_id", "kind", "record_id", "repeats"]
            case .apns: ["id", "file_id"] + RecordKind.apns.columns
            case .renders: ["id", "file_id"] + RecordKind.render.columns
            case .callbacks: ["id", "file_id"] + RecordKind.callback.columns
            }
        }

        /// What fills `record_key`, which every record table requires.
        var recordKey: String? {
            switch self {
            case .apns, .renders, .callbacks: "?1"
            default: nil
            }
        }
    }

    private let store: SQLiteStore
    private var statements: [Statement] = []
    private var open = false

    /// Begins copying into `store`, which must hold nothing yet.
    package init(into store: SQLiteStore) throws(DatabaseError) {
        self.store = store
        for table in Table.allCases {
            let columns = table.columns + (table.recordKey == nil ? [] : ["record_key"])
            let values = (1...table.columns.count).map { "?\($0)" } + (table.recordKey.map { [$0] } ?? [])
            statements.append(
                try store.connection.prepare(
                    "INSERT INTO \(table.name) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
                ))
        }
        try store.connection.execute("PRAGMA foreign_keys = OFF; BEGIN")
        open = true
    }

    /// One value of a row being copied.
    package enum Value: Sendable, Equatable {
        case int(Int64)
        case text(String)
        case null
    }

    /// Copies one row of `table`, its values in ``Table/columns`` order.
    package func insert(into table: Table, _ values: [Value]) throws(DatabaseError) {
        let statement = statements[Table.allCases.firstIndex(of: table)!]
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .int(let number): statement.bind(position, number)
            case .text(let text): statement.bind(position, text)
            case .null: statement.bindNull(position)
            }
        }
        try statement.run()
    }

    /// Commits what was copied.
    package func finish() throws(DatabaseError) {
        guard open else { return }
        open = false
        try store.connection.execute("COMMIT; PRAGMA foreign_keys = ON")
    }

    deinit {
        if open { try? store.connection.execute("ROLLBACK; PRAGMA foreign_keys = ON") }
    }
}

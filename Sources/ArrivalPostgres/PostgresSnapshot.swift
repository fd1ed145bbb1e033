import ArrivalModel
package import ArrivalStore
package import Foundation
import PostgresNIO

/// One consistent snapshot of a PostgreSQL store (a `REPEATABLE READ`
/// transaction) copied through server-side cursors, a bounded number of
/// rows at a time, into a new local SQLite store: what `arrival files`
/// reads (the whole registry, with the SQLite store's own listing and
/// removal plan). The analysis and the reports do not copy: they read the
/// server's tables in place (``PostgresReader``).
package enum PostgresSnapshot {
    /// Rows fetched from a cursor at a time.
    package static let fetchSize = 20_000

    /// What was copied.
    package struct Copied: Sendable, Equatable {
        package var files = 0
        package var records = 0
    }

    /// The file a copy made by ``copyToTemporaryDirectory(from:)`` is in, inside its directory.
    package static let fileName = "snapshot.sqlite"

    /// Copies the store at `location` into ``fileName`` in a new temporary
    /// directory, which the caller removes when done (it is removed here
    /// when the copy fails).
    package static func copyToTemporaryDirectory(from location: PostgresLocation, registryOnly: Bool = false) throws
        -> URL
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "arrival-snapshot-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try copy(
                from: location,
                into: try SQLiteStore(path: directory.appendingPathComponent(fileName).path, throwaway: true),
                registryOnly: registryOnly)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return directory
    }

    /// Copies the store at `location` into `store` (new and empty): all of
    /// it, or with `registryOnly` the file registry alone (`files` and
    /// `skipped_files`: what the listing of `arrival files` reads).
    @discardableResult
    package static func copy(
        from location: PostgresLocation, into store: SQLiteStore,
        environment: [String: String] = ProcessInfo.processInfo.environment, registryOnly: Bool = false
    ) throws -> Copied {
        let session = try PostgresSession(location, environment: environment)
        defer { session.close() }
        guard try session.run("SELECT to_regclass('arrival.migrations') IS NOT NULL").first?.decode(Bool.self) == true
        else {
            throw PostgresStoreError(
                "\(location.redacted): no arrival store in this database yet (run arrival ingest --db URL first)")
        }
        var copied = Copied()
        let target = try StoreImport(into: store)
        try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        defer { try? session.execute("ROLLBACK") }
        for table in StoreImport.Table.allCases where !registryOnly || [.files, .skippedFiles].contains(table) {
            let columns = table.columns
            let integers = columns.map { isInteger($0, in: table) }
            var rows = 0
            let sql = query(for: table)
            try forEachRow(of: sql, on: session) { row in
                var values: [StoreImport.Value] = []
                values.reserveCapacity(columns.count)
                for (index, cell) in row.enumerated() {
                    if integers[index] {
                        values.append(try cell.decode(Int64?.self).map(StoreImport.Value.int) ?? .null)
                    } else {
                        values.append(try cell.decode(String?.self).map(StoreImport.Value.text) ?? .null)
                    }
                }
                try target.insert(into: table, values)
                rows += 1
            }
            switch table {
            case .files: copied.files = rows
            case .apns, .renders, .callbacks: copied.records += rows
            case .skippedFiles, .malformedLines, .recordRepeats: break
            }
        }
        try target.finish()
        return copied
    }

    /// Whether `column` of `table` holds integers (the rest hold text).
    private static func isInteger(_ column: String, in table: StoreImport.Table) -> Bool {
        switch column {
        case "content_sha256", "path", "cause", "problem", "kind": false
        case "id", "file_id", "line", "record_id", "byte_count", "gzip", "line_count", "record_count",
            "duplicate_count", "malformed_count", "ingested_at", "first_seen_at":
            true
        default: RecordKind.integerColumns.contains(column)
        }
    }

    /// The query whose rows are `table`'s, columns in ``StoreImport/Table/columns`` order, in the SQLite store's row order.
    private static func query(for table: StoreImport.Table) -> String {
        let columns = table.columns.map { $0 == "gzip" ? "gzip::int::int8" : $0 }.joined(separator: ", ")
        func union(_ tables: [String]) -> String {
            "SELECT \(columns) FROM ("
                + tables.map { "SELECT \(table.columns.joined(separator: ", ")) FROM arrival.\($0)" }
                .joined(separator: " UNION ALL ") + ") AS rows ORDER BY id"
        }
        switch table {
        case .files: return "SELECT \(columns) FROM arrival.files ORDER BY id"
        case .skippedFiles: return "SELECT \(columns) FROM arrival.skipped_files ORDER BY content_sha256, path"
        case .malformedLines: return "SELECT \(columns) FROM arrival.malformed_lines ORDER BY file_id, line"
        case .recordRepeats:
            // One row per file and record (a store written before repeats were counted has one per line).
            return """
                SELECT file_id, kind, record_id, sum(repeats)::int8 FROM arrival.record_repeats
                GROUP BY file_id, kind, record_id ORDER BY file_id, record_id, kind
                """
        case .apns: return union(["requests", "token_requests", "broadcasts"])
        case .renders: return "SELECT \(columns) FROM arrival.renders ORDER BY id"
        case .callbacks: return union(["callbacks", "start_tokens"])
        }
    }

    /// Every row of `sql`, through a server-side cursor, ``fetchSize`` rows at a time.
    static func forEachRow(
        of sql: String, on session: PostgresSession, _ body: (PostgresRandomAccessRow) throws -> Void
    ) throws {
        try session.execute("DECLARE arrival_copy NO SCROLL CURSOR FOR " + sql)
        while true {
            let rows = try session.run(PostgresQuery(unsafeSQL: "FETCH FORWARD \(fetchSize) FROM arrival_copy"))
            if rows.isEmpty { break }
            for row in rows { try body(row.makeRandomAccess()) }
        }
        try session.execute("CLOSE arrival_copy")
    }
}

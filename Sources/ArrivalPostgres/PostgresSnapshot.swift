package import ArrivalModel
package import ArrivalStore
package import Foundation
import PostgresNIO

/// The reader role on a PostgreSQL store: one consistent snapshot of it
/// (a `REPEATABLE READ` transaction) copied through server-side cursors,
/// a bounded number of rows at a time, into a new local SQLite store that
/// the analysis, the reports, `diff`, `gate` and the listings then read as
/// they read any store. There is one analysis, so a report is the same from
/// either engine byte for byte; memory stays bounded by the cursor's fetch
/// and the analysis's partitions, not by the store (the copy is on disk).
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
    package static func copyToTemporaryDirectory(
        from location: PostgresLocation, relevantTo window: ReportWindow? = nil
    )
        throws -> URL
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "arrival-snapshot-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try copy(
                from: location,
                into: try SQLiteStore(path: directory.appendingPathComponent(fileName).path, throwaway: true),
                relevantTo: window)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        return directory
    }

    /// Copies the store at `location` into `store` (new and empty): all of
    /// it, or (`relevantTo`) what the outcomes of the updates of one window
    /// rest on, and nothing else (``relevantQuery(for:window:)``).
    @discardableResult
    package static func copy(
        from location: PostgresLocation, into store: SQLiteStore,
        environment: [String: String] = ProcessInfo.processInfo.environment, relevantTo window: ReportWindow? = nil
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
        for table in StoreImport.Table.allCases {
            let columns = table.columns
            let integers = columns.map { isInteger($0, in: table) }
            var rows = 0
            let sql = window.map { relevantQuery(for: table, window: $0) } ?? query(for: table)
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

    /// The query whose rows are those of `table` that the outcomes of the
    /// updates in `window` rest on, for a report of that window's updates
    /// (the collector's rates of today), without copying the whole store.
    ///
    /// Every update in the window has a request in it (its time is one of
    /// its requests' `sent_at`), so its activity is one of those the
    /// window's requests name: directly, through the owner of the token a
    /// request was sent to, or as a subscriber of the channel a broadcast
    /// went to (a superset: more activities change no update of the window).
    /// An outcome rests only on its activity's own rows, whenever they came,
    /// and on the requests that reach it: all of those are copied. The
    /// registry tables are not, so a report of such a copy is right in its
    /// updates, rates and breakdowns and says nothing of files.
    static func relevantQuery(for table: StoreImport.Table, window: ReportWindow) -> String {
        let (from, to) = (window.from, window.to)
        let relevant = """
            WITH relevant AS (
                SELECT activity_id FROM arrival.requests WHERE sent_at >= \(from) AND sent_at < \(to)
                UNION
                SELECT o.activity_id FROM arrival.token_requests AS t
                JOIN arrival.token_owner AS o ON o.push_token = t.push_token
                WHERE t.sent_at >= \(from) AND t.sent_at < \(to)
                UNION
                SELECT s.activity_id FROM arrival.broadcasts AS b
                JOIN arrival.channel_subscriptions AS s ON s.channel_id = b.channel_id
                WHERE b.sent_at >= \(from) AND b.sent_at < \(to))
            """
        let columns = table.columns.joined(separator: ", ")
        let ofRelevant = "activity_id IN (SELECT activity_id FROM relevant)"
        switch table {
        case .files, .skippedFiles, .malformedLines, .recordRepeats:
            return "SELECT \(table.columns.map { $0 == "gzip" ? "gzip::int::int8" : $0 }.joined(separator: ", ")) "
                + "FROM arrival.\(table.name) WHERE false"
        case .apns:
            return relevant + """

                SELECT \(columns) FROM (
                    SELECT \(columns) FROM arrival.requests WHERE \(ofRelevant)
                    UNION ALL
                    SELECT \(columns) FROM arrival.token_requests
                    WHERE push_token IN (SELECT push_token FROM arrival.token_owner WHERE \(ofRelevant))
                    UNION ALL
                    SELECT \(columns) FROM arrival.broadcasts
                    WHERE channel_id IN (SELECT channel_id FROM arrival.channel_subscriptions WHERE \(ofRelevant))
                ) AS rows ORDER BY id
                """
        case .renders:
            return relevant + "\nSELECT \(columns) FROM arrival.renders WHERE \(ofRelevant) ORDER BY id"
        case .callbacks:
            return relevant + "\nSELECT \(columns) FROM arrival.callbacks WHERE \(ofRelevant) ORDER BY id"
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

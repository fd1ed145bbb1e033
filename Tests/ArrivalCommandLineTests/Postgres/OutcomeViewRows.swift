import ArrivalModel
import ArrivalPostgres
import ArrivalTestSupport
import PostgresNIO

@testable import ArrivalStore

/// Every row of each outcome view, from a SQLite store and from a PostgreSQL
/// store, as text that compares across the two: columns in order joined by
/// `|`, NULL as `NULL`, PostgreSQL's booleans as SQLite's 1 and 0; ids left
/// out (each engine numbers its rows its own way); rows sorted by their bytes.
enum OutcomeViewRows {
    /// The columns each view of the PostgreSQL store has, by name, with whether each is boolean.
    static func columns(_ url: String) throws -> [String: [(name: String, boolean: Bool)]] {
        let session = try PostgresSession(try PostgresLocation(url: url))
        defer { session.close() }
        var columns: [String: [(name: String, boolean: Bool)]] = [:]
        for row in try session.run(
            """
            SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = 'arrival' AND table_name IN (SELECT table_name FROM information_schema.views
                                                               WHERE table_schema = 'arrival')
            ORDER BY table_name, ordinal_position
            """)
        {
            let (view, column, type) = try row.decode((String, String, String).self)
            if column == "id" { continue }
            columns[view, default: []].append((column, type == "boolean"))
        }
        return columns
    }

    static func postgres(_ url: String, view: String, columns: [(name: String, boolean: Bool)]) throws -> [String] {
        let session = try PostgresSession(try PostgresLocation(url: url))
        defer { session.close() }
        let fields = columns.map { column in
            column.boolean
                ? "CASE WHEN \(column.name) IS NULL THEN 'NULL' WHEN \(column.name) THEN '1' ELSE '0' END"
                : "coalesce(\(column.name)::text, 'NULL')"
        }
        let sql = "SELECT concat_ws('|', \(fields.joined(separator: ", "))) FROM arrival.\(view)"
        return try session.run(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    static func sqlite(_ path: String, view: String, columns: [(name: String, boolean: Bool)]) throws -> [String] {
        let store = try SQLiteStore(path: path)
        let fields = columns.map { "coalesce(CAST(\($0.name) AS TEXT), 'NULL')" }
        let query = try store.connection.prepare("SELECT \(fields.joined(separator: " || '|' || ")) FROM \(view)")
        var rows: [String] = []
        try query.forEachRow { rows.append($0.string(0) ?? "") }
        return rows.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}

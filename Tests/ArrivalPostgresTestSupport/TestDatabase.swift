import ArrivalPostgres
import ArrivalTestSupport
import Foundation
import PostgresNIO

/// A database of a test's own on the test server (its role may create
/// databases: Scripts/postgres-cluster.sh), dropped after the test.
package enum TestDatabase {
    /// Runs `body` with the URL of a new, empty database, made with `options`
    /// (the end of a `CREATE DATABASE` statement).
    package static func with(options: String = "", _ body: (String) throws -> Void) throws {
        let (url, drop) = try create(options: options)
        defer { drop() }
        try body(url)
    }

    package static func withAsync(_ body: (String) async throws -> Void) async throws {
        let (url, drop) = try await Task.detached { try create() }.value
        do {
            try await body(url)
        } catch {
            await Task.detached { drop() }.value
            throw error
        }
        await Task.detached { drop() }.value
    }

    private static func create(options: String = "") throws -> (String, @Sendable () -> Void) {
        let base = try TestPostgresServer.location()
        let name = "arrival_t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try PostgresSession(base)
        defer { admin.close() }
        // `name` is made here of hex digits and underscores: safe to write into the statement.
        try admin.execute("CREATE DATABASE \(name) \(options)")
        guard let url = TestPostgres.url, let slash = url.range(of: "/", options: .backwards) else {
            throw ProcessRunError("no test server URL")
        }
        let own = String(url[..<slash.lowerBound]) + "/" + name
        return (
            own,
            {
                guard let admin = try? PostgresSession(base) else { return }
                try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
                admin.close()
            }
        )
    }

    /// The one integer `sql` answers on the database at `url`.
    package static func query(_ url: String, _ sql: String) throws -> Int64 {
        let session = try PostgresSession(try PostgresLocation(url: url))
        defer { session.close() }
        return try session.run(PostgresQuery(unsafeSQL: sql)).first?.decode(Int64.self) ?? -1
    }

    /// The text column `sql` answers, every row.
    package static func strings(_ url: String, _ sql: String) throws -> Set<String> {
        let session = try PostgresSession(try PostgresLocation(url: url))
        defer { session.close() }
        return Set(try session.run(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self) })
    }

    /// The test role's password, from the `.pgpass` file the test server's script wrote.
    package static func password(for url: String) -> String? {
        guard let path = ProcessInfo.processInfo.environment["PGPASSFILE"],
            let location = try? PostgresLocation(url: url),
            let file = (try? PasswordFile.pgpass(at: path)) ?? nil
        else { return nil }
        return file.password(
            host: location.host ?? "localhost", port: location.port, database: location.database, user: location.user)
    }
}

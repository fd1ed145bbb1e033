import ArrivalModel
import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalTestSupport
import Foundation
import PostgresNIO
import Testing

/// The PostgreSQL schema: its migrations and Citus's rules, and the prune's
/// statements on it (the stores' end-to-end tests, through the built
/// `arrival`, are in ArrivalCommandLineTests/Postgres).
@Suite("PostgreSQL schema", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresSchemaTests {
    @Test("The schema keeps Citus's rules; migrating again changes nothing; a newer arrival's store is refused")
    func schema() async throws {
        try await TestDatabase.withAsync { url in
            let location = try PostgresLocation(url: url)
            let outcome = try await Task.detached {
                let session = try PostgresSession(location)
                defer { session.close() }
                let first = try PostgresSchema.migrate(session)
                let second = try PostgresSchema.migrate(session)
                // Views marked by other rules (an older arrival's) are made again, and only they.
                try session.execute("COMMENT ON VIEW arrival.update_outcomes IS 'arrival outcome views 0'")
                let remade = try PostgresSchema.migrate(session)
                let mark = try session.run(
                    "SELECT obj_description('arrival.update_outcomes'::regclass, 'pg_class')"
                ).first?.decode(String.self)
                #expect(remade == .applied(["outcome views"]))
                #expect(mark == PostgresSchema.viewsMark)
                try session.execute("INSERT INTO arrival.migrations (name) VALUES ('9999_from_the_future')")
                let newer = Result { try PostgresSchema.migrate(session) }
                return (first, second, newer)
            }.value
            #expect(outcome.0 != .upToDate)
            #expect(outcome.1 == .upToDate)
            guard case .failure(let error) = outcome.2 else {
                Issue.record("a store migrated by a newer arrival was not refused")
                return
            }
            #expect("\(error)".contains("newer arrival"))
            let logger = TestPostgresServer.logger
            let connection = try await PostgresConnector(location, environment: ProcessInfo.processInfo.environment)
                .connect(logger: logger)
            let violations = try await CitusRules.check(
                PostgresSchema.layout, schema: PostgresSchema.name, on: connection, logger: logger)
            try await connection.close()
            #expect(violations.isEmpty, "\(violations)")
        }
    }

    @Test("Every step of a prune can find the store's rows by index (no sequential scan of a record table)")
    func byIndex() throws {
        try TestDatabase.with { url in
            let location = try PostgresLocation(url: url)
            let store = try PostgresStore(location)  // migrates
            _ = store
            let session = try PostgresSession(location)
            defer { session.close() }
            try session.execute("BEGIN", "SET LOCAL enable_seqscan = off")
            defer { try? session.execute("ROLLBACK") }
            let cut = try #require(RFC3339.parseMilliseconds("2026-11-21T00:00:00Z"))
            // The only table read whole: the malformed lines left, which prunes keep few.
            let allowed = ["malformed_lines"]
            for statement in PostgresPrune.statements(before: cut) {
                let explainable =
                    !statement.hasPrefix("CREATE UNIQUE INDEX") && !statement.hasPrefix("ANALYZE")
                    && !statement.contains("(kind text NOT NULL") && !statement.contains("(what text NOT NULL")
                if explainable {
                    let plan = try session.run(PostgresQuery(unsafeSQL: "EXPLAIN " + statement))
                        .map { try $0.decode(String.self) }.joined(separator: "\n")
                    for table in PostgresSchemaTables.records where !allowed.contains(table) {
                        #expect(
                            !plan.contains("Seq Scan on \(table) "), "\(statement)\nscans \(table) whole:\n\(plan)")
                    }
                }
                try session.execute(statement)
            }
        }
    }
}

/// The record and registry tables of the PostgreSQL schema.
enum PostgresSchemaTables {
    static let records = [
        "requests", "token_requests", "broadcasts", "renders", "callbacks", "start_tokens", "record_repeats", "files",
        "malformed_lines", "skipped_files",
    ]
}

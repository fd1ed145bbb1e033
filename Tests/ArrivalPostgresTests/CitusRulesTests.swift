import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// The Citus rules checker on a schema made for the test in the real server
/// (skipped, by name, without one).
@Suite("Citus rules", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct CitusRulesTests {
    @Test("A schema laid out as Citus wants passes; each broken rule is named, table by table")
    func rules() async throws {
        let location = try TestPostgresServer.location()
        let logger = TestPostgresServer.logger
        let connection = try await PostgresConnector(location, environment: ProcessInfo.processInfo.environment)
            .connect(logger: logger)
        let schema = "citus_check_\(UUID().uuidString.prefix(8).lowercased())"
        var clean: [CitusRules.Violation] = []
        var broken: [CitusRules.Violation] = []
        do {
            // `schema` is made here of hex digits: safe to write into the statements.
            for statement in [
                "CREATE SCHEMA \(schema)",
                "CREATE TABLE \(schema).apps (app text PRIMARY KEY)",
                """
                CREATE TABLE \(schema).renders (
                    activity_id text NOT NULL, seq int NOT NULL, app text REFERENCES \(schema).apps (app),
                    PRIMARY KEY (activity_id, seq))
                """,
                """
                CREATE TABLE \(schema).requests (
                    activity_id text NOT NULL, seq int NOT NULL, apns_id text,
                    UNIQUE (activity_id, apns_id),
                    FOREIGN KEY (activity_id, seq) REFERENCES \(schema).renders (activity_id, seq))
                """,
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            let layout = CitusLayout(
                distributed: ["renders": "activity_id", "requests": "activity_id"], reference: ["apps"])
            clean = try await CitusRules.check(layout, schema: schema, on: connection, logger: logger)
            for statement in [
                // A unique key without the distribution column, and a nullable distribution column.
                "CREATE TABLE \(schema).tokens (activity_id text, token text UNIQUE)",
                // A reference table pointing into a distributed one.
                "CREATE TABLE \(schema).notes (id int PRIMARY KEY, activity_id text, seq int, "
                    + "FOREIGN KEY (activity_id, seq) REFERENCES \(schema).renders (activity_id, seq))",
                // A foreign key between distributed tables that does not join their distribution columns.
                "CREATE TABLE \(schema).links (activity_id text NOT NULL, other_activity text, seq int, "
                    + "FOREIGN KEY (other_activity, seq) REFERENCES \(schema).renders (activity_id, seq))",
                "CREATE TABLE \(schema).replies (activity_id text NOT NULL, other text UNIQUE, "
                    + "PRIMARY KEY (activity_id))",
                "ALTER TABLE \(schema).replies ADD COLUMN seq int",
                "CREATE UNIQUE INDEX replies_other_seq ON \(schema).replies (other, seq)",
                "CREATE TABLE \(schema).stray (x int)",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            let brokenLayout = CitusLayout(
                distributed: [
                    "renders": "activity_id", "requests": "activity_id", "tokens": "activity_id",
                    "replies": "activity_id", "links": "activity_id", "missing": "activity_id",
                ],
                reference: ["apps", "notes"])
            broken = try await CitusRules.check(brokenLayout, schema: schema, on: connection, logger: logger)
        } catch {
            _ = try? await connection.query(
                PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(schema) CASCADE"), logger: logger)
            try? await connection.close()
            throw error
        }
        try await connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"), logger: logger)
        try await connection.close()

        #expect(clean.isEmpty, "\(clean)")
        let said = Set(broken.map(\.description))
        #expect(said.contains("stray: is neither distributed nor a reference table"), "\(said)")
        #expect(said.contains("missing: is laid out as distributed but does not exist"), "\(said)")
        #expect(said.contains("tokens: distribution column activity_id may be NULL"), "\(said)")
        #expect(said.contains { $0.hasPrefix("tokens: unique index tokens_token_key does not include") }, "\(said)")
        #expect(
            said.contains { $0.hasPrefix("notes: foreign key") && $0.contains("from a reference table") }, "\(said)")
        #expect(said.contains { $0.hasPrefix("replies: unique index replies_other_key") }, "\(said)")
        #expect(said.contains { $0.hasPrefix("replies: unique index replies_other_seq") }, "\(said)")
        #expect(
            said.contains {
                $0.hasPrefix("links: foreign key") && $0.contains("does not join the distribution columns")
            }, "\(said)")
        // The primary key of replies includes activity_id, and the clean tables' keys do: not named.
        #expect(!said.contains { $0.hasPrefix("replies: unique index replies_pkey") }, "\(said)")
        #expect(
            !said.contains { $0.hasPrefix("renders:") || $0.hasPrefix("requests:") || $0.hasPrefix("apps:") }, "\(said)"
        )
        #expect(broken.count == 8, "\(said)")
    }
}

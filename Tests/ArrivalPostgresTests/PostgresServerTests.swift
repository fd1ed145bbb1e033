import ArrivalPostgres
import ArrivalTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// Against the real server of `ARRIVAL_TEST_POSTGRES_URL` (skipped, by name,
/// without one; failed without one when `ARRIVAL_REQUIRE_POSTGRES=1`).
@Suite("PostgreSQL server", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresServerTests {
    static let logger = Logger(label: "arrival.tests.postgres")

    static func location() throws -> PostgresLocation {
        guard let url = TestPostgres.url else {
            Issue.record("ARRIVAL_REQUIRE_POSTGRES=1 but ARRIVAL_TEST_POSTGRES_URL names no server")
            throw CancellationError()
        }
        return try PostgresLocation(url: url)
    }

    @Test("Connects with the password from the .pgpass file, to PostgreSQL 15 or newer")
    func connects() async throws {
        let location = try Self.location()
        let connection = try await PostgresConnector(location, environment: ProcessInfo.processInfo.environment)
            .connect(logger: Self.logger)
        var seen = 0
        do {
            let rows = try await connection.query(
                "SELECT current_user, current_setting('server_version_num')::int", logger: Self.logger)
            for try await (user, version) in rows.decode((String, Int).self) {
                #expect(user == location.user)
                #expect(version >= 150_000)
                seen += 1
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        #expect(seen == 1)
    }

    @Test("A wrong password is refused with the server's words and the URL without the password")
    func wrongPassword() async throws {
        var location = try Self.location()
        location.password = "not-the-password-\(UUID().uuidString)"
        let wrong = location.password!
        let connector = try PostgresConnector(location, environment: [:])
        await #expect {
            _ = try await connector.connect(logger: Self.logger)
        } throws: { error in
            let text = "\(error)"
            return text.contains("password authentication failed") && text.contains(location.redacted)
                && !text.contains(wrong)
        }
    }
}

import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// Against the real server of `ARRIVAL_TEST_POSTGRES_URL` (skipped, by name,
/// without one; failed without one when `ARRIVAL_REQUIRE_POSTGRES=1`).
@Suite("PostgreSQL server", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresServerTests {
    @Test("Connects with the password from the .pgpass file, to PostgreSQL 15 or newer")
    func connects() async throws {
        let location = try TestPostgresServer.location()
        let connection = try await PostgresConnector(location, environment: ProcessInfo.processInfo.environment)
            .connect(logger: TestPostgresServer.logger)
        var seen = 0
        do {
            let rows = try await connection.query(
                "SELECT current_user, current_setting('server_version_num')::int", logger: TestPostgresServer.logger)
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
        var location = try TestPostgresServer.location()
        location.password = "not-the-password-\(UUID().uuidString)"
        let wrong = location.password!
        let connector = try PostgresConnector(location, environment: [:])
        await #expect {
            _ = try await connector.connect(logger: TestPostgresServer.logger)
        } throws: { error in
            let text = "\(error)"
            return text.contains("password authentication failed") && text.contains(location.redacted)
                && !text.contains(wrong)
        }
    }
}

package import ArrivalPostgres
import ArrivalTestSupport
package import Logging

/// The test server of `ARRIVAL_TEST_POSTGRES_URL` (``TestPostgres``), as the
/// PostgreSQL tests connect to it.
package enum TestPostgresServer {
    package static let logger = Logger(label: "arrival.tests.postgres")

    /// Where the test server is; without one (when ARRIVAL_REQUIRE_POSTGRES=1 runs the tests anyway) an error.
    package static func location() throws -> PostgresLocation {
        guard let url = TestPostgres.url else {
            throw ProcessRunError("ARRIVAL_REQUIRE_POSTGRES=1 but ARRIVAL_TEST_POSTGRES_URL names no server")
        }
        return try PostgresLocation(url: url)
    }
}

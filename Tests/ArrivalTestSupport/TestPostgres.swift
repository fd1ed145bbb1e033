import Foundation

/// The PostgreSQL server the PostgreSQL tests run against: the URL in
/// `ARRIVAL_TEST_POSTGRES_URL` (`Scripts/postgres-cluster.sh start DIR` makes
/// a throwaway one and prints it, with the `PGPASSFILE` that holds its
/// password). Without it those tests are skipped, by name, with this reason;
/// with `ARRIVAL_REQUIRE_POSTGRES=1` (CI) a missing server fails them instead.
package enum TestPostgres {
    package static var url: String? {
        ProcessInfo.processInfo.environment["ARRIVAL_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    package static var isRequired: Bool { ProcessInfo.processInfo.environment["ARRIVAL_REQUIRE_POSTGRES"] == "1" }

    /// Whether the PostgreSQL tests run: a server is named, or one is required (and its absence fails them).
    package static var runs: Bool { url != nil || isRequired }

    package static let skipReason =
        "no PostgreSQL test server: run Scripts/postgres-cluster.sh start DIR and export what it prints"
}

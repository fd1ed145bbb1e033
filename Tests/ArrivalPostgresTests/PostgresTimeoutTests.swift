import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalTestSupport
import Foundation
import PostgresNIO
import Testing

/// A server that stops answering without closing the connection (a machine
/// gone, a network cut with no reset), stood in for by a relay that falls
/// silent (``SilentProxy``).
@Suite("PostgreSQL timeouts", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresTimeoutTests {
    @Test("A statement without an answer is given up after ARRIVAL_DB_TIMEOUT, the connection with it; names the store")
    func noAnswer() async throws {
        try await TestDatabase.withAsync { url in
            let (proxy, relayed, environment) = try SilentProxy.relay(url, timeout: "1")
            defer { proxy.stop() }
            let location = try PostgresLocation(url: relayed)
            let outcome = try await Task.detached {
                let session = try PostgresSession(location, environment: environment)
                defer { session.close() }
                let name = try session.run("SELECT current_setting('application_name')").first?.decode(String.self)
                proxy.silence()
                let start = ContinuousClock.now
                let silent = Result { try session.run("SELECT 1") }
                let elapsed = ContinuousClock.now - start
                let again = Result { try session.run("SELECT 1") }
                return (name, silent, elapsed, again)
            }.value
            #expect(outcome.0 == "arrival")
            guard case .failure(let error) = outcome.1 else {
                Issue.record("a silent server answered")
                return
            }
            #expect("\(error)".contains("no answer from the server in 1 s"), "\(error)")
            #expect("\(error)".contains(location.redacted))
            #expect(outcome.2 >= .milliseconds(900) && outcome.2 < .seconds(10), "\(outcome.2)")
            // The connection is given up, at once, not waited on again.
            guard case .failure(let refused) = outcome.3 else {
                Issue.record("a given-up connection was used again")
                return
            }
            #expect("\(refused)".contains("given up"), "\(refused)")
        }
    }

    @Test(
        "A connection left idle inside a transaction is ended by the server after ARRIVAL_DB_TIMEOUT, its locks freed")
    func idleInTransaction() async throws {
        try await TestDatabase.withAsync { url in
            let location = try PostgresLocation(url: url)
            var environment = ProcessInfo.processInfo.environment
            environment["ARRIVAL_DB_TIMEOUT"] = "1"
            let outcome = try await Task.detached { [environment] in
                let holder = try PostgresSession(location, environment: environment)
                defer { holder.close() }
                try holder.execute("CREATE TABLE held (id int PRIMARY KEY)", "BEGIN", "INSERT INTO held VALUES (1)")
                // A writer frozen here would hold the row's lock for as long as it stays frozen.
                usleep(2_500_000)
                let after = Result { try holder.execute("COMMIT") }
                let other = try PostgresSession(location, environment: environment)
                defer { other.close() }
                // The held row was never committed: another writer takes its key without waiting.
                try other.execute("INSERT INTO held VALUES (1)")
                return after
            }.value
            guard case .failure(let error) = outcome else {
                Issue.record("the idle transaction was kept")
                return
            }
            #expect("\(error)".contains("idle-in-transaction") || "\(error)".contains("closed"), "\(error)")
        }
    }
}

import ArrivalTestSupport
import Foundation
import Testing

/// `--db` and `ARRIVAL_DB`, on the built `arrival`.
@Suite("The store option")
struct StoreOptionTests {
    static let sample = packageRoot.appendingPathComponent("SampleData/sender").path

    @Test("ARRIVAL_DB is the store when --db is not given; --db wins over it; empty means unset")
    func environmentDefault() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fromEnvironment = directory.appendingPathComponent("env.sqlite").path
        let fromOption = directory.appendingPathComponent("option.sqlite").path
        let ingested = try run(
            "arrival", ["ingest", Self.sample, "--quiet"], environment: ["ARRIVAL_DB": fromEnvironment])
        #expect(ingested.status == 0, "\(ingested)")
        #expect(FileManager.default.fileExists(atPath: fromEnvironment))
        let listed = try run("arrival", ["files", "list"], environment: ["ARRIVAL_DB": fromEnvironment])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("Ingested files in \(fromEnvironment)"))
        let overridden = try run(
            "arrival", ["ingest", Self.sample, "--quiet", "--db", fromOption],
            environment: ["ARRIVAL_DB": fromEnvironment])
        #expect(overridden.status == 0, "\(overridden)")
        #expect(FileManager.default.fileExists(atPath: fromOption))
        // Empty: the built-in default, arrival.sqlite in the working directory.
        let plain = try run(
            "arrival", ["ingest", Self.sample, "--quiet"], environment: ["ARRIVAL_DB": ""], in: directory)
        #expect(plain.status == 0, "\(plain)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("arrival.sqlite").path))
    }

    @Test(
        "A postgres:// store is refused as bad usage (exit 2), without echoing the URL and its password",
        arguments: [
            (["--db", "postgres://arrival:hunter2@db/a"], [:]), ([], ["ARRIVAL_DB": "postgresql://a:hunter2@db/a"]),
        ]
    )
    func postgresRefused(arguments: [String], environment: [String: String]) throws {
        for command in [["report"], ["files", "list"], ["ingest", Self.sample], ["tokens"]] {
            let outcome = try run("arrival", command + arguments, environment: environment)
            #expect(outcome.status == 2, "\(command): \(outcome)")
            #expect(outcome.stderr.contains("PostgreSQL store"), "\(command): \(outcome.stderr)")
            #expect(!outcome.stderr.contains("hunter2") && !outcome.stdout.contains("hunter2"))
        }
    }

    @Test("--help names ARRIVAL_DB and never prints its value")
    func helpHidesEnvironment() throws {
        let help = try run("arrival", ["report", "--help"], environment: ["ARRIVAL_DB": "postgres://a:hunter2@db/a"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("$ARRIVAL_DB"))
        #expect(!help.stdout.contains("hunter2"))
    }
}

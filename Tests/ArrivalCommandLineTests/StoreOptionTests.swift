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
        "A postgres:// store that cannot be reached is named without its password by every command",
        arguments: [
            (["--db", "postgres://arrival:hunter2@127.0.0.1:1/a"], [:]),
            ([], ["ARRIVAL_DB": "postgresql://arrival:hunter2@127.0.0.1:1/a"]),
        ]
    )
    func postgresUnreachable(arguments: [String], environment: [String: String]) throws {
        for command in [
            ["report"], ["files", "list"], ["ingest", Self.sample], ["tokens"], ["lost"], ["activity", "x"],
            ["files", "remove", "--yes", "x"],
        ] {
            let outcome = try run("arrival", command + arguments, environment: environment)
            #expect(outcome.status == 1, "\(command): \(outcome)")
            #expect(outcome.stderr.contains("postgres://arrival@127.0.0.1:1/a"), "\(command): \(outcome.stderr)")
            #expect(!outcome.stderr.contains("hunter2") && !outcome.stdout.contains("hunter2"))
        }
        // The collector cannot start without its store, and says which, without the password.
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let serve = try run(
            "arrival", ["serve", "--spool", directory.appendingPathComponent("spool").path] + arguments,
            environment: environment.merging(["ARRIVAL_DEVICE_TOKENS": "device-token-0123456789abcdef"]) { $1 })
        #expect(serve.status != 0, "\(serve)")
        #expect(serve.stderr.contains("postgres://arrival@127.0.0.1:1/a"), "\(serve.stderr)")
        #expect(!serve.stderr.contains("hunter2") && !serve.stdout.contains("hunter2"))
    }

    @Test("A postgres:// URL that cannot be read is bad usage, and is not echoed")
    func postgresMalformed() throws {
        let outcome = try run("arrival", ["report", "--db", "postgres://arrival:hunter2@db:notaport/a"])
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains("PostgreSQL store"), "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("hunter2"))
    }

    @Test("--help names ARRIVAL_DB and never prints its value")
    func helpHidesEnvironment() throws {
        let help = try run("arrival", ["report", "--help"], environment: ["ARRIVAL_DB": "postgres://a:hunter2@db/a"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("$ARRIVAL_DB"))
        #expect(!help.stdout.contains("hunter2"))
    }
}

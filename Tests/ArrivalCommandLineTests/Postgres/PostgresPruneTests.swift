import ArrivalModel
import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalTestSupport
import Foundation
import PostgresNIO
import Testing

/// `arrival prune` on a PostgreSQL store: the retention property of the
/// SQLite store's tests (``PruneCheck``), and a prune whose every step finds
/// the store's rows by index, so that a day's prune reads that day.
@Suite("arrival prune on PostgreSQL", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresPruneTests {
    @Test("Simulated fleets over three days: every window from each cut on is unchanged after pruning there")
    func fleets() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputs = try PruneFixtures.simulateFleets(into: directory)
        try TestDatabase.with { url in
            // Every read of a server's store copies a snapshot: two cuts, the windows to the data's end.
            let cuts = [PruneFixtures.fleetCuts[1], PruneFixtures.fleetCuts[3]]
            let failures = try PruneCheck.failures(db: url, inputs: inputs, cuts: cuts, brief: true)
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        }
    }

    @Test("Hand-made edge cases: owners, holders, channels, a straddling activity, dead tokens")
    func edgeCases() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try PruneFixtures.writeEdgeCases(into: directory)
        try TestDatabase.with { url in
            let failures = try PruneCheck.failures(db: url, inputs: [input], cuts: PruneFixtures.edgeCuts)
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        }
    }

    @Test("Both engines remove the same records and keep the same")
    func sameAsSQLite() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try PruneFixtures.writeEdgeCases(into: directory)
        let out = directory.appendingPathComponent("fleet").path
        try #require(try run("arrival", ["simulate", "--out", out] + PruneFixtures.fleets[0]).status == 0)
        try TestDatabase.with { url in
            let sqlite = directory.appendingPathComponent("store.sqlite").path
            for db in [sqlite, url] {
                for path in [input, out] {
                    try #require(try run("arrival", ["ingest", path, "--quiet", "--db", db]).status == 0)
                }
            }
            for cut in ["2026-11-20T12:00:00Z", "2026-11-21T10:00:00Z"] {
                var removed: [[String: Int]] = []
                for db in [sqlite, url] {
                    let pruned = try run("arrival", ["prune", "--before", cut, "--format", "json", "--db", db])
                    try #require(pruned.status == 0, "\(pruned)")
                    let summary = try #require(PruneCheck.json(pruned.stdout))
                    var counts = try #require(summary["removed"] as? [String: Int])
                    counts["kept_before"] = summary["kept_before"] as? Int
                    removed.append(counts)
                }
                #expect(removed[0] == removed[1], "\(cut): \(removed)")
                let reports = try [sqlite, url].map {
                    try run("arrival", ["report", "--format", "json", "--db", $0]).stdout
                }
                #expect(reports[0] == reports[1], "\(cut): the all-data reports differ")
            }
        }
    }

    @Test("A prune while another process ingests: both finish, and the ingest's records stay")
    func withWriter() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first").path
        let second = directory.appendingPathComponent("second").path
        try #require(try await run("arrival", ["simulate", "--out", first] + PruneFixtures.fleets[0]).status == 0)
        try #require(try await run("arrival", ["simulate", "--out", second] + PruneFixtures.fleets[1]).status == 0)
        try await TestDatabase.withAsync { url in
            try #require(try await run("arrival", ["ingest", first, "--quiet", "--db", url]).status == 0)
            async let ingest = run("arrival", ["ingest", second, "--quiet", "--db", url])
            async let prune = run("arrival", ["prune", "--before", "2026-11-20T12:00:00Z", "--db", url])
            let (ingested, pruned) = try await (ingest, prune)
            #expect(ingested.status == 0, "\(ingested)")
            #expect(pruned.status == 0, "\(pruned)")
            let again = try await run("arrival", ["ingest", second, "--db", url])
            #expect(again.stdout.contains("new records: 0"), "\(again)")
        }
    }
}

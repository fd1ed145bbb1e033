import ArrivalTestSupport
import Foundation
import Testing

/// `arrival prune` on a SQLite store: retention that leaves every later
/// window's report as it was (``PruneCheck``), and the command's own words.
@Suite("arrival prune on SQLite")
struct PruneCommandTests {
    @Test("Simulated fleets over three days: every window from each cut on is unchanged after pruning there")
    func fleets() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputs = try PruneFixtures.simulateFleets(into: directory)
        let db = directory.appendingPathComponent("store.sqlite").path
        let failures = try PruneCheck.failures(db: db, inputs: inputs, cuts: PruneFixtures.fleetCuts)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("Hand-made edge cases: owners, holders, channels, a straddling activity, dead tokens")
    func edgeCases() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try PruneFixtures.writeEdgeCases(into: directory)
        let db = directory.appendingPathComponent("store.sqlite").path
        let failures = try PruneCheck.failures(db: db, inputs: [input], cuts: PruneFixtures.edgeCuts)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("The edge cases bite: the window's report rests on records before the cut")
    func edgeCasesBite() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = try PruneFixtures.writeEdgeCases(into: directory)
        let db = directory.appendingPathComponent("store.sqlite").path
        try #require(try run("arrival", ["ingest", input, "--quiet", "--db", db]).status == 0)
        // The window 10:00-12:00 alone, ingested without what came before it, reports otherwise:
        // what the prune keeps is what the report reads.
        let lines = PruneFixtures.edgeCases.split(separator: "\n").filter { line in
            guard let range = line.range(of: "2026-11-21T") else { return true }
            return line[range.upperBound...].prefix(5) >= "10:00"
        }
        let later = directory.appendingPathComponent("later.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: later)
        let alone = directory.appendingPathComponent("alone.sqlite").path
        try #require(try run("arrival", ["ingest", later.path, "--quiet", "--db", alone]).status == 0)
        let window = ["report", "--format", "json", "--from", "2026-11-21T10:00:00Z", "--to", "2026-11-21T12:00:00Z"]
        let whole = try run("arrival", window + ["--db", db])
        let cut = try run("arrival", window + ["--db", alone])
        #expect(PruneCheck.withoutStoreWide(whole.stdout) != PruneCheck.withoutStoreWide(cut.stdout))
        // Stale updates from the earlier token request and broadcast, and requests to dead tokens.
        let updates = PruneCheck.json(whole.stdout)?["updates"] as? [String: Any]
        #expect(updates?["stale_timestamp"] as? Int == 4, "\(whole.stdout)")
        let requests = PruneCheck.json(whole.stdout)?["requests"] as? [String: Any]
        #expect(requests?["to_dead_tokens"] as? Int == 3, "\(whole.stdout)")
    }

    @Test("What it removes: everything before a cut that nothing later reads, and the space, given back")
    func removesAndVacuums() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("fleet").path
        try #require(try run("arrival", ["simulate", "--out", out] + PruneFixtures.fleets[0]).status == 0)
        let db = directory.appendingPathComponent("store.sqlite").path
        try #require(try run("arrival", ["ingest", out, "--quiet", "--db", db]).status == 0)
        let deaths = { () throws -> [String] in
            let listed = try run("arrival", ["tokens", "--format", "json", "--db", db])
            let tokens = PruneCheck.json(listed.stdout)?["tokens"] as? [[String: Any]] ?? []
            return tokens.map { "\($0["push_token"] ?? "") \($0["died_at"] ?? "")" }.sorted()
        }
        let dead = try deaths()
        try #require(!dead.isEmpty, "the fleet has dead tokens")
        let pruned = try run("arrival", ["prune", "--before", "2026-11-22", "--db", db, "--format", "json"])
        try #require(pruned.status == 0, "\(pruned)")
        let summary = try #require(PruneCheck.json(pruned.stdout))
        let before = try #require(summary["bytes_before"] as? Int)
        let after = try #require(summary["bytes_after"] as? Int)
        #expect(summary["vacuumed"] as? Bool == true)
        #expect(after < before / 2, "\(pruned.stdout)")
        #expect(summary["free_pages"] as? Int == 0)
        // A day after the fleet's, no activity is read: what stays is each token's death (the
        // request that killed it) and, for a request to a token alone, the callback owning it.
        let report = try run("arrival", ["report", "--format", "json", "--db", db])
        let requests = PruneCheck.json(report.stdout)?["requests"] as? [String: Any]
        #expect(requests?["total"] as? Int == dead.count, "\(report.stdout)")
        #expect((PruneCheck.json(report.stdout)?["updates"] as? [String: Any])?["rendered"] as? Int == 0)
        #expect(try deaths() == dead, "every token still died when it did")
        // The registry still knows the bytes: nothing comes back.
        let again = try run("arrival", ["ingest", out, "--db", db])
        #expect(again.status == 0 && again.stdout.contains("new records: 0"), "\(again)")
        let listed = try run("arrival", ["files", "list", "--db", db])
        #expect(listed.status == 0 && !listed.stdout.isEmpty)
    }

    @Test("Without a vacuum the freed pages stay in the file for later ingests, and it says so")
    func noVacuum() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("fleet").path
        try #require(try run("arrival", ["simulate", "--out", out] + PruneFixtures.fleets[0]).status == 0)
        let db = directory.appendingPathComponent("store.sqlite").path
        try #require(try run("arrival", ["ingest", out, "--quiet", "--db", db]).status == 0)
        let pruned = try run("arrival", ["prune", "--before", "2026-11-22T00:00:00Z", "--no-vacuum", "--db", db])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(pruned.stdout.contains("free pages that later ingests reuse"), "\(pruned.stdout)")
    }

    @Test(
        "Bad usage exits 2 naming the cause",
        arguments: [
            (["prune"], "--before"),
            (["prune", "--before", "yesterday"], "--before 'yesterday' is not a time"),
            (["prune", "--before", "2026-11-21 10:00:00Z"], "is not a time"),
            (["prune", "--before", "2026-02-30"], "is not a time"),
            (["prune", "--before", ""], "is not a time"),
        ])
    func badUsage(arguments: [String], message: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("store.sqlite").path
        let outcome = try run("arrival", arguments + ["--db", db])
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db), "bad usage creates no store")
    }

    @Test("A missing store is no usage error: exit 1, and no store is made")
    func missingStore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("none.sqlite").path
        let outcome = try run("arrival", ["prune", "--before", "2026-11-21", "--db", db])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr.contains("no store at"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
    }
}

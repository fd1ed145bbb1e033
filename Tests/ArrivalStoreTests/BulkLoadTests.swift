import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

/// The first load of a store (``IngestPipeline/Options/bulkLoadWhenNew``): a
/// rollback journal and the store held alone, only when nobody else has it
/// and it holds no file; the same records and report either way.
@Suite("Ingest: the first load of a store")
struct BulkLoadTests {
    /// Bytes 18 and 19 of an SQLite file: 2 and 2 in WAL mode, 1 and 1 with a rollback journal.
    func walMode(_ path: String) throws -> Bool {
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: path)).readData(ofLength: 20)
        return header[18] == 2 && header[19] == 2
    }

    /// Ingests `paths` into `store`; returns the summary and whether the store was held alone meanwhile.
    func ingest(_ paths: [String], into store: SQLiteStore, bulk: Bool = true, strict: Bool = false) throws -> (
        IngestSummary, heldAlone: Bool
    ) {
        var options = IngestPipeline.Options(strict: strict)
        options.bulkLoadWhenNew = bulk
        options.batchSize = 2  // several batches, so that progress is seen mid-file
        var heldAlone = false
        let summary = try IngestPipeline(store: store, options: options).ingest(paths: paths) { _ in
            heldAlone = heldAlone || store.isBulkLoading
        }
        return (summary, heldAlone)
    }

    @Test("A new store is loaded alone, ends in WAL mode, and stores what a shared load stores")
    func newStore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let alone = directory.appendingPathComponent("alone.sqlite").path
        let shared = directory.appendingPathComponent("shared.sqlite").path
        let inputs = [fixture("dedup"), fixture("metrics"), fixture("badinput")]
        var reports: [Report] = []
        for (path, bulk) in [(alone, true), (shared, false)] {
            let store = try SQLiteStore(path: path)
            let (summary, heldAlone) = try ingest(inputs, into: store, bulk: bulk)
            #expect(heldAlone == bulk)
            #expect(!store.isBulkLoading)
            #expect(summary.filesRead > 5 && summary.newRecords > 20)
            reports.append(try ReportBuilder(store: store).build(window: nil))
        }
        #expect(reports[0] == reports[1])
        #expect(try walMode(alone))
        // Readable by others at once, as a WAL store.
        let reader = try SQLiteStore(readingAt: alone)
        #expect(try ReportBuilder(store: reader).build(window: nil) == reports[0])
    }

    @Test("The same bytes twice in a first load: one copy rolled back by the writer, every row as a shared load's")
    func sameBytesTwice() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tree = directory.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        let records = try Data(contentsOf: URL(fileURLWithPath: fixture("metrics/requests.jsonl")))
        // Two paths with the same bytes: the second is decoded and inserted, then found a copy and rolled back.
        try records.write(to: tree.appendingPathComponent("a.jsonl"))
        try records.write(to: tree.appendingPathComponent("b.jsonl"))
        var dumps: [[String]] = []
        for bulk in [true, false] {
            let store = try SQLiteStore(path: directory.appendingPathComponent("\(bulk).sqlite").path)
            let (summary, heldAlone) = try ingest(
                [fixture("dedup"), tree.path, fixture("metrics")], into: store, bulk: bulk)
            #expect(heldAlone == bulk)
            #expect(summary.filesSkippedAsDuplicate >= 1)
            dumps.append(try DeferredKeyIndexTests.dump(store, files: false))
            // A first load leaves its key indexes to the next write; a shared one has them.
            let names = try DeferredKeyIndexTests.indexNames(store)
            #expect(names.isDisjoint(with: Migrations.recordKeyIndexNames) == bulk)
        }
        #expect(dumps[0].count > 50)
        #expect(dumps[0] == dumps[1])
    }

    @Test("Without the key indexes a first load left off: the same repeats, removal plan and next load")
    func keyIndexesLeftToTheNextWrite() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var states: [[String]] = []
        for bulk in [true, false] {
            let store = try SQLiteStore(path: directory.appendingPathComponent("\(bulk).sqlite").path)
            _ = try ingest([fixture("dedup"), fixture("metrics")], into: store, bulk: bulk)
            let names = try DeferredKeyIndexTests.indexNames(store)
            #expect(names.isDisjoint(with: Migrations.recordKeyIndexNames) == bulk)
            // Who holds a repeated record is found by its id, and what removing a file takes too.
            let repeats = try store.read { try $0.duplicatesByFile(limit: 50) }
            #expect(repeats.count >= 2)
            let plan = try store.removalPlan(ids: [1, 2, 3]).entries.map { "\($0.file.path) \($0.counts)" }
            #expect(plan.count == 3)
            // The next load makes the indexes first, and finds the records stored before.
            let (summary, _) = try ingest([fixture("dedup"), fixture("badinput")], into: store, bulk: bulk)
            #expect(summary.newRecords > 0)
            #expect(try DeferredKeyIndexTests.indexNames(store).isSuperset(of: Migrations.recordKeyIndexNames))
            let removed = try store.removeFiles(ids: [1]).entries.map { "\($0.file.path) \($0.counts)" }
            states.append(
                repeats.map { "\($0.path) \($0.records)" } + plan + removed
                    + (try DeferredKeyIndexTests.dump(store, files: false)))
        }
        #expect(states[0] == states[1])
    }

    /// A new store in a directory of its own, removed after `body`.
    func withNewStore(_ body: (URL, String, SQLiteStore) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        try body(directory, path, try SQLiteStore(path: path))
    }

    @Test("A store that holds files, or that another connection has open, is shared as always")
    func sharedWhenNotNew() throws {
        try withNewStore { directory, _, store in
            #expect(try ingest([fixture("dedup")], into: store).heldAlone)
            // It holds files now.
            let (second, heldAlone) = try ingest([fixture("metrics")], into: store)
            #expect(!heldAlone && second.filesRead == 6)

            let other = directory.appendingPathComponent("other.sqlite").path
            let first = try SQLiteStore(path: other)
            let open = try SQLiteStore(path: other)  // another connection, as another process's would be
            let (summary, alone) = try ingest([fixture("metrics")], into: first)
            #expect(!alone && summary.filesRead == 6)
            // The other connection reads and writes as before.
            #expect(try ReportBuilder(store: open).build(window: nil).requests.total > 0)
            #expect(try walMode(other))
        }
    }

    @Test("A file rolled back during the first load leaves nothing, and the store is loaded again later")
    func rollback() throws {
        try withNewStore { _, path, store in
            // --strict: the first malformed line fails the file and the run.
            #expect(throws: (any Error).self) {
                try ingest([fixture("badinput/torn-crlf.jsonl")], into: store, strict: true)
            }
            #expect(!store.isBulkLoading)
            #expect(try walMode(path))
            #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 0)
            // Still no file: the next run loads it alone.
            let (summary, heldAlone) = try ingest([fixture("metrics")], into: store)
            #expect(heldAlone && summary.filesRead == 6)
        }
    }
}

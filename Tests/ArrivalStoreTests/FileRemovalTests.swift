import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

/// `arrival files list` and `arrival files remove` at the store: the registry
/// as listed, and removal that leaves the store as if the file had never
/// been ingested.
@Suite("Files registry and removal")
struct FileRemovalTests {
    /// The sample data's description: text, not records — the file a user ingests by mistake.
    static let readme = packageRoot.appendingPathComponent("Documentation/SampleData.md").path

    /// A scratch directory with a store in it, removed afterwards.
    func withStore(_ body: (_ directory: URL, _ store: SQLiteStore) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory, try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path))
    }

    func report(_ store: SQLiteStore) throws -> String {
        try ReportBuilder(store: store).build(window: nil).jsonText()
    }

    func file(_ store: SQLiteStore, endingWith suffix: String) throws -> IngestedFile {
        let matches = try store.listFiles().filter { $0.path.hasSuffix(suffix) }
        try #require(matches.count == 1, "one file ends with \(suffix)")
        return matches[0]
    }

    func apns(_ id: String, second: Int = 0) -> String {
        #"{"kind":"apns","apns_id":"\#(id)","sent_at":"2026-11-21T08:00:\#(second < 10 ? "0" : "")\#(second)Z","status":200,"push_token":"t","aps_timestamp":1795248000}"#
    }

    func write(_ lines: [String], to url: URL) throws {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    }

    @Test("Removing a README ingested by mistake gives, byte for byte, the report of a store that never had it")
    func removeBogusFile() throws {
        let (clean, _) = try ingestAndReport(samplePaths)
        try withStore { _, store in
            let summary = try IngestPipeline(store: store).ingest(paths: samplePaths + [Self.readme])
            #expect(summary.malformedLines > 0)
            let readme = try file(store, endingWith: "Documentation/SampleData.md")
            #expect(readme.records == 0 && readme.malformed > 0 && !readme.gzip)
            #expect(try report(store) != clean.jsonText())

            let (files, skipped) = try store.fileRegistry()
            let chosen = try FileSelection.select(
                [Self.readme], files: files, skipped: skipped, normalise: InputWalker.normalise)
            #expect(chosen == [readme])
            let removal = try store.removeFiles(ids: chosen.map(\.id))
            #expect(removal.entries.map(\.file) == [readme])
            #expect(removal.total.records == 0)
            #expect(removal.total[.malformedLines] == readme.malformed)
            #expect(removal.total[.skippedFiles] == 0)
            #expect(removal.laterFilesWithDuplicates.isEmpty)  // it stored no record anyone could repeat

            #expect(try report(store) == clean.jsonText())
            #expect(try store.listFiles().count == files.count - 1)
        }
    }

    @Test("Removing a real file and ingesting it again gives the original report back")
    func removeAndReingest() throws {
        try withStore { _, store in
            _ = try IngestPipeline(store: store).ingest(paths: samplePaths)
            let original = try report(store)
            // apns-11 overlaps the re-export apns-1140-1220, ingested after it: records both held are stored under apns-11.
            let hour = try file(store, endingWith: "/apns-11.jsonl.gz")
            let reexport = try file(store, endingWith: "/apns-1140-1220.jsonl.gz")
            #expect(reexport.duplicates > 0)

            let plan = try store.removalPlan(ids: [hour.id])
            let removal = try store.removeFiles(ids: [hour.id])
            #expect(removal == plan)
            #expect(
                removal.total[.apns] == hour.records && removal.total[.renders] == 0 && removal.total[.callbacks] == 0)
            #expect(removal.total[.malformedLines] == hour.malformed)
            #expect(removal.laterFilesWithDuplicates.contains(reexport))
            #expect(try report(store) != original)
            #expect(try store.listFiles().contains { $0.id == hour.id } == false)

            let again = try IngestPipeline(store: store).ingest(paths: [hour.path])
            #expect(again.filesRead == 1)
            #expect(again.newRecords == hour.records)
            #expect(again.duplicateRecords == hour.duplicates)
            #expect(try report(store) == original)
            let back = try file(store, endingWith: "/apns-11.jsonl.gz")
            #expect(back.sha256 == hour.sha256 && back.records == hour.records && back.duplicates == hour.duplicates)
        }
    }

    @Test("Later files that repeated records of other files only are not named as sharing the removed file's records")
    func unrelatedDuplicates() throws {
        try withStore { directory, store in
            let files = ["first", "second", "third"].map { directory.appendingPathComponent("\($0).jsonl") }
            try write([apns("a")], to: files[0])
            try write([apns("b")], to: files[1])
            try write([apns("b"), apns("c")], to: files[2])
            for file in files { _ = try IngestPipeline(store: store).ingest(paths: [file.path]) }
            #expect(try file(store, endingWith: "/third.jsonl").duplicates == 1)
            let removal = try store.removeFiles(ids: [try file(store, endingWith: "/first.jsonl").id])
            #expect(removal.total[.apns] == 1)
            #expect(removal.laterFilesWithDuplicates.isEmpty)
            #expect(removal.sharedRecords.isEmpty)
        }
    }

    @Test(
        "Records a later file also held go with the first file; only removing and re-ingesting the later one restores them"
    )
    func sharedRecords() throws {
        try withStore { directory, store in
            let first = directory.appendingPathComponent("first.jsonl")
            let later = directory.appendingPathComponent("later.jsonl")
            try write([apns("a"), apns("shared")], to: first)
            try write([apns("shared"), apns("b")], to: later)
            let ingestor = IngestPipeline(store: store)
            _ = try ingestor.ingest(paths: [first.path])
            _ = try ingestor.ingest(paths: [later.path])
            let laterFile = try file(store, endingWith: "/later.jsonl")
            #expect(laterFile.records == 1 && laterFile.duplicates == 1)

            let removal = try store.removeFiles(ids: [try file(store, endingWith: "/first.jsonl").id])
            #expect(removal.total[.apns] == 2)  // "a" and "shared"
            #expect(removal.laterFilesWithDuplicates == [laterFile])
            #expect(removal.sharedRecords == [laterFile.id: 1])
            #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 1)  // only "b"

            // Still registered: skipped as already ingested, "shared" stays gone.
            let skipped = try ingestor.ingest(paths: [later.path])
            #expect(skipped.filesAlreadyIngested == 1 && skipped.newRecords == 0)
            #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 1)

            _ = try store.removeFiles(ids: [laterFile.id])
            let again = try ingestor.ingest(paths: [later.path])
            #expect(again.newRecords == 2 && again.duplicateRecords == 0)
            #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 2)
        }
    }

    @Test("A dry run counts what would go on a read-only store and changes nothing")
    func dryRun() throws {
        try withStore { directory, store in
            _ = try IngestPipeline(store: store).ingest(paths: samplePaths + [Self.readme])
            let before = try report(store)
            let registry = try store.fileRegistry()
            let readme = try file(store, endingWith: "Documentation/SampleData.md")
            let hour = try file(store, endingWith: "/apns-06.jsonl.gz")

            let reader = try SQLiteStore(readingAt: store.path)
            let plan = try reader.removalPlan(ids: [readme.id, hour.id, readme.id, 999_999])
            #expect(plan.entries.map(\.file) == [readme, hour])  // in the order asked, once, unknown ids left out
            #expect(plan.total[.malformedLines] == readme.malformed + hour.malformed)
            #expect(plan.total[.skippedFiles] == 1)  // apns-06.retry.jsonl.gz has apns-06's bytes
            #expect(throws: DatabaseError.self) { try reader.removeFiles(ids: [readme.id]) }

            #expect(try report(store) == before)
            let after = try store.fileRegistry()
            #expect(after.files == registry.files && after.skipped == registry.skipped)
            #expect(try store.removeFiles(ids: [readme.id, hour.id]) == plan)
        }
    }

    @Test("A name that selects several files is refused, naming them; too short a prefix selects nothing")
    func ambiguousNames() throws {
        func make(_ id: Int64, _ path: String, _ sha256: String) -> IngestedFile {
            IngestedFile(
                id: id, path: path, sha256: sha256, byteCount: 1, gzip: false, lines: 1, records: 1,
                duplicates: 0, malformed: 0, ingestedAt: 0)
        }
        let a = make(1, "/up/a.jsonl", "abcd1" + String(repeating: "0", count: 59))
        let b = make(2, "/up/b.jsonl", "abcd2" + String(repeating: "0", count: 59))
        let files = [a, b]
        #expect(throws: FileSelectionError.ambiguous(name: "abcd", files: [a, b])) {
            try FileSelection.select(["abcd"], files: files, skipped: [])
        }
        #expect(try FileSelection.select(["ABCD2"], files: files, skipped: []) == [b])
        #expect(
            try FileSelection.select(["abcd1", "/up/b.jsonl", "/up/a.jsonl"], files: files, skipped: []) == [a, b])
        #expect(throws: FileSelectionError.noMatch(name: "abc")) {
            try FileSelection.select(["abc"], files: files, skipped: [])
        }
        #expect(try FileSelection.select(["b.jsonl"], files: files, skipped: [], normalise: { "/up/" + $0 }) == [b])
        let description = FileSelectionError.ambiguous(name: "abcd", files: [a, b]).description
        #expect(
            description.contains("/up/a.jsonl") && description.contains("/up/b.jsonl")
                && description.contains("abcd10000000"))
    }

    @Test("A path ingested twice with different bytes is ambiguous by path and selected by hash")
    func rewrittenFile() throws {
        try withStore { directory, store in
            let url = directory.appendingPathComponent("widget-1.jsonl")
            let ingestor = IngestPipeline(store: store)
            try write([apns("a")], to: url)
            _ = try ingestor.ingest(paths: [url.path])
            // Rewritten, not grown (a file that grew replaces its earlier version: IngestTests).
            try write([apns("b"), apns("a")], to: url)
            _ = try ingestor.ingest(paths: [url.path])
            let (files, skipped) = try store.fileRegistry()
            #expect(files.count == 2 && files.allSatisfy { $0.path == url.path })
            #expect(throws: FileSelectionError.ambiguous(name: url.path, files: files)) {
                try FileSelection.select([url.path], files: files, skipped: skipped)
            }
            let second = try #require(files.first { $0.records == 1 && $0.duplicates == 1 })
            #expect(
                try FileSelection.select([String(second.sha256.prefix(16))], files: files, skipped: skipped) == [second]
            )
        }
    }

    @Test("Removing a file takes the skipped re-uploads of its bytes with it; the re-upload then ingests as new")
    func skippedReupload() throws {
        try withStore { directory, store in
            let original = directory.appendingPathComponent("apns-07.jsonl")
            let retry = directory.appendingPathComponent("apns-07.retry.jsonl")
            try write([apns("a"), apns("b"), "not json"], to: original)
            try FileManager.default.copyItem(at: original, to: retry)
            let ingestor = IngestPipeline(store: store)
            _ = try ingestor.ingest(paths: [original.path, retry.path])
            let (files, skipped) = try store.fileRegistry()
            #expect(files.count == 1)
            #expect(
                skipped == [
                    SkippedFile(
                        path: retry.path, sha256: files[0].sha256, firstSeenAt: skipped.first?.firstSeenAt ?? 0,
                        sameBytesAs: original.path, fileID: files[0].id)
                ])
            // The re-upload itself was never ingested: naming it points at the original.
            #expect(throws: FileSelectionError.onlySkipped(name: retry.path, sameBytesAs: [original.path])) {
                try FileSelection.select([retry.path], files: files, skipped: skipped)
            }

            let removal = try store.removeFiles(ids: [files[0].id])
            #expect(
                removal.total[.apns] == 2 && removal.total[.malformedLines] == 1 && removal.total[.skippedFiles] == 1)
            let after = try store.fileRegistry()
            #expect(after.files.isEmpty && after.skipped.isEmpty)
            #expect(try ReportBuilder(store: store).build(window: nil).dataQuality.filesSkippedAsDuplicate == 0)

            let again = try ingestor.ingest(paths: [retry.path])
            #expect(again.filesRead == 1 && again.newRecords == 2)
        }
    }

    @Test("The listing sorts paths in code-point order and carries the registry's counts")
    func listing() throws {
        try withStore { directory, store in
            let uploads = directory.appendingPathComponent("uploads")
            try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
            let names = ["\u{E9}.jsonl", "a.jsonl", "Z.jsonl", "B.jsonl"]
            for (index, name) in names.enumerated() {
                try write(
                    [apns("id-\(index)"), apns("id-\(index)"), "", "[1]"], to: uploads.appendingPathComponent(name))
            }
            let started = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try IngestPipeline(store: store).ingest(paths: [uploads.path])
            let files = try store.listFiles()
            #expect(
                files.map { ($0.path as NSString).lastPathComponent } == [
                    "B.jsonl", "Z.jsonl", "a.jsonl", "\u{E9}.jsonl",
                ])
            for file in files {
                #expect(file.lines == 4 && file.records == 1 && file.duplicates == 1 && file.malformed == 1)
                #expect(file.sha256.count == 64 && !file.gzip && file.ingestedAt >= started - 1000)
            }
        }
    }

    @Test("A removal that fails part-way leaves everything in place")
    func allOrNothing() throws {
        try withStore { directory, store in
            let url = directory.appendingPathComponent("apns.jsonl")
            try write([apns("a"), apns("b"), "garbage"], to: url)
            _ = try IngestPipeline(store: store).ingest(paths: [url.path])
            let before = try report(store)
            let registry = try store.fileRegistry()
            // Make the last step, deleting the registry row, fail after the records went.
            try store.connection.execute(
                """
                CREATE TEMP TRIGGER refuse BEFORE DELETE ON files BEGIN SELECT RAISE(ABORT, 'refused'); END
                """)
            #expect(throws: DatabaseError.self) { try store.removeFiles(ids: registry.files.map(\.id)) }
            #expect(try report(store) == before)
            let after = try store.fileRegistry()
            #expect(after.files == registry.files)
            try store.connection.execute("DROP TRIGGER refuse")
            #expect(try store.removeFiles(ids: registry.files.map(\.id)).total.records == 2)
        }
    }
}

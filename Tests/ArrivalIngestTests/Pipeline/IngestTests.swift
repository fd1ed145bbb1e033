import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest
@testable import ArrivalStore

@Suite("Ingest")
struct IngestTests {
    @Test("Equal records are stored once: times as instants, null = absent, unknown fields ignored")
    func recordDuplicates() throws {
        // records.jsonl: the base apns record, then the same instant with another offset and extra
        // digits, then explicit null + an unknown field: 2 duplicates. "event":"update" and another
        // status are distinct. A render repeated without "v": duplicate. Two content_update
        // callbacks differing in seq: distinct. more.jsonl.gz repeats the base record (duplicate)
        // and adds d2.
        let (report, summary) = try ingestAndReport([fixture("dedup")])
        #expect(summary.records == [.apns: 4, .render: 1, .callback: 2])
        #expect(summary.duplicateRecords == 4)
        #expect(report.dataQuality.duplicateRecords == 4)
        #expect(report.requests.total == 4)
    }

    @Test("A file ingested before is skipped: same path silently, another path counted once")
    func fileDuplicates() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let original = directory.appendingPathComponent("apns-07.jsonl").path
        let retry = directory.appendingPathComponent("apns-07.retry.jsonl").path
        let third = directory.appendingPathComponent("again/apns-07.jsonl").path
        try FileManager.default.createDirectory(
            atPath: directory.appendingPathComponent("again").path, withIntermediateDirectories: true)
        for path in [original, retry, third] {
            try FileManager.default.copyItem(atPath: fixture("metrics/requests.jsonl"), toPath: path)
        }
        let storeDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storeDirectory) }
        let store = try SQLiteStore(path: storeDirectory.appendingPathComponent("s.sqlite").path)
        let ingestor = IngestPipeline(store: store)
        let first = try ingestor.ingest(paths: [original, retry])
        #expect(first.filesRead == 1)
        #expect(first.filesSkippedAsDuplicate == 1)
        let second = try ingestor.ingest(paths: [directory.path + "/./", retry])
        #expect(second.filesRead == 0)
        #expect(second.filesAlreadyIngested == 1)  // the original path: a silent no-op
        let report = try ReportBuilder(store: store).build(window: nil)
        #expect(report.dataQuality.filesSkippedAsDuplicate == 2)  // retry and again/, each once
        #expect(report.requests.total == 10)
    }

    @Test(
        "Files of one size: copies are skipped whether or not the first chunk read holds them whole, the rest kept",
        arguments: [1 << 18, 64], [true, false])
    func sameSizeFiles(chunkSize: Int, bulk: Bool) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func renders(_ activity: String) -> Data {
            Data(
                (0..<20).map {
                    #"{"v":1,"kind":"render","activity_id":"\#(activity)","seq":\#($0),"rendered_at":"2026-11-21T10:00:00Z"}"#
                        + "\n"
                }.joined().utf8)
        }
        // a and b differ and are of one size; c and d are copies of a, e of b (another name, another folder).
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("tree/later"), withIntermediateDirectories: true)
        for (name, activity) in [("a", "A1"), ("b", "B1"), ("c", "A1"), ("d", "A1"), ("later/e", "B1")] {
            try renders(activity).write(to: directory.appendingPathComponent("tree/\(name).jsonl"))
        }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        var options = IngestPipeline.Options()
        options.reader = LineReader(chunkSize: chunkSize)
        options.bulkLoadWhenNew = bulk
        let summary = try IngestPipeline(store: store, options: options).ingest(
            paths: [directory.appendingPathComponent("tree").path])
        #expect(summary.filesRead == 2)
        #expect(summary.filesSkippedAsDuplicate == 3)
        #expect(summary.records == [.render: 40])
        #expect(summary.duplicateRecords == 0)
        #expect(summary.unreadable.isEmpty)
        let report = try ReportBuilder(store: store).build(window: nil)
        #expect(report.dataQuality.filesSkippedAsDuplicate == 3)
    }

    @Test("Paths compare byte for byte: canonically equivalent names are two paths")
    func equivalentPaths() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storeDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storeDirectory) }
        let composed = directory.appendingPathComponent("\u{E9}.jsonl").path
        let decomposed = directory.appendingPathComponent("e\u{301}.jsonl").path
        for path in [composed, decomposed] {
            try FileManager.default.copyItem(atPath: fixture("outcomes/lost.jsonl"), toPath: path)
        }
        let store = try SQLiteStore(path: storeDirectory.appendingPathComponent("s.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [directory.path])
        #expect(summary.filesRead == 1)
        #expect(summary.filesSkippedAsDuplicate == 1)
    }

    @Test("Bad lines are counted by cause; every valid line around them is kept")
    func badInput() throws {
        // torn-crlf: 3 good renders, 2 blank lines, "not json", a string seq, a torn last line.
        // cut.jsonl.gz: 20 whole lines (one repeats torn-crlf's first), a partial line, truncated_gzip.
        // utf8.jsonl: 2 good renders around a line with a 0xFF byte.
        let (report, summary) = try ingestAndReport([fixture("badinput")])
        #expect(summary.records[.render] == 24)
        #expect(summary.duplicateRecords == 1)
        #expect(
            report.dataQuality.malformedByCause == [
                "invalid_json": 3, "invalid_utf8": 1, "truncated_gzip": 1, "wrong_type": 1,
            ])
        #expect(report.dataQuality.malformedLines == 6)
        let torn = summary.firstMalformed.filter { $0.path.hasSuffix("torn-crlf.jsonl") }
        #expect(torn.map(\.line) == [4, 6, 8])
    }

    @Test("--strict stops at the first malformed line, naming file and line, and stores nothing of that file")
    func strict() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        var options = IngestPipeline.Options(strict: true)
        options.batchSize = 2
        let path = fixture("badinput/torn-crlf.jsonl")
        #expect {
            _ = try IngestPipeline(store: store, options: options).ingest(paths: [path])
        } throws: { error in
            guard case IngestError.malformedLine(let file, let line, let cause, _) = error else { return false }
            return file == path && line == 4 && cause == .invalidJSON && "\(error)".contains("\(path):4")
        }
        let report = try ReportBuilder(store: store).build(window: nil)
        #expect(report.dataQuality.malformedLines == 0)
        #expect(try store.status(ofContent: ContentHash.sha256(of: path).0, at: path) == .new)
    }

    @Test("--strict names a gzip stream that breaks off as truncated_gzip, not its cut last line as bad JSON")
    func strictTruncatedGzip() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let partial = packageRoot.appendingPathComponent(
            "SampleData/sender/2026-11-21/apns-18.partial.jsonl.gz"
        ).path
        // Without --strict: the lines before the break are kept and the break is counted once.
        let (_, lenient) = try ingestAndReport([partial])
        #expect(lenient.malformedByCause[.truncatedGzip] == 1 && lenient.newRecords > 0)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        #expect {
            _ = try IngestPipeline(store: store, options: IngestPipeline.Options(strict: true)).ingest(paths: [partial])
        } throws: { error in
            guard case IngestError.malformedLine(let file, _, let cause, _) = error else { return false }
            return file == partial && cause == .truncatedGzip
        }
        // A bad line before the end is still named as itself.
        let early = directory.appendingPathComponent("early.jsonl").path
        try Data("{\"v\":1,\"kind\":\"render\"\n".utf8).write(to: URL(fileURLWithPath: early))
        #expect {
            _ = try IngestPipeline(store: store, options: IngestPipeline.Options(strict: true)).ingest(paths: [early])
        } throws: { error in
            guard case IngestError.malformedLine(_, 1, let cause, _) = error else { return false }
            return cause != .truncatedGzip
        }
    }

    @Test("An empty file, .gz or not, is listed in the summary, not accepted in silence")
    func emptyFiles() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("batch.jsonl.gz").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let full = fixture("metrics/requests.jsonl")
        let (_, summary) = try ingestAndReport([empty, full])
        #expect(summary.emptyFiles == [empty])
        #expect(summary.filesRead == 2)
    }

    @Test("Batches cut by bytes instead of lines store the same records")
    func batchesByBytes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Lines whose strings run to 40 KB each, among ordinary ones.
        let long = String(repeating: "x", count: 40_000)
        var text = ""
        for i in 0..<200 {
            let id = i % 3 == 0 ? "\(long)-\(i)" : "id-\(i)"
            text +=
                #"{"kind":"apns","apns_id":"\#(id)","sent_at":"2026-11-21T10:00:00.\#(String(format: "%03d", i))Z","status":200,"push_token":"t","aps_timestamp":\#(i)}"#
                + "\n"
        }
        let path = directory.appendingPathComponent("long.jsonl").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        /// The summary, the report, and how many batches the writer received (one progress call each).
        func ingest(_ options: IngestPipeline.Options, into name: String) throws -> (IngestSummary, String, Int) {
            let store = try SQLiteStore(path: directory.appendingPathComponent(name).path)
            var batches = 0
            let summary = try IngestPipeline(store: store, options: options).ingest(paths: [path]) { _ in batches += 1 }
            return (summary, try ReportBuilder(store: store).build(window: nil).jsonText(), batches)
        }
        var small = IngestPipeline.Options()
        small.batchBytes = 100_000  // a batch every two or three long lines
        let (bySize, report, wholeBatches) = try ingest(IngestPipeline.Options(), into: "a.sqlite")
        let (byBytes, sameReport, smallBatches) = try ingest(small, into: "b.sqlite")
        #expect(wholeBatches == 1 && smallBatches > 20)
        #expect(bySize.records[.apns] == 200 && byBytes.records[.apns] == 200)
        #expect(report == sameReport)
    }

    @Test(
        "A file stored while cut short (or still being written) and ingested again whole replaces its earlier version: the report of the whole file alone",
        arguments: ["sender/2026-11-21/apns-06.jsonl.gz", "sender/2026-11-21/apns-1140-1220.jsonl.gz"])
    func grownFileReplacesItsStart(sample: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let whole = try Data(
            contentsOf: URL(
                fileURLWithPath: packageRoot.appendingPathComponent("SampleData/" + sample).path))
        let path = directory.appendingPathComponent("sender.jsonl.gz").path
        let (clean, _) = try ingestAndReport([
            packageRoot.appendingPathComponent("SampleData/" + sample).path
        ])

        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        // Cut mid-member: a truncated gzip, stored with what it held.
        try whole.prefix(whole.count / 3).write(to: URL(fileURLWithPath: path))
        let cut = try IngestPipeline(store: store).ingest(paths: [path])
        #expect(cut.filesRead == 1 && cut.malformedByCause[.truncatedGzip] == 1)
        try whole.write(to: URL(fileURLWithPath: path))
        let grown = try IngestPipeline(store: store).ingest(paths: [path])
        #expect(grown.filesRead == 1 && grown.filesReplaced == 1 && grown.duplicateRecords == 0)
        #expect(try ReportBuilder(store: store).build(window: nil).jsonText() == clean.jsonText())
        #expect(try store.listFiles().count == 1)
    }

    /// The rows of `PRAGMA foreign_key_check`: every row whose key names no parent.
    func foreignKeyViolations(_ store: SQLiteStore) throws -> [String] {
        let check = try store.connection.prepare("PRAGMA foreign_key_check")
        var violations: [String] = []
        try check.forEachRow { violations.append("\($0.string(0) ?? "?") row \($0.int(1)) -> \($0.string(2) ?? "?")") }
        return violations
    }

    @Test(
        "Ingest keeps every foreign key whole although it does not enforce them inside its batch, and they are enforced again after it",
        arguments: [false, true])
    func foreignKeysWhole(bulk: Bool) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fm = FileManager.default
        // Repeated records (record_repeats), malformed lines, the same bytes under a
        // second path (skipped_files), and a gzip file stored cut short, then whole
        // (its earlier version replaced, with its children).
        let sample = packageRoot.appendingPathComponent(
            "SampleData/sender/2026-11-21/apns-06.jsonl.gz")
        let whole = try Data(contentsOf: sample)
        let grown = directory.appendingPathComponent("grown.jsonl.gz").path
        try whole.prefix(whole.count / 3).write(to: URL(fileURLWithPath: grown))
        try fm.copyItem(
            atPath: fixture("dedup/records.jsonl"), toPath: directory.appendingPathComponent("a.jsonl").path)
        try fm.copyItem(
            atPath: fixture("dedup/records.jsonl"), toPath: directory.appendingPathComponent("b.jsonl").path)
        try fm.copyItem(
            atPath: fixture("dedup/more.jsonl.gz"), toPath: directory.appendingPathComponent("more.jsonl.gz").path)
        try fm.copyItem(
            atPath: fixture("hostile/hostile.jsonl"), toPath: directory.appendingPathComponent("hostile.jsonl").path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        var options = IngestPipeline.Options()
        options.bulkLoadWhenNew = bulk
        options.recordsPerCommit = 3  // several batches
        let first = try IngestPipeline(store: store, options: options).ingest(paths: [directory.path])
        #expect(first.filesSkippedAsDuplicate == 1 && first.duplicateRecords > 0 && first.malformedLines > 0)
        try whole.write(to: URL(fileURLWithPath: grown))
        let second = try IngestPipeline(store: store, options: options).ingest(paths: [grown])
        #expect(second.filesReplaced == 1)

        let counts = try store.connection.prepare(
            "SELECT (SELECT count(*) FROM record_repeats), (SELECT count(*) FROM skipped_files), (SELECT count(*) FROM malformed_lines)"
        )
        #expect(try counts.step())
        #expect(counts.int(0) > 0 && counts.int(1) == 1 && counts.int(2) > 0)
        counts.reset()
        #expect(try foreignKeyViolations(store) == [])
        #expect(try store.enforcesForeignKeys)
        // Enforced: a malformed line of no file is refused.
        #expect(throws: DatabaseError.self) {
            try store.connection.execute(
                "INSERT INTO malformed_lines (file_id, line, cause) VALUES (9999, 1, 'invalid_json')")
        }
    }

    @Test("A file rewritten at the same path with other bytes (not grown) is a second file, and nothing is replaced")
    func rewrittenFileIsAnotherFile() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("r.jsonl").path
        let first = try String(contentsOfFile: fixture("outcomes/lost.jsonl"), encoding: .utf8)
        let second = try String(contentsOfFile: fixture("outcomes/rendered.jsonl"), encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        try first.write(toFile: path, atomically: true, encoding: .utf8)
        _ = try IngestPipeline(store: store).ingest(paths: [path])
        try ("\n" + first + second).write(toFile: path, atomically: true, encoding: .utf8)
        let again = try IngestPipeline(store: store).ingest(paths: [path])
        #expect(again.filesRead == 1 && again.filesReplaced == 0 && again.duplicateRecords > 0)
        #expect(try store.listFiles().count == 2)
    }

    @Test("A missing path is named as unreadable and the paths beside it are still ingested")
    func missingPath() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let missing = directory.appendingPathComponent("nope").path
        let summary = try IngestPipeline(store: store).ingest(paths: [missing, fixture("outcomes/lost.jsonl")])
        #expect(summary.unreadable.map(\.path) == [missing])
        #expect(summary.unreadable.first?.reason.contains("No such file") == true)
        #expect(summary.filesRead == 1 && summary.newRecords > 0)
    }

    @Test(
        "A tree is read while it is walked: every file in walk order, what the walk skipped and missed in the summary")
    func walkedWhileRead() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // More files than one chunk of the listing (256), in nested directories, with a
        // hidden file among them and a missing path named after the tree.
        let fm = FileManager.default
        let lines = try String(contentsOfFile: fixture("outcomes/lost.jsonl"), encoding: .utf8)
        var expected: [String] = []
        for group in 0..<3 {
            let sub = directory.appendingPathComponent("g\(group)/day").path
            try fm.createDirectory(atPath: sub, withIntermediateDirectories: true)
            for index in 0..<200 {
                let path = sub + "/f\(String(format: "%03d", index)).jsonl"
                // Each file its own bytes: a line no other file has (malformed, counted).
                try (lines + "{\"file\": \(group * 1000 + index)}\n").write(
                    toFile: path, atomically: true, encoding: .utf8)
                expected.append(path)
            }
        }
        try lines.write(
            toFile: directory.appendingPathComponent("g1/.hidden.jsonl").path, atomically: true, encoding: .utf8)
        let missing = directory.appendingPathComponent("nope").path
        let storeDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storeDirectory) }
        let store = try SQLiteStore(path: storeDirectory.appendingPathComponent("s.sqlite").path)
        var options = IngestPipeline.Options()
        options.bulkLoadWhenNew = true
        var seen: [IngestProgress] = []
        let summary = try IngestPipeline(store: store, options: options).ingest(
            paths: [directory.path, missing], progress: { seen.append($0) })
        #expect(summary.filesRead == 600)
        #expect(summary.unreadable.map(\.path) == [missing])
        #expect(summary.skippedEntries.map { ($0.path as NSString).lastPathComponent } == [".hidden.jsonl"])
        #expect(summary.malformedLines == 600)
        // Registered in the order the walk lists them (sorted, depth first).
        #expect(try store.listFiles().sorted { $0.id < $1.id }.map(\.path) == expected)
        // Progress counts the files listed so far; once the walk is over, all of them.
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0.filesTotal <= 600 && $0.filesDone < $0.filesTotal })
        #expect(seen.filter { !$0.listing }.allSatisfy { $0.filesTotal == 600 })
    }

    @Test("A tree as deep as a path can go is walked on the walk's own thread")
    func deepTree() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Nested directories up to about 4,000 bytes of path (PATH_MAX is 4,096), a file at the bottom.
        let levels = (4_000 - directory.path.utf8.count) / 2
        let deepest = directory.path + String(repeating: "/a", count: levels)
        try FileManager.default.createDirectory(atPath: deepest, withIntermediateDirectories: true)
        try
            "{\"v\": 1, \"kind\": \"render\", \"activity_id\": \"a\", \"seq\": 1, \"rendered_at\": \"2026-11-21T00:00:00Z\"}\n"
            .write(toFile: deepest + "/x.jsonl", atomically: true, encoding: .utf8)
        let storeDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storeDirectory) }
        let store = try SQLiteStore(path: storeDirectory.appendingPathComponent("s.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [directory.path])
        #expect(levels > 1_900)
        #expect(summary.filesRead == 1 && summary.newRecords == 1 && summary.unreadable.isEmpty)
    }

    @Test("A run stopped by a malformed line (--strict) stops the walk too")
    func walkStopsWithTheRun() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for index in 0..<300 {
            try "{\"v\": 1, \"kind\": \"nope\", \"n\": \(index)}\n".write(
                toFile: directory.appendingPathComponent("f\(String(format: "%03d", index)).jsonl").path,
                atomically: true, encoding: .utf8)
        }
        let storeDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: storeDirectory) }
        let store = try SQLiteStore(path: storeDirectory.appendingPathComponent("s.sqlite").path)
        #expect(throws: IngestError.self) {
            try IngestPipeline(store: store, options: IngestPipeline.Options(strict: true)).ingest(paths: [
                directory.path
            ])
        }
        #expect(try store.listFiles().isEmpty)
    }

    @Test("Links, FIFOs and hidden files met in a walk are skipped and listed")
    func walk() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fm = FileManager.default
        try fm.copyItem(
            atPath: fixture("outcomes/lost.jsonl"), toPath: directory.appendingPathComponent("a.jsonl").path)
        try fm.copyItem(
            atPath: fixture("outcomes/rendered.jsonl"), toPath: directory.appendingPathComponent(".hidden.jsonl").path)
        try fm.createSymbolicLink(
            atPath: directory.appendingPathComponent("loop").path, withDestinationPath: directory.path)
        #expect(mkfifo(directory.appendingPathComponent("pipe").path, 0o600) == 0)
        try fm.copyItem(
            atPath: fixture("outcomes/rendered.jsonl"),
            toPath: directory.appendingPathComponent(".\u{301}hidden.jsonl").path)
        let badName = directory.path + "/bad-\u{FF}"  // placeholder replaced below by raw bytes
        _ = badName
        var raw = Array(directory.path.utf8) + Array("/bad-".utf8) + [0xFF, 0xFE] + Array(".jsonl".utf8) + [0]
        let fd = raw.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                open($0, O_CREAT | O_WRONLY, 0o600)
            }
        }
        #expect(fd >= 0)
        close(fd)
        let walker = InputWalker(paths: [directory.path])
        #expect(walker.files.map { ($0 as NSString).lastPathComponent } == ["a.jsonl"])
        #expect(Set(walker.skipped.map(\.kind)) == ["symbolic link", "FIFO", "name is not UTF-8", "hidden"])
        // Hidden entries are listed by name like the rest (the README promises it), never read.
        #expect(
            walker.skipped.filter { $0.kind == "hidden" }.map { ($0.path as NSString).lastPathComponent }
                == [".hidden.jsonl", ".\u{301}hidden.jsonl"])
        // A FIFO named on the command line is skipped and listed too, not an error.
        let named = InputWalker(paths: [directory.appendingPathComponent("pipe").path])
        #expect(named.files.isEmpty && named.skipped.map(\.kind) == ["FIFO"])
    }
}

@Suite("Order, splits and repeats")
struct DeterminismTests {
    /// Every fixture file: outcomes, metrics, duplicates and bad input.
    static func allFixtureFiles() throws -> [String] {
        InputWalker(paths: [fixture("outcomes"), fixture("metrics"), fixture("dedup"), fixture("badinput")]).files
    }

    @Test(
        "The HTML report, with its file tables, is byte-identical in any ingest order",
        arguments: [7, 8, 9] as [UInt64])
    func htmlInAnyOrder(seed: UInt64) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files = try Self.allFixtureFiles()
        // The same bytes under two more names, and a file repeating part of another's records.
        let fm = FileManager.default
        let copied = directory.appendingPathComponent("copy").path
        try fm.createDirectory(atPath: copied, withIntermediateDirectories: true)
        for name in ["again.jsonl", "zz-again.jsonl"] {
            try fm.copyItem(atPath: files[0], toPath: copied + "/" + name)
            files.append(copied + "/" + name)
        }
        func lines(_ path: String) throws -> [Substring] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        }
        let texts = files.filter { !$0.hasSuffix(".gz") }.compactMap { try? lines($0) }
        let half = try #require(texts.max { $0.count < $1.count })
        try (half.prefix(half.count / 2).joined(separator: "\n") + "\n")
            .write(toFile: copied + "/half.jsonl", atomically: true, encoding: .utf8)
        files.append(copied + "/half.jsonl")

        func html(_ order: [String], _ name: String) throws -> String {
            let store = try SQLiteStore(path: directory.appendingPathComponent(name).path)
            _ = try IngestPipeline(store: store).ingest(paths: order)
            let daily = try DailyReportBuilder(store: store).build(window: nil)
            #expect(!daily.quality.duplicatesByFile.isEmpty && daily.quality.skippedFiles.count == 2)
            return try daily.htmlText(generatedAt: 0)
        }
        var generator = SplitMix(seed: seed)
        let forward = try html(files, "forward.sqlite")
        #expect(try html(files.reversed(), "reversed.sqlite") == forward)
        #expect(try html(files.shuffled(using: &generator), "shuffled.sqlite") == forward)
    }

    @Test(
        "Shuffled, split into several runs, with repeats: byte-identical JSON", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func shuffledSplitsRepeated(seed: UInt64) throws {
        let files = try Self.allFixtureFiles()
        let (baseline, _) = try ingestAndReport(files)
        var generator = SplitMix(seed: seed)
        var order = files.shuffled(using: &generator)
        order += order.prefix(Int(generator.next() % UInt64(order.count)))  // repeats
        order.shuffle(using: &generator)

        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        var index = 0
        while index < order.count {
            let size = 1 + Int(generator.next() % 4)
            let run = Array(order[index..<min(order.count, index + size)])
            _ = try IngestPipeline(store: store).ingest(paths: run)
            index += size
        }
        let result = try ReportBuilder(store: store).build(window: nil)
        #expect(result.jsonText() == baseline.jsonText())
        #expect(result.requests.total > 0)
    }

    @Test("An ingest interrupted mid-file and re-run gives the same report")
    func interrupted() throws {
        let files = try Self.allFixtureFiles()
        let (baseline, _) = try ingestAndReport(files)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        do {
            let store = try SQLiteStore(path: path)
            // The first half completed; the next file was cut off before its commit.
            _ = try IngestPipeline(store: store).ingest(paths: Array(files.prefix(files.count / 2)))
            let victim = files[files.count / 2]
            let transaction = try store.beginFile(path: victim, now: 0)
            try transaction.insert(.render(RenderRecord(activityID: "half", seq: 1, renderedAt: 0)))
            transaction.rollback()  // what SQLite does with an uncommitted transaction after a crash
        }
        let store = try SQLiteStore(path: path)
        _ = try IngestPipeline(store: store).ingest(paths: files)
        #expect(try ReportBuilder(store: store).build(window: nil).jsonText() == baseline.jsonText())
    }
}

import ArrivalHandOff
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest
@testable import ArrivalStore

/// Issue 39: what one upload with the public device token can cost the store.
@Suite("Record identity and ingest bounds")
struct RecordIdentityTests {
    /// `count` renders of one activity that all carry one `rendered_at`, differing only in `seq`.
    static func sameMillisecond(_ count: Int, seqFrom first: Int = 0) -> String {
        var text = ""
        text.reserveCapacity(count * 120)
        for seq in first..<(first + count) {
            text += #"{"kind":"render","activity_id":"A1","seq":\#(seq),"rendered_at":"2026-11-01T10:00:00.000Z","#
            text += #""surface":"lock_screen"}"# + "\n"
        }
        return text
    }

    @Test("A million records in one millisecond get keys that almost never collide")
    func keysOfOneMillisecond() {
        var batch = RowBatch(capacity: 4096)
        var keys = Set<UInt64>()
        keys.reserveCapacity(1 << 20)
        var rows = 0
        for seq in 0..<(1 << 20) {
            batch.append(.render(RenderRecord(activityID: "A1", seq: Int64(seq), renderedAt: 1_790_000_000_000)))
            if batch.rows.count == 4096 {
                for row in batch.rows { keys.insert(row.key) }
                rows += batch.rows.count
                batch.removeAll()
            }
        }
        // 2^20 keys among 2^42 per window: a collision is about a one-in-eight event.
        #expect(rows == 1 << 20)
        #expect(keys.count >= rows - 2, "\(rows - keys.count) collisions")
        // All in the window of their time.
        #expect(Set(keys.map { $0 >> 42 }) == [UInt64(1_790_000_000_000 >> 20)])
    }

    @Test("The next key after a collision stays in the record's time window and visits new keys")
    func probingStaysInWindow() {
        let key = recordKey(time: 1_790_000_000_000, hash: 0xFFFF_FFFF_FFFF_FFFF)
        var seen: Set<UInt64> = [key]
        var next = key
        for _ in 0..<1000 {
            next = nextRecordKey(after: next, hash: 0xFFFF_FFFF_FFFF_FFFF)
            #expect(next >> 42 == key >> 42)
            seen.insert(next)
        }
        #expect(seen.count == 1001)
    }

    @Test("Records sharing a millisecond are stored once each, and again-ingested ones are duplicates")
    func sameMillisecondIngest() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first.jsonl").path
        let again = directory.appendingPathComponent("again.jsonl").path
        try Self.sameMillisecond(200_000).write(toFile: first, atomically: true, encoding: .utf8)
        // The same records in other bytes (and 1,000 new ones).
        try (Self.sameMillisecond(201_000).split(separator: "\n").reversed().joined(separator: "\n") + "\n")
            .write(toFile: again, atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let ingestor = IngestPipeline(store: store)
        let one = try ingestor.ingest(paths: [first])
        #expect(one.records == [.render: 200_000])
        let two = try ingestor.ingest(paths: [again])
        #expect(two.records == [.render: 1000])
        #expect(two.duplicateRecords == 200_000)
    }

    @Test("A store keyed the old way is keyed again in place: its records are found equal to new lines")
    func oldStoreRekeyed() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        try FileManager.default.copyItem(atPath: fixture("stores/lifecycle-before-3.0.store"), toPath: path)
        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations().contains("0011_record_keys_by_window"))
        // Every record of the fixture again, in one file of other bytes: each a duplicate.
        var lines: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: fixture("lifecycle")).sorted() {
            let text = try String(contentsOfFile: fixture("lifecycle") + "/" + file, encoding: .utf8)
            lines += text.split(separator: "\n").map(String.init)
        }
        let copy = directory.appendingPathComponent("all-again.jsonl").path
        try (lines.reversed().joined(separator: "\n") + "\n").write(toFile: copy, atomically: true, encoding: .utf8)
        let summary = try IngestPipeline(store: store).ingest(paths: [copy])
        #expect(summary.newRecords == 0)
        #expect(summary.duplicateRecords > 0)
        #expect(summary.duplicateRecords == summary.lines - summary.malformedLines - blankLines(lines))
        // The keys are those a new store computes for the same lines.
        let fresh = try SQLiteStore(path: directory.appendingPathComponent("fresh.sqlite").path)
        _ = try IngestPipeline(store: fresh).ingest(paths: [fixture("lifecycle")])
        for table in ["apns", "renders", "callbacks"] {
            #expect(try keys(store, table) == keys(fresh, table), "\(table)")
        }
    }

    private func blankLines(_ lines: [String]) -> Int {
        lines.filter { $0.allSatisfy(\.isWhitespace) }.count
    }

    private func keys(_ store: SQLiteStore, _ table: String) throws -> Set<Int64> {
        let query = try store.connection.prepare("SELECT record_key FROM \(table)")
        var keys: Set<Int64> = []
        try query.forEachRow { keys.insert($0.int(0)) }
        return keys
    }

    @Test("Repeats are counted per file and record, not stored a row a line")
    func repeatsCounted() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("repeated.jsonl").path
        let line = Self.sameMillisecond(1)
        try String(repeating: line, count: 5000).write(toFile: file, atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [file])
        #expect(summary.records == [.render: 1])
        #expect(summary.duplicateRecords == 4999)
        let rows = try store.connection.prepare("SELECT count(*), sum(repeats) FROM record_repeats")
        #expect(try rows.step())
        #expect(rows.int(0) == 1 && rows.int(1) == 4999)
        rows.reset()
        // Every holder counts its lines of the repeated record, the file that stored it too.
        #expect(try store.read { try $0.duplicatesByFile(limit: 5) }.map(\.records) == [5000])
    }

    @Test("Past the line limit the lines before are kept and one too_large line stands for the rest")
    func lineLimit() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("many.jsonl").path
        try Self.sameMillisecond(10_000).write(toFile: file, atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        var options = IngestPipeline.Options()
        options.limits = LineReader.Limits(lines: 2500)
        let summary = try IngestPipeline(store: store, options: options).ingest(paths: [file])
        #expect(summary.records == [.render: 2500])
        #expect(summary.malformedByCause == [.tooLarge: 1])
        #expect(summary.firstMalformed.first?.line == 2501)
        #expect(summary.firstMalformed.first?.problem?.contains("more than 2500 lines") == true)
        // The file is stored (its bytes are known): the same bytes again are skipped.
        let again = try IngestPipeline(store: store, options: options).ingest(paths: [file])
        #expect(again.filesAlreadyIngested == 1)
        // --strict names it.
        options.strict = true
        let strictStore = try SQLiteStore(path: directory.appendingPathComponent("strict.sqlite").path)
        #expect(throws: IngestError.self) {
            try IngestPipeline(store: strictStore, options: options).ingest(paths: [file])
        }
    }

    @Test("A gzip bomb is decoded only as far as the byte limit", arguments: [false, true])
    func inflatedByteLimit(large: Bool) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("bomb.jsonl").path
        // Large: past the size at which inflating runs on a thread of its own.
        let line = Self.sameMillisecond(1)
        try String(repeating: line, count: large ? 400_000 : 40_000).write(
            toFile: plain, atomically: true, encoding: .utf8)
        let gzip = try run(.path("/bin/gzip"), ["-9", plain])
        #expect(gzip.status == 0, "\(gzip)")
        let file = plain + ".gz"
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        var options = IngestPipeline.Options()
        options.limits = LineReader.Limits(inflatedBytes: 1 << 20)
        let summary = try IngestPipeline(store: store, options: options).ingest(paths: [file])
        let kept = (1 << 20) / line.utf8.count
        #expect(summary.records == [.render: 1])
        #expect(summary.duplicateRecords == kept - 1)
        #expect(summary.malformedByCause == [.tooLarge: 1])
        #expect(summary.firstMalformed.first?.line == kept + 1)
        #expect(summary.firstMalformed.first?.problem?.contains("inflates to more than 1048576 bytes") == true)
        // Its bytes were hashed whole: the same file again is known.
        #expect(try IngestPipeline(store: store, options: options).ingest(paths: [file]).filesAlreadyIngested == 1)
    }

    @Test("A run asked to stop leaves the file it is in and those after it, and a later run completes them")
    func stopBetweenBatches() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = (0..<3).map { directory.appendingPathComponent("f\($0).jsonl").path }
        for (index, path) in paths.enumerated() {
            try Self.sameMillisecond(20_000, seqFrom: index * 20_000).write(
                toFile: path, atomically: true, encoding: .utf8)
        }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        // Asked before each file and each batch (4,096 lines, 5 a file): 1-6 for the first file, 7 before
        // the second and 8 at its first batch; the 9th, at its second batch, stops the run in the middle of it.
        let asked = SharedCounter()
        var options = IngestPipeline.Options()
        options.stop = { asked.next() > 8 }
        let files = paths.map { NamedFile(path: $0, name: $0) }
        let first = try IngestPipeline(store: store, options: options).ingest(files)
        #expect(first.filesRead == 1)
        #expect(first.interrupted == Array(paths[1...]))
        #expect(first.newRecords == 20_000)
        let rest = try IngestPipeline(store: store).ingest(files)
        #expect(rest.filesRead == 2 && rest.filesAlreadyIngested == 1)
        #expect(rest.newRecords == 40_000 && rest.duplicateRecords == 0)
        #expect(rest.interrupted.isEmpty)
    }
}

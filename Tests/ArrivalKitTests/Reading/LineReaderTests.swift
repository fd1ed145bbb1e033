import ArrivalAnalysis
import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import Foundation
import Testing

@Suite("Line reading")
struct LineReaderTests {
    /// Reads a file with a given chunk size and returns its lines (nil for too long).
    func lines(_ path: String, chunkSize: Int = 16, maxLineBytes: Int = LineReader.defaultMaxLineBytes) throws -> (
        [String?], ReadSummary
    ) {
        var out: [String?] = []
        let summary = try LineReader(chunkSize: chunkSize, maxLineBytes: maxLineBytes).read(path: path) { line in
            out.append(line.bytes.map { String(decoding: $0, as: UTF8.self) })
        }
        return (out, summary)
    }

    @Test("Plain file with CRLF, blank lines and a torn last line, across tiny chunks")
    func crlf() throws {
        let (lines, summary) = try lines(fixture("badinput/torn-crlf.jsonl"))
        #expect(summary.lines == 8)
        #expect(!summary.gzip)
        #expect(lines[1] == "   \t")
        #expect(lines[2] == "")
        #expect(lines[3] == "not json at all")
        #expect(lines.allSatisfy { $0?.hasSuffix("\r") == false })
        #expect(lines[7] == #"{"v":1,"kind":"render","activity_id":"G","se"#)
    }

    @Test("Multi-member gzip is read whole, whatever the chunk size", arguments: [16, 64, 1 << 18])
    func multiMember(chunkSize: Int) throws {
        let (lines, summary) = try lines(fixture("dedup/more.jsonl.gz"), chunkSize: chunkSize)
        #expect(summary.gzip)
        #expect(!summary.truncatedGzip)
        #expect(lines.count == 2)
        #expect(lines[1]?.contains("\"d2\"") == true)
    }

    @Test("A cut gzip keeps the lines decoded before the break")
    func cutGzip() throws {
        let (lines, summary) = try lines(fixture("badinput/cut.jsonl.gz"), chunkSize: 64)
        #expect(summary.truncatedGzip)
        #expect(lines.count == 21)  // 20 whole lines and the start of the 21st
        #expect(lines[19]?.hasSuffix("}") == true)
    }

    @Test(
        "A range of a file reads as a file of its own: plain or gzip, between other bytes",
        arguments: [16, 64, 1 << 18])
    func range(chunkSize: Int) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let gzip = try Data(contentsOf: URL(fileURLWithPath: fixture("dedup/more.jsonl.gz")))
        let plain = Data("{\"a\":1}\n{\"b\":2}\n{\"c\":3".utf8)
        // Bytes before, between and after the two parts, as in a spool segment.
        let noise = Data("\u{1f}\u{8b}noise\n".utf8)
        let file = directory.appendingPathComponent("segment")
        try (noise + gzip + noise + plain + noise).write(to: file)
        let gzipRange = noise.count..<(noise.count + gzip.count)
        let plainRange = (gzipRange.upperBound + noise.count)..<(gzipRange.upperBound + noise.count + plain.count)
        var raw = Data()
        var seen: [String] = []
        let reader = LineReader(chunkSize: chunkSize)
        let zipped = try reader.read(
            path: file.path, range: gzipRange, raw: { raw.append(contentsOf: $0) },
            { seen.append(String(decoding: $0.bytes!, as: UTF8.self)) })
        #expect(zipped.gzip && !zipped.truncatedGzip)
        #expect(zipped.bytesOnDisk == gzip.count && raw == gzip)
        #expect(seen.count == 2 && seen[1].contains("\"d2\""))
        seen = []
        let text = try reader.read(path: file.path, range: plainRange) {
            seen.append(String(decoding: $0.bytes!, as: UTF8.self))
        }
        #expect(!text.gzip && text.changedWhileRead == nil)
        #expect(seen == [#"{"a":1}"#, #"{"b":2}"#, #"{"c":3"#])
        // A range past the end of the file is an error, not a short file.
        #expect(throws: InputError.self) {
            try reader.read(path: file.path, range: plainRange.lowerBound..<(plainRange.upperBound + 1000)) { _ in }
        }
    }

    @Test("gzip is recognised by its magic bytes, not its name")
    func magic() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let renamed = directory.appendingPathComponent("batch.log").path
        try FileManager.default.copyItem(atPath: fixture("dedup/more.jsonl.gz"), toPath: renamed)
        let (lines, summary) = try lines(renamed)
        #expect(summary.gzip)
        #expect(lines.count == 2)
    }

    @Test("Only \\n or \\r\\n end a line: a \\r at the end of the file counts toward the length")
    func carriageReturnAtEnd() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ended = directory.appendingPathComponent("ended.jsonl").path
        let unended = directory.appendingPathComponent("unended.jsonl").path
        try "0123456789\r\n".write(toFile: ended, atomically: true, encoding: .utf8)
        try "0123456789\r".write(toFile: unended, atomically: true, encoding: .utf8)
        #expect(try lines(ended, maxLineBytes: 10).0 == ["0123456789"])
        #expect(try lines(unended, maxLineBytes: 10).0 == [nil])
        #expect(try lines(unended, maxLineBytes: 11).0 == ["0123456789\r"])
    }

    @Test("A line over the limit is skipped without being held, its neighbours kept")
    func tooLong() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("long.jsonl").path
        let text =
            "short\n" + String(repeating: "x", count: 1000) + "\n" + String(repeating: "y", count: 100) + "\r\nlast"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (lines, _) = try lines(path, chunkSize: 32, maxLineBytes: 100)
        #expect(lines == ["short", nil, String(repeating: "y", count: 100), "last"])
    }
}

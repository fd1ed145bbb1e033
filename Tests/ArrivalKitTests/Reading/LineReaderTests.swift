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

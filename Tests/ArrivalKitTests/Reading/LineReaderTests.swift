import ArrivalAnalysis
import ArrivalBeacons
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

/// A large gzip file is inflated on a thread of its own
/// (``LineReader/pipelineMinimumBytes``); what is read must not depend on it.
@Suite("Line reading: inflating on a thread of its own")
struct PipelinedInflateTests {
    struct Read: Equatable {
        var lines: [String?]
        var summary: ReadSummary
        var raw: [UInt8]
    }

    func read(_ path: String, chunkSize: Int, pipelined: Bool, stopAfter: Int = .max) throws -> Read {
        var reader = LineReader(chunkSize: chunkSize)
        reader.pipelineMinimumBytes = pipelined ? 0 : .max
        var lines: [String?] = []
        var raw: [UInt8] = []
        struct Stop: Error {}
        let summary = try reader.read(
            path: path, raw: { raw.append(contentsOf: $0) },
            { line in
                if lines.count == stopAfter { throw Stop() }
                lines.append(line.bytes.map { String(decoding: $0, as: UTF8.self) })
            })
        return Read(lines: lines, summary: summary, raw: raw)
    }

    /// Gzip files of many chunks: whole, in two members, cut at several
    /// points, with a flipped byte, and with bytes after the last member.
    func variants(in directory: URL) throws -> [String] {
        var text: [UInt8] = []
        for i in 0..<3000 {
            text += Array(
                #"{"v":1,"kind":"render","activity_id":"a-\#(i % 97)","seq":\#(i),"rendered_at":"2026-11-21T00:00:00Z"}"#
                    .utf8)
            text += i % 7 == 0 ? [0x0D, 0x0A] : [0x0A]
        }
        let whole = try GzipWriter.gzip(text)
        let half = text.count / 2
        let twoMembers = try GzipWriter.gzip(Array(text[..<half])) + GzipWriter.gzip(Array(text[half...]))
        var flipped = whole
        flipped[whole.count / 2] ^= 0x40
        var files: [(String, [UInt8])] = [
            ("whole", whole), ("members", twoMembers), ("flipped", flipped),
            ("trailing", whole + Array("not gzip\n".utf8)),
        ]
        for cut in [11, whole.count / 3, whole.count - 9, whole.count - 1] {
            files.append(("cut-\(cut)", Array(whole[..<cut])))
        }
        return try files.map { name, bytes in
            let file = directory.appendingPathComponent(name + ".jsonl.gz")
            try Data(bytes).write(to: file)
            return file.path
        }
    }

    @Test("Lines, summary and raw bytes are those of inflating inline", arguments: [64, 4096, 1 << 18])
    func sameAsInline(chunkSize: Int) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var truncated = 0
        for path in try variants(in: directory) + [fixture("badinput/cut.jsonl.gz"), fixture("dedup/more.jsonl.gz")] {
            let inline = try read(path, chunkSize: chunkSize, pipelined: false)
            let pipelined = try read(path, chunkSize: chunkSize, pipelined: true)
            #expect(pipelined == inline, "\(path)")
            #expect(inline.raw == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            if inline.summary.truncatedGzip { truncated += 1 }
        }
        // The cuts, the flipped byte, the trailing bytes and the fixture cut short all break off.
        #expect(truncated == 7)
    }

    @Test("A reader that stops early stops the inflating thread, and gets its own error back")
    func stopsEarly() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try variants(in: directory)[0]
        for stopAfter in [0, 1, 500, 2999] {
            #expect(throws: (any Error).self) { try read(path, chunkSize: 64, pipelined: true, stopAfter: stopAfter) }
        }
        // Every line when nothing stops it.
        #expect(try read(path, chunkSize: 64, pipelined: true).lines.count == 3000)
    }
}

import ArrivalAnalysis
import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalTestSupport
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

    @Test("The first chunk is called whole only when it is the whole file or range, and a throw stops before any line")
    func firstChunk() throws {
        let path = fixture("badinput/torn-crlf.jsonl")
        let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
        struct Stop: Error {}
        for (chunkSize, range, whole) in [
            (size + 1, nil, true), (size, nil, false), (16, nil, false),
            (16, 3..<19, true), (16, 3..<20, false), (size + 1, 0..<size, true),
        ] as [(Int, Range<Int>?, Bool)] {
            let reader = LineReader(chunkSize: chunkSize)
            var calls: [Bool] = []
            var lines = 0
            let count: (LineSlice) -> Void = { _ in lines += 1 }
            _ = try reader.read(path: path, range: range, afterFirstChunk: { calls.append($0) }, count)
            #expect(calls == [whole], "chunk \(chunkSize), range \(String(describing: range))")
            #expect(lines > 0)
            lines = 0
            #expect(throws: Stop.self) {
                _ = try reader.read(path: path, range: range, afterFirstChunk: { _ in throw Stop() }, count)
            }
            #expect(lines == 0)
        }
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

    /// Reads `path`; pipelined, as ``IngestPipeline`` does: again with zlib when ISA-L read further than zlib.
    func read(
        _ path: String, range: Range<Int>? = nil, chunkSize: Int, pipelined: Bool, stopAfter: Int = .max
    ) throws -> Read {
        do {
            return try read(
                path, range: range, chunkSize: chunkSize, pipelined: pipelined, fast: true, stopAfter: stopAfter)
        } catch is LineReader.ReadAgainWithZlib {
            return try read(
                path, range: range, chunkSize: chunkSize, pipelined: pipelined, fast: false, stopAfter: stopAfter)
        }
    }

    func read(
        _ path: String, range: Range<Int>? = nil, chunkSize: Int, pipelined: Bool, fast: Bool, stopAfter: Int
    ) throws -> Read {
        var reader = LineReader(chunkSize: chunkSize)
        reader.pipelineMinimumBytes = pipelined ? 0 : .max
        reader.fastInflate = fast
        var lines: [String?] = []
        var raw: [UInt8] = []
        struct Stop: Error {}
        let summary = try reader.read(
            path: path, range: range, raw: { raw.append(contentsOf: $0) },
            { line in
                if lines.count == stopAfter { throw Stop() }
                lines.append(line.bytes.map { String(decoding: $0, as: UTF8.self) })
            })
        return Read(lines: lines, summary: summary, raw: raw)
    }

    /// Gzip files of many chunks: whole, in two members, at four levels,
    /// cut at many points, with bits flipped at many places, and with bytes
    /// after the last member. The first file is the whole one at level 6.
    func variants(in directory: URL) throws -> (paths: [String], broken: Set<String>) {
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
        var files: [(String, [UInt8])] = [
            ("whole", whole), ("members", twoMembers), ("stored", try GzipWriter.gzip(text, level: 0)),
            ("fastest", try GzipWriter.gzip(text, level: 1)), ("best", try GzipWriter.gzip(text, level: 9)),
        ]
        var broken: [(String, [UInt8])] = [("trailing", whole + Array("not gzip\n".utf8))]
        var random = SplitMix(seed: 14)
        for source in [whole, twoMembers] {
            for cut in [2, 11, 12, source.count - 9, source.count - 1]
                + (0..<24).map({ _ in
                    1 + Int(random.next() % UInt64(source.count - 1))
                })
            {
                broken.append(("cut-\(source.count)-\(cut)", Array(source[..<cut])))
            }
            for flip in 0..<32 {
                var damaged = source
                let at = 10 + Int(random.next() % UInt64(source.count - 18))
                damaged[at] ^= UInt8(1 << (random.next() % 8))
                files.append(("flip-\(source.count)-\(flip)", damaged))
            }
        }
        let paths = try (files + broken).map { name, bytes in
            let file = directory.appendingPathComponent(name + ".jsonl.gz")
            try Data(bytes).write(to: file)
            return file.path
        }
        return (paths, Set(paths.suffix(broken.count)))
    }

    @Test("Lines, summary and raw bytes are those of inflating inline", arguments: [64, 4096, 1 << 18])
    func sameAsInline(chunkSize: Int) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (paths, broken) = try variants(in: directory)
        var readAgain = 0
        for path in paths + [fixture("badinput/cut.jsonl.gz"), fixture("dedup/more.jsonl.gz")] {
            do {
                _ = try read(path, chunkSize: chunkSize, pipelined: true, fast: true, stopAfter: .max)
            } catch is LineReader.ReadAgainWithZlib {
                readAgain += 1
            }
            let inline = try read(path, chunkSize: chunkSize, pipelined: false)
            let pipelined = try read(path, chunkSize: chunkSize, pipelined: true)
            #expect(pipelined == inline, "\(path)")
            #expect(inline.raw == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            if broken.contains(path) { #expect(inline.summary.truncatedGzip, "\(path)") }
        }
        for path in paths.prefix(5) {
            #expect(try read(path, chunkSize: chunkSize, pipelined: true).lines.count == 3000)
        }
        // ISA-L gave way to zlib for a few damaged files only (it reads further than zlib in some).
        #expect(readAgain < paths.count / 10)
    }

    @Test("A damaged file ISA-L reads further than zlib is stored as zlib reads it")
    func ingestReadsAgain() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (paths, _) = try variants(in: directory)
        // Some of them do make ISA-L give way, so the ingest below reads them again.
        let readAgain = paths.filter { path in
            (try? read(path, chunkSize: LineReader.defaultChunkSize, pipelined: true, fast: true, stopAfter: .max))
                == nil
        }
        #expect(!readAgain.isEmpty)
        let stores = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: stores) }
        var reports: [Report] = []
        var summaries: [IngestSummary] = []
        for pipelined in [true, false] {
            let store = try SQLiteStore(path: stores.appendingPathComponent("\(pipelined).sqlite").path)
            var options = IngestPipeline.Options()
            options.reader.pipelineMinimumBytes = pipelined ? 0 : .max
            let summary = try IngestPipeline(store: store, options: options).ingest(
                paths: [directory.path], progress: nil)
            summaries.append(summary)
            reports.append(try ReportBuilder(store: store).build(window: nil))
        }
        #expect(summaries[0].unreadable.isEmpty && summaries[0].filesRead == summaries[1].filesRead)
        #expect(summaries[0].malformedByCause == summaries[1].malformedByCause)
        #expect(summaries[0].records == summaries[1].records)
        #expect(reports[0] == reports[1])
    }

    @Test("A range of a segment reads as the file it holds, ISA-L's breaks read again by zlib inside the range")
    func ranges() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (paths, _) = try variants(in: directory)
        // Gzip-looking bytes around each file, as other uploads stand around one in a spool segment.
        let noise = try GzipWriter.gzip(Array("{\"other\":1}\n".utf8))
        let segment = directory.appendingPathComponent("segment").path
        for path in paths {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try (Data(noise) + bytes + Data(noise)).write(to: URL(fileURLWithPath: segment))
            let range = noise.count..<(noise.count + bytes.count)
            let whole = try read(path, chunkSize: 4096, pipelined: false)
            #expect(try read(segment, range: range, chunkSize: 4096, pipelined: true) == whole, "\(path)")
        }
    }

    @Test("A reader that stops early stops the inflating thread, and gets its own error back")
    func stopsEarly() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try variants(in: directory).paths[0]
        for stopAfter in [0, 1, 500, 2999] {
            #expect(throws: (any Error).self) { try read(path, chunkSize: 64, pipelined: true, stopAfter: stopAfter) }
        }
        // Every line when nothing stops it.
        #expect(try read(path, chunkSize: 64, pipelined: true).lines.count == 3000)
    }
}

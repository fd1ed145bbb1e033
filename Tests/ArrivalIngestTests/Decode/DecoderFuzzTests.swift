import ArrivalAnalysis
import ArrivalHandOff
import ArrivalModel
import ArrivalRendering
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest
@testable import ArrivalStore

/// The scanner reads lines through raw pointers, so it gets mutated lines by
/// the ten thousand: truncated, with bytes replaced, with JSON punctuation,
/// escapes and non-ASCII bytes inserted. Every line must get an answer, the
/// same one twice, and a line accepted as a record must be JSON that
/// Foundation's parser accepts too, decoding to the same record either way.
@Suite("Decoder fuzzing")
struct DecoderFuzzTests {
    static let seeds: [[UInt8]] = {
        var lines: [[UInt8]] = []
        let files = InputWalker(paths: samplePaths).files
        for path in files.prefix(40) {
            _ = try? LineReader().read(path: path) { line in
                if let bytes = line.bytes, lines.count < 400, line.number <= 12 { lines.append(Array(bytes)) }
            }
        }
        return lines
    }()

    static let inserts: [[UInt8]] =
        [
            "{", "}", "[", "]", "\"", ",", ":", "\\", "\\u", "\\ud83d", "\\u00e9", "0", "-", "1e5", ".", " ", "\t",
            "null", "true", "é", "\u{1F600}", "\"kind\":", "\"seq\":1,", "{\"a\":{\"b\":[1,2]}}",
        ].map { Array($0.utf8) } + [
            [0x00], [0x1F], [0x80], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF],
        ]

    @Test("30,000 mutated lines: an answer for each, the same twice, and only real JSON accepted")
    func mutatedLines() throws {
        #expect(Self.seeds.count > 100)
        var random = SplitMix(seed: 2026)
        var decoder = RecordDecoder()
        var batch = RowBatch()
        var accepted = 0
        for _ in 0..<30_000 {
            var line = Self.seeds[Int(random.next() % UInt64(Self.seeds.count))]
            for _ in 0...(random.next() % 3) {
                let at = line.isEmpty ? 0 : Int(random.next() % UInt64(line.count + 1))
                switch random.next() % 4 {
                case 0: line.removeSubrange(at...)
                case 1 where at < line.count: line[at] = UInt8(truncatingIfNeeded: random.next())
                case 2: line.insert(contentsOf: Self.inserts[Int(random.next() % UInt64(Self.inserts.count))], at: at)
                default:
                    let end = min(line.count, at + Int(random.next() % 40))
                    line.insert(contentsOf: line[at..<end], at: at)
                }
            }
            let first = line.withUnsafeBufferPointer { decoder.decode($0) }
            let second = line.withUnsafeBufferPointer { decoder.decode($0) }
            #expect(first == second)
            batch.removeAll()
            let appended = line.withUnsafeBufferPointer { decoder.decode($0, line: 1, into: &batch) }
            guard case .record(let record) = first else {
                #expect(appended != .record && batch.rows.isEmpty && batch.cells.isEmpty && batch.bytes.isEmpty)
                continue
            }
            accepted += 1
            #expect(appended == .record && batch.record(batch.rows[0]) == record)
            let parsed = try? JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed])
            #expect(parsed is [String: Any], "accepted but not a JSON object: \(String(decoding: line, as: UTF8.self))")
        }
        // Most mutations break a line; some leave a valid record (a changed value, an added field).
        #expect(accepted > 1_000)
    }
}

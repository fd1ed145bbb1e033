import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest

@Suite("Record decoding")
struct RecordDecoderTests {
    // Field names as the JSON keys, for Decodable.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct LineCase: Decodable, CustomTestStringConvertible {
        var line_base64: String
        var cause: String
        var testDescription: String {
            let bytes = Data(base64Encoded: line_base64) ?? Data()
            return String(decoding: bytes.prefix(80), as: UTF8.self) + " → " + cause
        }
    }

    /// Lines for every malformed cause of Documentation/InputRecords.md and its precedence,
    /// with the cause each must get ("ok" for a valid record).
    static let lineCases: [LineCase] = {
        guard let data = FileManager.default.contents(atPath: fixture("decoding/line-cases.json", in: .module)),
            let cases = try? JSONDecoder().decode([LineCase].self, from: data)
        else { return [] }
        return cases
    }()

    @Test("The case list loaded")
    func casesLoaded() {
        #expect(Self.lineCases.count > 70)
    }

    @Test("Each bad-input line gets its cause", arguments: lineCases)
    func lineCause(_ lineCase: LineCase) throws {
        let bytes = try #require(Data(base64Encoded: lineCase.line_base64))
        var decoder = RecordDecoder()
        let outcome = bytes.withUnsafeBytes { decoder.decode($0.bindMemory(to: UInt8.self)) }
        switch outcome {
        case .record: #expect(lineCase.cause == "ok")
        case .malformed(let cause): #expect(cause.rawValue == lineCase.cause)
        case .blank: Issue.record("a case line is never blank")
        }
    }

    @Test("Nesting: 64 levels are fine, 65 are too deep, a million do not crash")
    func nesting() {
        func line(depth: Int, closed: Bool = true) -> String {
            // The record object is level 1; depth - 1 arrays inside it.
            "{\"kind\":\"render\",\"activity_id\":\"a\",\"seq\":1,\"rendered_at\":\"2026-11-21T08:00:00Z\",\"x\":"
                + String(repeating: "[", count: depth - 1)
                + String(repeating: "]", count: closed ? depth - 1 : depth - 2) + "}"
        }
        var decoder = RecordDecoder()
        if case .record = decoder.decode(line(depth: 64)) {} else { Issue.record("64 levels must decode") }
        #expect(decoder.decode(line(depth: 65)) == .malformed(.tooDeep))
        #expect(decoder.decode(line(depth: 1_000_000)) == .malformed(.tooDeep))
        #expect(decoder.decode(line(depth: 1_000, closed: false)) == .malformed(.invalidJSON))
    }

    @Test("Fields decode with escapes, unicode, offsets and defaults")
    func fields() throws {
        let text =
            #"{"kind":"apns","apns_id":"id-\u00e9\"q\"","sent_at":"2026-11-21t16:00:00.123999+08:00","status":200,"push_token":"ab","aps_timestamp":1763712000,"seq":-0,"topic":"caf\u00e9 ☕","extra":{"k":[1,2.5e3,"x"]}}"#
        var decoder = RecordDecoder()
        guard case .record(.apns(let r)) = decoder.decode(text) else {
            Issue.record("expected an apns record")
            return
        }
        #expect(r.apnsID == "id-é\"q\"")
        #expect(r.sentAt == RFC3339.parseMilliseconds("2026-11-21T08:00:00.123Z"))
        #expect(r.seq == 0)
        #expect(r.topic == "café ☕")
        #expect(r.event == nil)
        #expect(r.apsTimestamp == 1_763_712_000)
    }

    @Test("Every known key is recognised, escaped or not; near misses are not")
    func keyLookup() {
        #expect(JSONLineScanner.fieldCount == RecordField.allCases.count)
        /// Looks `key` up with no byte readable after it, then with room for the two-word load.
        func lookups(_ key: [UInt8]) -> (Int, Int) {
            let exact = key.withUnsafeBufferPointer {
                RecordField.lookup($0.baseAddress!, count: key.count, available: key.count)
            }
            let padded = (key + Array(repeating: UInt8(ascii: "\""), count: 16)).withUnsafeBufferPointer {
                RecordField.lookup($0.baseAddress!, count: key.count, available: $0.count)
            }
            return (exact, padded)
        }
        for field in RecordField.allCases {
            let key = Array(field.key.utf8)
            #expect(lookups(key) == (field.rawValue, field.rawValue), "\(field.key)")
            // One byte changed, one dropped, one added: unknown, unless that is another field's name.
            var changed = key
            changed[changed.count - 1] ^= 0x20
            for other in [changed, Array(key.dropLast()), key + [UInt8(ascii: "x")]] where !other.isEmpty {
                let expected = RecordField.allCases.first { Array($0.key.utf8) == other }?.rawValue ?? -1
                #expect(lookups(other) == (expected, expected), "\(String(decoding: other, as: UTF8.self))")
            }
        }
        var decoder = RecordDecoder()
        let escaped = #"{"k\u0069nd":"render","activity_id":"a","seq":1,"rendered_\u0061t":"2026-11-21T08:00:00Z"}"#
        if case .record(.render(let r)) = decoder.decode(escaped) {
            #expect(r.seq == 1)
        } else {
            Issue.record("escaped keys must name their fields")
        }
        #expect(decoder.decode(#"{"kind":"render","k\u0069nd":"render"}"#) == .malformed(.duplicateKey))
    }

    @Test("Blank lines are skipped, not counted")
    func blank() {
        var decoder = RecordDecoder()
        #expect(decoder.decode("") == .blank)
        #expect(decoder.decode(" \t \r") == .blank)
    }
}

/// A malformed line names the field at fault and why, and the store keeps it.
@Suite("Malformed-line problems")
struct MalformedProblemTests {
    static let cases: [(line: String, cause: MalformedCause, problem: String?)] = [
        (
            #"{"kind":"apns","apns_id":"a","sent_at":1795248000,"status":200,"push_token":"t","aps_timestamp":1}"#,
            .wrongType, "sent_at: expected an RFC 3339 time string, got an integer (1795248000)"
        ),
        (
            #"{"kind":"apns","apns_id":"a","sent_at":"2026-11-21 08:00:00Z","status":200,"push_token":"t","aps_timestamp":1}"#,
            .invalidTime,
            #"sent_at: "2026-11-21 08:00:00Z" is not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM))"#
        ),
        (
            #"{"kind":"apns","sent_at":"2026-11-21T08:00:00Z","status":200,"push_token":"t","aps_timestamp":1}"#,
            .missingField, "apns_id: required, but absent"
        ),
        (
            #"{"kind":"apns","apns_id":null,"sent_at":"2026-11-21T08:00:00Z","status":200,"push_token":"t","aps_timestamp":1}"#,
            .missingField, "apns_id: required, but null"
        ),
        (
            #"{"kind":"render","activity_id":"x","seq":2.5,"rendered_at":"2026-11-21T08:00:00Z"}"#,
            .wrongType,
            "seq: expected an integer, got 2.5 (an integer is written without fraction or exponent, within 64 bits)"
        ),
        (
            #"{"kind":"callback","callback":"content_update","activity_id":"x","received_at":"2026-11-21T08:00:00Z"}"#,
            .missingField, "seq: required for a content_update callback, but absent"
        ),
        (
            #"{"kind":"callback","callback":"resumed","activity_id":"x","received_at":"2026-11-21T08:00:00Z"}"#,
            .invalidEnum,
            #"callback: "resumed" is not one of push_token, push_to_start_token, content_update, activity_state, channel_subscription"#
        ),
        (#"{"v":2,"kind":"render"}"#, .unsupportedVersion, "v: expected 1, got 2"),
        (#"{"kind":"push"}"#, .unknownKind, #"kind: "push" is not one of apns, render, callback, exchange"#),
        (#"{"kind":["render"]}"#, .wrongType, "kind: expected a string, got an array"),
        (#"{"kind":"render","kind":"render"}"#, .duplicateKey, nil),
        (#"{"kind":"render""#, .invalidJSON, nil),
    ]

    @Test("Each problem names its field and reason")
    func problems() {
        var decoder = RecordDecoder()
        for (line, cause, problem) in Self.cases {
            #expect(decoder.decode(line) == .malformed(cause), "\(line)")
            #expect(decoder.lastProblem == problem, "\(line)")
        }
        // A good line clears the last problem.
        _ = decoder.decode(#"{"kind":"render","activity_id":"x","seq":1,"rendered_at":"2026-11-21T08:00:00Z"}"#)
        #expect(decoder.lastProblem == nil)
    }

    @Test("Ingest keeps the problem with its line and shows it in the summary and under --strict")
    func ingested() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.jsonl")
        try Data((Self.cases.map(\.line).joined(separator: "\n") + "\n").utf8).write(to: file)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [file.path])
        let shown = summary.firstMalformed.first { $0.line == 1 }
        #expect(shown?.problem == Self.cases[0].problem)
        #expect(shown?.description.hasSuffix(": wrong_type (\(Self.cases[0].problem ?? ""))") == true)
        let stored = try store.read { try $0.malformedProblems() }
        #expect(stored.count == Self.cases.count)
        for (index, entry) in Self.cases.enumerated() {
            #expect(stored[index].line == index + 1 && stored[index].problem == entry.problem)
        }
        var options = IngestPipeline.Options()
        options.strict = true
        let strictStore = try SQLiteStore(path: directory.appendingPathComponent("strict.sqlite").path)
        #expect {
            _ = try IngestPipeline(store: strictStore, options: options).ingest(paths: [file.path])
        } throws: { error in
            "\(error)".contains("sent_at: expected an RFC 3339 time string")
        }
    }

    @Test("A malformed line under --strict points at its file and line")
    func malformedLocation() {
        let diagnostic = Diagnostic(
            IngestError.malformedLine(path: "/u/a.jsonl", line: 7, cause: .invalidJSON, problem: "expected a value"))
        #expect(diagnostic.location == Diagnostic.Location(path: "/u/a.jsonl", line: 7))
    }
}

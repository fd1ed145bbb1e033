import ArrivalTestSupport
import Foundation
import Testing

/// Counts and their nouns agree in what the command line prints.
@Suite("Wording")
struct WordingTests {
    @Test("One line, one byte and one rule are singular; the diff's record tables say what they list")
    func singular() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("one.jsonl")
        try Data(
            #"{"v":1,"kind":"apns","apns_id":"a1","sent_at":"2026-11-21T08:00:00Z","status":200,"push_token":"t","activity_id":"x","seq":1,"event":"update","aps_timestamp":1795248000}"#
                .utf8 + [0x0A]
        ).write(to: file)
        let db = directory.appendingPathComponent("s.sqlite").path
        let ingest = try run("arrival", ["ingest", file.path, "--db", db])
        #expect(ingest.status == 0)
        #expect(ingest.stdout.contains("bytes, 1 line)"), "\(ingest.stdout)")

        let config = directory.appendingPathComponent("gate.yml")
        try Data("rules:\n  - metric: requests.acceptance_rate\n    at_least: 0.5\n    min_sample: 0\n".utf8).write(
            to: config)
        let gate = try run("arrival", ["gate", "--current", db, "--allow-no-baseline", "--config", config.path])
        #expect(gate.stdout.contains("1 rule: 1 passed"), "\(gate.stdout)\(gate.stderr)")

        let other = directory.appendingPathComponent("other.jsonl")
        try Data(
            #"{"v":1,"kind":"apns","apns_id":"b2","sent_at":"2026-11-21T08:00:00Z","status":200,"push_token":"t","activity_id":"y","seq":1,"event":"update","aps_timestamp":1795248000}"#
                .utf8 + [0x0A]
        ).write(to: other)
        let diff = try run("arrival", ["diff", file.path, other.path, "--records"])
        #expect(diff.stdout.contains("apns records only in A") && diff.stdout.contains("apns records only in B"))
        #expect(!diff.stdout.contains("Only in"))
    }
}

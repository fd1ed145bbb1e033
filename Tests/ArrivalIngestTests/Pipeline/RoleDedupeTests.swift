import ArrivalAnalysis
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest
@testable import ArrivalStore

/// Bytes refused in part because of the token that sent them (a device
/// token's `apns` lines, `kind_not_allowed`) are no duplicate for a token
/// allowed to send them: the later copy takes the earlier one's place.
@Suite("Ingest: duplicates and the uploader's role")
struct RoleDedupeTests {
    /// A sender's log: two requests, and a render of the first.
    static let senderLog =
        [
            #"{"v":1,"kind":"apns","apns_id":"11111111-1111-4111-8111-111111111111","sent_at":"2026-11-26T10:00:00Z","status":200,"push_token":"aa","activity_id":"a1","seq":1,"event":"update","aps_timestamp":1795600000}"#,
            #"{"v":1,"kind":"apns","apns_id":"22222222-2222-4222-8222-222222222222","sent_at":"2026-11-26T10:00:05Z","status":200,"push_token":"aa","activity_id":"a1","seq":2,"event":"update","aps_timestamp":1795600005}"#,
            #"{"v":1,"kind":"render","activity_id":"a1","seq":1,"rendered_at":"2026-11-26T10:00:01Z"}"#,
        ].joined(separator: "\n") + "\n"

    /// The upload as the collector hands it over: a spool file, its name, role and hash.
    static func upload(_ path: String, name: String, sender: Bool) throws -> NamedFile {
        let (sha256, _) = try ContentHash.sha256(of: path)
        return NamedFile(path: path, name: name, senderRecordsAllowed: sender, sha256: sha256)
    }

    func store(in directory: URL) throws -> SQLiteStore {
        try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
    }

    @Test("Device copy first, then the sender's, in separate runs or one: the sender's records are stored")
    func deviceThenSender() throws {
        for oneRun in [false, true] {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("upload.jsonl").path
            try Self.senderLog.write(toFile: path, atomically: true, encoding: .utf8)
            let store = try store(in: directory)
            let device = try Self.upload(path, name: "devices/x/batch.jsonl", sender: false)
            let sender = try Self.upload(path, name: "senders/log.jsonl", sender: true)
            var summaries: [IngestSummary] = []
            if oneRun {
                summaries = [try IngestPipeline(store: store).ingest([device, sender])]
            } else {
                summaries = [
                    try IngestPipeline(store: store).ingest([device]),
                    try IngestPipeline(store: store).ingest([sender]),
                ]
            }
            let report = try ReportBuilder(store: store).build(window: nil)
            #expect(report.requests.total == 2, "one run: \(oneRun)")
            #expect(report.updates.rendered == 1, "one run: \(oneRun)")
            let files = try store.listFiles()
            // The sender's copy took the device copy's place: one registered file, none refused.
            #expect(files.map(\.path) == ["senders/log.jsonl"], "one run: \(oneRun)")
            #expect(files.first?.malformed == 0 && files.first?.records == 3, "one run: \(oneRun)")
            #expect(summaries.map(\.filesSkippedAsDuplicate).reduce(0, +) == 0, "one run: \(oneRun)")
            #expect(try store.restrictedCopy(ofContent: device.sha256!) == nil)
        }
    }

    @Test("Sender first, then the device token's copy: the device copy is the duplicate, nothing changes")
    func senderThenDevice() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("upload.jsonl").path
        try Self.senderLog.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try store(in: directory)
        _ = try IngestPipeline(store: store).ingest([try Self.upload(path, name: "senders/log.jsonl", sender: true)])
        let second = try IngestPipeline(store: store).ingest([
            try Self.upload(path, name: "devices/x.jsonl", sender: false)
        ])
        #expect(second.filesSkippedAsDuplicate == 1)
        #expect(try store.listFiles().map(\.path) == ["senders/log.jsonl"])
        #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 2)
    }

    @Test("A device copy without refused lines is a plain duplicate for a sender, and two device copies dedupe")
    func nothingRefused() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("renders.jsonl").path
        try (Self.senderLog.split(separator: "\n").last! + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let store = try store(in: directory)
        let first = try IngestPipeline(store: store).ingest([
            try Self.upload(path, name: "devices/a.jsonl", sender: false)
        ])
        #expect(first.filesRead == 1)
        let again = try IngestPipeline(store: store).ingest([
            try Self.upload(path, name: "devices/b.jsonl", sender: false),
            try Self.upload(path, name: "senders/c.jsonl", sender: true),
        ])
        #expect(again.filesRead == 0 && again.filesSkippedAsDuplicate == 2)
        #expect(try store.listFiles().map(\.path) == ["devices/a.jsonl"])
    }

    @Test("Two device copies with refused lines: the second is a duplicate, and a sender's copy still upgrades")
    func twoDeviceCopies() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("upload.jsonl").path
        try Self.senderLog.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try store(in: directory)
        let summary = try IngestPipeline(store: store).ingest([
            try Self.upload(path, name: "devices/a.jsonl", sender: false),
            try Self.upload(path, name: "devices/b.jsonl", sender: false),
        ])
        #expect(summary.filesRead == 1 && summary.filesSkippedAsDuplicate == 1)
        #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 0)
        _ = try IngestPipeline(store: store).ingest([try Self.upload(path, name: "senders/log.jsonl", sender: true)])
        #expect(try ReportBuilder(store: store).build(window: nil).requests.total == 2)
        #expect(try store.listFiles().map(\.path) == ["senders/log.jsonl"])
    }
}

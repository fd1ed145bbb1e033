import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@Suite("BeaconCollector", .timeLimit(.minutes(1)))
struct BeaconCollectorTests {
    /// 2026-11-21T08:00:00Z
    static let morning = date(ms: 1_795_248_000_000)

    private func put(_ text: String, at relative: String, in container: URL) throws {
        let url = container.appendingPathComponent("LiveActivityBeacons/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    private func render(_ activity: String, _ seq: Int) -> String {
        String(
            decoding: RenderBeacon(activityID: activity, seq: seq, renderedAt: Self.morning).jsonLine(), as: UTF8.self)
    }

    @Test("Closed means rotated, an earlier day, or a process that is gone; live files, hidden and foreign files stay")
    func closedFiles() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let files = [
            "2026-11-20/widget-300.jsonl",  // yesterday: closed although 300 is alive
            "2026-11-21/widget-300.jsonl",  // today, alive: open
            "2026-11-21/widget-300.2.jsonl",  // rotated: closed
            "2026-11-21/widget-200.jsonl",  // today, process gone: closed
            "2026-11-21/app-100.jsonl",  // this process's own live file: open
            "2026-11-21/.widget-200.jsonl",  // hidden: not ours
            "2026-11-21/notes.txt",  // not a beacon file
            "not-a-day/widget-200.jsonl",  // not a day directory
        ]
        for file in files { try put(render("a", 1), at: file, in: container) }
        let collector = BeaconCollector(
            container: container, processID: 100, now: { Self.morning },
            isProcessAlive: { $0 == 300 || $0 == 100 })
        #expect(
            collector.closedFiles() == [
                "2026-11-20/widget-300.jsonl", "2026-11-21/widget-200.jsonl", "2026-11-21/widget-300.2.jsonl",
            ])
        // 30 s after midnight yesterday's files are not closed yet (a write may still be landing);
        // 2 minutes after, they are.
        let justAfterMidnight = BeaconCollector(
            container: container, processID: 100, now: { date(ms: 1_795_305_630_000) },
            isProcessAlive: { _ in true })
        #expect(justAfterMidnight.closedFiles() == ["2026-11-20/widget-300.jsonl", "2026-11-21/widget-300.2.jsonl"])
        let later = BeaconCollector(
            container: container, processID: 100, now: { date(ms: 1_795_305_720_000) },
            isProcessAlive: { _ in true })
        #expect(later.closedFiles().count == 5)  // every beacon file of both days, live or not
    }

    @Test("The default liveness check: a running process's file stays, an exited one's is collected")
    func realProcesses() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let done = try run("beacon-stress", ["write", container.path, "self", "exited", "10"])
        #expect(done.status == 0, "\(done)")
        let running = try ChildProcess("beacon-stress", ["write", container.path, "self", "running", "0"])
        defer { _ = try? running.stop(SIGKILL) }
        #expect(try running.waitForOutput(containing: "running\n") == "running\n")
        // A clock in the past, so today's files cannot be closed by date even across midnight:
        // only the pid rule, with the real kill(pid, 0), decides.
        let collector = BeaconCollector(container: container, now: { date(ms: 0) })
        let closed = collector.closedFiles()
        #expect(closed.count == 1)
        #expect(closed.allSatisfy { !$0.hasSuffix("widget-\(running.pid).jsonl") })
        let batch = try #require(collector.makeBatch())
        #expect(batch.lines == 10)
    }

    @Test("A failed upload keeps every file and the next batch is the same bytes; a confirmed one deletes them")
    func failedUploadKeepsFiles() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        try put(render("a", 1) + render("a", 2), at: "2026-11-20/widget-9.jsonl", in: container)
        try put(render("b", 1), at: "2026-11-21/widget-9.1.jsonl", in: container)
        try put(render("c", 1), at: "2026-11-21/widget-9.jsonl", in: container)  // live
        let collector = BeaconCollector(
            container: container, processID: 1, now: { Self.morning }, isProcessAlive: { _ in true })
        let first = try #require(collector.makeBatch())
        // The upload failed: nothing confirmed.
        let second = try #require(collector.makeBatch())
        #expect(first == second)
        #expect(collector.closedFiles().count == 2)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Uploaded twice under two names: the pipeline skips the second whole.
        for name in ["upload-1.jsonl.gz", "upload-2.jsonl.gz"] {
            try second.gzip.write(to: directory.appendingPathComponent(name))
        }
        let (report, summary) = try ingestAndReport([directory.path])
        #expect(summary.records[.render] == 3)
        #expect(report.dataQuality.filesSkippedAsDuplicate == 1)
        #expect(collector.confirmUpload(of: second) == 2)
        #expect(collector.makeBatch() == nil)
        let root = container.path + "/LiveActivityBeacons"
        // The empty past day is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["2026-11-21"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/2026-11-21") == ["widget-9.jsonl"])
    }

    @Test("A file that grew after it was batched is not deleted on confirmation")
    func grownFileKept() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        try put(render("a", 1), at: "2026-11-20/widget-9.jsonl", in: container)
        let collector = BeaconCollector(container: container, now: { Self.morning })
        let batch = try #require(collector.makeBatch())
        let handle = try FileHandle(
            forWritingTo: container.appendingPathComponent("LiveActivityBeacons/2026-11-20/widget-9.jsonl"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(render("a", 2).utf8))
        try handle.close()
        #expect(collector.confirmUpload(of: batch) == 0)
        #expect(collector.makeBatch()?.lines == 2)
    }

    @Test("A torn last line ends at its file: the next file's first record is kept")
    func tornFileInBatch() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        try put(
            render("a", 1) + #"{"v":1,"kind":"render","activity_id":"a","seq":2,"rend"#,
            at: "2026-11-20/widget-1.jsonl", in: container)
        try put(render("b", 1), at: "2026-11-20/widget-2.jsonl", in: container)
        let batch = try #require(BeaconCollector(container: container, now: { Self.morning }).makeBatch())
        #expect(batch.files.map(\.endedTorn) == [true, false])
        let path = container.path + "/batch.jsonl.gz"
        try batch.gzip.write(to: URL(fileURLWithPath: path))
        let (_, summary) = try ingestAndReport([path])
        #expect(summary.records[.render] == 2)
        #expect(summary.malformedByCause == [.invalidJSON: 1])
    }

    @Test("The gzip writer: members, sync flushes and a file, as gunzip and the pipeline read them")
    func gzipMembers() throws {
        var output: [UInt8] = []
        let writer = GzipWriter { output.append(contentsOf: $0) }
        try writer.write("{\"a\":1}\n")
        try writer.flush()
        let flushed = output
        try writer.write("{\"b\":2}\n")
        try writer.finishMember()
        try writer.write("{\"c\":3}\n")
        try writer.close()
        #expect(writer.inputBytes == 24)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func gunzip(_ bytes: [UInt8]) throws -> String {
            let path = directory.appendingPathComponent("members.gz")
            try Data(bytes).write(to: path)
            return try run(.path("/usr/bin/env"), ["gzip", "-dc", path.path]).stdout
        }
        #expect(try gunzip(output) == "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n")  // two members, read as one stream
        #expect(try gunzip(flushed).hasPrefix("{\"a\":1}\n"))  // a sync flush is decodable before the member ends
        let file = directory.appendingPathComponent("file.gz").path
        let fileWriter = try GzipWriter(creatingFileAt: file)
        try fileWriter.write(Array("{\"d\":4}\n".utf8))
        try fileWriter.close()
        #expect(try gunzip(Array(try Data(contentsOf: URL(fileURLWithPath: file)))) == "{\"d\":4}\n")
    }

    @Test(
        "The gzip writer: the same input gives the same bytes, and gunzip restores inputs of every shape byte for byte")
    func gzip() throws {
        #expect(try GzipWriter.gzip(Array("123456789".utf8)) == GzipWriter.gzip(Array("123456789".utf8)))
        #expect(try GzipWriter.gzip([]).count == 20)  // header, an empty final block, CRC-32 and size
        var random = SystemRandomNumberGenerator()
        let beaconLines = (0..<3000).flatMap {
            RenderBeacon(
                activityID: "activity-\($0 % 23)", seq: $0, renderedAt: date(ms: 1_795_248_000_000 + Int64($0) * 997),
                surface: "lock_screen", device: DeviceInfo(deviceID: "4f3a9c1e2b7d6a05", osVersion: "18.1")
            ).jsonLine()
        }
        let inputs: [(String, [UInt8])] = [
            ("empty", []),
            ("one byte", [0x41]),
            ("two bytes", [0x41, 0x42]),
            ("a run of 100,000 equal bytes (length 258, distance 1)", Array(repeating: 0x61, count: 100_000)),
            (
                "random bytes (no matches, 9-bit literals)",
                (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
            ),
            ("beacon lines (%d bytes)", beaconLines),
            (
                "a block repeated 40 KiB later (beyond the window)",
                {
                    let block = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &random) }
                    return block + Array(repeating: 0x20, count: 40_000) + block
                }()
            ),
        ]
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, input) in inputs {
            let path = directory.appendingPathComponent("input.gz")
            let compressed = try GzipWriter.gzip(input)
            try Data(compressed).write(to: path)
            let gunzip = try run(.path("/usr/bin/env"), ["gzip", "-dc", path.path])
            #expect(gunzip.status == 0, "gunzip rejected: \(name): \(gunzip.stderr)")
            #expect(Array(gunzip.standardOutput) == input, "\(name)")
        }
        #expect(try GzipWriter.gzip(beaconLines).count * 5 < beaconLines.count)  // JSON lines shrink at least 5×
    }
}

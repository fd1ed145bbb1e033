import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

/// Writers in separate processes (the `beacon-stress` helper): concurrent
/// appends to one file, and a writer killed with SIGKILL.
/// The time limit catches a hang only: its children share the machine with every other test's.
@Suite("Beacon writers in other processes", .timeLimit(.minutes(10)))
struct ProcessWriterTests {
    @Test("Four processes appending to the same file concurrently leave only whole lines, every record once")
    func concurrentProcesses() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let perProcess = 3000
        // All four use file pid 1, so they share widget-1.jsonl; 700 bytes of padding make
        // each line ~900 bytes, so interleaving would show.
        let processes = try (0..<4).map { tag in
            try ChildProcess("beacon-stress", ["write", container.path, "1", "p\(tag)", "\(perProcess)", "700"])
        }
        for process in processes {
            let end = try process.wait()
            #expect(end.status == 0, "\(end)")
        }
        let day = try dayDirectory(container)
        #expect(try FileManager.default.contentsOfDirectory(atPath: day) == ["widget-1.jsonl"])
        let all = try decodeLines(path: day + "/widget-1.jsonl")
        // A process opening the file while another's write(2) is half copied
        // sees no final newline and starts with one: at most one blank line
        // per process, skipped by the pipeline.
        let outcomes = all.filter { if case .blank = $0 { false } else { true } }
        #expect(all.count - outcomes.count <= 4)
        #expect(outcomes.count == 4 * perProcess)
        #expect(outcomes.allSatisfy { $0.render != nil })
        for tag in 0..<4 {
            let seqs = outcomes.compactMap { $0.render }.filter { $0.activityID == "stress-p\(tag)" }.map(\.seq)
            #expect(seqs == (0..<perProcess).map(Int64.init), "process p\(tag) lost or reordered records")
        }
        let (_, summary) = try ingestAndReport([day])
        #expect(summary.records[.render] == 4 * perProcess)
        #expect(summary.malformedLines == 0)
    }

    @Test("A writer killed with SIGKILL mid-stream leaves whole lines and at most one torn last line")
    func killedWriter() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let process = try startForeverWriter(container: container, filePID: "77")
        usleep(30_000)
        let end = try process.stop(SIGKILL)
        #expect(end.signal == SIGKILL, "\(end)")
        let path = try dayDirectory(container) + "/widget-77.jsonl"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let outcomes = try decodeLines(path: path)
        let whole = outcomes.compactMap { $0.render }
        // Records are written in order by one queue: the whole lines are seq 0..<n, no gaps.
        #expect(whole.map(\.seq) == (0..<Int64(whole.count)).map { $0 })
        #expect(whole.count >= 200)
        let endsTorn = bytes.last != UInt8(ascii: "\n")
        #expect(outcomes.count == whole.count + (endsTorn ? 1 : 0))
        let (_, summary) = try ingestAndReport([path])
        #expect(summary.records[.render] == whole.count)
        #expect(summary.malformedLines == (endsTorn ? 1 : 0))
    }

    @Test(
        "A torn last line from a killed writer is one malformed line; the next process's records and every whole line are kept"
    )
    func tornLineThroughPipeline() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let process = try startForeverWriter(container: container, filePID: "78")
        try process.stop(SIGKILL)
        let path = try dayDirectory(container) + "/widget-78.jsonl"
        // What a kill inside a short write leaves: the last record cut mid-JSON.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast(40) }
        try bytes.write(to: URL(fileURLWithPath: path))
        let wholeBefore = bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        // The next process with that pid appends to the same file.
        let next = try run("beacon-stress", ["write", container.path, "78", "next", "5"])
        #expect(next.status == 0, "\(next)")
        // Both writers are gone; pid 78 may belong to some other process on this machine, so say so.
        let collector = BeaconCollector(container: container, isProcessAlive: { _ in false })
        let batch = try #require(collector.makeBatch())
        let batchPath = container.path + "/batch.jsonl.gz"
        try batch.gzip.write(to: URL(fileURLWithPath: batchPath))
        let (_, summary) = try ingestAndReport([batchPath])
        #expect(summary.records[.render] == wholeBefore + 5)
        #expect(summary.malformedByCause == [.invalidJSON: 1])
    }

    /// Starts `beacon-stress write … 0` and returns once it has 200 beacons on disk.
    private func startForeverWriter(container: URL, filePID: String) throws -> ChildProcess {
        let process = try ChildProcess("beacon-stress", ["write", container.path, filePID, "forever", "0", "300"])
        let ready = try process.waitForOutput(containing: "running\n")
        #expect(ready == "running\n")
        return process
    }

    /// The one day directory the writers created.
    private func dayDirectory(_ container: URL) throws -> String {
        let root = container.path + "/LiveActivityBeacons"
        let days = try FileManager.default.contentsOfDirectory(atPath: root)
        try #require(days.count == 1)
        return root + "/" + days[0]
    }
}

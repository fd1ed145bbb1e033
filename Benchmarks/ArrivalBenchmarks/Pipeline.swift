import ArrivalHandOff
import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalStore
import Foundation

// Every call the benchmarks make into ArrivalIngest and ArrivalStore is in this file, so that
// a change of those stages' APIs is adapted here alone.

/// The input of every benchmark: one simulated fleet (``activities`` Live Activities, seed
/// ``seed``, with push providers and the device lifecycle, so that `apns` and `exchange` lines
/// of three providers, renders and callbacks are all decoded), its lines read into memory once
/// per benchmark process. The same seed gives the same bytes, so every run decodes, stores and
/// analyses the same records.
struct Fleet {
    static let activities = 6_000
    static let seed: UInt64 = 42
    static let day = "2026-11-21"

    /// One file of the fleet: its lines, inflated, in one buffer.
    struct File {
        var path: String
        var bytes: [UInt8]
        /// Where each line is in ``bytes`` (without its newline).
        var lines: [Range<Int>]
    }

    var files: [File] = []
    var lines: Int { files.reduce(0) { $0 + $1.lines.count } }

    /// Simulates the fleet and reads every file's lines. The simulation (about 3 s, more than
    /// any benchmark's own run) is kept for the benchmarks that follow when
    /// `ARRIVAL_BENCHMARK_FLEET` names a directory (Scripts/benchmarks.sh makes one per run,
    /// and removes it after): each benchmark runs in a process of its own, one after the
    /// other. Otherwise it goes to a temporary directory removed again.
    static func make() throws -> Fleet {
        let root: String
        var temporary: TemporaryDirectory?
        defer { temporary?.remove() }
        if let kept = ProcessInfo.processInfo.environment["ARRIVAL_BENCHMARK_FLEET"], !kept.isEmpty {
            root = kept + "/fleet-\(activities)-\(seed)"
            if !FileManager.default.fileExists(atPath: root) {
                // Written aside and renamed, so that a run stopped halfway leaves no half fleet.
                let partial = root + ".partial"
                try? FileManager.default.removeItem(atPath: partial)
                try simulate(into: partial)
                try FileManager.default.moveItem(atPath: partial, toPath: root)
            }
        } else {
            temporary = try TemporaryDirectory("fleet")
            root = temporary!.path
            try simulate(into: root)
        }
        return try read(root)
    }

    private static func simulate(into directory: String) throws {
        var config = SimulationConfig(activities: activities, seed: seed, day: day)
        config.providers = true
        config.lifecycle = true
        _ = try FleetSimulator(config: config).run(outputDirectory: directory)
    }

    /// Every file under `directory`, in the order the ingest walks them.
    private static func read(_ directory: String) throws -> Fleet {
        var fleet = Fleet()
        for path in InputWalker(paths: [directory]).files {
            var file = File(path: String(path.dropFirst(directory.count + 1)), bytes: [], lines: [])
            _ = try LineReader().read(path: path) { line in
                guard let bytes = line.bytes else { return }
                let start = file.bytes.count
                file.bytes.append(contentsOf: bytes)
                file.lines.append(start..<file.bytes.count)
            }
            fleet.files.append(file)
        }
        return fleet
    }
}

/// What the decoder made of one file: row batches as the ingest hands them to the writer.
struct DecodedFile {
    var path: String
    var lines: Int
    var batches: [RowBatch]
}

enum Pipeline {
    /// The ingest's batch limits (`IngestPipeline.Options`): a batch goes to the writer at 4,096
    /// lines or 8 MiB of strings.
    static let batchSize = 4096
    static let batchBytes = 8 << 20

    /// A filler as the ingest's reading thread makes one per file (``BatchFiller``: the very code
    /// that decodes each line there), reusing `batch`.
    static func filler(_ batch: RowBatch) -> BatchFiller {
        BatchFiller(
            batch: batch, senderRecordsAllowed: true, maxLineBytes: LineReader().maxLineBytes, batchSize: batchSize,
            batchBytes: batchBytes)
    }

    /// Decodes every line of `file` into row batches with the ingest's per-line code (malformed
    /// lines kept by number and cause, de-duplication keys computed per batch); `deliver` gets
    /// each full batch, which it may keep; `filler`'s batch is emptied and refilled.
    static func decode(_ file: Fleet.File, filler: inout BatchFiller, deliver: (RowBatch) -> Void) {
        filler.batch.removeAll()
        file.bytes.withUnsafeBufferPointer { buffer in
            for (index, range) in file.lines.enumerated() {
                let line = LineSlice(number: index + 1, bytes: UnsafeBufferPointer(rebasing: buffer[range]))
                guard filler.add(line) else { continue }
                filler.batch.computeKeys()
                deliver(filler.batch)
                filler.batch.removeAll()
            }
        }
        if !filler.batch.isEmpty {
            filler.batch.computeKeys()
            deliver(filler.batch)
        }
    }

    /// Decodes every file of the fleet and returns how many records it held, reusing one batch
    /// as the ingest reuses the batches the writer is done with.
    static func decodeCounting(_ fleet: Fleet) -> Int {
        var filler = filler(RowBatch(capacity: batchSize))
        var records = 0
        for file in fleet.files {
            decode(file, filler: &filler) { records += $0.rows.count }
        }
        return records
    }

    /// Decodes every file of the fleet, keeping the batches; returns how many records they hold.
    static func decodeAll(_ fleet: Fleet) -> (files: [DecodedFile], records: Int) {
        var filler = filler(RowBatch(capacity: batchSize))
        var records = 0
        let files = fleet.files.map { file in
            var decoded = DecodedFile(path: file.path, lines: file.lines.count, batches: [])
            decode(file, filler: &filler) { batch in
                records += batch.rows.count
                decoded.batches.append(batch)
            }
            return decoded
        }
        return (files, records)
    }

    /// Opens (creating) the store at `path`.
    static func openStore(at path: String) throws -> SQLiteStore {
        try SQLiteStore(path: path)
    }

    /// Writes decoded files into `store` as the ingest's writing thread does: one file
    /// transaction per file (rows, malformed lines, the registry row), a commit every 2,000
    /// files and at the end. Returns the records that were new.
    @discardableResult
    static func insert(_ files: [DecodedFile], into store: SQLiteStore) throws -> Int {
        var new = 0
        let now = Int64(1_795_305_600_000)
        for (index, file) in files.enumerated() {
            let transaction = try store.beginFile(path: file.path, now: now)
            for batch in file.batches {
                new += try transaction.insertRows(of: batch).reduce(0, +)
                for (line, cause, problem) in batch.malformed {
                    try transaction.addMalformed(line: line, cause: cause, problem: problem)
                }
            }
            // A stand-in for the file's SHA-256: 64 hex digits, one per file.
            let hash = String(repeating: "0", count: 48) + String(format: "%016x", index + 1)
            try transaction.commit(sha256: hash, byteCount: 0, lines: file.lines, gzip: false)
            if (index + 1) % 2_000 == 0 { try store.commitBatch() }
        }
        try store.commitBatch()
        return new
    }
}

/// A directory of its own under the system's temporary directory.
struct TemporaryDirectory {
    let path: String

    init(_ name: String) throws {
        let template = FileManager.default.temporaryDirectory.path + "/arrival-benchmarks-\(name)-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw CocoaError(.fileWriteUnknown) }
        path = bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

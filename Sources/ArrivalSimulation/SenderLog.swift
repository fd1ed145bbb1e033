import ArrivalBeacons
import ArrivalModel
import Foundation

/// The sender's side of the simulated day: every `apns` record goes into the
/// hourly batch of its `sent_at` hour, `sender/<day>/apns-<HH>.jsonl.gz`,
/// the way a push service uploads its request log.
///
/// Besides the plain batches it plants the upload defects the ingestor must
/// survive (Documentation/InputRecords.md):
/// - **Concatenated batches.** Some hourly files are written as several gzip
///   members, one per flushed batch; a reader must go on past the first.
/// - **A re-upload under another name** (`apns-<HH>.retry.jsonl.gz`): the
///   same bytes as one hourly file. It must be skipped whole by content hash
///   and counted in `files_skipped_as_duplicate`.
/// - **A partial overlap** (`apns-1140-1220.jsonl.gz`): a re-export of a
///   40-minute window that straddles two hourly files. Its bytes are new, so
///   it is ingested, and each of its records repeats one already seen: these
///   are the `duplicate_records`, which must change no metric.
/// - **A cut gzip** (`apns-<HH>.partial.jsonl.gz`): an hourly file truncated
///   mid-stream, as an interrupted upload leaves it. What decodes before the
///   break is kept (all duplicates of the full file), the torn line is
///   `invalid_json`, and the break is one `truncated_gzip`.
///
/// Memory stays bounded however large the fleet: at most 25 writers are
/// open, each with a 64 KiB buffer.
final class SenderLog {
    private struct Hour {
        let writer: GzipWriter
        var buffer: [UInt8] = []
        var recordsInMember = 0
        var memberTarget: Int
        var records = 0
        var members = 0
    }

    static let overlapWindowMinutes: (from: Int, to: Int) = (11 * 60 + 40, 12 * 60 + 20)

    private let directory: String
    private let relativeDirectory: String
    private let dayStartMs: Int64
    private var hours: [Hour?] = Array(repeating: nil, count: 24)
    private var overlap: Hour?
    private var rng: SplitMix64
    private(set) var bytesCopied: Int64 = 0

    /// `directory` is `<output>/sender/<day>`, `relativeDirectory` the same
    /// relative to the output directory (for the summary).
    init(directory: String, relativeDirectory: String, dayStartMs: Int64, rng: SplitMix64) {
        self.directory = directory
        self.relativeDirectory = relativeDirectory
        self.dayStartMs = dayStartMs
        self.rng = rng
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    private func hourFileName(_ hour: Int, suffix: String = "") -> String {
        "apns-\(SenderLog.twoDigits(hour))\(suffix).jsonl.gz"
    }

    /// Appends one `apns` line to the batch of its hour (and to the
    /// overlapping re-export when it falls in that window).
    func append(_ line: [UInt8], sentAtMs: Int64) throws {
        let minute = Int(RFC3339.floorDivide(sentAtMs - dayStartMs, Milliseconds.minute).quotient)
        let hour = min(max(minute / 60, 0), 23)
        if hours[hour] == nil {
            let writer = try GzipWriter(creatingFileAt: directory + "/" + hourFileName(hour))
            // Six hours in ten are uploaded as concatenated batches.
            let target = rng.chance(0.6) ? rng.int(20...160) : Int.max
            hours[hour] = Hour(writer: writer, memberTarget: target)
        }
        if var state = hours[hour] {
            hours[hour] = nil  // keep the buffer uniquely referenced while appending
            try add(line, to: &state, rotating: true)
            hours[hour] = state
        }
        if minute >= SenderLog.overlapWindowMinutes.from && minute < SenderLog.overlapWindowMinutes.to {
            if overlap == nil {
                let writer = try GzipWriter(creatingFileAt: directory + "/" + overlapFileName)
                overlap = Hour(writer: writer, memberTarget: Int.max)
            }
            if var state = overlap {
                overlap = nil
                try add(line, to: &state, rotating: false)
                overlap = state
            }
        }
    }

    private var overlapFileName: String {
        let from = SenderLog.overlapWindowMinutes.from
        let to = SenderLog.overlapWindowMinutes.to
        return "apns-\(SenderLog.twoDigits(from / 60))\(SenderLog.twoDigits(from % 60))"
            + "-\(SenderLog.twoDigits(to / 60))\(SenderLog.twoDigits(to % 60)).jsonl.gz"
    }

    private func add(_ line: [UInt8], to state: inout Hour, rotating: Bool) throws {
        state.buffer.append(contentsOf: line)
        state.buffer.append(UInt8(ascii: "\n"))
        state.records += 1
        state.recordsInMember += 1
        if state.buffer.count >= 1 << 16 {
            try state.writer.write(state.buffer)
            state.buffer.removeAll(keepingCapacity: true)
        }
        if rotating && state.recordsInMember >= state.memberTarget {
            if !state.buffer.isEmpty {
                try state.writer.write(state.buffer)
                state.buffer.removeAll(keepingCapacity: true)
            }
            try state.writer.finishMember()
            state.members += 1
            state.recordsInMember = 0
            state.memberTarget = rng.int(20...160)
        }
    }

    /// What ``finish()`` reports.
    struct Result {
        var files: [String] = []
        var records = 0
        var overlapRecords = 0
        var members = 0
        var bytes: Int64 = 0
    }

    /// Closes every batch, then writes the re-upload and the cut copy.
    func finish() throws -> Result {
        var result = Result()
        var recordsByHour = Array(repeating: 0, count: 24)
        for hour in 0..<24 {
            guard var state = hours[hour] else { continue }
            if !state.buffer.isEmpty { try state.writer.write(state.buffer) }
            if state.recordsInMember > 0 { state.members += 1 }
            try state.writer.close()
            result.records += state.records
            result.members += state.members
            recordsByHour[hour] = state.records
            result.files.append(hourFileName(hour))
            hours[hour] = nil
        }
        if let state = overlap {
            if !state.buffer.isEmpty { try state.writer.write(state.buffer) }
            try state.writer.close()
            result.overlapRecords = state.records
            result.files.append(overlapFileName)
            overlap = nil
        }
        // The re-upload: a morning batch, byte for byte, under another name.
        if let hour = busiestHour(recordsByHour, among: 6...9) {
            let name = hourFileName(hour, suffix: ".retry")
            try copy(from: hourFileName(hour), to: name, limit: nil)
            result.files.append(name)
        }
        // The cut upload: an evening batch broken off after 55% of its bytes.
        if let hour = busiestHour(recordsByHour, among: 18...23) {
            let source = directory + "/" + hourFileName(hour)
            let size = try fileSize(source)
            if size >= 64 {
                let name = hourFileName(hour, suffix: ".partial")
                try copy(from: hourFileName(hour), to: name, limit: size * 55 / 100)
                result.files.append(name)
            }
        }
        result.files.sort()
        for file in result.files { result.bytes += try fileSize(directory + "/" + file) }
        result.files = result.files.map { relativeDirectory + "/" + $0 }
        return result
    }

    /// The hour in `range` with the most records (the earliest on a tie),
    /// falling back to the whole day; nil when nothing was written.
    private func busiestHour(_ counts: [Int], among range: ClosedRange<Int>) -> Int? {
        var best: Int?
        for hour in range where counts[hour] > 0 {
            if let current = best, counts[current] >= counts[hour] { continue }
            best = hour
        }
        if best != nil { return best }
        for hour in 0..<24 where counts[hour] > 0 {
            if let current = best, counts[current] >= counts[hour] { continue }
            best = hour
        }
        return best
    }

    private func fileSize(_ path: String) throws -> Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let size = attributes[.size] as? NSNumber
        else { throw SimulationError.cannotRead(path) }
        return size.int64Value
    }

    /// Copies `source` to `target` (both in the day directory), at most
    /// `limit` bytes, in 1 MiB chunks.
    private func copy(from source: String, to target: String, limit: Int64?) throws {
        let sourcePath = directory + "/" + source
        let targetPath = directory + "/" + target
        guard let input = FileHandle(forReadingAtPath: sourcePath) else { throw SimulationError.cannotRead(sourcePath) }
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: targetPath, contents: nil),
            let output = FileHandle(forWritingAtPath: targetPath)
        else { throw SimulationError.cannotCreate(targetPath) }
        defer { try? output.close() }
        var remaining = limit ?? Int64.max
        while remaining > 0 {
            let chunk = Int(min(remaining, 1 << 20))
            guard let data = try input.read(upToCount: chunk), !data.isEmpty else { break }
            try output.write(contentsOf: data)
            remaining -= Int64(data.count)
        }
    }
}

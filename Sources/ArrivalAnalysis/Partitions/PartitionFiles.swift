import Foundation

/// One temporary file per partition, in `TMPDIR`, unlinked as soon as it
/// is made: what a report writes there is freed when it ends, also when it
/// is interrupted or killed. Each file holds a section per table, written
/// one after another by the passes over the tables.
// @unchecked: the spill pass writes `descriptors` and `ends` on one thread before the analysis threads start; they only read.
final class PartitionFiles: @unchecked Sendable {
    private var descriptors: [Int32] = []
    private let directory: String
    /// Per partition, where each section ends (sections written so far).
    private var ends: [[Int]]

    init(count: Int) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "arrival-analysis-\(getpid())-\(UUID().uuidString)"
            ).path
        ends = Array(repeating: [], count: count)
        guard mkdir(directory, 0o700) == 0 else {
            throw SpillError(
                path: directory,
                reason: "cannot be made (\(String(cString: strerror(errno)))); set TMPDIR to a writable directory")
        }
        defer { rmdir(directory) }
        for partition in 0..<count {
            let path = name(partition)
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                close()
                throw SpillError(path: path, reason: "cannot be made (\(reason))")
            }
            unlink(path)
            descriptors.append(fd)
        }
    }

    deinit { close() }

    /// The name partition `partition`'s file had, for messages.
    func name(_ partition: Int) -> String { directory + "/\(partition).bin" }

    func close() {
        for fd in descriptors { closeDescriptor(fd) }
        descriptors = []
    }

    func append(_ bytes: UnsafeRawBufferPointer, to partition: Int) throws {
        var done = 0
        while done < bytes.count {
            let count = write(descriptors[partition], bytes.baseAddress! + done, bytes.count - done)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw SpillError(path: name(partition), reason: String(cString: strerror(errno)))
            }
            done += count
        }
    }

    func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int, of partition: Int) throws {
        var done = 0
        while done < bytes.count {
            let count = pread(
                descriptors[partition], bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw SpillError(
                    path: name(partition), reason: count == 0 ? "ends early" : String(cString: strerror(errno)))
            }
            done += count
        }
    }

    /// Ends the section `table` of every partition: flushes its writers and notes where it ends.
    func endSection(_ table: AnalysisPartitions.Section, writers: inout [SpillWriter]) throws {
        for partition in writers.indices {
            try writers[partition].flush()
            precondition(ends[partition].count == table.rawValue, "sections are written in order")
            ends[partition].append((ends[partition].last ?? 0) + writers[partition].written)
        }
    }

    /// The bytes of section `index` of partition `partition`'s file.
    func section(_ index: Int, of partition: Int) -> Range<Int> {
        let start = index == 0 ? 0 : ends[partition][index - 1]
        return start..<ends[partition][index]
    }
}

/// `close(2)`, which ``PartitionFiles/close()`` hides inside the class.
private func closeDescriptor(_ fd: Int32) {
    close(fd)
}

/// Why a partition's file could not be written or read back.
struct SpillError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "the analysis' temporary file '\(path)': \(reason)" }
}

/// Appends records of varint numbers and length-prefixed texts to a file,
/// through a buffer. A record is framed by
/// its length, so that a reader can hold it whole.
struct SpillWriter {
    private let files: PartitionFiles
    private let partition: Int
    private var buffer: [UInt8] = []
    private let flushAt: Int
    private var recordStart = 0
    /// Bytes written to the file so far.
    private(set) var written = 0

    init(_ files: PartitionFiles, _ partition: Int, buffer bytes: Int) {
        self.files = files
        self.partition = partition
        flushAt = bytes
        buffer.reserveCapacity(bytes + 1024)
    }

    mutating func beginRecord() {
        recordStart = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0])
    }

    mutating func endRecord() throws {
        let length = UInt32(buffer.count - recordStart - 4).littleEndian
        withUnsafeBytes(of: length) { bytes in
            for (offset, byte) in bytes.enumerated() { buffer[recordStart + offset] = byte }
        }
        if buffer.count >= flushAt { try flush() }
    }

    mutating func byte(_ value: UInt8) { buffer.append(value) }

    /// A number as a zigzag varint: seqs and lengths take a byte, times six.
    mutating func int(_ value: Int64) {
        var rest = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        while rest >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        buffer.append(UInt8(rest))
    }

    /// A text as its length (-1: none) and bytes.
    mutating func bytes(_ text: UnsafeRawBufferPointer?) {
        guard let text else { return int(-1) }
        int(Int64(text.count))
        buffer.append(contentsOf: text)
    }

    mutating func flush() throws {
        try buffer.withUnsafeBytes { try files.append($0, to: partition) }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Reads back what a ``SpillWriter`` wrote, a record at a time: the
/// record's bytes stay in place until the next ``nextRecord()``, so its
/// texts are ranges, made Strings only when needed.
struct SpillReader {
    private let files: PartitionFiles
    private let partition: Int
    /// The bytes of the file not yet read.
    private var unread: Range<Int>
    private var buffer: [UInt8] = []
    private var position = 0
    private var recordEnd = 0

    /// Reads the section `table` of partition `partition`'s file.
    init(_ files: PartitionFiles, _ partition: Int, _ table: AnalysisPartitions.Section) {
        self.files = files
        self.partition = partition
        unread = files.section(table.rawValue, of: partition)
    }

    private var path: String { files.name(partition) }

    /// Makes `count` bytes available at `position`; false at the end of the section.
    private mutating func ensure(_ count: Int) throws -> Bool {
        while buffer.count - position < count {
            if unread.isEmpty { return false }
            buffer.removeSubrange(0..<position)
            recordEnd -= position
            position = 0
            let chunk = min(unread.count, max(1 << 20, count))
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: chunk))
            try buffer.withUnsafeMutableBytes { bytes in
                try files.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: bytes[start..<start + chunk]), at: unread.lowerBound,
                    of: partition)
            }
            unread = unread.lowerBound + chunk..<unread.upperBound
        }
        return true
    }

    /// Moves to the next record, read whole; false at the end of the file.
    mutating func nextRecord() throws -> Bool {
        position = max(position, recordEnd)
        guard try ensure(4) else {
            if buffer.count > position { throw SpillError(path: path, reason: "ends inside a record") }
            return false
        }
        var length: UInt32 = 0
        for offset in 0..<4 { length |= UInt32(buffer[position + offset]) << (8 * offset) }
        position += 4
        guard try ensure(Int(length)) else { throw SpillError(path: path, reason: "ends inside a record") }
        recordEnd = position + Int(length)
        return true
    }

    private mutating func take(_ count: Int) throws -> Int {
        guard position + count <= recordEnd else { throw SpillError(path: path, reason: "a record is too short") }
        defer { position += count }
        return position
    }

    mutating func byte() throws -> UInt8 { buffer[try take(1)] }

    mutating func int() throws -> Int64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = buffer[try take(1)]
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
            guard shift < 64 else { throw SpillError(path: path, reason: "a number is longer than 10 bytes") }
        }
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The next text, as a range of the record's bytes; nil for none.
    mutating func text() throws -> Range<Int>? {
        let count = try int()
        guard count >= 0 else { return nil }
        let at = try take(Int(count))
        return at..<at + Int(count)
    }

    func string(_ range: Range<Int>) -> String {
        buffer.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool {
        range.count == other.count && buffer[range].elementsEqual(other)
    }

    func copy(_ range: Range<Int>) -> [UInt8] { Array(buffer[range]) }

    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

}

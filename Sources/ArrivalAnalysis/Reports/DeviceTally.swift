import ArrivalModel
import Foundation

/// Each device's counts for contract 3.2's `outliers` under a dense number,
/// summed across the partitions of an analysis (a device's activities may
/// fall in several).
///
/// The test needs only a counter pair per device (deliverable, rendered),
/// and that is all the tally keeps in memory, with the id's bytes: the ids in
/// one byte buffer, found through an open-addressing table of numbers. The
/// full `updates` block is asked only of the few devices listed: each part's
/// blocks go to a ``DeviceBlockLog`` as they come (on disk past a megabyte),
/// and the listed devices' entries are summed from it at the end, in one
/// read. A store's 50,000 devices cost under 2 MB. (A dictionary of blocks
/// keyed by `String` took a heap block per id, allocated by the partition's
/// thread and kept alive past its analysis, and 112 bytes a block:
/// `Benchmarks/report-scale` measured it.)
///
/// Copies share the log: a tally is added to others and read, never changed
/// after it is copied.
struct DeviceTally {
    /// The ids' UTF-8, one after another; device `i`'s ends at `ends[i]`.
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    /// Device numbers by hash, `-1` where free; a power of two, at most half full.
    private var slots: [Int32] = []
    /// Device `i`'s deliverable and rendered updates.
    private var deliverable: [Int] = []
    private var rendered: [Int] = []
    private var log: DeviceBlockLog

    /// A tally whose blocks go to a file past a megabyte (`spilling`), or
    /// stay in memory (a partition's, bounded by the partition).
    init(spilling: Bool = true) {
        log = DeviceBlockLog(spilling: spilling)
    }

    /// A tally whose log goes to its file past `entries` entries (tests).
    init(spillingPast entries: Int) {
        log = DeviceBlockLog()
        log.memoryLimit = entries
    }

    /// Whether the blocks went to the log's file.
    var spilled: Bool { log.spilled }

    var count: Int { ends.count }

    /// Device `index`'s (deliverable, rendered): the test's n and k.
    func pair(_ index: Int) -> (deliverable: Int, rendered: Int) { (deliverable[index], rendered[index]) }

    /// Device `index`'s id.
    func id(_ index: Int) -> ExactString {
        let start = index == 0 ? 0 : ends[index - 1]
        return ExactString(String(decoding: bytes[start..<ends[index]], as: UTF8.self))
    }

    /// The `updates` blocks of the devices `indices`, in their order, in one read of the log.
    func blocks(_ indices: [Int]) throws -> [UpdateCounts] {
        let sums = try log.sums(of: Set(indices))
        return indices.map { sums[$0] ?? UpdateCounts() }
    }

    /// Adds `counts` to the device `id`, numbering it if new.
    mutating func add(_ counts: UpdateCounts, to id: ExactString) {
        var text = id.text
        let index = text.withUTF8 { number(of: $0) }
        add(counts, at: index)
    }

    private mutating func add(_ counts: UpdateCounts, at index: Int) {
        deliverable[index] += counts.deliverable
        rendered[index] += counts.rendered
        log.append(counts, of: index)
    }

    /// Adds every device of `other`, a part's tally (made with `spilling: false`).
    mutating func add(_ other: DeviceTally) {
        var numbers = [Int](repeating: 0, count: other.count)
        other.bytes.withUnsafeBufferPointer { buffer in
            for index in 0..<other.count {
                let start = index == 0 ? 0 : other.ends[index - 1]
                numbers[index] = number(of: UnsafeBufferPointer(rebasing: buffer[start..<other.ends[index]]))
            }
        }
        other.log.forEachInMemory { index, counts in add(counts, at: numbers[index]) }
    }

    /// The number of the device whose id is `utf8`, numbered (with no counts) if new.
    private mutating func number(of utf8: UnsafeBufferPointer<UInt8>) -> Int {
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var slot = Self.hash(utf8) & mask
        while slots[slot] >= 0 {
            let index = Int(slots[slot])
            let start = index == 0 ? 0 : ends[index - 1]
            let equal = bytes.withUnsafeBufferPointer { buffer in
                ends[index] - start == utf8.count
                    && UnsafeBufferPointer(rebasing: buffer[start..<ends[index]]).elementsEqual(utf8)
            }
            if equal { return index }
            slot = (slot + 1) & mask
        }
        let index = count
        slots[slot] = Int32(index)
        bytes.append(contentsOf: utf8)
        ends.append(bytes.count)
        deliverable.append(0)
        rendered.append(0)
        return index
    }

    private mutating func grow() {
        var slots = [Int32](repeating: -1, count: max(64, self.slots.count * 2))
        let mask = slots.count - 1
        bytes.withUnsafeBufferPointer { buffer in
            for index in 0..<count {
                let start = index == 0 ? 0 : ends[index - 1]
                var slot = Self.hash(UnsafeBufferPointer(rebasing: buffer[start..<ends[index]])) & mask
                while slots[slot] >= 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(index)
            }
        }
        self.slots = slots
    }

    private static func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
        return hasher.finalize()
    }
}

/// The `updates` blocks of a ``DeviceTally``'s devices as they were added:
/// one entry per device and part (its number and 14 counters of 32 bits; a
/// count that does not fit is split over several entries, which add up).
/// Kept in memory up to ``memoryLimit`` entries' worth, then appended to a
/// temporary file (unlinked at once, in `TMPDIR`); where no file can be
/// made or written, everything stays in memory.
final class DeviceBlockLog {
    private static let fields = 15
    /// Entries kept in memory before they go to the file (about 1 MB; a test sets it lower).
    var memoryLimit = 1 << 14
    private var memory: [UInt32] = []
    private var file: PartitionFiles?
    /// Bytes of whole chunks in the file (what a failed write left after them is not read).
    private var written = 0
    private var fileFailed = false

    /// A log of one part's blocks, which stays in memory (whatever its size, which the part's bounds).
    init(spilling: Bool = true) {
        if !spilling { memoryLimit = .max }
    }

    /// Whether entries went to the file.
    var spilled: Bool { written > 0 }

    func append(_ counts: UpdateCounts, of device: Int) {
        var fits = true
        Self.forEachValue(of: counts) { _, value in fits = fits && value <= Int(UInt32.max) }
        if fits {
            memory.append(UInt32(device))
            Self.forEachValue(of: counts) { _, value in memory.append(UInt32(value)) }
        } else {
            // A count of 2^32 or more goes in several entries, each under 2^32.
            var values = [Int](repeating: 0, count: Self.fields - 1)
            Self.forEachValue(of: counts) { field, value in values[field] = value }
            while values.contains(where: { $0 > 0 }) {
                memory.append(UInt32(device))
                for field in values.indices {
                    let part = min(values[field], Int(UInt32.max))
                    memory.append(UInt32(part))
                    values[field] -= part
                }
            }
        }
        if memory.count / Self.fields >= memoryLimit { spill() }
    }

    /// Calls `body` with each of the 14 counters of `counts` and its place in an entry (after the device).
    private static func forEachValue(of counts: UpdateCounts, _ body: (Int, Int) -> Void) {
        body(0, counts.sent)
        body(1, counts.accepted)
        body(2, counts.rendered)
        body(3, counts.dismissed)
        body(4, counts.ended)
        body(5, counts.expired)
        body(6, counts.staleTimestamp)
        body(7, counts.superseded)
        body(8, counts.lost)
        for (place, cause) in LossCause.allCases.enumerated() { body(9 + place, counts.lostByCause[cause]) }
    }

    /// Moves the entries in memory to the file, if one can be written.
    private func spill() {
        guard !fileFailed else { return }
        do {
            if file == nil { file = try PartitionFiles(count: 1) }
            try memory.withUnsafeBytes { try file!.append($0, to: 0) }
            written += memory.count * MemoryLayout<UInt32>.size
            memory.removeAll(keepingCapacity: true)
        } catch {
            fileFailed = true
        }
    }

    /// Calls `body` with every entry of a log that never went to its file (a part's).
    func forEachInMemory(_ body: (Int, UpdateCounts) -> Void) {
        precondition(!spilled, "a part's log stays in memory")
        memory.withUnsafeBufferPointer { Self.entries($0, body) }
    }

    /// Calls `body` with every entry: its device and its counts.
    func forEach(_ body: (Int, UpdateCounts) -> Void) throws {
        if let file, written > 0 {
            // In chunks of whole entries.
            let chunk = Self.fields * MemoryLayout<UInt32>.size * 4096
            var buffer = [UInt32](repeating: 0, count: chunk / MemoryLayout<UInt32>.size)
            var offset = 0
            while offset < written {
                let size = min(chunk, written - offset)
                try buffer.withUnsafeMutableBytes {
                    try file.read(into: .init(rebasing: $0[0..<size]), at: offset, of: 0)
                }
                buffer.withUnsafeBufferPointer {
                    Self.entries(.init(rebasing: $0[0..<(size / MemoryLayout<UInt32>.size)]), body)
                }
                offset += size
            }
        }
        memory.withUnsafeBufferPointer { Self.entries($0, body) }
    }

    private static func entries(_ values: UnsafeBufferPointer<UInt32>, _ body: (Int, UpdateCounts) -> Void) {
        var offset = 0
        while offset + Self.fields <= values.count {
            var counts = UpdateCounts()
            counts.sent = Int(values[offset + 1])
            counts.accepted = Int(values[offset + 2])
            counts.rendered = Int(values[offset + 3])
            counts.dismissed = Int(values[offset + 4])
            counts.ended = Int(values[offset + 5])
            counts.expired = Int(values[offset + 6])
            counts.staleTimestamp = Int(values[offset + 7])
            counts.superseded = Int(values[offset + 8])
            counts.lost = Int(values[offset + 9])
            for (place, cause) in LossCause.allCases.enumerated() {
                counts.lostByCause[cause] = Int(values[offset + 10 + place])
            }
            body(Int(values[offset]), counts)
            offset += Self.fields
        }
    }

    /// The summed blocks of `devices`.
    func sums(of devices: Set<Int>) throws -> [Int: UpdateCounts] {
        var sums: [Int: UpdateCounts] = [:]
        guard !devices.isEmpty else { return sums }
        try forEach { device, counts in
            if devices.contains(device) { sums[device, default: UpdateCounts()].add(counts) }
        }
        return sums
    }

    deinit { file?.close() }
}

import ArrivalModel

/// Each device's `updates` block (contract 3.2: `outliers`) under a dense
/// number, summed across the partitions of an analysis (a device's
/// activities may fall in several).
///
/// A device costs one fixed block of counters and its id's bytes, never a
/// list of its updates. The ids live in one byte buffer and the blocks in one
/// array, found through an open-addressing table of numbers: a store's
/// 50,000 devices take a few MB in a handful of allocations. (A dictionary
/// keyed by `String` took a heap block per id, allocated by the partition's
/// thread and kept alive past its analysis, scattered through memory that
/// could otherwise be reused: `Benchmarks/report-scale` measured it.)
struct DeviceTally {
    /// The ids' UTF-8, one after another; device `i`'s ends at `ends[i]`.
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    /// Device numbers by hash, `-1` where free; a power of two, at most half full.
    private var slots: [Int32] = []
    /// Device `i`'s block.
    private(set) var blocks: [UpdateCounts] = []

    init() {}

    var count: Int { blocks.count }

    /// Device `index`'s id.
    func id(_ index: Int) -> ExactString {
        let start = index == 0 ? 0 : ends[index - 1]
        return ExactString(String(decoding: bytes[start..<ends[index]], as: UTF8.self))
    }

    /// Adds `counts` to the block of the device `id`, numbering it if new.
    mutating func add(_ counts: UpdateCounts, to id: ExactString) {
        var text = id.text
        let index = text.withUTF8 { number(of: $0) }
        blocks[index].add(counts)
    }

    /// Adds every block of `other`.
    mutating func add(_ other: DeviceTally) {
        for index in 0..<other.count {
            let start = index == 0 ? 0 : other.ends[index - 1]
            let number = other.bytes.withUnsafeBufferPointer { buffer in
                self.number(of: UnsafeBufferPointer(rebasing: buffer[start..<other.ends[index]]))
            }
            blocks[number].add(other.blocks[index])
        }
    }

    /// The number of the device whose id is `utf8`, numbered (with an empty block) if new.
    private mutating func number(of utf8: UnsafeBufferPointer<UInt8>) -> Int {
        if (blocks.count + 1) * 2 > slots.count { grow() }
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
        let index = blocks.count
        slots[slot] = Int32(index)
        bytes.append(contentsOf: utf8)
        ends.append(bytes.count)
        blocks.append(UpdateCounts())
        return index
    }

    private mutating func grow() {
        var slots = [Int32](repeating: -1, count: max(64, self.slots.count * 2))
        let mask = slots.count - 1
        bytes.withUnsafeBufferPointer { buffer in
            for index in 0..<blocks.count {
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

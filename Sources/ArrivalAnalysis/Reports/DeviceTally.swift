import ArrivalModel

/// Each device's `updates` block (contract 3.2: `outliers`) under a dense
/// number, summed across the partitions of an analysis (a device's
/// activities may fall in several).
///
/// A device costs one fixed block of 14 counters (56 bytes) and its id's
/// bytes, never a list of its updates. The ids live in one byte buffer and
/// the counters in one array, found through an open-addressing table of
/// numbers: a store's 50,000 devices take about 4 MB in a handful of
/// allocations. (A dictionary keyed by `String` took a heap block per id,
/// allocated by the partition's thread and kept alive past its analysis, and
/// 112 bytes a block: `Benchmarks/report-scale` measured it.) Counters are 32
/// bits until one would pass 2³² − 1, then all of them are 64 bits.
struct DeviceTally {
    /// The ids' UTF-8, one after another; device `i`'s ends at `ends[i]`.
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    /// Device numbers by hash, `-1` where free; a power of two, at most half full.
    private var slots: [Int32] = []
    /// Device `i`'s counters, ``fields`` of them from `i * fields`: 32 bits
    /// each, or, once one would not fit (``narrowLimit``), 64 bits in `wide`.
    private var narrow: [UInt32] = []
    private var wide: [Int]?
    /// The largest count kept in 32 bits (a test sets it lower).
    var narrowLimit = Int(UInt32.max)
    private(set) var count = 0

    init() {}

    static let fields = 14

    /// Device `index`'s `updates` block.
    func block(_ index: Int) -> UpdateCounts {
        let base = index * Self.fields
        func value(_ field: Int) -> Int {
            if let wide { return wide[base + field] }
            return Int(narrow[base + field])
        }
        var counts = UpdateCounts()
        counts.sent = value(0)
        counts.accepted = value(1)
        counts.rendered = value(2)
        counts.dismissed = value(3)
        counts.ended = value(4)
        counts.expired = value(5)
        counts.staleTimestamp = value(6)
        counts.superseded = value(7)
        counts.lost = value(8)
        for (offset, cause) in LossCause.allCases.enumerated() { counts.lostByCause[cause] = value(9 + offset) }
        return counts
    }

    /// Calls `body` with each of the 14 counters of `counts` and its place in ``block(_:)``'s order.
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
        for (offset, cause) in LossCause.allCases.enumerated() { body(9 + offset, counts.lostByCause[cause]) }
    }

    /// Adds `counts` to device `index`'s counters.
    private mutating func add(_ counts: UpdateCounts, at index: Int) {
        let base = index * Self.fields
        if wide == nil {
            // A block's `sent` is its largest count: if it fits, all do.
            if Int(narrow[base]) + counts.sent <= narrowLimit {
                Self.forEachValue(of: counts) { field, value in narrow[base + field] += UInt32(value) }
                return
            }
            wide = narrow.map { Int($0) }
            narrow = []
        }
        Self.forEachValue(of: counts) { field, value in wide![base + field] += value }
    }

    /// Device `index`'s id.
    func id(_ index: Int) -> ExactString {
        let start = index == 0 ? 0 : ends[index - 1]
        return ExactString(String(decoding: bytes[start..<ends[index]], as: UTF8.self))
    }

    /// Adds `counts` to the block of the device `id`, numbering it if new.
    mutating func add(_ counts: UpdateCounts, to id: ExactString) {
        var text = id.text
        let index = text.withUTF8 { number(of: $0) }
        add(counts, at: index)
    }

    /// Adds every block of `other`.
    mutating func add(_ other: DeviceTally) {
        for index in 0..<other.count {
            let start = index == 0 ? 0 : other.ends[index - 1]
            let number = other.bytes.withUnsafeBufferPointer { buffer in
                self.number(of: UnsafeBufferPointer(rebasing: buffer[start..<other.ends[index]]))
            }
            add(other.block(index), at: number)
        }
    }

    /// The number of the device whose id is `utf8`, numbered (with an empty block) if new.
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
        if wide != nil {
            wide!.append(contentsOf: repeatElement(0, count: Self.fields))
        } else {
            narrow.append(contentsOf: repeatElement(0, count: Self.fields))
        }
        count += 1
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

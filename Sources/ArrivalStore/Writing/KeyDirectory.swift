/// The `record_key`s of one record table and the ids of their rows, in
/// memory: what the table's unique index on `record_key` would answer, kept
/// by the writer while that index is put off (``DeferredKeyIndex``).
///
/// Open addressing with linear probing, never more than 70% full. A slot
/// holds a key and its row's id side by side (16 bytes), so a probe reads
/// one cache line: the directory of a fleet's day is larger than the
/// caches, and each lookup is a miss. A row id is kept in 32 bits: the
/// index is put off only while a load fills empty tables, whose ids start
/// at 1. Id 0 marks an empty slot.
package struct KeyDirectory {
    struct Slot {
        var key: Int64
        var id: UInt32
    }
    private var table: [Slot]
    private(set) var count = 0
    /// 64 minus log2 of the slot count: a key's home slot is the top bits
    /// of its Fibonacci hash (the low bits of a key are a content hash, the
    /// high bits its record's time, so neither alone spreads well).
    private var shift: Int

    static let bytesPerSlot = MemoryLayout<Slot>.stride
    package static let initialSlots = 1 << 14

    init(slots: Int = initialSlots) {
        precondition(slots > 1 && slots & (slots - 1) == 0, "a power of two")
        table = Array(repeating: Slot(key: 0, id: 0), count: slots)
        shift = 64 - slots.trailingZeroBitCount
    }

    var slots: Int { table.count }
    var byteCount: Int { slots * Self.bytesPerSlot }
    /// The bytes the directory would take after its next growth.
    var byteCountAfterGrowth: Int { 2 * byteCount }
    /// Whether one more key fits without growing.
    var hasRoom: Bool { (count + 1) * 10 <= slots * 7 }

    @inline(__always)
    private func home(_ key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The id of the row stored at `key`, or nil.
    func id(of key: Int64) -> Int64? {
        let mask = slots - 1
        var slot = home(key)
        return table.withUnsafeBufferPointer { table in
            while true {
                let entry = table[slot]
                if entry.id == 0 { return nil }
                if entry.key == key { return Int64(entry.id) }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Reads the home slot of each key, without waiting for one before the
    /// next: the lookups that follow find their slots in the cache instead
    /// of each waiting for memory in turn. Returns a value made of what was
    /// read, for the caller to keep (so the reads are not left out).
    func touch(_ keys: some Sequence<Int64>) -> UInt64 {
        table.withUnsafeBufferPointer { table in
            var seen: UInt64 = 0
            for key in keys { seen ^= UInt64(bitPattern: table[home(key)].key) }
            return seen
        }
    }

    /// Notes that the row with `id` is stored at `key`, which holds none;
    /// grows first when full. The caller checks ``hasRoom`` and the bytes
    /// growth would take.
    mutating func insert(_ key: Int64, id: Int64) {
        precondition(id > 0 && id <= Int64(UInt32.max), "a row id of a load into empty tables")
        if !hasRoom { grow() }
        put(key, UInt32(truncatingIfNeeded: id))
        count += 1
    }

    private mutating func put(_ key: Int64, _ id: UInt32) {
        let mask = slots - 1
        var slot = home(key)
        table.withUnsafeMutableBufferPointer { table in
            while table[slot].id != 0 {
                assert(table[slot].key != key, "a key is noted once")
                slot = (slot + 1) & mask
            }
            table[slot] = Slot(key: key, id: id)
        }
    }

    private mutating func grow() {
        rebuild(slots: slots * 2) { _ in true }
    }

    /// Forgets the rows with ids past `last` (a file rolled back: the
    /// table's next rows take those ids again).
    mutating func removeIDs(after last: Int64) {
        rebuild(slots: slots) { Int64($0.id) <= last }
    }

    /// Forgets the keys `keep` says no to, in a table sized for those left.
    mutating func keepOnly(_ keep: (Int64) -> Bool) {
        let kept = table.reduce(0) { $0 + ($1.id != 0 && keep($1.key) ? 1 : 0) }
        var slots = Self.initialSlots
        while kept * 10 > slots * 7 / 2 { slots *= 2 }
        rebuild(slots: slots) { keep($0.key) }
    }

    /// The directory again with `slots` slots and the entries `keep` says yes to.
    private mutating func rebuild(slots: Int, keeping keep: (Slot) -> Bool) {
        let old = table
        self = KeyDirectory(slots: slots)
        for entry in old where entry.id != 0 && keep(entry) {
            put(entry.key, entry.id)
            count += 1
        }
    }
}

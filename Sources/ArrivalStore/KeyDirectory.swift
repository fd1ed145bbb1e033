/// The `record_key`s of one record table and the ids of their rows, in
/// memory: what the table's unique index on `record_key` would answer, kept
/// by the writer while that index is put off (``DeferredKeyIndex``).
///
/// Open addressing with linear probing over two arrays, 12 bytes a slot,
/// never more than 70% full. A row id is kept in 32 bits: the index is put
/// off only while a load fills empty tables, whose ids start at 1. Id 0
/// marks an empty slot.
package struct KeyDirectory {
    private var keys: [Int64]
    private var ids: [UInt32]
    private(set) var count = 0
    /// 64 minus log2 of the slot count: a key's home slot is the top bits
    /// of its Fibonacci hash (the low bits of a key are a content hash, the
    /// high bits its record's time, so neither alone spreads well).
    private var shift: Int

    static let bytesPerSlot = MemoryLayout<Int64>.stride + MemoryLayout<UInt32>.stride
    package static let initialSlots = 1 << 14

    init(slots: Int = initialSlots) {
        precondition(slots > 1 && slots & (slots - 1) == 0, "a power of two")
        keys = Array(repeating: 0, count: slots)
        ids = Array(repeating: 0, count: slots)
        shift = 64 - slots.trailingZeroBitCount
    }

    var slots: Int { ids.count }
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
        return ids.withUnsafeBufferPointer { ids in
            keys.withUnsafeBufferPointer { keys in
                while true {
                    let id = ids[slot]
                    if id == 0 { return nil }
                    if keys[slot] == key { return Int64(id) }
                    slot = (slot + 1) & mask
                }
            }
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
        while ids[slot] != 0 {
            assert(keys[slot] != key, "a key is noted once")
            slot = (slot + 1) & mask
        }
        keys[slot] = key
        ids[slot] = id
    }

    private mutating func grow() {
        rebuild(slots: slots * 2) { _ in true }
    }

    /// Forgets the rows with ids past `last` (a file rolled back: the
    /// table's next rows take those ids again).
    mutating func removeIDs(after last: Int64) {
        rebuild(slots: slots) { Int64($0) <= last }
    }

    private mutating func rebuild(slots: Int, keeping keep: (UInt32) -> Bool) {
        let oldKeys = keys
        let oldIDs = ids
        self = KeyDirectory(slots: slots)
        for slot in 0..<oldIDs.count where oldIDs[slot] != 0 && keep(oldIDs[slot]) {
            put(oldKeys[slot], oldIDs[slot])
            count += 1
        }
    }
}

/// A deterministic 64-bit hash (FNV-1a over bytes, finished with a
/// murmur-style mix). Swift's `Hasher` is seeded per process, and these
/// hashes are stored in the database, so they must not change between runs.
public struct StableHash {
    @usableFromInline var state: UInt64 = 0xcbf2_9ce4_8422_2325

    @inlinable public init() {}

    @inlinable @inline(__always)
    public mutating func combine(_ bytes: UnsafeBufferPointer<UInt8>) {
        var h = state
        for b in bytes {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3
        }
        state = h
    }

    /// Combines `count` bytes into each of four hashes, the same as four
    /// ``combine(_:)-(UnsafeBufferPointer<UInt8>)`` calls: FNV-1a is one
    /// chain of multiplies per hash, so four chains side by side keep the
    /// multiplier busy where one waits on each result (the de-duplication
    /// keys of a batch's rows, ``RowBatch``).
    @inlinable @inline(__always)
    public static func combine(
        _ a: inout StableHash, _ pa: UnsafePointer<UInt8>, _ b: inout StableHash, _ pb: UnsafePointer<UInt8>,
        _ c: inout StableHash, _ pc: UnsafePointer<UInt8>, _ d: inout StableHash, _ pd: UnsafePointer<UInt8>,
        count: Int
    ) {
        var (ha, hb, hc, hd) = (a.state, b.state, c.state, d.state)
        for i in 0..<count {
            ha = (ha ^ UInt64(pa[i])) &* 0x0000_0100_0000_01B3
            hb = (hb ^ UInt64(pb[i])) &* 0x0000_0100_0000_01B3
            hc = (hc ^ UInt64(pc[i])) &* 0x0000_0100_0000_01B3
            hd = (hd ^ UInt64(pd[i])) &* 0x0000_0100_0000_01B3
        }
        (a.state, b.state, c.state, d.state) = (ha, hb, hc, hd)
    }

    @inlinable @inline(__always)
    public mutating func combine(_ value: UInt64) {
        var h = state ^ value
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        state = h &* 0x0000_0100_0000_01B3
    }

    @inlinable
    public mutating func combine(_ text: String?) {
        guard var text else {
            combine(0x6e75_6c6c as UInt64)  // a tag for null, never the result of hashing a string
            return
        }
        text.withUTF8 { combine($0) }
        combine(UInt64(text.utf8.count) | 1 << 63)
    }

    @inlinable
    public mutating func combine(_ value: Int64?) {
        guard let value else {
            combine(0x6e75_6c6c as UInt64)
            combine(0x6e75_6c6c as UInt64)
            return
        }
        combine(1 as UInt64)
        combine(UInt64(bitPattern: value))
    }

    @inlinable
    public func finish() -> UInt64 {
        var h = state
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }
}

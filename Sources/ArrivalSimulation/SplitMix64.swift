/// The simulator's own seeded pseudo-random generator: SplitMix64
/// (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014), as used to seed the xoshiro family.
///
/// Why not `SystemRandomNumberGenerator` or `Int.random(in:using:)`: the
/// simulated tree must be byte-identical for the same configuration on every
/// machine and toolchain. The system generator is not seedable, and the
/// standard library's range-mapping algorithms are an implementation detail
/// that may change between Swift releases. Everything here is plain integer
/// arithmetic (plus one exact integer-to-double conversion), so the stream of
/// values depends on the seed alone.
///
/// Independent sub-streams (``init(seed:stream:index:)``) keep phenomena
/// apart: each device draws from its own stream derived from the root seed
/// and the device's index, so tuning one part of the simulation does not
/// shift the random draws of every device after it.
struct SplitMix64 {
    private var state: UInt64

    /// A generator whose whole output is determined by `seed`.
    init(seed: UInt64) {
        state = seed
    }

    /// A generator for one independent sub-stream: `stream` names the purpose
    /// (devices, sender batching, ...), `index` the item within it.
    init(seed: UInt64, stream: UInt64, index: UInt64 = 0) {
        var root = SplitMix64(seed: seed)
        let first = root.next()
        var mid = SplitMix64(seed: first ^ SplitMix64.mix(stream &* 0xD1B5_4A32_D192_ED03 &+ 1))
        let second = mid.next()
        state = second ^ SplitMix64.mix(index &+ 0x632B_E59B_D9B4_E019)
    }

    /// The SplitMix64 output function (a 64-bit finaliser).
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SplitMix64.mix(state)
    }

    /// A value in `0..<bound` (`bound` > 0), by the multiply-high mapping
    /// (its bias, below 2^-40 for the bounds used here, does not matter for a
    /// simulation; what matters is that it is exact and portable).
    mutating func below(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        return Int(UInt64(bound).multipliedFullWidth(by: next()).high)
    }

    /// A value in the closed range.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// A value in the closed range (64-bit, for milliseconds).
    mutating func int64(_ range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(range.upperBound - range.lowerBound) &+ 1
        if width == 0 { return Int64(bitPattern: next()) }
        return range.lowerBound + Int64(width.multipliedFullWidth(by: next()).high)
    }

    /// A uniform double in [0, 1) from the top 53 bits.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `probability`.
    mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }

    /// One element of a non-empty array.
    mutating func pick<T>(_ items: [T]) -> T {
        items[below(items.count)]
    }

    /// One value of a non-empty list of (value, integer weight) pairs.
    mutating func weighted<T>(_ items: [(T, Int)]) -> T {
        var total = 0
        for item in items { total += max(item.1, 0) }
        var roll = below(max(total, 1))
        for item in items {
            let weight = max(item.1, 0)
            if roll < weight { return item.0 }
            roll -= weight
        }
        return items[items.count - 1].0
    }

    /// `bytes` random bytes as lower-case hex (64 hex digits for 32 bytes,
    /// the shape of an APNs device or Live Activity push token).
    mutating func hex(bytes: Int) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes * 2)
        var word: UInt64 = 0
        for i in 0..<bytes {
            if i % 8 == 0 { word = next() }
            let byte = UInt8(truncatingIfNeeded: word >> (UInt64(i % 8) * 8))
            out.append(SplitMix64.hexDigits[Int(byte >> 4)])
            out.append(SplitMix64.hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A version-4 UUID in the canonical upper-case form APNs uses for
    /// `apns-id` and iOS for `identifierForVendor`.
    mutating func uuid() -> String {
        let high = (next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        let low = (next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        var out = [UInt8]()
        out.reserveCapacity(36)
        for i in 0..<32 {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append(UInt8(ascii: "-")) }
            let word = i < 16 ? high : low
            let nibble = Int((word >> UInt64((15 - i % 16) * 4)) & 0xF)
            out.append(SplitMix64.upperHexDigits[nibble])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    private static let upperHexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}

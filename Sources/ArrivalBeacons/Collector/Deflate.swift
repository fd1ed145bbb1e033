/// DEFLATE (RFC 1951) in one block with the fixed Huffman codes (§3.2.6)
/// and LZ77 matches found through a hash chain, written with the standard
/// library alone. Simpler than zlib (no dynamic Huffman tables, a shorter
/// search), so it compresses less, but JSON Lines are mostly repeated keys
/// and values, which matches alone remove.
enum Deflate {
    private static let windowSize = 32_768
    private static let minMatch = 3
    private static let maxMatch = 258
    /// Candidates tried per position: more finds longer matches, slower.
    private static let maxChain = 32

    private static let lengthBase: [Int] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase: [Int] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    private static let distanceExtra: [Int] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// The fixed literal/length code of each symbol 0…287, bit-reversed for
    /// LSB-first output, and its length in bits.
    private static let literalCodes: [(code: UInt32, bits: Int)] = (0..<288).map { symbol in
        switch symbol {
        case 0...143: (reversed(UInt32(0x30 + symbol), bits: 8), 8)
        case 144...255: (reversed(UInt32(0x190 + symbol - 144), bits: 9), 9)
        case 256...279: (reversed(UInt32(symbol - 256), bits: 7), 7)
        default: (reversed(UInt32(0xC0 + symbol - 280), bits: 8), 8)
        }
    }

    /// Index into `lengthBase` of every match length 3…258.
    private static let lengthIndex: [UInt8] = (0...maxMatch).map { length in
        guard length >= minMatch else { return 0 }
        var index = lengthBase.count - 1
        while lengthBase[index] > length { index -= 1 }
        return UInt8(index)
    }

    private static func reversed(_ code: UInt32, bits: Int) -> UInt32 {
        var result: UInt32 = 0
        for bit in 0..<bits where code & (1 << UInt32(bit)) != 0 { result |= 1 << UInt32(bits - 1 - bit) }
        return result
    }

    private struct BitWriter {
        var bytes: [UInt8] = []
        private var buffer: UInt64 = 0
        private var count = 0

        mutating func write(_ value: UInt32, bits: Int) {
            buffer |= UInt64(value) << UInt64(count)
            count += bits
            while count >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer))
                buffer >>= 8
                count -= 8
            }
        }

        mutating func finish() {
            if count > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
            buffer = 0
            count = 0
        }
    }

    static func compress(_ input: [UInt8]) -> [UInt8] {
        var out = BitWriter()
        out.bytes.reserveCapacity(input.count / 4 + 64)
        out.write(1, bits: 1)  // BFINAL: the only block
        out.write(1, bits: 2)  // BTYPE 01: fixed Huffman codes
        let literal = literalCodes
        func emitLiteral(_ byte: UInt8, _ out: inout BitWriter) {
            let entry = literal[Int(byte)]
            out.write(entry.code, bits: entry.bits)
        }
        func emitMatch(length: Int, distance: Int, _ out: inout BitWriter) {
            let index = Int(lengthIndex[length])
            let symbol = literal[257 + index]
            out.write(symbol.code, bits: symbol.bits)
            if lengthExtra[index] > 0 { out.write(UInt32(length - lengthBase[index]), bits: lengthExtra[index]) }
            var d = distanceBase.count - 1
            while distanceBase[d] > distance { d -= 1 }
            out.write(reversed(UInt32(d), bits: 5), bits: 5)
            if distanceExtra[d] > 0 { out.write(UInt32(distance - distanceBase[d]), bits: distanceExtra[d]) }
        }

        input.withUnsafeBufferPointer { source in
            let n = source.count
            let mask = windowSize - 1
            var head = [Int32](repeating: -1, count: 1 << 15)
            var previous = [Int32](repeating: -1, count: windowSize)
            @inline(__always) func hash(_ p: Int) -> Int {
                ((Int(source[p]) << 10) ^ (Int(source[p + 1]) << 5) ^ Int(source[p + 2])) & 0x7FFF
            }
            @inline(__always) func insert(_ p: Int) {
                guard p + 2 < n else { return }
                let h = hash(p)
                previous[p & mask] = head[h]
                head[h] = Int32(p)
            }
            var i = 0
            while i < n {
                var bestLength = 0
                var bestDistance = 0
                if i + 2 < n {
                    let limit = min(maxMatch, n - i)
                    var candidate = Int(head[hash(i)])
                    var chain = maxChain
                    while candidate >= 0, i - candidate <= windowSize, chain > 0 {
                        if source[candidate + bestLength] == source[i + bestLength] {
                            var length = 0
                            while length < limit && source[candidate + length] == source[i + length] { length += 1 }
                            if length > bestLength {
                                bestLength = length
                                bestDistance = i - candidate
                                if length == limit { break }
                            }
                        }
                        let next = Int(previous[candidate & mask])
                        // A slot reused by a newer position ends the chain.
                        guard next < candidate else { break }
                        candidate = next
                        chain -= 1
                    }
                }
                if bestLength >= minMatch {
                    emitMatch(length: bestLength, distance: bestDistance, &out)
                    for p in i..<(i + bestLength) { insert(p) }
                    i += bestLength
                } else {
                    emitLiteral(source[i], &out)
                    insert(i)
                    i += 1
                }
            }
        }
        let end = literal[256]
        out.write(end.code, bits: end.bits)
        out.finish()
        return out.bytes
    }
}

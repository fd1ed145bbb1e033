import Foundation

/// A gzip member (RFC 1952) written with the standard library alone, so the
/// client module needs no zlib: ``Deflate`` compresses (one fixed-Huffman
/// block), wrapped in the gzip header, CRC-32 and length. Every gzip reader
/// (zlib, `gunzip`, the pipeline) inflates it. The header has no name and
/// modification time 0, so the same input always gives the same bytes, and
/// a re-sent batch is recognised as already ingested.
enum GzipEncoder {
    static func gzip(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
        // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown)
        out.append(contentsOf: Deflate.compress(input))
        appendLittleEndian32(CRC32.checksum(input), to: &out)
        appendLittleEndian32(UInt32(truncatingIfNeeded: input.count), to: &out)
        return out
    }

    private static func appendLittleEndian32(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}

/// CRC-32 (ISO-HDLC, the one gzip uses: polynomial 0xEDB88320 reflected).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var c = UInt32(index)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

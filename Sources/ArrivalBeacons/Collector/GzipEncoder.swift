import Foundation

/// A gzip member (RFC 1952) written with Foundation alone, so the client
/// module needs no zlib: the data goes into "stored" deflate blocks
/// (RFC 1951 §3.2.4, block type 00: up to 65,535 bytes each, copied as they
/// are), wrapped in the gzip header, CRC-32 and length. Every gzip reader
/// (zlib, `gunzip`, the pipeline) inflates it; it is not smaller than its
/// input (5 bytes per 64 KiB block plus 18), so compress on the wire with
/// HTTP if size matters. The header has no name and modification time 0, so
/// the same input always gives the same bytes, and a re-sent batch is
/// recognised as already ingested.
enum GzipEncoder {
    static func gzip(_ input: [UInt8]) -> [UInt8] {
        let blockLimit = 65_535
        let blocks = max(1, (input.count + blockLimit - 1) / blockLimit)
        var out: [UInt8] = []
        out.reserveCapacity(input.count + blocks * 5 + 18)
        // ID1 ID2 CM=deflate FLG=0 MTIME=0 XFL=0 OS=255 (unknown)
        out.append(contentsOf: [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF])
        var start = 0
        for block in 0..<blocks {
            let end = min(start + blockLimit, input.count)
            let length = end - start
            out.append(block == blocks - 1 ? 0x01 : 0x00)  // BFINAL, BTYPE=00
            appendLittleEndian16(UInt16(length), to: &out)
            appendLittleEndian16(~UInt16(length), to: &out)
            out.append(contentsOf: input[start..<end])
            start = end
        }
        appendLittleEndian32(CRC32.checksum(input), to: &out)
        appendLittleEndian32(UInt32(truncatingIfNeeded: input.count), to: &out)
        return out
    }

    private static func appendLittleEndian16(_ value: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(value & 0xFF))
        out.append(UInt8(value >> 8))
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

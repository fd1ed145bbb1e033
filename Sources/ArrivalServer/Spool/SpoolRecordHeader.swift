import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A record's header in a segment (little-endian):
///
///     0  "ARVU"            4  format (1)      5  role (0 device, 1 sender)
///     6  name bytes (u16)  8  body bytes (u64)
///     16 sequence (u64)    24 received at, ms since 1970 (i64)
///     32 SHA-256 of the body (32 bytes)
///     64 the name (UTF-8)
///     then the first 8 bytes of the SHA-256 of all of the above, then the body.
enum RecordHeader {
    static let magic: [UInt8] = Array("ARVU".utf8)
    static let fixedBytes = 64

    static func size(nameBytes: Int) -> Int { fixedBytes + nameBytes + 8 }

    /// The header of `entry`'s record, in a buffer with room for `reserving` more.
    static func encode(_ entry: Spool.Entry, reserving: Int = 0) -> ByteBuffer {
        let name = Array(entry.name.utf8)
        var bytes: [UInt8] = magic
        bytes.reserveCapacity(size(nameBytes: name.count))
        bytes.append(1)
        bytes.append(entry.role == .sender ? 1 : 0)
        append(UInt64(name.count), bytes: 2, to: &bytes)
        append(UInt64(entry.byteCount), bytes: 8, to: &bytes)
        append(entry.sequence, bytes: 8, to: &bytes)
        append(UInt64(bitPattern: entry.receivedAt), bytes: 8, to: &bytes)
        var digest = [UInt8]()
        var hex = Array(entry.sha256.utf8)[...]
        while hex.count >= 2 {
            digest.append(UInt8(nibble(hex.removeFirst()) << 4 | nibble(hex.removeFirst())))
        }
        bytes += digest
        bytes += name
        bytes += SpoolFiles.check(bytes)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + reserving)
        buffer.writeBytes(bytes)
        return buffer
    }

    /// The upload whose header is at `offset` (its segment and place not
    /// set), or nil when what is there is not a header written in full.
    static func read(_ fd: Int32, at offset: Int, fileSize: Int) -> Spool.Entry? {
        guard fileSize - offset >= fixedBytes + 8 else { return nil }
        var fixed = [UInt8](repeating: 0, count: fixedBytes)
        guard fixed.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, fixedBytes, off_t(offset)) }) == fixedBytes,
            Array(fixed[0..<4]) == magic, fixed[4] == 1, fixed[5] <= 1
        else { return nil }
        let nameBytes = Int(number(fixed, at: 6, bytes: 2))
        let byteCount = number(fixed, at: 8, bytes: 8)
        guard byteCount > 0, byteCount < UInt64(Int.max / 2),
            size(nameBytes: nameBytes) + Int(byteCount) <= fileSize - offset
        else { return nil }
        var rest = [UInt8](repeating: 0, count: nameBytes + 8)
        guard
            rest.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, nameBytes + 8, off_t(offset + fixedBytes)) })
                == nameBytes + 8,
            Array(rest[nameBytes...]) == SpoolFiles.check(fixed + rest[..<nameBytes])
        else { return nil }
        let name = String(decoding: rest[..<nameBytes], as: UTF8.self)
        return Spool.Entry(
            sequence: number(fixed, at: 16, bytes: 8), sha256: SpoolFiles.hex(fixed[32..<64]), name: name,
            role: fixed[5] == 1 ? .sender : .device, byteCount: Int(byteCount),
            receivedAt: Int64(bitPattern: number(fixed, at: 24, bytes: 8)), segment: 0, offset: 0)
    }

    private static func append(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    private static func number(_ bytes: [UInt8], at offset: Int, bytes count: Int) -> UInt64 {
        (0..<count).reversed().reduce(0) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    private static func nibble(_ digit: UInt8) -> UInt8 {
        digit >= 0x61 ? digit - 0x61 + 10 : digit - 0x30
    }
}

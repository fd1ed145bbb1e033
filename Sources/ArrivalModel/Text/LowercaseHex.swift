/// Bytes as lower-case hex, two digits a byte: how the contract writes push
/// tokens and arrival names file contents by SHA-256.
///
/// One table lookup per digit. Ingest names every file it reads by the hex
/// of its SHA-256, and `String(format: "%02x")` per byte, which goes through
/// Foundation's formatter, would be a large share of the reading thread on
/// a tree of small files.
public enum LowercaseHex {
    @usableFromInline static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    @inlinable
    public static func string<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

import Foundation

/// One JSON object being written as UTF-8 bytes, in the field order given,
/// with RFC 8259 string escaping. Swift strings are valid Unicode, so the
/// output is always valid UTF-8 JSON whatever the caller passes.
package struct BeaconLine {
    package private(set) var bytes: [UInt8] = []
    private var needsComma = false

    package init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ name: StaticString) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    package mutating func string(_ name: StaticString, _ value: String) {
        key(name)
        BeaconLine.appendQuoted(value, to: &bytes)
    }

    /// Writes the field only when there is a value (absent equals null in the contract).
    package mutating func optionalString(_ name: StaticString, _ value: String?) {
        if let value { string(name, value) }
    }

    package mutating func int(_ name: StaticString, _ value: Int) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    package mutating func time(_ name: StaticString, _ date: Date) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        BeaconTime.appendTimestamp(milliseconds: BeaconTime.milliseconds(date), to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The finished object followed by `\n`.
    package mutating func finishLine() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `"value"` with `"` `\` and the control characters U+0000–U+001F escaped
    /// (the only characters RFC 8259 requires escaping); everything else is
    /// written as its UTF-8 bytes.
    package static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "f"))
            case 0x00..<0x20:
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

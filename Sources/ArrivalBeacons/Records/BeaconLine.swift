import ArrivalModel
package import Foundation

/// One JSON object being written as UTF-8 bytes, in the field order given,
/// with RFC 8259 string escaping. Swift strings are valid Unicode, so the
/// output is always valid UTF-8 JSON whatever the caller passes, except
/// through ``verbatim(_:_:)`` and ``verbatim(_:bytes:)``, which write a value
/// as given (the simulator's deliberately broken lines use them).
///
/// The kit's records (``RenderBeacon``, ``CallbackReport``, the sender's
/// `APNsLogRecord`) and the fleet simulator write every line through it.
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

    package mutating func int(_ name: StaticString, _ value: Int64) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes the field only when there is a value (absent equals null in the contract).
    package mutating func optionalInt(_ name: StaticString, _ value: Int?) {
        if let value { int(name, value) }
    }

    /// `"name":` and `text` as it is: not quoted, not escaped (`3.0`, `NaN`).
    package mutating func verbatim(_ name: StaticString, _ text: String) {
        key(name)
        bytes.append(contentsOf: text.utf8)
    }

    /// `"name":` and `value` as it is, even bytes that are not UTF-8.
    package mutating func verbatim(_ name: StaticString, bytes value: [UInt8]) {
        key(name)
        bytes.append(contentsOf: value)
    }

    /// The date as the contract writes it: UTC, milliseconds, `Z`.
    package mutating func time(_ name: StaticString, _ date: Date) {
        time(name, milliseconds: BeaconTime.milliseconds(date))
    }

    /// `"name":"<RFC 3339 time>"` of `milliseconds` since the epoch, as a clock
    /// `offsetMinutes` ahead of UTC writes it (see ``RFC3339/appendTime``).
    package mutating func time(
        _ name: StaticString, milliseconds: Int64, offsetMinutes: Int = 0, zulu: Bool = true,
        fractionDigits: Int = 3, subMillisecond: Int = 0
    ) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        RFC3339.appendTime(
            milliseconds: milliseconds, offsetMinutes: offsetMinutes, zulu: zulu,
            fractionDigits: fractionDigits, subMillisecond: subMillisecond, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The finished object, without a line end.
    package mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
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
        if hasNothingToEscape(value) {
            bytes.append(contentsOf: value.utf8)
        } else {
            for byte in value.utf8 {
                if let letter = shortEscape(byte) {
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(letter)
                } else if byte < 0x20 {
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0x0F)])
                } else {
                    bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The letter after `\` in the two-character escapes RFC 8259 has for
    /// `byte` (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`); nil for every other
    /// byte (the other control characters are written `\u00XX`).
    private static func shortEscape(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        case 0x08: UInt8(ascii: "b")
        case 0x0C: UInt8(ascii: "f")
        default: nil
        }
    }

    /// The bytes `strcspn` stops at: `"`, `\`, U+0001–U+001F (and the terminating NUL).
    private static let escaped: [CChar] = [0x22, 0x5C] + (0x01..<0x20).map { CChar($0) } + [0]

    /// True when no byte of `value` needs escaping (nearly always: identifiers,
    /// versions, tokens). The scan is the C library's `strcspn`, so a record
    /// costs a copy of its bytes rather than a byte-by-byte loop, which matters
    /// in debug builds (the simulator writes millions of lines). A NUL inside
    /// `value` stops the scan early and so takes the escaping path, as it must.
    private static func hasNothingToEscape(_ value: String) -> Bool {
        let length = value.withCString { text in escaped.withUnsafeBufferPointer { strcspn(text, $0.baseAddress!) } }
        return length == value.utf8.count
    }
}

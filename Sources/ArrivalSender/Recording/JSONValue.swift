import Foundation

/// A parsed JSON value, enough to read an APNs payload, a provider's request
/// body or an error body, read as the data contract reads JSON: RFC 8259
/// only (``StrictJSON``), an integer only when written as one (`1`, not
/// `1.0` or `1e0`) and within the signed 64-bit range, members in the order
/// written.
indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in the order written (a repeated name keeps every occurrence).
    case object([Member])

    struct Member: Equatable, Sendable {
        var key: String
        var value: JSONValue
    }

    /// Parses `data` as one JSON value; nil when it is not RFC 8259 JSON
    /// (nested at most `maxDepth` deep), or with `rejectingRepeatedKeys`
    /// when an object names a member twice.
    static func parse(_ data: Data, maxDepth: Int = 256, rejectingRepeatedKeys: Bool = false) -> JSONValue? {
        parse(Array(data), maxDepth: maxDepth, rejectingRepeatedKeys: rejectingRepeatedKeys)
    }

    static func parse(_ bytes: [UInt8], maxDepth: Int = 256, rejectingRepeatedKeys: Bool = false) -> JSONValue? {
        guard StrictJSON.isValid(bytes, maxDepth: maxDepth) else { return nil }
        var builder = Builder(bytes: bytes)
        let value = builder.value()
        return rejectingRepeatedKeys && builder.repeatedKey ? nil : value
    }

    /// The value of the first member named `key`.
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first { $0.key == key }?.value }
        return nil
    }

    var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// An object's members; empty for anything else.
    var members: [Member] {
        if case .object(let members) = self { return members }
        return []
    }

    /// Builds the value of text ``StrictJSON`` has found valid (so it checks nothing itself).
    private struct Builder {
        let bytes: [UInt8]
        var index = 0
        var repeatedKey = false

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value() -> JSONValue {
            skipSpace()
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [Member] = []
                var keys: Set<String> = []
                skipSpace()
                while bytes[index] != UInt8(ascii: "}") {
                    if bytes[index] == UInt8(ascii: ",") { index += 1 }
                    skipSpace()
                    let key = string()
                    skipSpace()
                    index += 1  // the colon
                    if !keys.insert(key).inserted { repeatedKey = true }
                    members.append(Member(key: key, value: value()))
                    skipSpace()
                }
                index += 1
                return .object(members)
            case UInt8(ascii: "["):
                index += 1
                var elements: [JSONValue] = []
                skipSpace()
                while bytes[index] != UInt8(ascii: "]") {
                    if bytes[index] == UInt8(ascii: ",") { index += 1 }
                    elements.append(value())
                    skipSpace()
                }
                index += 1
                return .array(elements)
            case UInt8(ascii: "\""):
                return .string(string())
            case UInt8(ascii: "t"):
                index += 4
                return .bool(true)
            case UInt8(ascii: "f"):
                index += 5
                return .bool(false)
            case UInt8(ascii: "n"):
                index += 4
                return .null
            default:
                return number()
            }
        }

        mutating func number() -> JSONValue {
            let start = index
            var integral = true
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    integral = false
                } else if !(byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || (0x30...0x39).contains(byte)) {
                    break
                }
                index += 1
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if integral, let value = Int64(text) { return .int(value) }
            return .number(Double(text) ?? .nan)
        }

        /// A string from its opening quote, escapes decoded (a lone surrogate becomes U+FFFD).
        mutating func string() -> String {
            index += 1
            var out: [UInt8] = []
            var pendingHigh: UInt32?
            func appendScalar(_ value: UInt32, to out: inout [UInt8]) {
                out.append(contentsOf: String(Unicode.Scalar(value).map(Character.init) ?? "\u{FFFD}").utf8)
            }
            while bytes[index] != UInt8(ascii: "\"") {
                let byte = bytes[index]
                index += 1
                guard byte == UInt8(ascii: "\\") else {
                    if let high = pendingHigh {
                        appendScalar(high, to: &out)
                        pendingHigh = nil
                    }
                    out.append(byte)
                    continue
                }
                let escape = bytes[index]
                index += 1
                var scalar: UInt32
                switch escape {
                case UInt8(ascii: "b"): scalar = 0x08
                case UInt8(ascii: "f"): scalar = 0x0C
                case UInt8(ascii: "n"): scalar = 0x0A
                case UInt8(ascii: "r"): scalar = 0x0D
                case UInt8(ascii: "t"): scalar = 0x09
                case UInt8(ascii: "u"):
                    scalar = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) ?? 0xFFFD
                    index += 4
                default: scalar = UInt32(escape)
                }
                if let high = pendingHigh {
                    pendingHigh = nil
                    if (0xDC00...0xDFFF).contains(scalar) {
                        appendScalar(0x10000 + ((high - 0xD800) << 10) + (scalar - 0xDC00), to: &out)
                        continue
                    }
                    appendScalar(high, to: &out)
                }
                if (0xD800...0xDBFF).contains(scalar) {
                    pendingHigh = scalar
                } else {
                    appendScalar(scalar, to: &out)
                }
            }
            if let high = pendingHigh { appendScalar(high, to: &out) }
            index += 1
            return String(decoding: out, as: UTF8.self)
        }
    }
}

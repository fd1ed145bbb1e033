/// An RFC 8259 grammar check. Foundation's parsers accept some text that is
/// not JSON (a trailing comma in an object), which another server's parser
/// may reject, so a payload is checked against the grammar before it is read.
/// Validates structure, literals, numbers, string escapes and control
/// characters; nesting deeper than `maxDepth` counts as invalid.
struct StrictJSON {
    private let bytes: [UInt8]
    private var index = 0
    private let maxDepth: Int

    static func isValid(_ bytes: [UInt8], maxDepth: Int = 256) -> Bool {
        firstError(in: bytes, maxDepth: maxDepth) == nil
    }

    /// Where a syntax error is: the byte offset at which the grammar stops
    /// matching (`bytes.count` for text cut off), 1-based line and column
    /// (in characters) for a person. Nil when `bytes` is valid.
    struct SyntaxError: Equatable {
        var offset: Int
        var line: Int
        var column: Int
        var atEnd: Bool
    }

    static func firstError(in bytes: [UInt8], maxDepth: Int = 256) -> SyntaxError? {
        var parser = StrictJSON(bytes: bytes, maxDepth: maxDepth)
        parser.skipSpace()
        if parser.value(depth: 0) {
            parser.skipSpace()
            if parser.index == bytes.count { return nil }
        }
        let offset = min(parser.index, bytes.count)
        let lineStart = bytes[..<offset].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let line = bytes[..<offset].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        // Characters, not bytes: a UTF-8 continuation byte starts none.
        let column = bytes[lineStart..<offset].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return SyntaxError(offset: offset, line: line, column: column, atEnd: offset == bytes.count)
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard depth < maxDepth, let byte = current else { return false }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func object(depth: Int) -> Bool {
        elements(closedBy: UInt8(ascii: "}")) { $0.member(depth: depth) }
    }

    private mutating func array(depth: Int) -> Bool {
        elements(closedBy: UInt8(ascii: "]")) { $0.value(depth: depth) }
    }

    /// `"name": value` in an object.
    private mutating func member(depth: Int) -> Bool {
        guard string() else { return false }
        skipSpace()
        guard consume(UInt8(ascii: ":")) else { return false }
        skipSpace()
        return value(depth: depth)
    }

    /// An object's or array's elements, each read by `element`, separated by
    /// commas, from the opening byte (at `index`) to the closing one, `close`.
    private mutating func elements(closedBy close: UInt8, _ element: (inout StrictJSON) -> Bool) -> Bool {
        index += 1
        skipSpace()
        if consume(close) { return true }
        while true {
            skipSpace()
            guard element(&self) else { return false }
            skipSpace()
            if consume(close) { return true }
            guard consume(UInt8(ascii: ",")) else { return false }
        }
    }

    private mutating func literal(_ text: StaticString) -> Bool {
        var ok = true
        text.withUTF8Buffer { expected in
            for byte in expected where !consume(byte) {
                ok = false
                return
            }
        }
        return ok
    }

    private mutating func string() -> Bool {
        guard consume(UInt8(ascii: "\"")) else { return false }
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return true
            case UInt8(ascii: "\\"):
                guard let escape = current else { return false }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let hex = current,
                            (0x30...0x39).contains(hex) || (0x41...0x46).contains(hex) || (0x61...0x66).contains(hex)
                        else { return false }
                        index += 1
                    }
                default:
                    index -= 1  // point at the bad escape
                    return false
                }
            case 0x00..<0x20:
                index -= 1  // point at the control character
                return false
            default: continue
            }
        }
        return false
    }

    private mutating func digits() -> Int {
        var count = 0
        while let byte = current, byte >= 0x30, byte <= 0x39 {
            index += 1
            count += 1
        }
        return count
    }

    private mutating func number() -> Bool {
        _ = consume(UInt8(ascii: "-"))
        if consume(UInt8(ascii: "0")) {
            // no leading zeros
        } else if digits() == 0 {
            return false
        }
        if consume(UInt8(ascii: ".")) && digits() == 0 { return false }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            if digits() == 0 { return false }
        }
        return true
    }
}

extension StrictJSON {
    /// Where the value at `path` (member names from the outermost object
    /// in) is in `bytes`, which must be valid JSON; nil when a member on
    /// the way is missing or not an object. A name written twice gives its
    /// first occurrence.
    static func range(of path: [String], in bytes: [UInt8]) -> Range<Int>? {
        var parser = StrictJSON(bytes: bytes, maxDepth: Int.max)
        parser.skipSpace()
        for name in path {
            guard parser.current == UInt8(ascii: "{") else { return nil }
            parser.index += 1
            var found = false
            while !found {
                parser.skipSpace()
                guard parser.current == UInt8(ascii: "\"") else { return nil }  // `}`: not there
                let keyStart = parser.index
                guard parser.string() else { return nil }
                let key = JSONValue.parse(Array(bytes[keyStart..<parser.index]))?.stringValue
                parser.skipSpace()
                guard parser.consume(UInt8(ascii: ":")) else { return nil }
                parser.skipSpace()
                if key == name {
                    found = true
                } else {
                    guard parser.value(depth: 0) else { return nil }
                    parser.skipSpace()
                    _ = parser.consume(UInt8(ascii: ","))
                }
            }
        }
        let start = parser.index
        guard parser.value(depth: 0) else { return nil }
        return start..<parser.index
    }

    /// Valid JSON text without the whitespace between tokens: what a server
    /// that re-encodes the text sends, near enough to judge its size.
    static func compact(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                continue
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            }
            out.append(byte)
        }
        return out
    }
}

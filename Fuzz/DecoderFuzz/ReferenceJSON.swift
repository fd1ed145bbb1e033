/// A JSON value as the reference parser reads it: strings unescaped, numbers
/// kept as their literal.
indirect enum ReferenceJSON {
    case null
    case bool(Bool)
    case number([UInt8])
    case string([UInt8])
    case array([ReferenceJSON])
    case object([(key: [UInt8], value: ReferenceJSON)])
}

/// A slow, obviously strict RFC 8259 parser written from the text of
/// Documentation/InputRecords.md, not from `JSONLineScanner`: recursive
/// descent into a tree, UTF-8 checked by the standard library. The fuzz target
/// holds the scanner's verdict against this one.
struct ReferenceParser {
    enum Verdict {
        case invalidUTF8
        case invalidJSON
        /// Grammatical JSON; `depth` counts the containers around the deepest
        /// value (a top-level object is 1), `duplicate` says whether any object
        /// repeats a key after unescaping.
        case json(ReferenceJSON, depth: Int, duplicate: Bool)
    }

    private let bytes: [UInt8]
    private var index = 0
    private var deepest = 0
    private var duplicate = false

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    static func parse(_ bytes: [UInt8]) -> Verdict {
        guard String(validating: bytes, as: UTF8.self) != nil else { return .invalidUTF8 }
        var parser = ReferenceParser(bytes)
        guard let value = parser.value(depth: 0) else { return .invalidJSON }
        parser.skipSpace()
        guard parser.index == bytes.count else { return .invalidJSON }
        return .json(value, depth: parser.deepest, duplicate: parser.duplicate)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { index += 1 }
    }

    private mutating func take(_ c: UInt8) -> Bool {
        guard current == c else { return false }
        index += 1
        return true
    }

    private mutating func value(depth: Int) -> ReferenceJSON? {
        skipSpace()
        guard let c = current else { return nil }
        switch c {
        case UInt8(ascii: "{"):
            index += 1
            deepest = max(deepest, depth + 1)
            var members: [(key: [UInt8], value: ReferenceJSON)] = []
            var keys = Set<[UInt8]>()
            skipSpace()
            if take(UInt8(ascii: "}")) { return .object(members) }
            while true {
                skipSpace()
                guard take(UInt8(ascii: "\"")), let key = stringBody() else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")), let member = value(depth: depth + 1) else { return nil }
                if !keys.insert(key).inserted { duplicate = true }
                members.append((key, member))
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                return .object(members)
            }
        case UInt8(ascii: "["):
            index += 1
            deepest = max(deepest, depth + 1)
            var elements: [ReferenceJSON] = []
            skipSpace()
            if take(UInt8(ascii: "]")) { return .array(elements) }
            while true {
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "]")) else { return nil }
                return .array(elements)
            }
        case UInt8(ascii: "\""):
            index += 1
            return stringBody().map(ReferenceJSON.string)
        case UInt8(ascii: "t"):
            return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return literal("null") ? .null : nil
        default:
            return number().map(ReferenceJSON.number)
        }
    }

    private mutating func literal(_ word: String) -> Bool {
        let word = Array(word.utf8)
        guard index + word.count <= bytes.count, Array(bytes[index..<index + word.count]) == word else { return false }
        index += word.count
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() -> [UInt8]? {
        let start = index
        func isDigit(_ c: UInt8?) -> Bool { c.map { (0x30...0x39).contains($0) } ?? false }
        _ = take(UInt8(ascii: "-"))
        if take(UInt8(ascii: "0")) {
        } else if let c = current, (0x31...0x39).contains(c) {
            while isDigit(current) { index += 1 }
        } else {
            return nil
        }
        if take(UInt8(ascii: ".")) {
            guard isDigit(current) else { return nil }
            while isDigit(current) { index += 1 }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard isDigit(current) else { return nil }
            while isDigit(current) { index += 1 }
        }
        return Array(bytes[start..<index])
    }

    /// After the opening quote: the unescaped content, the closing quote consumed.
    private mutating func stringBody() -> [UInt8]? {
        var out: [UInt8] = []
        while true {
            guard let c = current else { return nil }
            index += 1
            switch c {
            case UInt8(ascii: "\""):
                return out
            case 0x00..<0x20:
                return nil
            case UInt8(ascii: "\\"):
                guard let e = current else { return nil }
                index += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xDC00...0xDFFF).contains(scalar) { return nil }
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(),
                            (0xDC00...0xDFFF).contains(low)
                        else { return nil }
                        scalar = 0x10000 + (scalar - 0xD800) * 0x400 + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    return nil
                }
            default:
                out.append(c)
            }
        }
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
            bytes[index..<index + 4].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
        else { return nil }
        index += 4
        return value
    }
}

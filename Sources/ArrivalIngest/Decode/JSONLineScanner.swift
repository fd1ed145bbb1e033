import ArrivalHandOff
import ArrivalModel
import ArrivalStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A strict RFC 8259 scanner for one JSON Lines record.
///
/// It validates the whole line (UTF-8, grammar, nesting depth, repeated keys
/// in every object) in one pass without building a tree, and keeps a
/// reference to the value of each top-level key the contract knows
/// (``RecordField``); unknown fields are validated and then ignored. The
/// scanner is iterative, so a hostile line nested a million levels deep costs
/// memory in proportion to its depth and never overflows the call stack.
/// Why it is hand-written rather than `JSONDecoder`: Benchmarks/README.md.
///
/// The hot path touches no array: the known fields' values sit in an inline
/// array with a bit per field, strings are scanned eight bytes at a time, and
/// known keys are matched as two machine words. Arrays hold only what a plain
/// record never has: nested containers and unknown keys.
struct JSONLineScanner {
    static let maxDepth = 64

    enum ValueKind: UInt8 {
        case null, bool, int, number, string, object, array
    }

    /// Where a top-level value lies in the line.
    struct ValueRef {
        var kind: ValueKind
        /// For strings: the content between the quotes.
        var start: Int
        var end: Int
        var hasEscapes: Bool
        var int: Int64
    }

    /// The number of ``RecordField`` cases (a test checks they agree).
    static let fieldCount = 32

    /// The values of the known top-level keys, indexed by ``RecordField/rawValue``;
    /// a slot holds a value of this line when its bit in `present` is set.
    private var slots = InlineArray<32, ValueRef>(
        repeating: ValueRef(kind: .null, start: 0, end: 0, hasEscapes: false, int: 0))
    private var present: UInt32 = 0
    /// Whether ``appendString(_:to:)`` unescaped a string since the last scan: only an
    /// escape can put U+0000 in a text (the grammar refuses a raw control character).
    private(set) var appendedEscapedText = false

    // Repeated-key detection for keys no slot tracks: the keys of every open object.
    private struct Key {
        var hash: UInt64
        var start: Int
        var count: Int
        var inArena: Bool
    }
    private var keys: [Key] = []
    private var arena: [UInt8] = []
    private var decoded: [UInt8] = []
    /// The open containers below the top-level one: 0x7B object, 0x5B array.
    private var stack: [UInt8] = []
    private var objectKeyStarts: [Int] = []

    private(set) var line = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// The known fields' names (``RecordField/packedKeys``), kept here.
    private let fieldNames = RecordField.packedKeys

    /// The value of a known top-level field in the last line scanned.
    /// (`mutating` so that callers pass the scanner by address: it is too
    /// large to copy per field.)
    @inline(__always)
    mutating func slot(_ field: RecordField) -> ValueRef? {
        present & (1 << UInt32(field.rawValue)) != 0 ? slots[field.rawValue] : nil
    }

    /// Scans `bytes`; returns `nil` when the line is a JSON object, else the cause.
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> MalformedCause? {
        present = 0
        appendedEscapedText = false
        guard UTF8Validation.isValid(bytes) else { return .invalidUTF8 }
        line = bytes
        if !keys.isEmpty { keys.removeAll(keepingCapacity: true) }
        if !arena.isEmpty { arena.removeAll(keepingCapacity: true) }
        if !stack.isEmpty { stack.removeAll(keepingCapacity: true) }
        if !objectKeyStarts.isEmpty { objectKeyStarts.removeAll(keepingCapacity: true) }
        // `line` stays valid for the slot readers until the caller's next scan.
        return parse()
    }

    /// Appends the unescaped bytes of a string slot to `batch` as a text cell.
    @inline(__always)
    mutating func appendString(_ ref: ValueRef, to batch: inout RowBatch) {
        let bytes = UnsafeBufferPointer(rebasing: line[ref.start..<ref.end])
        if !ref.hasEscapes {
            batch.appendText(bytes)
        } else {
            appendedEscapedText = true
            batch.appendText { JSONLineScanner.unescape(bytes, into: &$0) }
        }
    }

    /// A value as a person reads it in a message: a string's content (quoted,
    /// unescaped, at most 40 bytes) or a literal as written; `a number`,
    /// `an object` and the like for what is not worth quoting.
    mutating func shown(_ ref: ValueRef) -> String {
        switch ref.kind {
        case .null: return "null"
        case .bool: return ref.int == 1 ? "true" : "false"
        case .object: return "an object"
        case .array: return "an array"
        case .int, .number:
            let literal = String(decoding: UnsafeBufferPointer(rebasing: line[ref.start..<ref.end]), as: UTF8.self)
            return literal.utf8.count <= 40 ? literal : String(literal.prefix(40)) + "…"
        case .string:
            let text = withStringBytes(ref) { String(decoding: $0, as: UTF8.self) }
            return "\""
                + (text.unicodeScalars.count <= 40
                    ? text : String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))) + "…") + "\""
        }
    }

    /// Calls `body` with the unescaped bytes of a string slot.
    /// Whether a string value is `""` (an escape always stands for a character, so only no content is empty).
    func isEmptyString(_ ref: ValueRef) -> Bool { ref.start == ref.end }

    mutating func withStringBytes<R>(_ ref: ValueRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if !ref.hasEscapes {
            return body(UnsafeBufferPointer(rebasing: line[ref.start..<ref.end]))
        }
        decoded.removeAll(keepingCapacity: true)
        Self.unescape(UnsafeBufferPointer(rebasing: line[ref.start..<ref.end]), into: &decoded)
        return decoded.withUnsafeBufferPointer(body)
    }

    // MARK: - Grammar

    @inline(__always)
    static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D
    }

    @inline(__always)
    static func skipSpace(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int {
        var i = i
        while i < n, p[i] <= 0x20, isSpace(p[i]) { i += 1 }
        return i
    }

    /// Where the parse is between two values.
    private struct Position {
        /// Containers open, the top-level one included.
        var depth = 0
        /// The innermost open container is an object.
        var inObject = false
        /// The known field whose value comes next, at depth 1 (-1: none).
        var pendingSlot = -1
        var tooDeep = false
        var duplicate = false
    }

    /// What comes after a step of the parse.
    private enum Next {
        /// Another value.
        case value
        /// The punctuation after a value (a container that closed at once is a value).
        case punctuation
        /// The line's end, after its one top-level value.
        case end
        case invalid
    }

    private mutating func parse() -> MalformedCause? {
        let n = line.count
        guard let p = line.baseAddress, n > 0 else { return .invalidJSON }
        var i = Self.skipSpace(p, 0, n)
        guard i < n else { return .invalidJSON }
        let topIsObject = p[i] == 0x7B
        var position = Position()
        // Each step parses one value, then the punctuation after it.
        var next = Next.value
        while next == .value {
            next = parseValue(p, &i, n, &position)
            if next == .punctuation { next = afterValue(p, &i, n, &position) }
        }
        guard next == .end else { return .invalidJSON }
        if position.tooDeep { return .tooDeep }
        if position.duplicate { return .duplicateKey }
        if !topIsObject { return .notAnObject }
        return nil
    }

    /// One value at `i`: a scalar (stored when its field is known), or the
    /// opening of a container (and its first key).
    @inline(__always)
    private mutating func parseValue(
        _ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, _ position: inout Position
    ) -> Next {
        i = Self.skipSpace(p, i, n)
        guard i < n else { return .invalid }
        let slot = position.pendingSlot
        position.pendingSlot = -1
        let c = p[i]
        switch c {
        case 0x22:  // "
            let start = i + 1
            guard let (end, escapes) = Self.scanString(p, from: start, n) else { return .invalid }
            if slot >= 0 { store(slot, ValueRef(kind: .string, start: start, end: end, hasEscapes: escapes, int: 0)) }
            i = end + 1
        case 0x7B, 0x5B:  // { [
            return openContainer(c, slot: slot, p, &i, n, &position)
        case 0x74:  // true
            guard matches(p, i, n, "true") else { return .invalid }
            if slot >= 0 { store(slot, ValueRef(kind: .bool, start: i, end: i + 4, hasEscapes: false, int: 1)) }
            i += 4
        case 0x66:  // false
            guard matches(p, i, n, "false") else { return .invalid }
            if slot >= 0 { store(slot, ValueRef(kind: .bool, start: i, end: i + 5, hasEscapes: false, int: 0)) }
            i += 5
        case 0x6E:  // null
            guard matches(p, i, n, "null") else { return .invalid }
            if slot >= 0 { store(slot, ValueRef(kind: .null, start: i, end: i + 4, hasEscapes: false, int: 0)) }
            i += 4
        default:
            guard let (end, integer) = Self.scanNumber(p, from: i, n) else { return .invalid }
            if slot >= 0 {
                let kind: ValueKind = integer == nil ? .number : .int
                store(slot, ValueRef(kind: kind, start: i, end: end, hasEscapes: false, int: integer ?? 0))
            }
            i = end
        }
        return .punctuation
    }

    /// The container `c` opening at `i`: its first key when it is a
    /// non-empty object, its first element when a non-empty array, or its
    /// end at once.
    @inline(__always)
    private mutating func openContainer(
        _ c: UInt8, slot: Int, _ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, _ position: inout Position
    ) -> Next {
        if slot >= 0 {
            store(slot, ValueRef(kind: c == 0x7B ? .object : .array, start: i, end: i, hasEscapes: false, int: 0))
        }
        i += 1
        if position.depth > 0 { stack.append(position.inObject ? 0x7B : 0x5B) }
        position.depth += 1
        position.inObject = c == 0x7B
        if position.depth > Self.maxDepth { position.tooDeep = true }
        i = Self.skipSpace(p, i, n)
        guard i < n else { return .invalid }
        if c == 0x7B {
            if position.depth > 1 { objectKeyStarts.append(keys.count) }
            if p[i] != 0x7D {
                guard let field = parseKey(p, &i, n, depth: position.depth, duplicate: &position.duplicate) else {
                    return .invalid
                }
                position.pendingSlot = field
                return .value
            }
            i += 1
            if position.depth > 1 { objectKeyStarts.removeLast() }
        } else {
            if p[i] != 0x5D { return .value }
            i += 1
        }
        position.depth -= 1
        position.inObject = position.depth > 0 && popContainer()
        return .punctuation
    }

    /// After a value: closes containers, or moves to the next element (past its key in an object).
    @inline(__always)
    private mutating func afterValue(
        _ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, _ position: inout Position
    ) -> Next {
        while true {
            i = Self.skipSpace(p, i, n)
            guard position.depth > 0 else { return i == n ? .end : .invalid }
            guard i < n else { return .invalid }
            let d = p[i]
            if d == 0x2C {  // ,
                i += 1
                if position.inObject {
                    i = Self.skipSpace(p, i, n)
                    guard let field = parseKey(p, &i, n, depth: position.depth, duplicate: &position.duplicate) else {
                        return .invalid
                    }
                    position.pendingSlot = field
                }
                return .value
            }
            guard d == (position.inObject ? 0x7D : 0x5D) else { return .invalid }
            i += 1
            if position.inObject && position.depth > 1 { keys.removeSubrange(objectKeyStarts.removeLast()...) }
            position.depth -= 1
            position.inObject = position.depth > 0 && popContainer()
        }
    }

    /// After a container below the top level closed: returns whether the
    /// one around it is an object. (`stack` holds one entry per open
    /// container but the outermost, so it is never empty here.)
    @inline(__always)
    private mutating func popContainer() -> Bool {
        stack.popLast() == 0x7B
    }

    @inline(__always)
    private mutating func store(_ slot: Int, _ ref: ValueRef) {
        present |= 1 << UInt32(slot)
        slots[slot] = ref
    }

    @inline(__always)
    private func matches(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int, _ word: StaticString) -> Bool {
        i + word.utf8CodeUnitCount <= n && spells(p + i, word)
    }

    /// Parses `"key"` and the `:` after it; flags `duplicate` when the key
    /// repeats one of the current object's keys. Returns the known field the
    /// key names at the top level (or -1), nil when the grammar breaks.
    @inline(__always)
    private mutating func parseKey(
        _ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, depth: Int, duplicate: inout Bool
    ) -> Int? {
        guard i < n, p[i] == 0x22 else { return nil }
        let start = i + 1
        guard let (end, escapes) = Self.scanString(p, from: start, n) else { return nil }
        i = Self.skipSpace(p, end + 1, n)
        guard i < n, p[i] == 0x3A else { return nil }
        i += 1
        if depth == 1 && !escapes {
            // A known field repeats exactly when its slot already holds a value.
            let field = RecordField.lookup(p + start, count: end - start, available: n - start, in: fieldNames)
            if field >= 0 {
                if present & (1 << UInt32(field)) != 0 { duplicate = true }
                return field
            }
        }
        return noteKey(start: start, end: end, escapes: escapes, depth: depth, duplicate: &duplicate)
    }

    /// The slow path of ``parseKey``: an escaped key, or one no slot tracks.
    ///
    /// The helpers it calls are static and take the arrays they read: a
    /// closure that called a method of `self` here would copy the whole
    /// scanner (its inline slots are over a kilobyte) for every nested key.
    private mutating func noteKey(start: Int, end: Int, escapes: Bool, depth: Int, duplicate: inout Bool) -> Int {
        var key: Key
        if escapes {
            let arenaStart = arena.count
            Self.unescape(UnsafeBufferPointer(rebasing: line[start..<end]), into: &arena)
            key = Key(hash: 0, start: arenaStart, count: arena.count - arenaStart, inArena: true)
        } else {
            key = Key(hash: 0, start: start, count: end - start, inArena: false)
        }
        if depth == 1 && escapes {
            let field = Self.withKeyBytes(key, arena: arena, line: line) { bytes in
                bytes.baseAddress.map { RecordField.lookup($0, count: bytes.count, available: bytes.count) } ?? -1
            }
            if field >= 0 {
                if present & (1 << UInt32(field)) != 0 { duplicate = true }
                return field
            }
        }
        let from = objectKeyStarts.last ?? 0
        let (hash, repeated) = Self.withKeyBytes(key, arena: arena, line: line) { [keys, arena, line] bytes in
            let hash = Self.keyHash(bytes)
            return (hash, Self.isRepeated(hash: hash, bytes, among: keys, from: from, arena: arena, line: line))
        }
        if repeated { duplicate = true }
        key.hash = hash
        keys.append(key)
        return -1
    }

    /// A cheap filter for repeated-key checks (length and up to 16 bytes);
    /// equal hashes are confirmed byte by byte.
    @inline(__always)
    private static func keyHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let n = bytes.count
        guard let base = bytes.baseAddress else { return 0 }
        var h = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        if n >= 8 {
            let raw = UnsafeRawPointer(base)
            h ^= raw.loadUnaligned(as: UInt64.self)
            h = h &* 0xff51_afd7_ed55_8ccd
            h ^= raw.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        } else {
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        }
        return h ^ (h >> 29)
    }

    private static func withKeyBytes<R>(
        _ key: Key, arena: [UInt8], line: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        if key.inArena {
            return arena.withUnsafeBufferPointer {
                body(UnsafeBufferPointer(rebasing: $0[key.start..<key.start + key.count]))
            }
        }
        return body(UnsafeBufferPointer(rebasing: line[key.start..<key.start + key.count]))
    }

    /// Whether `bytes` repeats one of `keys[from...]` (the current object's keys).
    private static func isRepeated(
        hash: UInt64, _ bytes: UnsafeBufferPointer<UInt8>, among keys: [Key], from: Int, arena: [UInt8],
        line: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard from < keys.count else { return false }
        for index in from..<keys.count {
            let other = keys[index]
            guard other.hash == hash, other.count == bytes.count else { continue }
            if withKeyBytes(other, arena: arena, line: line, { $0.elementsEqual(bytes) }) { return true }
        }
        return false
    }

    /// Scans string content from `start` (after the opening quote); returns the
    /// index of the closing quote and whether the content holds escapes.
    @inline(__always)
    static func scanString(_ p: UnsafePointer<UInt8>, from start: Int, _ n: Int) -> (Int, Bool)? {
        var i = start
        var escapes = false
        while true {
            // Eight bytes at a time up to the first quote, backslash or control
            // character: the lowest flagged byte of these masks is exact.
            while i + 8 <= n {
                let v = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                let quote = v ^ (ones &* 0x22)
                let backslash = v ^ (ones &* 0x5C)
                let special =
                    (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (v &- ones &* 0x20)) & ~v & highs
                if special != 0 {
                    i += special.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            guard i < n else { return nil }
            let c = p[i]
            if c == 0x22 { return (i, escapes) }
            if c < 0x20 { return nil }
            if c == 0x5C {
                escapes = true
                guard i + 1 < n else { return nil }
                switch p[i + 1] {
                case 0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74:
                    i += 2
                case 0x75:
                    // A \u escape must name a Unicode scalar: a high surrogate
                    // only as the first half of a pair, a low one never alone.
                    guard let unit = hex4Checked(p, i + 2, n) else { return nil }
                    i += 6
                    if (0xDC00...0xDFFF).contains(unit) { return nil }
                    if (0xD800...0xDBFF).contains(unit) {
                        guard i + 1 < n, p[i] == 0x5C, p[i + 1] == 0x75,
                            let low = hex4Checked(p, i + 2, n), (0xDC00...0xDFFF).contains(low)
                        else { return nil }
                        i += 6
                    }
                default:
                    return nil
                }
            } else {
                i += 1
            }
        }
    }

    /// Scans a number; returns its end and its value when it is an integer
    /// literal (no fraction, no exponent) within the signed 64-bit range.
    @inline(__always)
    static func scanNumber(_ p: UnsafePointer<UInt8>, from start: Int, _ n: Int) -> (Int, Int64?)? {
        var i = start
        let negative = p[i] == 0x2D
        if negative { i += 1 }
        guard i < n else { return nil }
        var isInteger = true
        var magnitude: UInt64 = 0
        var overflow = false
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- 0x30 < 10 }
        if p[i] == 0x30 {
            i += 1
        } else if p[i] >= 0x31 && p[i] <= 0x39 {
            // Up to 19 digits cannot overflow an unsigned 64-bit magnitude.
            let fastEnd = min(n, i + 19)
            while i < fastEnd, isDigit(p[i]) {
                magnitude = magnitude &* 10 &+ UInt64(p[i] &- 0x30)
                i += 1
            }
            while i < n, isDigit(p[i]) {
                let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (m2, o2) = m1.addingReportingOverflow(UInt64(p[i] &- 0x30))
                if o1 || o2 { overflow = true }
                magnitude = m2
                i += 1
            }
        } else {
            return nil
        }
        if i < n, p[i] == 0x2E {
            isInteger = false
            i += 1
            guard i < n, isDigit(p[i]) else { return nil }
            while i < n, isDigit(p[i]) { i += 1 }
        }
        if i < n, p[i] == 0x65 || p[i] == 0x45 {
            isInteger = false
            i += 1
            if i < n, p[i] == 0x2B || p[i] == 0x2D { i += 1 }
            guard i < n, isDigit(p[i]) else { return nil }
            while i < n, isDigit(p[i]) { i += 1 }
        }
        guard isInteger, !overflow else { return (i, nil) }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return (i, Int64.min) }
            return magnitude <= UInt64(Int64.max) ? (i, -Int64(magnitude)) : (i, nil)
        }
        return magnitude <= UInt64(Int64.max) ? (i, Int64(magnitude)) : (i, nil)
    }

    /// Appends the unescaped UTF-8 of already validated string content.
    static func unescape(_ p: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var i = 0
        let end = p.count
        guard let base = p.baseAddress else { return }
        while i < end {
            // The run up to the next backslash in one copy (a request body
            // logged inside an exchange line is kilobytes between escapes).
            let next =
                memchr(base + i, 0x5C, end - i).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base }
                ?? end
            if next > i {
                out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: next - i))
                i = next
                continue
            }
            let e = p[i + 1]
            i += 2
            switch e {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                var scalar = hex4(p, i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar), i + 6 <= end, p[i] == 0x5C, p[i + 1] == 0x75 {
                    let low = hex4(p, i + 2)
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                appendUTF8(UInt32(scalar), to: &out)
            default: out.append(e)  // " \ /
            }
        }
    }

    @inline(__always)
    private static func hex4Checked(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int? {
        guard i + 4 <= n else { return nil }
        var v = 0
        for k in 0..<4 {
            guard let h = hexValue(p[i + k]) else { return nil }
            v = v << 4 | Int(h)
        }
        return v
    }

    private static func hex4(_ p: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
        var v = 0
        for k in 0..<4 { v = v << 4 | Int(hexValue(p[i + k]) ?? 0) }
        return v
    }
}

@inline(__always)
func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x30...0x39: c - 0x30
    case 0x41...0x46: c - 0x41 + 10
    case 0x61...0x66: c - 0x61 + 10
    default: nil
    }
}

func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        out.append(UInt8(scalar))
    case 0x80..<0x800:
        out.append(UInt8(0xC0 | scalar >> 6))
        out.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
        out.append(UInt8(0xE0 | scalar >> 12))
        out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    default:
        out.append(UInt8(0xF0 | scalar >> 18))
        out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
        out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        out.append(UInt8(0x80 | scalar & 0x3F))
    }
}

/// RFC 3629 UTF-8 validation: no overlong forms, no surrogates, nothing past U+10FFFF.
enum UTF8Validation {
    static func isValid(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = p.count
        guard let base = p.baseAddress else { return true }
        var i = 0
        while i < n {
            // Fast path: eight ASCII bytes at a time.
            if i + 8 <= n {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
            }
            let c = p[i]
            if c < 0x80 {
                i += 1
                continue
            }
            @inline(__always) func cont(_ k: Int) -> Bool { k < n && p[k] & 0xC0 == 0x80 }
            switch c {
            case 0xC2...0xDF:
                guard cont(i + 1) else { return false }
                i += 2
            case 0xE0:
                guard i + 1 < n, (0xA0...0xBF).contains(p[i + 1]), cont(i + 2) else { return false }
                i += 3
            case 0xE1...0xEC, 0xEE...0xEF:
                guard cont(i + 1), cont(i + 2) else { return false }
                i += 3
            case 0xED:
                guard i + 1 < n, (0x80...0x9F).contains(p[i + 1]), cont(i + 2) else { return false }
                i += 3
            case 0xF0:
                guard i + 1 < n, (0x90...0xBF).contains(p[i + 1]), cont(i + 2), cont(i + 3) else { return false }
                i += 4
            case 0xF1...0xF3:
                guard cont(i + 1), cont(i + 2), cont(i + 3) else { return false }
                i += 4
            case 0xF4:
                guard i + 1 < n, (0x80...0x8F).contains(p[i + 1]), cont(i + 2), cont(i + 3) else { return false }
                i += 4
            default:
                return false
            }
        }
        return true
    }
}

/// Whether the `name.utf8CodeUnitCount` bytes at `p` spell `name` (memcmp,
/// not the generic `elementsEqual`, which showed in profiles of the ingest).
@inline(__always)
func spells(_ p: UnsafePointer<UInt8>, _ name: StaticString) -> Bool {
    memcmp(p, name.utf8Start, name.utf8CodeUnitCount) == 0
}

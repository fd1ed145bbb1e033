/// Reading nested values out of JSON text the scanner has already
/// validated (``JSONLineScanner/scan(_:)`` returned nil for it), for the
/// `exchange` records whose fields sit inside objects and inside a body that
/// is JSON text of its own. Validated text lets these walks skip every
/// check: they never fail, only find or do not find.
struct JSONText {
    let bytes: UnsafeBufferPointer<UInt8>

    private var p: UnsafePointer<UInt8> { bytes.baseAddress! }
    private var n: Int { bytes.count }

    /// The value that begins at `i` (no space before it), without finding
    /// where a container ends (its `end` is its `start`): a lookup that stops
    /// at the member it wants never walks that member's contents.
    func shallowValue(at i: Int) -> JSONLineScanner.ValueRef {
        typealias Ref = JSONLineScanner.ValueRef
        switch p[i] {
        case 0x7B: return Ref(kind: .object, start: i, end: i, hasEscapes: false, int: 0)
        case 0x5B: return Ref(kind: .array, start: i, end: i, hasEscapes: false, int: 0)
        default: return value(at: i).0
        }
    }

    /// The index just after a value from ``shallowValue(at:)``.
    private func after(_ ref: JSONLineScanner.ValueRef) -> Int {
        switch ref.kind {
        case .object, .array: containerEnd(from: ref.start)
        case .string: ref.end + 1
        default: ref.end
        }
    }

    /// The value that begins at `i` (no space before it), and the index just after it.
    func value(at i: Int) -> (JSONLineScanner.ValueRef, Int) {
        typealias Ref = JSONLineScanner.ValueRef
        switch p[i] {
        case 0x22:
            let (end, escapes) = JSONLineScanner.scanString(p, from: i + 1, n)!
            return (Ref(kind: .string, start: i + 1, end: end, hasEscapes: escapes, int: 0), end + 1)
        case 0x7B, 0x5B:
            let end = containerEnd(from: i)
            return (Ref(kind: p[i] == 0x7B ? .object : .array, start: i, end: end, hasEscapes: false, int: 0), end)
        case 0x74: return (Ref(kind: .bool, start: i, end: i + 4, hasEscapes: false, int: 1), i + 4)
        case 0x66: return (Ref(kind: .bool, start: i, end: i + 5, hasEscapes: false, int: 0), i + 5)
        case 0x6E: return (Ref(kind: .null, start: i, end: i + 4, hasEscapes: false, int: 0), i + 4)
        default:
            let (end, integer) = JSONLineScanner.scanNumber(p, from: i, n)!
            return (
                Ref(kind: integer == nil ? .number : .int, start: i, end: end, hasEscapes: false, int: integer ?? 0),
                end
            )
        }
    }

    /// The index just after the container that opens at `start`.
    private func containerEnd(from start: Int) -> Int {
        var depth = 0
        var i = start
        while true {
            switch p[i] {
            case 0x22:
                i = JSONLineScanner.scanString(p, from: i + 1, n)!.0 + 1
                continue
            case 0x7B, 0x5B: depth += 1
            case 0x7D, 0x5D:
                depth -= 1
                if depth == 0 { return i + 1 }
            default: break
            }
            i += 1
        }
    }

    /// Calls `body` with each member of the object `object` in order, until it returns false.
    func forEachMember(
        of object: JSONLineScanner.ValueRef,
        _ body: (_ key: JSONLineScanner.ValueRef, _ value: JSONLineScanner.ValueRef) -> Bool
    ) {
        guard object.kind == .object else { return }
        var i = JSONLineScanner.skipSpace(p, object.start + 1, n)
        guard p[i] != 0x7D else { return }
        while true {
            let (key, afterKey) = value(at: i)
            i = JSONLineScanner.skipSpace(p, afterKey, n) + 1  // the colon
            let member = shallowValue(at: JSONLineScanner.skipSpace(p, i, n))
            guard body(key, member) else { return }
            i = JSONLineScanner.skipSpace(p, after(member), n)
            guard p[i] == 0x2C else { return }
            i = JSONLineScanner.skipSpace(p, i + 1, n)
        }
    }

    /// Calls `body` with each element of the array `array` in order, until it returns false.
    func forEachElement(of array: JSONLineScanner.ValueRef, _ body: (JSONLineScanner.ValueRef) -> Bool) {
        guard array.kind == .array else { return }
        var i = JSONLineScanner.skipSpace(p, array.start + 1, n)
        guard p[i] != 0x5D else { return }
        while true {
            let element = shallowValue(at: i)
            guard body(element) else { return }
            i = JSONLineScanner.skipSpace(p, after(element), n)
            guard p[i] == 0x2C else { return }
            i = JSONLineScanner.skipSpace(p, i + 1, n)
        }
    }

    /// The value of the member `name` of `object` (the object's keys are
    /// unique: the scanner refuses repeated ones); nil when `object` is not an
    /// object or has no such member.
    func member(_ name: StaticString, of object: JSONLineScanner.ValueRef?) -> JSONLineScanner.ValueRef? {
        guard let object, object.kind == .object else { return nil }
        var found: JSONLineScanner.ValueRef?
        forEachMember(of: object) { key, value in
            if stringEquals(key, name) {
                found = value
                return false
            }
            return true
        }
        return found
    }

    /// The member at a path of names below `object`.
    func member(_ path: StaticString..., of object: JSONLineScanner.ValueRef?) -> JSONLineScanner.ValueRef? {
        var current = object
        for name in path { current = member(name, of: current) }
        return current
    }

    /// Whether the string `ref` is `name`, after unescaping; with
    /// `ignoringCase`, ASCII letters match either case (header names).
    func stringEquals(_ ref: JSONLineScanner.ValueRef, _ name: StaticString, ignoringCase: Bool = false) -> Bool {
        guard ref.kind == .string else { return false }
        return withContent(ref) { text in
            guard text.count == name.utf8CodeUnitCount else { return false }
            let expected = name.utf8Start
            for k in 0..<text.count {
                var a = text[k]
                var b = expected[k]
                if ignoringCase {
                    if a &- 0x41 < 26 { a |= 0x20 }
                    if b &- 0x41 < 26 { b |= 0x20 }
                }
                if a != b { return false }
            }
            return true
        }
    }

    /// Whether the string `ref` ends with `suffix`, after unescaping.
    func stringHasSuffix(_ ref: JSONLineScanner.ValueRef, _ suffix: StaticString) -> Bool {
        guard ref.kind == .string else { return false }
        return withContent(ref) { text in
            let count = suffix.utf8CodeUnitCount
            guard text.count >= count, let base = text.baseAddress else { return false }
            return spells(base + (text.count - count), suffix)
        }
    }

    /// Calls `body` with the unescaped content of the string `ref`.
    func withContent<R>(_ ref: JSONLineScanner.ValueRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let raw = UnsafeBufferPointer(rebasing: bytes[ref.start..<ref.end])
        guard ref.hasEscapes else { return body(raw) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        JSONLineScanner.unescape(raw, into: &decoded)
        return decoded.withUnsafeBufferPointer(body)
    }

    /// Appends the unescaped content of the string `ref` to `out`.
    func appendContent(of ref: JSONLineScanner.ValueRef, to out: inout [UInt8]) {
        let raw = UnsafeBufferPointer(rebasing: bytes[ref.start..<ref.end])
        if ref.hasEscapes {
            JSONLineScanner.unescape(raw, into: &out)
        } else {
            out.append(contentsOf: raw)
        }
    }
}

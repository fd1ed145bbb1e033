// A libFuzzer custom mutator that edits JSON lines as JSON: byte-level
// mutation of an exchange line almost never yields another exchange that
// differs in one rule (a second `APNS-ID` header, status 410 turned into 200,
// a `reason` in a 200's body), because the bodies are JSON inside a JSON
// string and every such change spans several bytes. Two times in three this
// parses one line of the input with the reference parser, edits the tree —
// the bodies inside strings included — and writes it back in a random style;
// otherwise (and for gzip inputs and lines that are no JSON object) it leaves
// the input to libFuzzer's own mutations.

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's own mutation, with its C calling convention (Scripts/fuzz.sh enables `Extern`
/// for this module only).
@_extern(c, "LLVMFuzzerMutate")
func libFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int) -> Int

/// `ARRIVAL_FUZZ_MUTATOR=bytes` leaves every mutation to libFuzzer (to compare the two).
private let bytesOnly = getenv("ARRIVAL_FUZZ_MUTATOR").map { String(cString: $0) == "bytes" } ?? false

@_cdecl("LLVMFuzzerCustomMutator")
public func customMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    var rng = SplitMix(seed: UInt64(seed))
    let gzip = size >= 2 && data[0] == 0x1F && data[1] == 0x8B
    guard !gzip, !bytesOnly, rng.below(3) != 0 else { return libFuzzerMutate(data, size, maxSize) }
    var mutator = StructuredMutator(rng: rng)
    guard let mutated = mutator.mutate(Array(UnsafeBufferPointer(start: data, count: size))),
        !mutated.isEmpty, mutated.count <= maxSize
    else { return libFuzzerMutate(data, size, maxSize) }
    mutated.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: mutated.count) }
    return mutated.count
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

struct StructuredMutator {
    var rng: SplitMix

    /// A step from a value to one inside it; `.text` enters the JSON text a string holds (a body).
    enum Step {
        case member(Int)
        case element(Int)
        case text
    }

    /// How a tree is written back: spacing and which escapes, so the scanner's unescaping gets exercised too.
    struct Style {
        var spaced = false
        var escapeSlash = false
        var escapeNonASCII = false
        /// An ASCII letter written as `\u00XX` wherever it occurs (0: none).
        var escapedLetter: UInt8 = 0
    }

    mutating func mutate(_ input: [UInt8]) -> [UInt8]? {
        // Lines with their ends, as the ingest splits them.
        var lines: [[UInt8]] = []
        var start = 0
        for (i, byte) in input.enumerated() where byte == 0x0A {
            lines.append(Array(input[start...i]))
            start = i + 1
        }
        if start < input.count { lines.append(Array(input[start...])) }
        var candidates: [(index: Int, tree: ReferenceJSON, end: [UInt8])] = []
        for (index, line) in lines.enumerated() {
            var body = line
            var end: [UInt8] = []
            if body.last == 0x0A {
                body.removeLast()
                end = [0x0A]
            }
            if body.last == 0x0D {
                body.removeLast()
                end.insert(0x0D, at: 0)
            }
            if case .json(let tree, _, _) = ReferenceParser.parse(body), case .object = tree {
                candidates.append((index, tree, end))
            }
        }
        guard !candidates.isEmpty else { return nil }
        let (index, original, end) = rng.pick(candidates)
        var tree = original
        for _ in 0...rng.below(3) { mutateOnce(&tree) }
        lines[index] = Self.write(tree, style: randomStyle()) + end
        return Array(lines.joined())
    }

    // MARK: - Edits

    private mutating func mutateOnce(_ tree: inout ReferenceJSON) {
        var paths: [[Step]] = []
        var named: [[Step]] = []
        collect(tree, [], into: &paths, named: &named)
        // Half the time a value whose key a rule reads (`status`, `body`, `apns-id`, `statusCode`, …).
        let path = !named.isEmpty && rng.below(2) == 0 ? rng.pick(named) : rng.pick(paths)
        let donor = subtree(tree, at: rng.pick(paths)[...])
        var target = subtree(tree, at: path[...])
        edit(&target, donor: donor)
        Self.replace(&tree, at: path[...], with: target, bodyStyle: randomStyle())
    }

    private func collect(_ value: ReferenceJSON, _ prefix: [Step], into paths: inout [[Step]], named: inout [[Step]]) {
        paths.append(prefix)
        switch value {
        case .object(let members):
            for (i, member) in members.enumerated() {
                if Self.keySet.contains(ReferenceExchange.lowercasedASCII(member.key)) {
                    named.append(prefix + [.member(i)])
                }
                collect(member.value, prefix + [.member(i)], into: &paths, named: &named)
            }
        case .array(let elements):
            for (i, element) in elements.enumerated() {
                collect(element, prefix + [.element(i)], into: &paths, named: &named)
            }
        case .string(let text):
            if let inner = Self.json(in: text) { collect(inner, prefix + [.text], into: &paths, named: &named) }
        default:
            break
        }
    }

    /// The JSON a string holds, when it holds an object or an array.
    private static func json(in text: [UInt8]) -> ReferenceJSON? {
        guard let first = text.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
            case .json(let inner, _, _) = ReferenceParser.parse(text)
        else { return nil }
        return inner
    }

    private func subtree(_ value: ReferenceJSON, at path: ArraySlice<Step>) -> ReferenceJSON {
        guard let step = path.first else { return value }
        switch (step, value) {
        case (.member(let i), .object(let members)): return subtree(members[i].value, at: path.dropFirst())
        case (.element(let i), .array(let elements)): return subtree(elements[i], at: path.dropFirst())
        case (.text, .string(let text)): return Self.json(in: text).map { subtree($0, at: path.dropFirst()) } ?? value
        default: return value
        }
    }

    /// Puts `new` at `path`, writing every body on the way back as text in `bodyStyle`.
    private static func replace(
        _ value: inout ReferenceJSON, at path: ArraySlice<Step>, with new: ReferenceJSON, bodyStyle: Style
    ) {
        guard let step = path.first else {
            value = new
            return
        }
        switch (step, value) {
        case (.member(let i), .object(var members)):
            replace(&members[i].value, at: path.dropFirst(), with: new, bodyStyle: bodyStyle)
            value = .object(members)
        case (.element(let i), .array(var elements)):
            replace(&elements[i], at: path.dropFirst(), with: new, bodyStyle: bodyStyle)
            value = .array(elements)
        case (.text, .string(let text)):
            guard var inner = json(in: text) else { return }
            replace(&inner, at: path.dropFirst(), with: new, bodyStyle: bodyStyle)
            value = .string(write(inner, style: bodyStyle))
        default:
            break
        }
    }

    private mutating func edit(_ value: inout ReferenceJSON, donor: ReferenceJSON) {
        switch value {
        case .object(var members):
            let n = members.count
            switch rng.below(7) {
            case 0 where n > 0: members.remove(at: rng.below(n))
            case 1: members.insert((Array(rng.pick(Self.keys).utf8), newValue(donor)), at: rng.below(n + 1))
            case 2 where n > 0:
                // The same name again, often in another case: which one counts?
                var copy = members[rng.below(n)]
                if rng.below(4) != 0 { copy.key = flipCase(copy.key) }
                if rng.below(2) == 0 { copy.value = newValue(donor) }
                members.insert(copy, at: rng.below(n + 1))
            case 3 where n > 1: members.swapAt(rng.below(n), rng.below(n))
            case 4 where n > 0:
                let i = rng.below(n)
                members[i].key = rng.below(2) == 0 ? flipCase(members[i].key) : Array(rng.pick(Self.keys).utf8)
            case 5 where n > 0: members[rng.below(n)].value = newValue(donor)
            default:
                value = newValue(donor)
                return
            }
            value = .object(members)
        case .array(var elements):
            let n = elements.count
            switch rng.below(5) {
            case 0 where n > 0: elements.remove(at: rng.below(n))
            case 1: elements.insert(newValue(donor), at: rng.below(n + 1))
            case 2 where n > 0: elements.insert(elements[rng.below(n)], at: rng.below(n + 1))
            case 3 where n > 1: elements.swapAt(rng.below(n), rng.below(n))
            default:
                value = newValue(donor)
                return
            }
            value = .array(elements)
        case .string(let text):
            switch rng.below(6) {
            case 0: value = .string(flipCase(text))
            case 1: value = .string(byteMutated(text))
            case 2: value = .string(Array(rng.pick(Self.strings).utf8))
            case 3: value = .string(Array(text.prefix(rng.below(text.count + 1))) + Array(rng.pick(Self.strings).utf8))
            default: value = newValue(donor)
            }
        case .number, .bool, .null:
            value = rng.below(3) == 0 ? newValue(donor) : .number(Array(rng.pick(Self.numbers).utf8))
        }
    }

    private mutating func newValue(_ donor: ReferenceJSON) -> ReferenceJSON {
        switch rng.below(10) {
        case 0, 1: return donor
        case 2, 3: return .number(Array(rng.pick(Self.numbers).utf8))
        case 4, 5, 6: return .string(Array(rng.pick(Self.strings).utf8))
        case 7: return rng.pick([.null, .bool(true), .bool(false), .object([]), .array([])])
        default:
            let text = Array(rng.pick(Self.bodies).utf8)
            return rng.below(2) == 0 ? .string(text) : (Self.json(in: text) ?? .string(text))
        }
    }

    private mutating func flipCase(_ bytes: [UInt8]) -> [UInt8] {
        let mode = rng.below(3)
        return bytes.map { byte in
            let letter = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            guard letter else { return byte }
            switch mode {
            case 0: return byte & ~0x20  // upper
            case 1: return byte | 0x20  // lower
            default: return rng.below(2) == 0 ? byte ^ 0x20 : byte
            }
        }
    }

    /// libFuzzer's byte mutations on a string's content, kept UTF-8 (bad bytes become U+FFFD).
    private func byteMutated(_ text: [UInt8]) -> [UInt8] {
        let capacity = text.count + 32
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 0, count: capacity)
        if !text.isEmpty { buffer.update(from: text, count: text.count) }
        let size = libFuzzerMutate(buffer, text.count, capacity)
        return Array(String(decoding: UnsafeBufferPointer(start: buffer, count: size), as: UTF8.self).utf8)
    }

    // MARK: - Writing

    private mutating func randomStyle() -> Style {
        Style(
            spaced: rng.below(4) == 0, escapeSlash: rng.below(6) == 0, escapeNonASCII: rng.below(4) == 0,
            escapedLetter: rng.below(8) == 0 ? UInt8(0x61 + rng.below(26)) : 0)
    }

    static func write(_ value: ReferenceJSON, style: Style) -> [UInt8] {
        var out: [UInt8] = []
        write(value, style, into: &out)
        return out
    }

    private static func write(_ value: ReferenceJSON, _ style: Style, into out: inout [UInt8]) {
        switch value {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .number(let literal): out += literal
        case .string(let text): writeString(text, style, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out += Array((style.spaced ? ", " : ",").utf8) }
                write(element, style, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out += Array((style.spaced ? ", " : ",").utf8) }
                writeString(member.key, style, into: &out)
                out += Array((style.spaced ? ": " : ":").utf8)
                write(member.value, style, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: [UInt8], _ style: Style, into out: inout [UInt8]) {
        func hex(_ unit: UInt16) {
            out += Array("\\u".utf8)
            for shift in [12, 8, 4, 0] {
                out.append(Array("0123456789abcdef".utf8)[Int((unit >> UInt16(shift)) & 0xF)])
            }
        }
        out.append(UInt8(ascii: "\""))
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            let v = scalar.value
            switch v {
            case 0x22: out += Array("\\\"".utf8)
            case 0x5C: out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0x08: out += Array("\\b".utf8)
            case 0x0C: out += Array("\\f".utf8)
            case 0..<0x20: hex(UInt16(v))
            case 0x2F where style.escapeSlash: out += Array("\\/".utf8)
            case UInt32(style.escapedLetter) where style.escapedLetter != 0: hex(UInt16(v))
            case 0x80... where style.escapeNonASCII:
                for unit in String(scalar).utf16 { hex(unit) }
            default: out += Array(String(scalar).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: - Pools

    static let keys = [
        "v", "kind", "provider", "sent_at", "request", "response", "error", "latency_ms", "activity_id",
        "environment", "url", "headers", "body", "status", "apns-id", "APNS-ID", "Apns-Id", "apns-topic",
        "apns-push-type", "apns-priority", "Apns-Priority", "aps", "timestamp", "event", "content-state", "seq",
        "reason", "message", "apns", "live_activity_token", "payload", "name", "details", "@type", "statusCode",
        "errorCode", "code", "OfflinePushInfo", "ApnsInfo", "LiveActivity", "LaId", "Event", "ContentState",
        "ActionStatus", "ErrorCode", "MsgKey", "TaskId", "apns_id", "push_token", "aps_timestamp",
    ]
    static let keySet = Set(keys.map { ReferenceExchange.lowercasedASCII(Array($0.utf8)) })
    static let numbers = [
        "200", "200", "200", "400", "410", "0", "-0", "1", "5", "10", "200", "201", "400", "403", "404", "410", "413",
        "429", "500", "503", "-1", "1.0",
        "1e3", "200.0", "2e2", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "1795252443", "1795252443412", "90001", "70107",
    ]
    static let strings = [
        "", "OK", "FAIL", "ok", "start", "update", "end", "resume", "apns", "fcm", "tencent_chat", "10", "5", "010",
        "1:", "+5", " 5", "999999999999999999", "1234567890123456789", "١٠", "liveactivity", "production", "sandbox",
        "https://api.push.apple.com/3/device/abc", "https://api.sandbox.push.apple.com:443/3/device/abc?x=1#y",
        "https://API.Development.Push.Apple.com/3/device/a", "https://api.push.apple.com/3/device/a/b",
        "https://u@api.push.apple.com/3/device/", "/3/device/abc", "3/device/", "api.push.apple.com",
        "type.googleapis.com/google.firebase.fcm.v1.ApnsError",
        "type.googleapis.com/google.firebase.fcm.v1.FcmError", "google.firebase.fcm.v1.ApnsErrorX",
        "UNREGISTERED", "NOT_FOUND", "INVALID_ARGUMENT", "BadDeviceToken", "Unregistered", "timeout",
        "2026-11-21T09:14:03.412Z", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.5+00:01",
        "0000-01-01T00:00:00Z", "\u{FEFF}", "é", "\u{0}", "\"", "\\", "\u{2028}", "😀",
    ]
    /// Bodies as a sender or a provider writes them; used as a string or as the JSON it holds.
    static let bodies = [
        #"{"reason":"Unregistered","timestamp":1795252400000}"#,
        #"{"reason":"BadDeviceToken"}"#,
        #"{"aps":{"timestamp":1795252443,"event":"update","content-state":{"seq":7}}}"#,
        #"{"name":"projects/p/messages/0:1795252443412%31bd1c96"}"#,
        #"{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"},{"@type":"type.googleapis.com/google.firebase.fcm.v1.ApnsError","statusCode":410,"reason":"Unregistered"}]}}"#,
        #"{"error":{"status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError"}]}}"#,
        #"{"message":{"apns":{"live_activity_token":"abc","headers":{"apns-priority":"10"},"payload":{"aps":{"timestamp":1}}}}}"#,
        #"{"OfflinePushInfo":{"ApnsInfo":{"LiveActivity":{"LaId":"la-1","Event":"end","ContentState":{"seq":3}}}}}"#,
        #"{"ActionStatus":"OK","ErrorCode":0,"MsgKey":"k","TaskId":"t"}"#,
        #"{"ActionStatus":"FAIL","ErrorCode":90001,"ErrorInfo":"x"}"#,
        #"{"status":410,"headers":{"apns-id":"A"},"body":"{}"}"#,
        #"{"url":"https://api.push.apple.com/3/device/abc","headers":{"apns-topic":"t"},"body":"{\"aps\":{\"timestamp\":1}}"}"#,
    ]
}

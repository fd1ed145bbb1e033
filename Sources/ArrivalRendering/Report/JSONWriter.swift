/// A small JSON writer that keeps key order and indents by two spaces.
///
/// The documents arrival writes (report, diff, gate) describe their objects
/// as ``JSONFields``, keys in the contract's order, and the writer walks
/// them; ``object(_:)``, ``field(_:_:)`` and friends write by
/// hand what has no such description.
package final class JSONWriter {
    package private(set) var text = ""
    private var depth = 0
    private var first = true

    package init() {}

    /// `value` as a whole document, with the final newline.
    package static func document(_ value: some JSONWritable) -> String {
        let w = JSONWriter()
        value.write(to: w)
        return w.text + "\n"
    }

    package func object(_ body: () -> Void) { nested("{", body, "}") }

    package func array(_ body: () -> Void) { nested("[", body, "]") }

    /// One field of the enclosing object.
    package func field(_ key: String, _ value: () -> Void) {
        element {
            appendString(key)
            text += ": "
            value()
        }
    }

    /// One element of the enclosing array.
    package func element(_ value: () -> Void) {
        if !first { text += "," }
        first = false
        newline()
        value()
        first = false
    }

    package func bool(_ value: Bool) { text += value ? "true" : "false" }
    package func null() { text += "null" }
    package func int(_ value: Int) { text += String(value) }
    package func string(_ value: String) { appendString(value) }

    /// Swift prints the shortest digits that read back as the same double, e.g. 0.1, 1.0, 1e-05.
    package func double(_ value: Double) { text += "\(value)" }

    /// An object or array: its members one level deeper, each on a line of its own.
    private func nested(_ open: String, _ members: () -> Void, _ close: String) {
        text += open
        depth += 1
        first = true
        members()
        depth -= 1
        if !first { newline() }
        text += close
        first = false
    }

    private func newline() {
        text += "\n" + String(repeating: "  ", count: depth)
    }

    private func appendString(_ value: String) {
        text += "\"" + Self.escapes.escaped(value) + "\""
    }

    /// RFC 8259: the quote, the backslash and every control character; the
    /// controls without a short form as `\u00XX`. And U+FEFF as `\ufeff`:
    /// Foundation's JSON reader drops the raw character at the start of a
    /// string, so a saved report read back (`diff`, `gate`) would lose it
    /// from a key or value (found by the fuzz target).
    private static let escapes = ScalarEscapes(
        [
            "\"": "\\\"", "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\u{08}": "\\b", "\u{0C}": "\\f",
            "\u{FEFF}": "\\ufeff",
        ]
    ) { control in
        let hex = String(control.value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}

// MARK: - Values

/// Something ``JSONWriter`` writes as one JSON value. Optionals write
/// `null` for nil, so a rate over nothing or a missing percentile needs no
/// case of its own. (What is written, not what is read: the parsed value of
/// a payload is ArrivalSender's `JSONValue`.)
package protocol JSONWritable {
    func write(to w: JSONWriter)
}

/// A value written as a JSON object, described once by its fields.
package protocol JSONWritableObject: JSONWritable {
    var jsonFields: JSONFields { get }
}

extension JSONWritableObject {
    package func write(to w: JSONWriter) { jsonFields.write(to: w) }
}

/// The fields of a JSON object in the order they are written: a literal
/// reads like the object, `["total": total, "accepted": accepted]`.
package struct JSONFields: JSONWritable, ExpressibleByDictionaryLiteral {
    package var fields: [(String, any JSONWritable)]

    package init(_ fields: [(String, any JSONWritable)]) { self.fields = fields }

    package init(dictionaryLiteral elements: (String, any JSONWritable)...) { fields = elements }

    package static func + (lhs: JSONFields, rhs: JSONFields) -> JSONFields { JSONFields(lhs.fields + rhs.fields) }

    package func write(to w: JSONWriter) {
        w.object {
            for (key, value) in fields { w.field(key) { value.write(to: w) } }
        }
    }
}

extension Int: JSONWritable {
    package func write(to w: JSONWriter) { w.int(self) }
}

extension Int64: JSONWritable {
    package func write(to w: JSONWriter) { w.int(Int(self)) }
}

extension Double: JSONWritable {
    package func write(to w: JSONWriter) { w.double(self) }
}

extension Bool: JSONWritable {
    package func write(to w: JSONWriter) { w.bool(self) }
}

extension String: JSONWritable {
    package func write(to w: JSONWriter) { w.string(self) }
}

extension Optional: JSONWritable where Wrapped: JSONWritable {
    package func write(to w: JSONWriter) {
        if let self { self.write(to: w) } else { w.null() }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    package func write(to w: JSONWriter) {
        w.array {
            for element in self { w.element { element.write(to: w) } }
        }
    }
}

/// How a format writes the Unicode scalars it cannot carry as they are
/// (JSON strings, XML attribute values, Markdown table cells): a table of
/// replacements, every other scalar kept.
package struct ScalarEscapes: Sendable {
    private let replacements: [Unicode.Scalar: String]

    /// `replacements`, and for every other C0 control (U+0000 to U+001F)
    /// what `otherControl` makes of it; without `otherControl` those are kept.
    package init(
        _ replacements: [Unicode.Scalar: String], otherControl: ((Unicode.Scalar) -> String)? = nil
    ) {
        var table = replacements
        if let otherControl {
            for value in UInt8(0)..<0x20 where table[Unicode.Scalar(value)] == nil {
                table[Unicode.Scalar(value)] = otherControl(Unicode.Scalar(value))
            }
        }
        self.replacements = table
    }

    package func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if let replacement = replacements[scalar] {
                out += replacement
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

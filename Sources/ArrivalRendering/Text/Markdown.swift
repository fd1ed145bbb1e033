/// Markdown for reports, diffs and gate summaries.
package enum Markdown {
    /// Input data in a table cell or inline code: no pipe, line break,
    /// backtick or angle bracket can break the table or open markup.
    package static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "|": out += "\\|"
            case "\n", "\r": out += " "
            case "`": out += "'"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

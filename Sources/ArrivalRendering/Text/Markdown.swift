/// Markdown for reports, diffs and gate summaries.
package enum Markdown {
    /// Input data in a table cell or inline code: no pipe, line break,
    /// backtick or angle bracket can break the table or open markup.
    package static func escaped(_ text: String) -> String { escapes.escaped(text) }

    private static let escapes = ScalarEscapes([
        "|": "\\|", "\n": " ", "\r": " ", "`": "'", "<": "&lt;", ">": "&gt;",
    ])
}

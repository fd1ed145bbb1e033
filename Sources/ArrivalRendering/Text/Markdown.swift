/// Markdown for reports, diffs and gate summaries.
package enum Markdown {
    /// Input data in a table cell or inline code: no pipe, line break,
    /// backtick or angle bracket can break the table or open markup.
    package static func escaped(_ text: String) -> String { escapes.escaped(text) }

    /// A pipe table: the header, the delimiter row (`---:` for a column
    /// aligned right), then a line per row. Cells are written as given, so
    /// input data goes through ``escaped(_:)`` first; an empty cell is `| |`.
    package static func table(
        _ header: [String], alignments: [TextTable.Alignment], rows: [[String]]
    ) -> [String] {
        let delimiter = "|" + alignments.map { $0 == .right ? "---:|" : "---|" }.joined()
        return [line(header), delimiter] + rows.map(line)
    }

    private static func line(_ cells: [String]) -> String {
        "|" + cells.map { $0.isEmpty ? " |" : " \($0) |" }.joined()
    }

    private static let escapes = ScalarEscapes([
        "|": "\\|", "\n": " ", "\r": " ", "`": "'", "<": "&lt;", ">": "&gt;",
    ])
}

/// Columns aligned for a terminal, with optional ANSI colour per cell.
/// Widths count Unicode scalars of the visible text, never the colour codes.
package struct TextTable {
    package enum Alignment { case left, right }

    package struct Cell {
        var text: String
        var color: ANSIColor?

        package init(text: String, color: ANSIColor?) {
            self.text = text
            self.color = color
        }
    }

    var headers: [String]
    var alignments: [Alignment]
    private(set) var rows: [[Cell]] = []

    package init(_ headers: [String], alignments: [Alignment]) {
        self.headers = headers
        self.alignments = alignments
    }

    /// A table of plain texts, uncoloured.
    package init(_ headers: [String], alignments: [Alignment], rows: [[String]]) {
        self.init(headers, alignments: alignments)
        for row in rows { add(row) }
    }

    package mutating func add(_ cells: [Cell]) { rows.append(cells) }
    package mutating func add(_ texts: [String]) { rows.append(texts.map { Cell(text: $0, color: nil) }) }

    package func render(color: Bool, indent: String = "  ") -> String {
        var widths = headers.map(\.unicodeScalars.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.text.unicodeScalars.count)
            }
        }
        func line(_ cells: [Cell], header: Bool) -> String {
            var parts: [String] = []
            for (index, cell) in cells.enumerated() {
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.text.unicodeScalars.count))
                let aligned = alignments[index] == .left ? cell.text + pad : pad + cell.text
                if color, header {
                    parts.append(ANSIColor.bold.wrap(aligned))
                } else if color, let tint = cell.color {
                    parts.append(tint.wrap(aligned))
                } else {
                    parts.append(aligned)
                }
            }
            // No trailing blanks from a left-aligned last column.
            var text = indent + parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var lines = [line(headers.map { Cell(text: $0, color: nil) }, header: true)]
        lines += rows.map { line($0, header: false) }
        return lines.joined(separator: "\n")
    }
}

package enum ANSIColor: String {
    case red = "31"
    case green = "32"
    case yellow = "33"
    case dim = "2"
    case bold = "1"

    package func wrap(_ text: String) -> String { "\u{1B}[\(rawValue)m" + text + "\u{1B}[0m" }
}

/// A CSV file as RFC 4180 writes it, read strictly, with the line each row
/// starts on: what Apple's metrics exports are (issue 54). Accepts a UTF-8
/// byte order mark, `\r\n` or `\n` line ends (a last line without one),
/// quoted fields with commas, doubled quotes and line breaks; skips blank
/// lines. Refuses, with the line and the reason, what would otherwise be
/// read into the wrong cells: a quote never closed, text after a closing
/// quote, a quote inside an unquoted field, invalid UTF-8, and a row whose
/// field count is not the header's.
///
/// By hand rather than through SwiftCSV or CSV.swift (both in the package
/// mirror): neither says which line a row or an error is on, and both take
/// an unclosed quote as a field running to the end of the file
/// (README, "Dependencies").
struct CSVTable {
    /// The first row: the column names as written.
    var header: [String] = []
    /// The rows after the header, each with the line it starts on (from 1).
    var rows: [(line: Int, fields: [String])] = []

    struct Failure: Error, Equatable {
        var line: Int
        var reason: String
    }

    init(_ bytes: [UInt8]) throws(Failure) {
        var parser = Parser(bytes: bytes)
        try parser.run()
        guard let first = parser.table.first else { throw Failure(line: 1, reason: "the file has no header row") }
        header = first.fields
        rows = Array(parser.table.dropFirst())
    }

    /// The reading of one file: a byte at a time, quoted or not, each row with the line it starts on.
    private struct Parser {
        static let quote = UInt8(ascii: "\"")
        static let comma = UInt8(ascii: ",")
        static let cr: UInt8 = 0x0D
        static let lf: UInt8 = 0x0A

        let bytes: [UInt8]
        var i: Int
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var rowLine = 1
        var quoteLine = 1
        var inQuotes = false
        var wasQuoted = false
        var table: [(line: Int, fields: [String])] = []

        init(bytes: [UInt8]) {
            self.bytes = bytes
            i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        }

        mutating func run() throws(Failure) {
            while i < bytes.count {
                let byte = bytes[i]
                i += 1
                if inQuotes { quoted(byte) } else { try unquoted(byte) }
            }
            if inQuotes { throw Failure(line: quoteLine, reason: "a quoted field is never closed") }
            if !field.isEmpty || !fields.isEmpty || wasQuoted { try endRow() }
        }

        /// A byte inside quotes: `""` is one quote, a lone quote closes the field, line breaks are kept.
        mutating func quoted(_ byte: UInt8) {
            if byte == Self.quote {
                if i < bytes.count && bytes[i] == Self.quote {
                    field.append(Self.quote)
                    i += 1
                } else {
                    inQuotes = false
                }
            } else {
                if byte == Self.lf || (byte == Self.cr && (i >= bytes.count || bytes[i] != Self.lf)) { line += 1 }
                field.append(byte)
            }
        }

        /// A byte outside quotes: a quote opening a field, a comma, a line break (CRLF, LF or CR), or text.
        mutating func unquoted(_ byte: UInt8) throws(Failure) {
            if byte == Self.quote {
                guard field.isEmpty && !wasQuoted else {
                    throw Failure(line: line, reason: "a quote inside an unquoted field (quote the whole field)")
                }
                inQuotes = true
                wasQuoted = true
                quoteLine = line
            } else if byte == Self.comma {
                try endField()
            } else if byte == Self.cr || byte == Self.lf {
                if byte == Self.cr && i < bytes.count && bytes[i] == Self.lf { i += 1 }
                try endRow()
                line += 1
                rowLine = line
            } else if wasQuoted {
                throw Failure(line: line, reason: "text after a closing quote")
            } else {
                field.append(byte)
            }
        }

        mutating func endField() throws(Failure) {
            guard let text = String(validating: field, as: UTF8.self) else {
                throw Failure(line: line, reason: "a field is not valid UTF-8")
            }
            fields.append(text)
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }

        mutating func endRow() throws(Failure) {
            try endField()
            defer { fields = [] }
            if fields == [""] { return }  // a blank line is no row
            if let width = table.first?.fields.count, fields.count != width {
                throw Failure(
                    line: rowLine,
                    reason: "\(fields.count) \(fields.count == 1 ? "field" : "fields") where the header has \(width)")
            }
            table.append((rowLine, fields))
        }
    }
}

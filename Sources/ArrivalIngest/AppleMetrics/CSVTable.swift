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
        let quote = UInt8(ascii: "\"")
        let comma = UInt8(ascii: ",")
        let cr: UInt8 = 0x0D
        let lf: UInt8 = 0x0A
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var rowLine = 1
        var quoteLine = 1
        var inQuotes = false
        var wasQuoted = false
        var table: [(line: Int, fields: [String])] = []

        func text() throws(Failure) -> String {
            guard let text = String(validating: field, as: UTF8.self) else {
                throw Failure(line: line, reason: "a field is not valid UTF-8")
            }
            return text
        }
        func endField() throws(Failure) {
            fields.append(try text())
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }
        func endRow() throws(Failure) {
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

        while i < bytes.count {
            let byte = bytes[i]
            i += 1
            if inQuotes {
                if byte == quote {
                    if i < bytes.count && bytes[i] == quote {
                        field.append(quote)
                        i += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if byte == lf || (byte == cr && (i >= bytes.count || bytes[i] != lf)) { line += 1 }
                    field.append(byte)
                }
            } else if byte == quote {
                guard field.isEmpty && !wasQuoted else {
                    throw Failure(line: line, reason: "a quote inside an unquoted field (quote the whole field)")
                }
                inQuotes = true
                wasQuoted = true
                quoteLine = line
            } else if byte == comma {
                try endField()
            } else if byte == cr || byte == lf {
                if byte == cr && i < bytes.count && bytes[i] == lf { i += 1 }
                try endRow()
                line += 1
                rowLine = line
            } else if wasQuoted {
                throw Failure(line: line, reason: "text after a closing quote")
            } else {
                field.append(byte)
            }
        }
        if inQuotes { throw Failure(line: quoteLine, reason: "a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty || wasQuoted { try endRow() }
        guard let first = table.first else { throw Failure(line: 1, reason: "the file has no header row") }
        header = first.fields
        rows = Array(table.dropFirst())
    }
}

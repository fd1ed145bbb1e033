import Foundation

/// Rows as RFC 4180 CSV: a field with a comma, a quote or a line break is
/// quoted, quotes doubled; CRLF line ends (`tokens`, `lost`).
func csvText(_ rows: [[String]]) -> String {
    func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
    return rows.map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
}

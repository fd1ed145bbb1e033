package import ArrivalModel
import Foundation

/// One of Apple's metrics exports, read whole (issue 54;
/// Documentation/Apple-metrics.md): which of the three kinds it is, told by
/// its header (names compared without regard to case, spacing or a BOM; any
/// order; columns it does not know are ignored), and its rows. A file that
/// cannot be read exactly is refused whole, with the line and the reason.
package struct AppleMetricsExport: Sendable, Equatable {
    package var kind: AppleMetricsKind
    package var delivery: [AppleDeliveryRow] = []
    package var broadcasts: [AppleBroadcastRow] = []

    /// Why a file is refused: the line (1 is the header) and what is wrong there.
    package struct Refusal: Error, Equatable, CustomStringConvertible {
        package var line: Int
        package var reason: String
        package var description: String { "line \(line): \(reason)" }
    }

    /// Reads `bytes`, the export named `fileName`; a per-channel export takes its
    /// channel from `channel`, else from its name (``channel(fromFileName:)``).
    package init(bytes: [UInt8], fileName: String, channel: String? = nil) throws(Refusal) {
        let table: CSVTable
        do {
            table = try CSVTable(bytes)
        } catch {
            throw Refusal(line: error.line, reason: error.reason)
        }
        let columns = Dictionary(
            table.header.enumerated().map { (Self.normalized($0.element), $0.offset) }, uniquingKeysWith: { a, _ in a })
        if columns.count < table.header.count {
            throw Refusal(line: 1, reason: "a column name is repeated: \(table.header.joined(separator: ", "))")
        }
        func column(_ name: String) -> Int? { columns[name] }
        guard let date = column("date (utc)") ?? column("date") else {
            throw Self.unknownHeader(table.header)
        }
        if let pushType = column("push type"), let status = column("status"), let count = column("count") {
            kind = .delivery
            delivery = try Self.deliveryRows(table, date: date, pushType: pushType, status: status, count: count)
            return
        }
        guard let published = column("broadcasts published"), let delivered = column("broadcasts delivered"),
            let total = column("total subscriptions")
        else { throw Self.unknownHeader(table.header) }
        let unique = column("unique subscribers")
        kind = unique == nil ? .broadcastChannel : .broadcastApplication
        let channelID: String?
        if kind == .broadcastChannel {
            guard let id = channel ?? Self.channel(fromFileName: fileName) else {
                throw Refusal(
                    line: 1,
                    reason: "a channel's broadcast export (no Unique Subscribers column) whose name does not say the "
                        + "channel: give it with --channel ID, or name the file broadcastchannelmetrics_ID.csv")
            }
            channelID = id
        } else {
            channelID = nil
        }
        broadcasts = try Self.broadcastRows(
            table, date: date, channelID: channelID,
            columns: [
                (published, "published", "Broadcasts Published", \.published),
                (delivered, "delivered", "Broadcasts Delivered", \.delivered),
                (total, "total_subscriptions", "Total Subscriptions", \.totalSubscriptions),
                (unique, "unique_subscribers", "Unique Subscribers", \.uniqueSubscribers),
            ])
    }

    /// A delivery export's rows: one per day, push type and status (a status compared as ``normalized(_:)``).
    private static func deliveryRows(
        _ table: CSVTable, date: Int, pushType: Int, status: Int, count: Int
    ) throws(Refusal) -> [AppleDeliveryRow] {
        var rows: [AppleDeliveryRow] = []
        var seen: [String: Int] = [:]
        for (line, fields) in table.rows {
            let day = try Self.day(fields[date], line: line)
            let key = "\(day)\u{1F}\(fields[pushType])\u{1F}\(Self.normalized(fields[status]))"
            if let earlier = seen[key] {
                throw Refusal(line: line, reason: "the same day, push type and status as line \(earlier)")
            }
            seen[key] = line
            guard let value = try Self.count(fields[count], line: line, column: "Count") else {
                throw Refusal(line: line, reason: "Count is empty")
            }
            rows.append(
                AppleDeliveryRow(
                    day: day, pushType: fields[pushType], status: fields[status],
                    count: value.hidden ? nil : value.count))
        }
        return rows
    }

    /// A broadcast export's rows, one per day: each of `columns` (its index, JSON name, title, field) read
    /// as a count, `-1` as hidden.
    private static func broadcastRows(
        _ table: CSVTable, date: Int, channelID: String?,
        columns: [(Int?, String, String, WritableKeyPath<AppleBroadcastRow, Int?>)]
    ) throws(Refusal) -> [AppleBroadcastRow] {
        var rows: [AppleBroadcastRow] = []
        var seen: [Int64: Int] = [:]
        for (line, fields) in table.rows {
            let day = try Self.day(fields[date], line: line)
            if let earlier = seen[day] { throw Refusal(line: line, reason: "the same day as line \(earlier)") }
            seen[day] = line
            var row = AppleBroadcastRow(
                day: day, channelID: channelID, published: nil, delivered: nil, totalSubscriptions: nil,
                uniqueSubscribers: nil)
            for (index, name, title, path) in columns {
                guard let index, let value = try Self.count(fields[index], line: line, column: title) else { continue }
                if value.hidden { row.hidden.append(name) } else { row[keyPath: path] = value.count }
            }
            rows.append(row)
        }
        return rows
    }

    /// A column name or a status as compared: lowercase, spaces trimmed and
    /// runs of them made one, an en or em dash read as a hyphen.
    package static func normalized(_ text: String) -> String {
        let mapped = text.lowercased().map { $0 == "\u{2013}" || $0 == "\u{2014}" ? "-" : $0 }
        return String(mapped).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The channel a per-channel export's name gives: what follows
    /// `broadcastchannelmetrics` and one `_`, `-`, `.` or space, up to `.csv`
    /// (`broadcastchannelmetrics_dHN0LU1TQkw=.csv`); nil when the name does not say.
    package static func channel(fromFileName path: String) -> String? {
        var name = Substring(path.split(separator: "/").last ?? "")
        if name.lowercased().hasSuffix(".csv") { name = name.dropLast(4) }
        let prefix = "broadcastchannelmetrics"
        guard name.lowercased().hasPrefix(prefix) else { return nil }
        var rest = name.dropFirst(prefix.count)
        guard let separator = rest.first, "_-. ".contains(separator) else { return nil }
        rest = rest.dropFirst()
        // A channel ID is base64, and a file name cannot hold its '/': it is written %2F (arrival simulate
        // does) and read back; a name without a valid escape is taken as it is.
        return rest.isEmpty ? nil : (String(rest).removingPercentEncoding ?? String(rest))
    }

    /// The UTC day of a `Date (UTC)` value: `YYYY-MM-DD`, or an RFC 3339 time (its day in UTC).
    static func day(_ text: String, line: Int) throws(Refusal) -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let midnight = RFC3339.parseDay(trimmed) { return midnight }
        if let time = RFC3339.parseMilliseconds(trimmed) { return utcDay(of: time) * Milliseconds.day }
        throw Refusal(
            line: line,
            reason: "Date (UTC) '\(text)' is neither a day (YYYY-MM-DD) nor an RFC 3339 time (2026-11-21T00:00:00Z)")
    }

    /// A count: digits, with `,` between thousands (`"1,234"`); `-1` is hidden (Apple's placeholder);
    /// nil when empty.
    static func count(_ text: String, line: Int, column: String) throws(Refusal) -> (count: Int, hidden: Bool)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        if trimmed == "-1" { return (0, true) }
        let groups = trimmed.split(separator: ",", omittingEmptySubsequences: false)
        let wellGrouped =
            groups.count == 1
            || (1...3).contains(groups[0].count) && groups.dropFirst().allSatisfy { $0.count == 3 }
        guard wellGrouped, groups.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
            let value = Int(groups.joined())
        else {
            throw Refusal(
                line: line, reason: "\(column) '\(text)' is not a count (digits, with commas between thousands, or -1)")
        }
        return (value, false)
    }

    static func unknownHeader(_ header: [String]) -> Refusal {
        Refusal(
            line: 1,
            reason:
                "not one of Apple's metrics exports: the columns are \(header.map { "'\($0)'" }.joined(separator: ", ")); "
                + "expected Push Type, Status, Date (UTC), Count (delivery metrics) or Date (UTC), Broadcasts Published, "
                + "Broadcasts Delivered, Total Subscriptions[, Unique Subscribers] (broadcast metrics)")
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

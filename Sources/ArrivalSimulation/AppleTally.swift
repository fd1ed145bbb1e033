import ArrivalModel
import Foundation

/// What APNs did with the fleet's pushes, as Apple's Push Notifications Console would count it
/// (`simulate --apple-metrics`, issue 54): per UTC day of the accept time, Live Activity pushes by
/// status, and per channel the broadcasts published and the deliveries to subscribers. Counted where
/// the simulator decides each push's fate, drawing no random number, so a fleet made without the flag
/// is byte for byte what it was.
struct AppleTally {
    /// The statuses the simulator gives (Documentation/Apple-metrics.md says what each means).
    enum Status: String, CaseIterable {
        case received = "Received by APNs"
        case delivered = "Delivered to Device"
        case deliveredFromStorage = "Delivered to Device (From Storage)"
        case storedOffline = "Stored - Device Offline"
        case storedPower = "Stored - Power Considerations"
        case discardedExpired = "Discarded - Expired"
        case discardedUnregistered = "Discarded - Token Unregistered"
    }

    private var delivery: [Int64: [Status: Int]] = [:]
    private var channels: [Int64: [String: (published: Int, delivered: Int)]] = [:]

    /// One Live Activity push accepted at `acceptMs`, in each of `statuses` (a stored push delivered later
    /// counts as stored and as delivered from storage, as Apple's do).
    mutating func push(acceptedAt acceptMs: Int64, _ statuses: [Status]) {
        let day = utcDay(of: acceptMs)
        for status in [.received] + statuses { delivery[day, default: [:]][status, default: 0] += 1 }
    }

    mutating func broadcastPublished(channel: String, acceptedAt acceptMs: Int64) {
        channels[utcDay(of: acceptMs), default: [:]][channel, default: (0, 0)].published += 1
    }

    mutating func broadcastDelivered(channel: String, acceptedAt acceptMs: Int64) {
        channels[utcDay(of: acceptMs), default: [:]][channel, default: (0, 0)].delivered += 1
    }

    /// Apple rounds its counts; how is not known. The simulator rounds to the nearest ten (a count under
    /// ten stays as it is) and says so in Documentation/Apple-metrics.md.
    static func rounded(_ count: Int) -> Int { count < 10 ? count : (count + 5) / 10 * 10 }

    /// Writes `deliverymetrics.csv`, `broadcastapplicationmetric.csv` and one
    /// `broadcastchannelmetrics_ID.csv` per channel into `directory`, as the console exports them
    /// (thousands separators quoted, CRLF line ends); returns the files written.
    func write(into directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func date(_ day: Int64) -> String { String(RFC3339.format(milliseconds: day * Milliseconds.day).prefix(10)) }
        func count(_ value: Int) -> String {
            let text = String(Self.rounded(value))
            guard text.count > 3 else { return text }
            var grouped = ""
            for (index, character) in text.enumerated() {
                if index > 0 && (text.count - index) % 3 == 0 { grouped += "," }
                grouped.append(character)
            }
            return "\"" + grouped + "\""
        }
        var files: [String] = []
        func file(_ name: String, _ lines: [String]) throws {
            let path = directory + "/" + name
            try Data((lines.joined(separator: "\r\n") + "\r\n").utf8).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        var lines = ["Push Type,Status,Date (UTC),Count"]
        for day in delivery.keys.sorted() {
            for status in Status.allCases {
                if let n = delivery[day]?[status] {
                    lines.append("liveactivity,\(status.rawValue),\(date(day)),\(count(n))")
                }
            }
        }
        try file("deliverymetrics.csv", lines)
        guard !channels.isEmpty else { return files }
        var application = [
            "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions,Unique Subscribers"
        ]
        var perChannel: [String: [String]] = [:]
        for day in channels.keys.sorted() {
            let rows = channels[day] ?? [:]
            let published = rows.values.reduce(0) { $0 + $1.published }
            let delivered = rows.values.reduce(0) { $0 + $1.delivered }
            // Subscriptions are not simulated: -1, as Apple writes a value it does not show.
            application.append("\(date(day)),\(count(published)),\(count(delivered)),-1,-1")
            for (channel, row) in rows {
                perChannel[
                    channel, default: ["Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions"]
                ]
                .append("\(date(day)),\(count(row.published)),\(count(row.delivered)),-1")
            }
        }
        try file("broadcastapplicationmetric.csv", application)
        for channel in perChannel.keys.sorted() {
            // A file name cannot hold the '/' of a base64 ID: written %2F, read back by `apple import`.
            let name = channel.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "/", with: "%2F")
            try file("broadcastchannelmetrics_\(name).csv", perChannel[channel]!)
        }
        return files
    }
}

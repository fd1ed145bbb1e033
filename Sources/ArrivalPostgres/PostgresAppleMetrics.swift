package import ArrivalModel
package import ArrivalStore
import Foundation
import PostgresNIO

/// Apple's exports in a PostgreSQL store (issue 54), as the SQLite store
/// keeps them (`Store+AppleMetrics.swift`): a day replaced whole by a later
/// export, in one transaction; a hidden value null.
package enum PostgresAppleMetrics {
    /// Stores one export's rows (of `kind`, from the file whose content hash is `sha256`).
    package static func importRows(
        _ location: PostgresLocation, kind: AppleMetricsKind, delivery: [AppleDeliveryRow],
        broadcasts: [AppleBroadcastRow], sha256: String, at now: Int64,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> AppleImportOutcome {
        let session = try PostgresSession(location, environment: environment)
        defer { session.close() }
        try PostgresSchema.migrate(session)
        var outcome = AppleImportOutcome()
        try session.execute("BEGIN")
        do {
            switch kind {
            case .delivery:
                for day in Set(delivery.map(\.day)).sorted() {
                    let rows = delivery.filter { $0.day == day }
                    var stored: [[String?]] = []
                    for row in try session.run(
                        "SELECT push_type, status, count FROM arrival.apple_delivery WHERE day = \(day) FOR UPDATE")
                    {
                        let (type, status, count) = try row.decode((String, String, Int?).self)
                        stored.append([type, status, count.map(String.init)])
                    }
                    outcome.note(day: day, stored: stored, wanted: rows.map(AppleImportOutcome.cells))
                    try session.run("DELETE FROM arrival.apple_delivery WHERE day = \(day)")
                    for row in rows {
                        try session.run(
                            """
                            INSERT INTO arrival.apple_delivery (day, push_type, status, count, file_sha256, imported_at)
                            VALUES (\(day), \(row.pushType), \(row.status), \(row.count), \(sha256), \(now))
                            """)
                        outcome.rows += 1
                    }
                }
            case .broadcastApplication, .broadcastChannel:
                let application = kind == .broadcastApplication ? 1 : 0
                for row in broadcasts {
                    let channel = row.channelID ?? ""
                    var stored: [[String?]] = []
                    for found in try session.run(
                        """
                        SELECT published, delivered, total_subscriptions, unique_subscribers, hidden
                        FROM arrival.apple_broadcasts
                        WHERE day = \(row.day) AND application = \(application) AND channel_id = \(channel) FOR UPDATE
                        """)
                    {
                        let (published, delivered, total, unique, hidden) = try found.decode(
                            (Int?, Int?, Int?, Int?, String).self)
                        stored.append([published, delivered, total, unique].map { $0.map(String.init) } + [hidden])
                    }
                    outcome.note(day: row.day, stored: stored, wanted: [AppleImportOutcome.cells(row)])
                    try session.run(
                        """
                        DELETE FROM arrival.apple_broadcasts
                        WHERE day = \(row.day) AND application = \(application) AND channel_id = \(channel)
                        """)
                    try session.run(
                        """
                        INSERT INTO arrival.apple_broadcasts (day, channel_id, application, published, delivered,
                            total_subscriptions, unique_subscribers, hidden, file_sha256, imported_at)
                        VALUES (\(row.day), \(channel), \(application), \(row.published), \(row.delivered),
                            \(row.totalSubscriptions), \(row.uniqueSubscribers), \(row.hidden.joined(separator: ",")),
                            \(sha256), \(now))
                        """)
                    outcome.rows += 1
                }
            }
            try session.execute("COMMIT")
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
        return outcome
    }

    /// The stored delivery rows of the days in [from, to), by day, push type, status (as SQLite orders them: bytes).
    package static func delivery(
        _ location: PostgresLocation, from: Int64? = nil, to: Int64? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [AppleDeliveryRow] {
        var rows: [AppleDeliveryRow] = []
        for row in try query(
            location, environment: environment,
            """
            SELECT day, push_type, status, count FROM arrival.apple_delivery
            WHERE day >= \(from ?? Int64.min) AND day < \(to ?? Int64.max)
            ORDER BY day, push_type COLLATE "C", status COLLATE "C"
            """)
        {
            let (day, type, status, count) = try row.decode((Int64, String, String, Int?).self)
            rows.append(AppleDeliveryRow(day: day, pushType: type, status: status, count: count))
        }
        return rows
    }

    /// The stored broadcast rows of the days in [from, to), by day, the application's before the channels'.
    package static func broadcasts(
        _ location: PostgresLocation, from: Int64? = nil, to: Int64? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [AppleBroadcastRow] {
        var rows: [AppleBroadcastRow] = []
        for row in try query(
            location, environment: environment,
            """
            SELECT day, channel_id, application, published, delivered, total_subscriptions, unique_subscribers, hidden
            FROM arrival.apple_broadcasts WHERE day >= \(from ?? Int64.min) AND day < \(to ?? Int64.max)
            ORDER BY day, application DESC, channel_id COLLATE "C"
            """)
        {
            let (day, channel, application, published, delivered, total, unique, hidden) = try row.decode(
                (Int64, String, Int16, Int?, Int?, Int?, Int?, String).self)
            rows.append(
                AppleBroadcastRow(
                    day: day, channelID: application == 1 ? nil : channel, published: published, delivered: delivered,
                    totalSubscriptions: total, uniqueSubscribers: unique,
                    hidden: hidden.isEmpty ? [] : hidden.split(separator: ",").map(String.init)))
        }
        return rows
    }

    /// The rows of `sql` on the store at `location` (migrated first, so that a store of an arrival before
    /// these tables has them, empty).
    private static func query(
        _ location: PostgresLocation, environment: [String: String], _ sql: PostgresQuery
    ) throws -> [PostgresRow] {
        let session = try PostgresSession(location, environment: environment)
        defer { session.close() }
        try PostgresSchema.migrate(session)
        return Array(try session.run(sql))
    }
}

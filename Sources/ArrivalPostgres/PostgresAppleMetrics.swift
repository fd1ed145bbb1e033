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

    /// Apple's stored rows of the days in [from, to) (all without bounds), in one session of their own:
    /// delivery rows by day, push type, status (as SQLite orders them: bytes); broadcast rows by day, the
    /// application's before the channels'.
    package static func metrics(
        _ location: PostgresLocation, from: Int64? = nil, to: Int64? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> AppleMetrics {
        let session = try PostgresSession(location, environment: environment)
        defer { session.close() }
        // Migrated first, so that a store of an arrival before these tables has them, empty.
        try PostgresSchema.migrate(session)
        return try metrics(from: from, to: to) { try session.run(PostgresQuery(unsafeSQL: $0)) }
    }

    /// The two reads through `run` (a session's, or a report's snapshot's, in its transaction).
    static func metrics(
        from: Int64?, to: Int64?, run: (String) throws -> some Sequence<PostgresRow>
    ) throws -> AppleMetrics {
        let (low, high) = (from ?? Int64.min, to ?? Int64.max)
        var metrics = AppleMetrics()
        for row in try run(
            """
            SELECT day, push_type, status, count FROM arrival.apple_delivery
            WHERE day >= \(low) AND day < \(high)
            ORDER BY day, push_type COLLATE "C", status COLLATE "C"
            """)
        {
            let (day, type, status, count) = try row.decode((Int64, String, String, Int?).self)
            metrics.delivery.append(AppleDeliveryRow(day: day, pushType: type, status: status, count: count))
        }
        for row in try run(
            """
            SELECT day, channel_id, application, published, delivered, total_subscriptions, unique_subscribers, hidden
            FROM arrival.apple_broadcasts WHERE day >= \(low) AND day < \(high)
            ORDER BY day, application DESC, channel_id COLLATE "C"
            """)
        {
            let (day, channel, application, published, delivered, total, unique, hidden) = try row.decode(
                (Int64, String, Int16, Int?, Int?, Int?, Int?, String).self)
            metrics.broadcasts.append(
                AppleBroadcastRow(
                    day: day, channelID: application == 1 ? nil : channel, published: published, delivered: delivered,
                    totalSubscriptions: total, uniqueSubscribers: unique,
                    hidden: hidden.isEmpty ? [] : hidden.split(separator: ",").map(String.init)))
        }
        return metrics
    }
}

package import ArrivalModel

/// What importing one export did, day by day (issue 54): a day is new, the
/// same as stored (the same file again, or an export that did not change
/// it), or replaced by a later export with other numbers (Apple revises a
/// day's counts when events logged later come in).
package struct AppleImportOutcome: Sendable, Equatable {
    package var newDays: [Int64] = []
    package var unchangedDays: [Int64] = []
    package var revisedDays: [Int64] = []
    package var rows = 0

    package init() {}

    /// Notes `day` as new (nothing stored), unchanged (what is stored is what comes) or revised.
    package mutating func note(day: Int64, stored: [[String?]], wanted: [[String?]]) {
        let order: ([String?], [String?]) -> Bool = { $0.lexicographicallyPrecedes($1) { ($0 ?? "") < ($1 ?? "") } }
        if stored.isEmpty {
            if !newDays.contains(day) { newDays.append(day) }
        } else if stored.sorted(by: order) == wanted.sorted(by: order) {
            if !unchangedDays.contains(day) { unchangedDays.append(day) }
        } else if !revisedDays.contains(day) {
            revisedDays.append(day)
        }
    }

    /// A delivery row as `note` compares it.
    package static func cells(_ row: AppleDeliveryRow) -> [String?] {
        [row.pushType, row.status, row.count.map(String.init)]
    }

    /// A broadcast row's figures as `note` compares them.
    package static func cells(_ row: AppleBroadcastRow) -> [String?] {
        [row.published, row.delivered, row.totalSubscriptions, row.uniqueSubscribers].map { $0.map(String.init) }
            + [row.hidden.joined(separator: ",")]
    }
}

extension SQLiteStore {
    /// Stores one export's rows (of `kind`, from the file whose content hash is `sha256`),
    /// replacing each of its days' rows of the same kind (and channel), in one transaction.
    package func importAppleMetrics(
        kind: AppleMetricsKind, delivery: [AppleDeliveryRow], broadcasts: [AppleBroadcastRow], sha256: String,
        at now: Int64
    ) throws(DatabaseError) -> AppleImportOutcome {
        precondition(!batchOpen, "Apple's exports are imported outside an ingest batch")
        var outcome = AppleImportOutcome()
        try connection.execute("BEGIN IMMEDIATE")
        do throws(DatabaseError) {
            switch kind {
            case .delivery:
                let days = Set(delivery.map(\.day)).sorted()
                for day in days {
                    let rows = delivery.filter { $0.day == day }
                    let stored = try strings(
                        "SELECT push_type, status, count FROM apple_delivery WHERE day = \(day) "
                            + "ORDER BY push_type, status", columns: 3)
                    outcome.note(day: day, stored: stored, wanted: rows.map(AppleImportOutcome.cells))
                    try connection.execute("DELETE FROM apple_delivery WHERE day = \(day)")
                    let insert = try connection.prepare(
                        "INSERT INTO apple_delivery (day, push_type, status, count, file_sha256, imported_at) "
                            + "VALUES (?, ?, ?, ?, ?, ?)")
                    for row in rows {
                        insert.bind(1, day)
                        insert.bind(2, row.pushType)
                        insert.bind(3, row.status)
                        insert.bind(4, row.count.map(Int64.init))
                        insert.bind(5, sha256)
                        insert.bind(6, now)
                        _ = try insert.step()
                        insert.reset()
                        outcome.rows += 1
                    }
                }
            case .broadcastApplication, .broadcastChannel:
                let application = kind == .broadcastApplication ? 1 : 0
                for row in broadcasts {
                    let channel = row.channelID ?? ""
                    let key = "day = \(row.day) AND application = \(application) AND channel_id = ?"
                    let stored = try strings(
                        "SELECT published, delivered, total_subscriptions, unique_subscribers, hidden "
                            + "FROM apple_broadcasts WHERE \(key)", columns: 5, binding: channel)
                    outcome.note(day: row.day, stored: stored, wanted: [AppleImportOutcome.cells(row)])
                    let delete = try connection.prepare("DELETE FROM apple_broadcasts WHERE \(key)")
                    delete.bind(1, channel)
                    _ = try delete.step()
                    let insert = try connection.prepare(
                        """
                        INSERT INTO apple_broadcasts (day, channel_id, application, published, delivered,
                            total_subscriptions, unique_subscribers, hidden, file_sha256, imported_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                    insert.bind(1, row.day)
                    insert.bind(2, channel)
                    insert.bind(3, Int64(application))
                    insert.bind(4, row.published.map(Int64.init))
                    insert.bind(5, row.delivered.map(Int64.init))
                    insert.bind(6, row.totalSubscriptions.map(Int64.init))
                    insert.bind(7, row.uniqueSubscribers.map(Int64.init))
                    insert.bind(8, row.hidden.joined(separator: ","))
                    insert.bind(9, sha256)
                    insert.bind(10, now)
                    _ = try insert.step()
                    outcome.rows += 1
                }
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        return outcome
    }

    private func strings(_ sql: String, columns: Int32, binding: String? = nil) throws(DatabaseError) -> [[String?]] {
        let statement = try connection.prepare(sql)
        if let binding { statement.bind(1, binding) }
        var rows: [[String?]] = []
        while try statement.step() {
            rows.append((0..<columns).map { statement.string($0) })
        }
        return rows
    }

    /// The stored rows of the days in [from, to) (all without bounds).
    package func appleMetrics(from: Int64? = nil, to: Int64? = nil) throws(DatabaseError) -> AppleMetrics {
        try connection.appleMetrics(from: from, to: to)
    }
}

extension Connection {
    /// Whether the store has Apple's tables (a store read only, of an arrival before them, has not).
    func hasAppleTables() throws(DatabaseError) -> Bool {
        let statement = try prepare(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'apple_delivery'")
        return try statement.step() && statement.int(0) > 0
    }

    /// The stored delivery rows of the days in [from, to) (all without bounds), by day, push type, status.
    private func appleDelivery(from: Int64?, to: Int64?) throws(DatabaseError) -> [AppleDeliveryRow] {
        let statement = try prepare(
            "SELECT day, push_type, status, count FROM apple_delivery WHERE day >= ? AND day < ? "
                + "ORDER BY day, push_type, status")
        statement.bind(1, from ?? Int64.min)
        statement.bind(2, to ?? Int64.max)
        var rows: [AppleDeliveryRow] = []
        while try statement.step() {
            rows.append(
                AppleDeliveryRow(
                    day: statement.int(0), pushType: statement.string(1) ?? "", status: statement.string(2) ?? "",
                    count: statement.optionalInt(3).map { Int($0) }))
        }
        return rows
    }

    /// The stored broadcast rows of the days in [from, to), by day, then the application's before the channels'.
    private func appleBroadcasts(from: Int64?, to: Int64?) throws(DatabaseError) -> [AppleBroadcastRow] {
        let statement = try prepare(
            """
            SELECT day, channel_id, application, published, delivered, total_subscriptions, unique_subscribers, hidden
            FROM apple_broadcasts WHERE day >= ? AND day < ? ORDER BY day, application DESC, channel_id
            """)
        statement.bind(1, from ?? Int64.min)
        statement.bind(2, to ?? Int64.max)
        var rows: [AppleBroadcastRow] = []
        while try statement.step() {
            let hidden = statement.string(7) ?? ""
            rows.append(
                AppleBroadcastRow(
                    day: statement.int(0), channelID: statement.int(2) == 1 ? nil : statement.string(1),
                    published: statement.optionalInt(3).map { Int($0) },
                    delivered: statement.optionalInt(4).map { Int($0) },
                    totalSubscriptions: statement.optionalInt(5).map { Int($0) },
                    uniqueSubscribers: statement.optionalInt(6).map { Int($0) },
                    hidden: hidden.isEmpty ? [] : hidden.split(separator: ",").map(String.init)))
        }
        return rows
    }

    /// The stored rows of the days in [from, to) (all without bounds): by day, push type and status; by day,
    /// the application's before the channels'.
    package func appleMetrics(from: Int64? = nil, to: Int64? = nil) throws(DatabaseError) -> AppleMetrics {
        // Asked once: a store of an arrival before these tables, read only, has none.
        guard try hasAppleTables() else { return AppleMetrics() }
        return AppleMetrics(
            delivery: try appleDelivery(from: from, to: to), broadcasts: try appleBroadcasts(from: from, to: to))
    }
}

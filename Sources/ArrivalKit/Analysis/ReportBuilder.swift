/// Computes the report of a window from the store's analysis views
/// (contract sections 3 and 4). Outcomes are decided over all stored data;
/// the window only chooses which requests and updates are counted.
public struct ReportBuilder {
    private let store: Store

    public init(store: Store) {
        self.store = store
    }

    public func build(window: ReportWindow?) throws -> Report {
        let connection = store.connection
        var report = Report(window: window)
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max

        try connection.execute("BEGIN")
        defer { try? connection.execute("ROLLBACK") }
        try materialiseUpdates(connection)

        // Requests, by sent_at.
        let requests = try connection.prepare("""
            SELECT count(*), coalesce(sum(accepted), 0),
                   coalesce(sum(status = 413 OR reason IS 'PayloadTooLarge'), 0),
                   coalesce(sum(accepted AND payload_bytes > 3584), 0),
                   coalesce(sum(activity_id IS NULL), 0),
                   coalesce(sum(seq IS NULL), 0)
            FROM temp.report_requests WHERE sent_at >= ?1 AND sent_at < ?2
            """)
        requests.bind(1, from)
        requests.bind(2, to)
        try requests.forEach { row in
            report.requests.total = Int(row.int(0))
            report.requests.accepted = Int(row.int(1))
            report.requests.rejected = report.requests.total - report.requests.accepted
            report.requests.oversizeFailures = Int(row.int(2))
            report.requests.oversizeRisk = Int(row.int(3))
            report.dataQuality.unattributed = Int(row.int(4))
            report.dataQuality.apnsWithoutSeq = Int(row.int(5))
        }
        let reasons = try connection.prepare("""
            SELECT reject_reason, count(*) FROM temp.report_requests
            WHERE NOT accepted AND sent_at >= ?1 AND sent_at < ?2 GROUP BY reject_reason
            """)
        reasons.bind(1, from)
        reasons.bind(2, to)
        try reasons.forEach { row in
            report.requests.byReason[row.string(0) ?? "", default: 0] += Int(row.int(1))
        }

        // Updates, by accept time (or earliest request when never accepted).
        report.updates = try updateCounts(connection, groupBy: nil, from: from, to: to)[""] ?? UpdateCounts()
        let dimensions: [(String, String)] = [
            ("app", "app"),
            ("priority", "coalesce(CAST(priority AS TEXT), 'unknown')"),
            ("os_version", "coalesce(os_version, 'unknown')"),
            ("app_version", "coalesce(app_version, 'unknown')"),
        ]
        for (name, expression) in dimensions {
            report.breakdowns[name] = try updateCounts(connection, groupBy: expression, from: from, to: to)
        }

        // Callbacks.
        let callbacks = try connection.prepare("""
            SELECT count(*), coalesce(sum(has_content_callback), 0),
                   count(DISTINCT activity_id),
                   count(DISTINCT CASE WHEN has_token_callback THEN activity_id END)
            FROM temp.report_updates WHERE outcome = 'rendered' AND at >= ?1 AND at < ?2
            """)
        callbacks.bind(1, from)
        callbacks.bind(2, to)
        try callbacks.forEach { row in
            report.callbacks.contentUpdateExpected = Int(row.int(0))
            report.callbacks.contentUpdateReceived = Int(row.int(1))
            report.callbacks.tokenExpected = Int(row.int(2))
            report.callbacks.tokenReceived = Int(row.int(3))
        }

        // Render latency of rendered updates.
        let latency = try connection.prepare("""
            SELECT first_rendered_at - at FROM temp.report_updates
            WHERE outcome = 'rendered' AND at >= ?1 AND at < ?2
            """)
        latency.bind(1, from)
        latency.bind(2, to)
        var values: [Int64] = []
        var negative = 0
        try latency.forEach { row in
            let value = row.int(0)
            if value < 0 { negative += 1 }
            values.append(max(0, value))
        }
        values.sort()
        report.latency = Report.Latency(
            count: values.count,
            p50: nearestRank(values, percent: 50),
            p90: nearestRank(values, percent: 90),
            p99: nearestRank(values, percent: 99))
        report.dataQuality.clockSkewNegative = negative

        // Data quality over everything ingested, whatever the window.
        let malformed = try connection.prepare("SELECT cause, count(*) FROM malformed_lines GROUP BY cause")
        try malformed.forEach { row in
            report.dataQuality.malformedByCause[row.string(0) ?? "", default: 0] += Int(row.int(1))
        }
        let files = try connection.prepare("""
            SELECT (SELECT coalesce(sum(duplicate_count), 0) FROM files), (SELECT count(*) FROM skipped_files)
            """)
        try files.forEach { row in
            report.dataQuality.duplicateRecords = Int(row.int(0))
            report.dataQuality.filesSkippedAsDuplicate = Int(row.int(1))
        }
        return report
    }

    /// Materialises the views once per report into temp tables that every
    /// metric query then reads.
    private func materialiseUpdates(_ connection: Connection) throws(DatabaseError) {
        try connection.execute("""
            DROP TABLE IF EXISTS temp.report_requests;
            DROP TABLE IF EXISTS temp.report_updates;
            CREATE TEMP TABLE report_requests AS
                SELECT sent_at, status, reason, accepted, reject_reason, payload_bytes, activity_id, seq
                FROM resolved_requests;
            CREATE TEMP TABLE report_updates AS
                SELECT o.activity_id, o.seq, o.accepted, o.at, o.outcome, o.app, o.priority, o.first_rendered_at,
                       cu.activity_id IS NOT NULL AS has_content_callback,
                       tc.activity_id IS NOT NULL AS has_token_callback,
                       d.os_version, d.app_version
                FROM update_outcomes AS o
                LEFT JOIN (SELECT DISTINCT activity_id, seq FROM callbacks WHERE callback = 'content_update') AS cu
                    ON cu.activity_id = o.activity_id AND cu.seq = o.seq
                LEFT JOIN (SELECT DISTINCT activity_id FROM callbacks WHERE callback = 'push_token') AS tc
                    ON tc.activity_id = o.activity_id
                LEFT JOIN activity_devices AS d ON d.activity_id = o.activity_id;
            """)
    }

    private func updateCounts(
        _ connection: Connection, groupBy expression: String?, from: Int64, to: Int64
    ) throws -> [String: UpdateCounts] {
        let key = expression ?? "''"
        let statement = try connection.prepare("""
            SELECT \(key) AS k, count(*), coalesce(sum(accepted), 0),
                   coalesce(sum(outcome = 'rendered'), 0), coalesce(sum(outcome = 'ended'), 0),
                   coalesce(sum(outcome = 'expired'), 0), coalesce(sum(outcome = 'stale_timestamp'), 0),
                   coalesce(sum(outcome = 'superseded'), 0), coalesce(sum(outcome = 'lost'), 0)
            FROM temp.report_updates WHERE at >= ?1 AND at < ?2 GROUP BY k
            """)
        statement.bind(1, from)
        statement.bind(2, to)
        var result: [String: UpdateCounts] = [:]
        try statement.forEach { row in
            var counts = UpdateCounts()
            counts.sent = Int(row.int(1))
            counts.accepted = Int(row.int(2))
            counts.rendered = Int(row.int(3))
            counts.ended = Int(row.int(4))
            counts.expired = Int(row.int(5))
            counts.staleTimestamp = Int(row.int(6))
            counts.superseded = Int(row.int(7))
            counts.lost = Int(row.int(8))
            result[row.string(0) ?? "unknown"] = counts
        }
        return result
    }
}

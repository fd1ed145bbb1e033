package import ArrivalModel

extension SQLiteStore {
    /// Sorts the `apns` records by `apns_id` in a covering index, so that
    /// ``RequestsByApnsID`` streams (`arrival diff --records` builds it on
    /// each side's own thread before the merge).
    package func indexRequestsByApnsID() throws(DatabaseError) {
        try connection.execute(
            "CREATE INDEX apns_by_id ON apns (apns_id, sent_at, status, reason, id, activity_id, seq)")
    }

    /// The `apns` records of `window` in `apns_id` order (byte order), then
    /// `sent_at`, `status`, `reason` and row order.
    package func requestsByApnsID(window: ReportWindow?) throws -> any RequestCursor {
        let statement = try connection.prepare(
            """
            SELECT apns_id, sent_at, status, reason, activity_id, seq FROM apns
            WHERE sent_at >= ? AND sent_at < ?
            ORDER BY apns_id, sent_at, status, reason, id
            """)
        statement.bind(1, window?.from ?? Int64.min)
        statement.bind(2, window?.to ?? Int64.max)
        return RequestsByApnsID(statement: statement)
    }
}

/// A cursor of ``SQLiteStore/requestsByApnsID(window:)``.
final class RequestsByApnsID: RequestCursor {
    private let statement: Statement
    private var done = false

    init(statement: Statement) {
        self.statement = statement
    }

    /// The next record; nil at the end.
    package func next() throws -> Row? {
        guard !done, try statement.step() else {
            done = true
            return nil
        }
        return (
            statement.string(0) ?? "", statement.int(1), statement.int(2), statement.string(3),
            statement.string(4), statement.optionalInt(5)
        )
    }
}

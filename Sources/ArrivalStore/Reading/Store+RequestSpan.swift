extension SQLiteStore {
    /// How many `apns` requests the store holds and the first and last
    /// `sent_at` among them (ms since the epoch); nil when it holds none.
    /// Says where the data is when a report's window holds nothing.
    package func requestSpan() throws -> (count: Int, first: Int64, last: Int64)? {
        let statement = try connection.prepare("SELECT count(*), min(sent_at), max(sent_at) FROM apns")
        defer { statement.reset() }
        guard try statement.step(), statement.int(0) > 0,
            let first = statement.optionalInt(1), let last = statement.optionalInt(2)
        else { return nil }
        return (Int(statement.int(0)), first, last)
    }
}

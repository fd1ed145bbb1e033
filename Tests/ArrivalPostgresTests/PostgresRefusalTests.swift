import ArrivalPostgres
import Testing

/// Issue 56: which PostgreSQL errors are the store refusing one file (the
/// writer leaves that file out and goes on) and which are the store's as a
/// whole (the run stops, nothing is pinned on a file).
@Suite("PostgreSQL refusals")
struct PostgresRefusalTests {
    @Test("A trigger's RAISE, a constraint, a value the server cannot take are refusals; the rest is the store's")
    func classes() {
        func error(_ state: String?) -> PostgresStoreError { PostgresStoreError("server said no", sqlState: state) }
        // raise_exception, check and unique violations, an invalid byte sequence, a row too big.
        for state in ["P0001", "23514", "23505", "22021", "22P05", "54000", "2F005", "39P01"] {
            #expect(PostgresStore.refusalReason(error(state)) != nil, "\(state)")
        }
        // No answer (no SQLSTATE), disk full, admin shutdown, read-only transaction, deadlock, a missing table,
        // insufficient privilege, an internal error.
        for state in [nil, "53100", "57P01", "25006", "40P01", "40001", "42P01", "42501", "XX000", "08006"] {
            #expect(PostgresStore.refusalReason(error(state)) == nil, "\(state ?? "none")")
        }
        #expect(PostgresStore.refusalReason(error("P0001"))?.contains("server said no") == true)
        #expect(PostgresStore.refusalReason(error("P0001"))?.contains("P0001") == true)
    }
}

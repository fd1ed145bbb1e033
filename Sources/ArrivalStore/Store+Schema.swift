import ArrivalModel
import CSQLite

/// The store's schema: the migrations (tables, applied once each, in order)
/// and the outcome views (re-created whenever ``OutcomeRules`` changes).
extension Store {
    static func migrationNames(_ connection: Connection) throws -> [String] {
        let statement = try connection.prepare("SELECT name FROM arrival_migrations ORDER BY rowid")
        var names: [String] = []
        try statement.forEachRow { names.append($0.string(0) ?? "") }
        return names
    }

    /// Names of the migrations applied, in order.
    public func appliedMigrations() throws -> [String] {
        try Self.migrationNames(connection)
    }

    func migrate() throws(DatabaseError) {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS arrival_migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)
            """)
        let applied = try connection.prepare("SELECT 1 FROM arrival_migrations WHERE name = ?")
        let record = try connection.prepare(
            "INSERT INTO arrival_migrations (name, applied_at) VALUES (?, strftime('%s','now'))")
        for (name, sql) in Migrations.all {
            applied.bind(1, name)
            let done = try applied.step()
            applied.reset()
            if done { continue }
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.execute(sql)
                record.bind(1, name)
                try record.run()
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Re-creates the SQL views of ``OutcomeRules`` when the store's were
    /// made from other rules, so that a rule change is one edit of
    /// `OutcomeRules.swift` rather than a migration. The views' version is a
    /// hash of their SQL kept in `PRAGMA user_version`.
    func syncOutcomeViews() throws(DatabaseError) {
        var hash = StableHash()
        hash.combine(OutcomeRules.viewSQL)
        let version = Int64(hash.finish() & 0x7FFF_FFFF)
        let current = try connection.prepare("PRAGMA user_version")
        func isCurrent() throws(DatabaseError) -> Bool {
            defer { current.reset() }
            return try current.step() && current.int(0) == version
        }
        guard try !isCurrent() else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            if try !isCurrent() {
                for name in OutcomeRules.viewNames.reversed() {
                    try connection.execute("DROP VIEW IF EXISTS \(name)")
                }
                try connection.execute(OutcomeRules.viewSQL)
                try connection.execute("PRAGMA user_version = \(version)")
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The SQL a view of the store was created with (nil: no such view).
    package func viewSQL(_ name: String) throws(DatabaseError) -> String? {
        let query = try connection.prepare("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?")
        query.bind(1, name)
        defer { query.reset() }
        return try query.step() ? query.string(0) : nil
    }

    /// Replaces a view and forgets the views' version, as a store written by
    /// an arrival with other rules would be (tests only).
    package func replaceViewForTesting(_ name: String, sql: String) throws(DatabaseError) {
        try connection.execute("DROP VIEW \(name); \(sql); PRAGMA user_version = 0")
    }
}

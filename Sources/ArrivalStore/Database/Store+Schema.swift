import ArrivalModel
import CSQLite

/// The store's schema: the migrations (tables, applied once each, in order)
/// and the outcome views (re-created whenever ``OutcomeRules`` changes).
extension SQLiteStore {
    static func migrationNames(_ connection: Connection) throws -> [String] {
        let statement = try connection.prepare("SELECT name FROM arrival_migrations ORDER BY rowid")
        var names: [String] = []
        try statement.forEachRow { names.append($0.string(0) ?? "") }
        return names
    }

    /// Names of the migrations applied, in order.
    package func appliedMigrations() throws -> [String] {
        try Self.migrationNames(connection)
    }

    /// Brings the store to this arrival's schema: the mark, the migrations
    /// not yet applied, and the outcome views when ``OutcomeRules`` changed.
    ///
    /// A store that is current is only read. Otherwise all of it happens in
    /// one `BEGIN IMMEDIATE` transaction, checked again once the write lock
    /// is held: when several processes open a new or older store at once,
    /// one upgrades it and the others wait for the lock (the busy timeout),
    /// then find it current. Nothing is applied twice, and nothing half.
    func upgradeSchema() throws(DatabaseError) {
        let views = Self.viewsVersion
        if try isCurrent(views: views) { return }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(DatabaseError) {
            let identity = try Self.identity(of: connection, path: path)
            if case .foreign(let tables) = identity { throw Self.foreignDatabase(path, tables: tables) }
            if identity != .arrival { try connection.execute("PRAGMA application_id = \(Self.applicationID)") }
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
                try connection.execute(sql)
                try Migrations.code(name, connection: connection)
                record.bind(1, name)
                try record.run()
            }
            if try userVersion() != views {
                for name in OutcomeRules.viewNames.reversed() {
                    try connection.execute("DROP VIEW IF EXISTS \(name)")
                }
                try connection.execute(OutcomeRules.viewSQL)
                try connection.execute("PRAGMA user_version = \(views)")
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The version of the outcome views: a hash of their SQL, kept in `PRAGMA
    /// user_version`, so that a rule change is one edit of
    /// `OutcomeRules.swift` rather than a migration.
    static let viewsVersion: Int64 = {
        var hash = StableHash()
        hash.combine(OutcomeRules.viewSQL)
        return Int64(hash.finish() & 0x7FFF_FFFF)
    }()

    /// Marked, every migration applied, views of these rules: nothing to write.
    private func isCurrent(views: Int64) throws(DatabaseError) -> Bool {
        guard try Self.identity(of: connection, path: path) == .arrival else { return false }
        let applied: [String]
        do { applied = try Self.migrationNames(connection) } catch { return false }
        guard Migrations.all.allSatisfy({ applied.contains($0.name) }) else { return false }
        return try userVersion() == views
    }

    /// The views version a store's connection reports (`PRAGMA user_version`).
    static func viewsVersion(of connection: Connection) throws(DatabaseError) -> Int64 {
        let query = try connection.prepare("PRAGMA user_version")
        defer { query.reset() }
        return try query.step() ? query.int(0) : 0
    }

    private func userVersion() throws(DatabaseError) -> Int64 {
        let query = try connection.prepare("PRAGMA user_version")
        defer { query.reset() }
        return try query.step() ? query.int(0) : 0
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

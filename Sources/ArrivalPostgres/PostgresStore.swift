import ArrivalHandOff
import ArrivalModel
package import ArrivalStore
import Foundation
import NIOCore
import PostgresNIO

/// The writer role on a PostgreSQL store (``StoreWriter``): ingest's writer
/// stage stores files here as into a SQLite store, and any number of
/// processes may do so at once.
///
/// Each file is stored whole or not at all, in a savepoint of its own
/// inside a batch transaction (``batchSpan``). Its rows are bound to the
/// statement that stores them (a small file) or copied (`COPY`) into
/// temporary tables of this connection as they are decoded; once the file
/// was read whole, its registry row claims its bytes (the content hash is
/// the primary key: of two writers with the same bytes one stores them, the
/// other finds them stored and keeps nothing), and its rows go into the
/// record tables in line order with `ON CONFLICT DO NOTHING` on each
/// record's identity, so equal records from any writer are stored once and
/// no read comes before a write. A writer killed at any moment leaves no
/// part of a file: the server rolls its batch back, and the files of it are
/// not registered, so the next ingest stores them.
package final class PostgresStore: StoreWriter {
    package let session: PostgresSession
    package var isThrowaway: Bool { false }
    /// The storing statement's registry row claims the bytes (``PostgresFile``).
    package var claimsBytesAtFinish: Bool { true }

    /// Opens the store at `location`, migrating it first (Documentation/PostgreSQL.md).
    package init(_ location: PostgresLocation, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws
    {
        session = try PostgresSession(location, environment: environment)
        do {
            try PostgresSchema.migrate(session)
            try session.execute(
                Self.stageTable(.apns), Self.stageTable(.render), Self.stageTable(.callback),
                """
                CREATE TEMP TABLE arrival_stage_malformed (line bigint NOT NULL, cause text NOT NULL, problem text)
                ON COMMIT DELETE ROWS
                """)
        } catch {
            session.close()
            throw error
        }
    }

    /// A temporary table a file's records of one kind wait in until it
    /// commits. `COPY` fills `id` from the kind's sequence row by row, so ids
    /// follow the file's lines whichever table a row goes to.
    private static func stageTable(_ kind: RecordKind) -> String {
        "CREATE TEMP TABLE \(kind.stageTable) (id bigint NOT NULL DEFAULT nextval('arrival.\(kind.sequence)'), "
            + "line bigint NOT NULL, content_hash bigint NOT NULL, "
            + kind.columns.map { "\($0) \(RecordKind.integerColumns.contains($0) ? "bigint" : "text")" }
            .joined(separator: ", ") + ") ON COMMIT DELETE ROWS"
    }

    deinit { session.close() }

    // MARK: - StoreWriter

    package func status(ofContent sha256: String, at path: String) throws -> ContentStatus {
        let rows = try session.run("SELECT path FROM arrival.files WHERE content_sha256 = \(sha256)")
        guard let row = rows.first else { return .new }
        let first = try row.decode(String.self)
        return first.utf8.elementsEqual(path.utf8) ? .alreadyIngestedHere : .alreadyIngestedFrom(first)
    }

    package func restrictedCopy(ofContent sha256: String) throws -> Int64? {
        let rows = try session.run(Self.restrictedCopySQL(sha256))
        return try rows.first?.decode(Int64.self)
    }

    static func restrictedCopySQL(_ sha256: String) -> PostgresQuery {
        """
        SELECT f.id FROM arrival.files AS f WHERE f.content_sha256 = \(sha256)
            AND EXISTS (SELECT 1 FROM arrival.malformed_lines AS m
                        WHERE m.file_id = f.id AND m.cause = 'kind_not_allowed')
        """
    }

    @discardableResult
    package func recordSkippedDuplicate(sha256: String, path: String, at now: Int64) throws -> Bool {
        let result = try session.run(
            """
            INSERT INTO arrival.skipped_files (content_sha256, path, first_seen_at) VALUES (\(sha256), \(path), \(now))
            ON CONFLICT DO NOTHING
            """)
        return (result.metadata.rows ?? 0) > 0
    }

    /// When the open batch transaction began (nil: none is open).
    private var batchBegan: ContinuousClock.Instant?

    /// The longest a batch stays open before the next file begins a new
    /// one. Files are committed together, as on SQLite (one commit and one
    /// WAL flush for many small files), each in a savepoint of its own so
    /// that it is stored whole or not at all; but the rows a batch wrote
    /// stay locked until it commits, and another writer storing the same
    /// records waits for them, so a batch is kept short.
    static let batchSpan: Duration = .seconds(1)

    /// Files begun in the open batch, the current one included.
    private var filesInBatch = 0

    package func beginFile(path: String, now: Int64, replaces: Bool) throws -> PostgresFile {
        // A file that takes over earlier versions' records writes before its storing statement: alone in its batch.
        if replaces { try commitBatch() }
        if let began = batchBegan, ContinuousClock.now - began >= Self.batchSpan { try commitBatch() }
        if batchBegan == nil {
            try session.execute("BEGIN")
            batchBegan = .now
            filesInBatch = 0
        }
        try session.execute("SAVEPOINT arrival_file")
        filesInBatch += 1
        return PostgresFile(store: self, path: path, now: now)
    }

    /// Commits the batch's earlier files and goes on with the current one in
    /// a batch of its own, before it has written anything. Two writers
    /// storing the same records can deadlock; the server breaks it by failing
    /// one statement, and that writer tries it again from a savepoint, which
    /// releases only the locks taken since. Locks of the batch's earlier
    /// files would stay and the two would deadlock again: so a file about
    /// to write before its storing statement (through the stage tables) is
    /// alone in its batch, and a file held whole is retried after this.
    func storeAloneFromHere() throws {
        guard filesInBatch > 1 else { return }
        try session.execute("RELEASE SAVEPOINT arrival_file")
        try commitBatch()
        try session.execute("BEGIN")
        batchBegan = .now
        try session.execute("SAVEPOINT arrival_file")
        filesInBatch = 1
    }

    /// The earlier versions' records become the new file's (they are its
    /// first lines), and their registry rows, malformed lines and repeats go.
    package func removeReplacedVersions(ids: [Int64]) throws -> Int {
        guard let file = currentFile else { return 0 }
        for table in Self.recordTables {
            try session.run(
                PostgresQuery(
                    unsafeSQL: "UPDATE arrival.\(table) SET file_id = $1 WHERE file_id = ANY($2)",
                    binds: Self.binds(try file.fileIDDrawn(), ids)))
        }
        for table in ["record_repeats", "malformed_lines"] {
            try session.run(
                PostgresQuery(unsafeSQL: "DELETE FROM arrival.\(table) WHERE file_id = ANY($1)", binds: Self.binds(ids))
            )
        }
        let removed = try session.run(
            PostgresQuery(
                unsafeSQL: """
                    WITH gone AS (DELETE FROM arrival.files WHERE id = ANY($1) RETURNING content_sha256),
                         skipped AS (DELETE FROM arrival.skipped_files WHERE content_sha256 IN (SELECT content_sha256 FROM gone))
                    SELECT count(*) FROM gone
                    """, binds: Self.binds(ids)))
        file.replaced = true
        return Int(try removed.first?.decode(Int64.self) ?? 0)
    }

    /// Commits the files stored since the batch began. PostgreSQL answers
    /// `COMMIT` on a transaction a failed statement ended with `ROLLBACK`,
    /// without an error: that is one here, or those files would be counted
    /// as stored.
    package func commitBatch() throws {
        guard batchBegan != nil else { return }
        batchBegan = nil
        let result = try session.run("COMMIT")
        if result.metadata.command != "COMMIT" {
            throw PostgresStoreError(
                "\(session.location.redacted): the batch of files was rolled back by the server "
                    + "(\(result.metadata.command)); run the same ingest again to store them")
        }
    }

    /// Removes files as `arrival files remove` does on SQLite, in one
    /// transaction: their registry rows, the records they stored (with the
    /// repeats of those records by other files, which counted them as
    /// duplicates), their malformed lines and the re-uploads of their bytes.
    /// Returns the ids of the registry rows removed (fewer than asked when
    /// another process removed some meanwhile).
    package func removeFiles(ids: [Int64]) throws -> Set<Int64> {
        let owned = { (tables: [String]) in
            tables.map { "SELECT id FROM arrival.\($0) WHERE file_id = ANY($1)" }.joined(separator: " UNION ALL ")
        }
        let statements =
            [
                """
                DELETE FROM arrival.record_repeats AS r WHERE r.file_id = ANY($1)
                    OR (r.kind = 'apns' AND r.record_id IN (\(owned(["requests", "token_requests", "broadcasts"]))))
                    OR (r.kind = 'render' AND r.record_id IN (\(owned(["renders"]))))
                    OR (r.kind = 'callback' AND r.record_id IN (\(owned(["callbacks", "start_tokens"]))))
                """
            ] + Self.recordTables.map { "DELETE FROM arrival.\($0) WHERE file_id = ANY($1)" } + [
                "DELETE FROM arrival.malformed_lines WHERE file_id = ANY($1)",
                """
                DELETE FROM arrival.skipped_files
                WHERE content_sha256 IN (SELECT content_sha256 FROM arrival.files WHERE id = ANY($1))
                """,
                "DELETE FROM arrival.files WHERE id = ANY($1) RETURNING id",
            ]
        try commitBatch()
        try session.execute("BEGIN")
        do {
            var removed: Set<Int64> = []
            for statement in statements {
                let rows = try session.run(PostgresQuery(unsafeSQL: statement, binds: Self.binds(ids)))
                if statement.hasSuffix("RETURNING id") { removed = Set(try rows.map { try $0.decode(Int64.self) }) }
            }
            try session.execute("COMMIT")
            return removed
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
    }

    /// The file being stored (one at a time).
    weak var currentFile: PostgresFile?

    static let recordTables = ["requests", "token_requests", "broadcasts", "renders", "callbacks", "start_tokens"]

    static func binds(_ values: any PostgresNonThrowingEncodable...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { binds.append(value) }
        return binds
    }
}

extension RecordKind {
    /// The temporary table a file's records of this kind wait in.
    var stageTable: String {
        switch self {
        case .apns: "arrival_stage_apns"
        case .render: "arrival_stage_renders"
        case .callback: "arrival_stage_callbacks"
        }
    }

    /// The sequence of this kind's ids.
    var sequence: String {
        switch self {
        case .apns: "request_ids"
        case .render: "render_ids"
        case .callback: "callback_ids"
        }
    }

    /// The tables records of this kind go to, each with the rows it takes
    /// (a condition on the stage table) and the columns of its identity.
    var routes: [(table: String, condition: String, identity: [String])] {
        switch self {
        case .apns:
            [
                ("requests", "activity_id IS NOT NULL", ["activity_id", "sent_at", "content_hash"]),
                (
                    "token_requests", "activity_id IS NULL AND channel_id IS NULL",
                    ["push_token", "sent_at", "content_hash"]
                ),
                ("broadcasts", "channel_id IS NOT NULL", ["channel_id", "sent_at", "content_hash"]),
            ]
        case .render:
            [("renders", "TRUE", ["activity_id", "rendered_at", "content_hash"])]
        case .callback:
            [
                ("callbacks", "activity_id IS NOT NULL", ["activity_id", "received_at", "content_hash"]),
                ("start_tokens", "activity_id IS NULL", ["push_token", "received_at", "content_hash"]),
            ]
        }
    }

    /// The `WITH` steps that store this kind's rows from `source` (a stage
    /// table or an input step with `id`, `content_hash` and the kind's
    /// columns) into each table they go to, in id order, equal records once;
    /// and the expression counting the rows they stored.
    func storingSteps(from source: String) -> (steps: [String], count: String) {
        let columns = self.columns.joined(separator: ", ")
        var steps: [String] = []
        var counts: [String] = []
        for route in routes {
            let name = "new_\(route.table)"
            counts.append("(SELECT count(*) FROM \(name))")
            steps.append(
                """
                \(name) AS (
                    INSERT INTO arrival.\(route.table) (id, file_id, content_hash, \(columns))
                    SELECT s.id, file.id, s.content_hash, \(self.columns.map { "s." + $0 }.joined(separator: ", "))
                    FROM \(source) AS s CROSS JOIN file WHERE \(route.condition) ORDER BY s.id
                    ON CONFLICT (\(route.identity.joined(separator: ", "))) DO NOTHING RETURNING 1)
                """)
        }
        return (steps, counts.joined(separator: " + "))
    }

    /// The contract fields that are integers (the rest are text).
    static let integerColumns: Set<String> = [
        "sent_at", "status", "seq", "aps_timestamp", "payload_bytes", "priority", "latency_ms", "rendered_at",
        "received_at",
    ]
}

package import ArrivalModel
import Foundation

extension SQLiteStore {
    /// Runs `body` in one read transaction: a consistent snapshot of the
    /// store even while another connection commits an ingest. With `mapped`,
    /// the file is memory-mapped for the read (the HTML report reads every
    /// row of the three record tables once).
    package func read<T>(mapped: Bool = false, _ body: (any StoreSnapshot) throws -> T) throws -> T {
        try readSQLite(mapped: mapped, body)
    }

    /// ``read(mapped:_:)`` with the SQLite snapshot itself.
    func readSQLite<T>(mapped: Bool = false, _ body: (SQLiteSnapshot) throws -> T) throws -> T {
        if mapped { try connection.execute("PRAGMA mmap_size = 4294967296") }
        defer { if mapped { try? connection.execute("PRAGMA mmap_size = 0") } }
        try connection.execute("BEGIN")
        defer { try? connection.execute("ROLLBACK") }
        return try body(SQLiteSnapshot(connection: connection))
    }
}

/// The snapshot of a SQLite store (``StoreSnapshot``): the read queries of
/// the analysis and the reports, inside one read transaction
/// (``SQLiteStore/read(mapped:_:)``).
package struct SQLiteSnapshot: StoreSnapshot {
    @usableFromInline let connection: Connection

    // MARK: - Cursors over the record tables

    package func forEachFetchedRow(_ scan: RowScan, _ body: (FetchedRow) throws -> Void) throws {
        try connection.prepare(Self.sql(of: scan)).forEachFetchedRow(kinds: scan.kinds, body)
    }

    /// The query of each scan, its columns in the order of the scan's row view.
    static func sql(of scan: RowScan) -> String {
        switch scan {
        case .requests(let resolvingTokens, let broadcasts):
            """
            SELECT a.id, a.sent_at, a.status, a.reason, a.push_token,
                   \(resolvingTokens ? "coalesce(a.activity_id, o.activity_id)" : "a.activity_id"), a.seq, a.event,
                   a.aps_timestamp, a.payload_bytes, a.topic, a.priority,
                   CASE a.provider WHEN 'fcm' THEN 1 WHEN 'tencent_chat' THEN 2 ELSE 0 END\(broadcasts ? ", a.channel_id IS NOT NULL" : "")
            FROM apns AS a
            """
                + (resolvingTokens
                    ? " LEFT JOIN temp.arrival_token_owner AS o ON a.activity_id IS NULL AND o.push_token = a.push_token"
                    : "")
        case .renders:
            "SELECT activity_id, os_version, app_version, seq, rendered_at, id, channel_id, frequent_pushes, device_id FROM renders"
        case .callbacks:
            """
            SELECT activity_id, os_version, app_version, callback, seq, received_at,
                   CASE callback WHEN 'activity_state' THEN state END, id, channel_id, frequent_pushes, device_id
            FROM callbacks WHERE activity_id IS NOT NULL
            """
        case .pushTokenCallbacks:
            "SELECT push_token, activity_id, received_at FROM callbacks WHERE callback = 'push_token'"
        case .requestTokens:
            "SELECT push_token, sent_at FROM apns"
        }
    }

    /// Every broadcast (an `apns` row with a channel, contract 3.0), or
    /// those to `channels` when given, in row order, by the index that holds
    /// broadcasts only.
    package func forEachBroadcast(channels: [String]?, _ body: (BroadcastRow) throws -> Void) throws {
        let scan = try connection.prepare(
            """
            SELECT id, sent_at, status, channel_id, seq, event, aps_timestamp, topic, priority,
                   CASE provider WHEN 'fcm' THEN 1 WHEN 'tencent_chat' THEN 2 ELSE 0 END, apns_id, reason,
                   payload_bytes
            FROM apns INDEXED BY apns_broadcasts
            WHERE channel_id IS NOT NULL\(channels == nil ? "" : " AND channel_id IN (SELECT value FROM json_each(?1))")
            ORDER BY id
            """)
        if let channels {
            scan.bind(1, Self.jsonArray(channels))
        }
        try scan.forEachRow { row in
            try body(
                BroadcastRow(
                    rowID: row.int(0), sentAt: row.int(1), status: row.int(2), channelID: row.string(3) ?? "",
                    seq: row.optionalInt(4), event: row.string(5), apsTimestamp: row.int(6), topic: row.string(7),
                    priority: row.optionalInt(8), providerIndex: Int(row.int(9)), apnsID: row.string(10) ?? "",
                    reason: row.string(11), payloadBytes: row.optionalInt(12)))
        }
    }

    /// Resolves every push token's owner into a temporary table: its
    /// `push_token` callback with the earliest received_at, then the
    /// smallest activity_id (byte order is code-point order). An upsert per
    /// callback, not a window function: SQLite would sort every callback in
    /// up to the page cache's size of memory first, which grows with the
    /// store; the table's own cache is 8 MiB. The analysis of a store in
    /// partitions reads requests joined to it
    /// (``forEachRequest(resolvingTokens:_:)``) instead of holding every
    /// token in memory.
    package func resolveTokenOwners() throws {
        try withTemporaryTables {
            try connection.execute(Self.tokenOwnerSQL)
        }
    }

    /// Runs `body`, which writes temporary tables only: a reading
    /// connection is query_only, which refuses temporary tables too.
    func withTemporaryTables(_ body: () throws -> Void) throws {
        let queryOnly = try connection.prepare("PRAGMA query_only")
        let wasQueryOnly = try queryOnly.step() && queryOnly.int(0) != 0
        queryOnly.reset()
        if wasQueryOnly { try connection.execute("PRAGMA query_only = OFF") }
        defer { if wasQueryOnly { try? connection.execute("PRAGMA query_only = ON") } }
        try body()
    }

    /// The statements of ``resolveTokenOwners()``.
    private static let tokenOwnerSQL = """
        DROP TABLE IF EXISTS temp.arrival_token_owner;
        PRAGMA temp.cache_size = -8192;
        CREATE TEMP TABLE arrival_token_owner (
            push_token TEXT PRIMARY KEY, activity_id TEXT NOT NULL, received_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO temp.arrival_token_owner (push_token, activity_id, received_at)
        SELECT push_token, activity_id, received_at FROM callbacks
        WHERE callback = 'push_token' AND push_token IS NOT NULL AND activity_id IS NOT NULL
        ON CONFLICT (push_token) DO UPDATE SET activity_id = excluded.activity_id, received_at = excluded.received_at
        WHERE excluded.received_at < received_at
           OR (excluded.received_at = received_at AND excluded.activity_id < activity_id);
        """

    /// Rows in each record table (their largest id: rows are never deleted
    /// but by `files remove`), to size the analysis' partitions.
    package func rowEstimates() throws -> (requests: Int, renders: Int, callbacks: Int) {
        let query = try connection.prepare(
            """
            SELECT (SELECT coalesce(max(id), 0) FROM apns), (SELECT coalesce(max(id), 0) FROM renders),
                   (SELECT coalesce(max(id), 0) FROM callbacks)
            """)
        defer { query.reset() }
        guard try query.step() else { return (0, 0, 0) }
        return (Int(query.int(0)), Int(query.int(1)), Int(query.int(2)))
    }

    package func hasBroadcasts() throws -> Bool {
        let query = try connection.prepare(
            "SELECT EXISTS (SELECT 1 FROM apns INDEXED BY apns_broadcasts WHERE channel_id IS NOT NULL)")
        defer { query.reset() }
        return try query.step() && query.int(0) != 0
    }

    /// Looks up the `apns_id` of `apns` rows by row id (the analysis keeps
    /// row ids, not ids, for the requests it picks).
    package func apnsIDLookup() throws -> RowLookup {
        Self.lookup(try connection.prepare("SELECT apns_id FROM apns WHERE id = ?"))
    }

    /// Looks up the `push_token` of `callbacks` rows by row id (the newest token of a lost update's activity).
    package func callbackTokenLookup() throws -> RowLookup {
        Self.lookup(try connection.prepare("SELECT push_token FROM callbacks WHERE id = ?"))
    }

    /// Looks up the `push_token` of `apns` rows by row id (of lost updates, and on ties).
    package func pushTokenLookup() throws -> RowLookup {
        Self.lookup(try connection.prepare("SELECT push_token FROM apns WHERE id = ?"))
    }

    /// Every logical update with the outcome the SQL views give it (the
    /// `update_outcomes` view, for dashboards and ad-hoc queries).
    package func forEachViewOutcome(_ body: (ViewOutcome) throws -> Void) throws {
        let scan = try connection.prepare("SELECT \(ViewOutcome.columns) FROM update_outcomes")
        try scan.forEachRow { row in
            try body(
                ViewOutcome(
                    activityID: row.string(0) ?? "", seq: row.int(1), outcome: row.string(2), lossCause: row.string(3),
                    at: row.int(4), app: row.string(5) ?? "", priority: row.optionalInt(6), channel: row.string(7),
                    priority10LastHour: row.optionalInt(8), frequentPushes: row.string(9), subscribed: row.int(10) != 0)
            )
        }
    }

    // MARK: - Single rows by id

    /// The `apns` rows with these row ids (ids that no longer exist are left out).
    package func requestAnswers(rowIDs: [Int64]) throws -> [(rowID: Int64, answer: RequestAnswer)] {
        try rows("SELECT seq, sent_at, status, reason, apns_id, payload_bytes FROM apns WHERE id = ?", ids: rowIDs) {
            RequestAnswer(
                seq: $0.int(0), sentAt: $0.int(1), status: $0.int(2), reason: $0.string(3),
                apnsID: $0.string(4) ?? "", payloadBytes: $0.optionalInt(5))
        }
    }

    /// The `renders` rows with these row ids.
    package func renderSightings(rowIDs: [Int64]) throws -> [(rowID: Int64, sighting: RenderSighting)] {
        try rows("SELECT seq, surface, device_id, rendered_at FROM renders WHERE id = ?", ids: rowIDs) {
            RenderSighting(seq: $0.int(0), surface: $0.string(1), deviceID: $0.string(2), renderedAt: $0.int(3))
        }
    }

    /// One row per id that exists, read by `sql` (which selects by `id = ?`), in the order of `ids`.
    private func rows<Row>(_ sql: String, ids: [Int64], _ make: (Statement) -> Row) throws -> [(Int64, Row)] {
        let query = try connection.prepare(sql)
        var found: [(Int64, Row)] = []
        for id in ids {
            query.bind(1, id)
            if try query.step() { found.append((id, make(query))) }
            query.reset()
        }
        return found
    }

    // MARK: - The file registry and data quality

    package func appleMetrics(from: Int64?, to: Int64?) throws -> AppleMetrics {
        try connection.appleMetrics(from: from, to: to)
    }

    package func storeWideQuality() throws -> StoreWideQuality {
        var quality = StoreWideQuality()
        let malformed = try connection.prepare("SELECT cause, count(*) FROM malformed_lines GROUP BY cause")
        try malformed.forEachRow { row in
            quality.malformedByCause[ExactString(row.string(0) ?? ""), default: 0] += Int(row.int(1))
        }
        let files = try connection.prepare(
            """
            SELECT (SELECT coalesce(sum(duplicate_count), 0) FROM files), (SELECT count(*) FROM skipped_files)
            """)
        try files.forEachRow { row in
            quality.duplicateRecords = Int(row.int(0))
            quality.filesSkippedAsDuplicate = Int(row.int(1))
        }
        return quality
    }

    /// What the store holds: files (gzip ones among them), their bytes and
    /// records, and the rows of each record table.
    package func sourceTotals() throws -> (files: Int, gzipFiles: Int, bytes: Int64, records: Int, byKind: [Int]) {
        let query = try connection.prepare(
            """
            SELECT count(*), coalesce(sum(gzip), 0), coalesce(sum(byte_count), 0), coalesce(sum(record_count), 0),
                   (SELECT count(*) FROM apns), (SELECT count(*) FROM renders), (SELECT count(*) FROM callbacks)
            FROM files
            """)
        guard try query.step() else { return (0, 0, 0, 0, [0, 0, 0]) }
        defer { query.reset() }
        return (
            Int(query.int(0)), Int(query.int(1)), query.int(2), Int(query.int(3)), (4...6).map { Int(query.int($0)) }
        )
    }

    /// The files that held the most records (new or repeated: what a file
    /// holds does not depend on what was ingested before it), ties by path.
    package func largestFiles(limit: Int) throws -> [(path: String, records: Int)] {
        try fileCounts(
            """
            SELECT path, record_count + duplicate_count AS held FROM files
            ORDER BY held DESC, path, content_sha256 LIMIT ?
            """, limit: limit)
    }

    /// Malformed lines per file and cause, most first; `total` counts every
    /// (file, cause) pair, also those past `limit`.
    package func malformedByFile(limit: Int) throws -> (rows: [(path: String, cause: String, lines: Int)], total: Int) {
        let query = try connection.prepare(
            """
            SELECT f.path, m.cause, count(*) AS lines FROM malformed_lines AS m JOIN files AS f ON f.id = m.file_id
            GROUP BY m.file_id, m.cause ORDER BY lines DESC, f.path, m.cause
            """)
        var rows: [(String, String, Int)] = []
        var total = 0
        try query.forEachRow { row in
            total += 1
            guard total <= limit else { return }
            rows.append((row.string(0) ?? "", row.string(1) ?? "", Int(row.int(2))))
        }
        return (rows, total)
    }

    /// Every malformed line with its problem, by file then line.
    package func malformedProblems() throws -> [(path: String, line: Int, cause: String, problem: String?)] {
        let query = try connection.prepare(
            """
            SELECT f.path, m.line, m.cause, m.problem FROM malformed_lines AS m JOIN files AS f ON f.id = m.file_id
            ORDER BY f.path, m.line
            """)
        var rows: [(String, Int, String, String?)] = []
        try query.forEachRow { rows.append(($0.string(0) ?? "", Int($0.int(1)), $0.string(2) ?? "", $0.string(3))) }
        return rows
    }

    /// Files with repeated records, most first: per file, its lines whose
    /// record appears more than once in what was ingested (in this file or
    /// another). Every holder of such a record counts it, the file that
    /// stored it first too, so the table is the same in any ingest order
    /// (`record_repeats`; lines ingested before it existed are not counted).
    ///
    /// Counted here rather than in one SQL statement: SQLite's version
    /// materialised and sorted every holder through temporary b-trees, three
    /// times the instructions of one pass over `record_repeats` and a look-up
    /// of each repeated record's owner by its id.
    package func duplicatesByFile(limit: Int) throws -> [(path: String, records: Int)] {
        var lines: [Int64: Int] = [:]
        var repeated: [String: Set<Int64>] = [:]
        let scan = try connection.prepare("SELECT file_id, kind, record_id, repeats FROM record_repeats")
        try scan.forEachRow { row in
            lines[row.int(0), default: 0] += Int(row.int(3))
            repeated[row.string(1) ?? "", default: []].insert(row.int(2))
        }
        guard !lines.isEmpty else { return [] }
        for (kind, ids) in repeated {
            let table = (RecordKind(rawValue: kind) ?? .apns).table
            let owner = try connection.prepare("SELECT file_id FROM \(table) WHERE id = ?")
            for id in ids {
                owner.bind(1, id)
                if try owner.step() { lines[owner.int(0), default: 0] += 1 }
                owner.reset()
            }
        }
        let path = try connection.prepare("SELECT path, content_sha256 FROM files WHERE id = ?")
        var files: [(path: String, sha256: String, records: Int)] = []
        for (id, count) in lines {
            path.bind(1, id)
            if try path.step() { files.append((path.string(0) ?? "", path.string(1) ?? "", count)) }
            path.reset()
        }
        files.sort {
            if $0.records != $1.records { return $0.records > $1.records }
            if !$0.path.utf8.elementsEqual($1.path.utf8) { return $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
            return $0.sha256 < $1.sha256
        }
        return files.prefix(limit).map { ($0.path, $0.records) }
    }

    /// The (path, count) rows of a query over `files` that takes a limit.
    private func fileCounts(_ sql: String, limit: Int) throws -> [(path: String, records: Int)] {
        let query = try connection.prepare(sql)
        query.bind(1, Int64(limit))
        var files: [(String, Int)] = []
        try query.forEachRow { files.append(($0.string(0) ?? "", Int($0.int(1)))) }
        return files
    }

    /// Paths whose bytes were the same as another path's, so they were read
    /// once: (path, the first of its group in code-point order), sorted. The
    /// same in any ingest order: which of the paths happened to be stored is
    /// not shown.
    package func skippedFiles(limit: Int) throws -> [(path: String, firstPath: String)] {
        let query = try connection.prepare(
            """
            WITH paths(sha, path) AS (
                SELECT content_sha256, path FROM files WHERE content_sha256 IN (SELECT content_sha256 FROM skipped_files)
                UNION SELECT content_sha256, path FROM skipped_files
            ),
            groups(sha, first) AS (SELECT sha, min(path) FROM paths GROUP BY sha)
            SELECT p.path, g.first FROM paths AS p JOIN groups AS g ON g.sha = p.sha
            WHERE p.path <> g.first ORDER BY p.path, g.first LIMIT ?
            """)
        query.bind(1, Int64(limit))
        var files: [(String, String)] = []
        try query.forEachRow { files.append(($0.string(0) ?? "", $0.string(1) ?? "")) }
        return files
    }
}

extension SQLiteSnapshot {
    /// A look-up by `statement` (`… WHERE id = ?`), safe while a cursor of
    /// the same snapshot reads its rows ahead on another thread.
    static func lookup(_ statement: Statement) -> RowLookup {
        RowLookup { id in
            statement.connection.lock.lock()
            defer { statement.connection.lock.unlock() }
            statement.bind(1, id)
            defer { statement.reset() }
            return try statement.step() ? statement.string(0) ?? "" : ""
        }
    }
}

/// One `apns` row of ``StoreSnapshot/forEachRequest(_:)``.
package struct RequestRow {
    @usableFromInline let row: FetchedRow
    @usableFromInline let broadcasts: Bool

    @inlinable init(row: FetchedRow, broadcasts: Bool) {
        self.row = row
        self.broadcasts = broadcasts
    }

    /// How its columns are read, in the order of ``StoreSnapshot/requestScan(resolvingTokens:broadcasts:)``.
    /// No `apns_id`: it decides only ties, where it is looked up by row id
    /// (``StoreSnapshot/apnsIDLookup()``), and copying its 36 bytes for
    /// every request was most of what the scan copied.
    @usableFromInline static let kinds: [FetchedRow.Kind] = [
        .int, .int, .int, .text, .text, .text, .int, .text, .int, .int, .text, .int, .int,
    ]
    /// ``kinds`` and the broadcast flag.
    @usableFromInline static let kindsWithBroadcasts: [FetchedRow.Kind] = kinds + [.int]

    @inlinable @inline(__always) public var rowID: Int64 { row.int(0) }
    @inlinable @inline(__always) public var sentAt: Int64 { row.int(1) }
    @inlinable @inline(__always) public var status: Int64 { row.int(2) }
    @inlinable @inline(__always) public var reason: String? { row.string(3) }
    @inlinable @inline(__always) public var pushToken: String? { row.string(4) }
    @inlinable @inline(__always) public var activityID: String? { row.string(5) }
    @inlinable @inline(__always) public var seq: Int64? { row.optionalInt(6) }
    @inlinable @inline(__always) public var event: String? { row.string(7) }
    @inlinable @inline(__always) public var apsTimestamp: Int64 { row.int(8) }
    @inlinable @inline(__always) public var payloadBytes: Int64? { row.optionalInt(9) }
    @inlinable @inline(__always) public var priority: Int64? { row.optionalInt(11) }
    /// The provider as its index in ``PushProvider/allCases`` (0: APNs itself).
    @inlinable @inline(__always) public var providerIndex: Int { Int(row.int(12)) }
    /// A broadcast to a channel (contract 3.0): counted with the requests,
    /// expanded over its subscribers by the analysis (``StoreSnapshot/forEachBroadcast(_:)``).
    @inlinable @inline(__always) public var isBroadcast: Bool { broadcasts && row.int(13) != 0 }

    /// The bytes of the activity id (nil: none), valid only during `body`.
    @inlinable @inline(__always)
    public func withActivityBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try row.withText(5, body)
    }

    /// The bytes of the push token, valid only during `body`.
    @inlinable @inline(__always)
    public func withPushTokenBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try row.withText(4, body)
    }

    /// The topic, resolved through `last` when the row repeats the previous row's topic.
    @inlinable @inline(__always)
    public func topic(through last: inout LastText, _ make: (String?) -> Int32?) -> Int32? {
        last.resolve(row, 10, make)
    }
}

/// What a `renders` row and a `callbacks` row share, in the same columns:
/// the activity (0) and the device's OS and app versions (1, 2).
package protocol DeviceEvidenceRow {
    var row: FetchedRow { get }
    /// The column of the row's `channel_id` (contract 3.0); `frequent_pushes` (3.1) is the next, then `device_id` (3.2).
    static var channelColumn: Int32 { get }
}

extension DeviceEvidenceRow {
    @inlinable @inline(__always) public var osVersion: String? { row.string(1) }
    @inlinable @inline(__always) public var appVersion: String? { row.string(2) }

    /// The bytes of column `column` (0 the activity, 1 the OS version, 2
    /// the app version; nil: NULL), valid only during `body`.
    @inlinable @inline(__always)
    public func withText<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try row.withText(column, body)
    }

    /// The broadcast channel the activity follows (contract 3.0), valid only during `body`.
    @inlinable @inline(__always)
    public func withChannelBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try row.withText(Self.channelColumn, body)
    }

    /// Whether the row names a broadcast channel: its activity is subscribed to one (contract 3.0, 3.1).
    @inlinable @inline(__always) public var hasChannel: Bool { row.withText(Self.channelColumn) { $0 != nil } }

    /// What the user's "More Frequent Updates" switch was (contract 3.1).
    @inlinable @inline(__always) public var frequentPushes: String? { row.string(Self.channelColumn + 1) }

    /// The device the row came from (contract 3.2: `outliers`).
    @inlinable @inline(__always) public var deviceID: String? { row.string(Self.channelColumn + 2) }

    /// The bytes of ``deviceID``, valid only during `body`.
    @inlinable @inline(__always)
    public func withDeviceBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try row.withText(Self.channelColumn + 2, body)
    }

    /// The bytes of ``frequentPushes``, valid only during `body`.
    @inlinable @inline(__always)
    public func withFrequentPushesBytes<R>(_ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try row.withText(Self.channelColumn + 1, body)
    }

    /// The activity id, resolved through `last` when the row repeats the previous row's activity.
    @inlinable @inline(__always)
    public func activity(through last: inout LastText, _ make: (String?) -> Int32?) -> Int32? {
        last.resolve(row, 0, make)
    }
}

/// One `renders` row of ``StoreSnapshot/forEachRender(_:)``.
package struct RenderRow: DeviceEvidenceRow {
    package let row: FetchedRow

    @inlinable init(row: FetchedRow) { self.row = row }

    @usableFromInline static let kinds: [FetchedRow.Kind] = [
        .text, .text, .text, .int, .int, .int, .text, .text, .text,
    ]

    @inlinable @inline(__always) public var seq: Int64 { row.int(3) }
    @inlinable @inline(__always) public var renderedAt: Int64 { row.int(4) }
    @inlinable @inline(__always) public var rowID: Int64 { row.int(5) }
    public static let channelColumn: Int32 = 6
}

/// One `callbacks` row of ``StoreSnapshot/forEachCallback(_:)``.
package struct CallbackRow: DeviceEvidenceRow {
    package let row: FetchedRow

    @inlinable init(row: FetchedRow) { self.row = row }

    @usableFromInline static let kinds: [FetchedRow.Kind] = [
        .text, .text, .text, .text, .int, .int, .text, .int, .text, .text, .text,
    ]

    @inlinable @inline(__always) public var callback: String? { row.string(3) }
    @inlinable @inline(__always) public var seq: Int64? { row.optionalInt(4) }
    @inlinable @inline(__always) public var receivedAt: Int64 { row.int(5) }
    /// The `state` of an `activity_state` callback (nil on the others: contract 3.0 reads it there only).
    @inlinable @inline(__always) public var state: String? { row.string(6) }
    @inlinable @inline(__always) public var rowID: Int64 { row.int(7) }
    public static let channelColumn: Int32 = 8
}

/// One broadcast of ``StoreSnapshot/forEachBroadcast(_:)``: the fields the
/// analysis reads of it (its tallies come from the scan of every request).
package struct BroadcastRow: Sendable {
    package var rowID: Int64
    package var sentAt: Int64
    package var status: Int64
    package var channelID: String
    package var seq: Int64?
    package var event: String?
    package var apsTimestamp: Int64
    package var topic: String?
    package var priority: Int64?
    package var providerIndex: Int
    /// For timelines (`arrival activity`); the analysis does not read them.
    package var apnsID: String
    package var reason: String?
    package var payloadBytes: Int64?

    package init(
        rowID: Int64, sentAt: Int64, status: Int64, channelID: String, seq: Int64?, event: String?, apsTimestamp: Int64,
        topic: String?, priority: Int64?, providerIndex: Int, apnsID: String, reason: String?, payloadBytes: Int64?
    ) {
        self.rowID = rowID
        self.sentAt = sentAt
        self.status = status
        self.channelID = channelID
        self.seq = seq
        self.event = event
        self.apsTimestamp = apsTimestamp
        self.topic = topic
        self.priority = priority
        self.providerIndex = providerIndex
        self.apnsID = apnsID
        self.reason = reason
        self.payloadBytes = payloadBytes
    }
}

/// The last text read from a column and what it resolved to, so a row that
/// repeats the previous row's value (most requests repeat the topic before
/// them, many renders and callbacks the activity) is resolved by comparing
/// bytes instead of making a String and hashing it.
///
/// The value is a number the caller gives each distinct text (nil for none),
/// not a generic one: the analysis calls this once per row, from another
/// module, where a generic would not be specialised.
package struct LastText {
    @usableFromInline var bytes: [UInt8]?
    @usableFromInline var value: Int32??

    public init() {}

    @inlinable
    mutating func resolve(_ row: FetchedRow, _ column: Int32, _ make: (String?) -> Int32?) -> Int32? {
        if let value, row.text(column, equals: bytes) { return value }
        let text = row.string(column)
        let made = make(text)
        bytes = text.map { Array($0.utf8) }
        value = .some(made)
        return made
    }
}

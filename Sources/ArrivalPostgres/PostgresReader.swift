import ArrivalHandOff
package import ArrivalModel
package import ArrivalStore
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// The reader role on a PostgreSQL store (``StoreReader``): the analysis,
/// the reports, `lost`, `activity`, `tokens`, `diff` and `gate` read the
/// server's tables where they are, in one `REPEATABLE READ` transaction,
/// through server-side cursors a page of rows at a time
/// (``PostgresStoreSnapshot``). Nothing of the store is copied to local
/// disk: arrival holds a page of rows and what the analysis keeps, which is
/// bounded by its partitions as on SQLite.
///
/// The rows come in the order a SQLite store hands them over (row ids;
/// the three request tables merged into one stream by id), text is
/// compared by bytes (`COLLATE "C"`) and nulls sort first where SQLite's
/// do, so a report is the same from either engine, byte for byte.
package final class PostgresReader: StoreReader {
    package let location: PostgresLocation
    private let environment: [String: String]

    package init(_ location: PostgresLocation, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.location = location
        self.environment = environment
    }

    package var label: String { location.redacted }

    /// A connection to a store that exists (never migrated: a read changes nothing).
    func connect() throws -> PostgresSession {
        let session = try PostgresSession(location, environment: environment)
        do {
            guard
                try session.run("SELECT to_regclass('arrival.migrations') IS NOT NULL").first?.decode(Bool.self)
                    == true
            else {
                throw PostgresStoreError(
                    "\(location.redacted): no arrival store in this database yet (run arrival ingest --db URL first)")
            }
            return session
        } catch {
            session.close()
            throw error
        }
    }

    package func read<T>(mapped: Bool, _ body: (any StoreSnapshot) throws -> T) throws -> T {
        let session = try connect()
        defer { session.close() }
        // Not READ ONLY: token owners are resolved into a temporary table of this transaction.
        try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        defer { try? session.execute("ROLLBACK") }
        return try body(PostgresStoreSnapshot(session: session))
    }

    package func requestSpan() throws -> (count: Int, first: Int64, last: Int64)? {
        let session = try connect()
        defer { session.close() }
        guard
            let row = try session.run("SELECT count(*), min(sent_at), max(sent_at) FROM arrival.apns").first,
            case (let count, let first?, let last?) = try row.decode((Int64, Int64?, Int64?).self), count > 0
        else { return nil }
        return (Int(count), first, last)
    }

    package func requestsByApnsID(window: ReportWindow?) throws -> any RequestCursor {
        try PostgresRequestCursor(
            session: try connect(),
            sql: """
                SELECT apns_id, sent_at, status, reason, activity_id, seq FROM arrival.apns
                WHERE sent_at >= \(window?.from ?? Int64.min) AND sent_at < \(window?.to ?? Int64.max)
                ORDER BY apns_id COLLATE "C", sent_at, status, reason COLLATE "C" NULLS FIRST, id
                """)
    }
}

/// A cursor of ``PostgresReader/requestsByApnsID(window:)``: a connection
/// and transaction of its own, read a page at a time.
final class PostgresRequestCursor: RequestCursor {
    private let snapshot: PostgresStoreSnapshot
    private var page: [Row] = []
    private var position = 0
    private var ended = false

    init(session: PostgresSession, sql: String) throws {
        snapshot = PostgresStoreSnapshot(session: session)
        do {
            try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try session.execute("DECLARE arrival_by_apns_id NO SCROLL CURSOR FOR " + sql)
        } catch {
            session.close()
            throw error
        }
    }

    func next() throws -> Row? {
        if position == page.count {
            guard !ended else { return nil }
            page.removeAll(keepingCapacity: true)
            position = 0
            let rows = try snapshot.session.run(
                PostgresQuery(
                    unsafeSQL: "FETCH FORWARD \(PostgresStoreSnapshot.pageRows) FROM arrival_by_apns_id"))
            for row in rows {
                page.append(try row.decode((String, Int64, Int64, String?, String?, Int64?).self))
            }
            if page.count < PostgresStoreSnapshot.pageRows { ended = true }
            if page.isEmpty { return nil }
        }
        defer { position += 1 }
        return page[position]
    }

    deinit {
        try? snapshot.session.execute("ROLLBACK")
        snapshot.session.close()
    }
}

/// One snapshot of a PostgreSQL store (``StoreSnapshot``), inside the
/// transaction ``PostgresReader/read(mapped:_:)`` holds. Its connection is
/// used by one thread at a time (the analysis' partitions look rows up
/// under a lock of their own; the lock here keeps it so for any caller).
struct PostgresStoreSnapshot: StoreSnapshot {
    let session: PostgresSession
    private let lock = NSLock()
    private let cursors = Counter()

    /// Rows fetched from a cursor at a time: what arrival holds of a scan.
    static let pageRows = 10_000

    init(session: PostgresSession) {
        self.session = session
    }

    @discardableResult
    private func run(_ query: PostgresQuery) throws -> PostgresQueryResult {
        lock.lock()
        defer { lock.unlock() }
        return try session.run(query)
    }

    /// Sends `query` without waiting for its answer (``PostgresSession/send(_:)``).
    private func send(_ query: PostgresQuery) throws -> PostgresSession.Pending {
        lock.lock()
        defer { lock.unlock() }
        return try session.send(query)
    }

    /// The answer to a query ``send(_:)`` sent.
    private func answer(to pending: PostgresSession.Pending) throws -> PostgresQueryResult {
        lock.lock()
        defer { lock.unlock() }
        return try session.answer(to: pending)
    }

    @discardableResult
    private func run(_ sql: String) throws -> PostgresQueryResult {
        try run(PostgresQuery(unsafeSQL: sql))
    }

    /// Every row of `sql`, through a server-side cursor a page at a time,
    /// each column read as `kinds` says. A thread of its own fetches and
    /// copies the next page while `body` reads this one: the server's work,
    /// the decoding and the analysis run at once, as SQLite's cursors do
    /// (``SQLiteSnapshot``). Anything `body` asks of the snapshot meanwhile
    /// (a look-up) waits for the connection between two pages.
    private func forEachRow(
        of sql: String, kinds: [FetchedRow.Kind], _ body: (FetchedRow) throws -> Void
    ) throws {
        let cursor = "arrival_scan_\(cursors.next())"
        try run("DECLARE \(cursor) NO SCROLL CURSOR FOR " + Self.packed(sql, kinds: kinds))
        let pages = BatchChannel<Result<FetchedRows, any Error>>(capacity: 2)
        let stopped = DispatchSemaphore(value: 0)
        let snapshot = UncheckedSnapshot(self)
        let producer = Thread {
            defer { stopped.signal() }
            defer { pages.close() }
            let fetch = PostgresQuery(unsafeSQL: "FETCH FORWARD \(Self.pageRows) FROM \(cursor)")
            var next: PostgresSession.Pending?
            do { next = try snapshot.value.send(fetch) } catch { _ = pages.send(.failure(error)) }
            while let pending = next {
                do {
                    let page = try snapshot.value.answer(to: pending)
                    // The next page is asked for before this one is decoded: the server reads it meanwhile.
                    next = page.count < Self.pageRows ? nil : try snapshot.value.send(fetch)
                    var rows = FetchedRows(columns: kinds.count)
                    for row in page {
                        for cell in row { try Self.unpack(cell, kinds: kinds, into: &rows) }
                    }
                    let last = rows.count < Self.pageRows
                    if rows.count > 0 { guard pages.send(.success(rows)) else { return } }
                    if last { return }
                } catch {
                    _ = pages.send(.failure(error))
                    return
                }
            }
        }
        producer.stackSize = 1 << 20
        producer.start()
        do {
            defer {
                pages.cancel()
                stopped.wait()
            }
            while let page = pages.receive() {
                try page.get().forEach(body)
            }
        }
        try run("CLOSE \(cursor)")
    }

    /// `sql`'s rows, each packed by the server into one `bytea` cell, the
    /// server's own binary format of a row (`record_send`): a 4-byte column
    /// count, then each column's type oid, 4-byte length (-1: NULL) and bytes,
    /// an integer as 8 big-endian bytes, text as its UTF-8. One cell a row
    /// instead of one a column: decoding postgres-nio's cells was most of a
    /// report's time on the client. The rows keep `sql`'s order (a subquery
    /// scan does not reorder).
    static func packed(_ sql: String, kinds: [FetchedRow.Kind]) -> String {
        let columns = kinds.indices.map { "c\($0)" }
        let typed = zip(columns, kinds).map { column, kind in
            switch kind {
            case .int: "r.\(column)::int8"
            case .text: "r.\(column)::text"
            }
        }
        return "SELECT record_send(ROW(" + typed.joined(separator: ", ") + ")) FROM (" + sql + ") AS r("
            + columns.joined(separator: ", ") + ")"
    }

    /// One row packed by ``packed(_:kinds:)``, appended to `rows`.
    private static func unpack(_ cell: PostgresCell, kinds: [FetchedRow.Kind], into rows: inout FetchedRows) throws {
        guard let bytes = cell.bytes else { throw PostgresStoreError("a packed row came back NULL") }
        try bytes.withUnsafeReadableBytes { raw in
            var at = 0
            func length() throws -> Int {
                guard at + 4 <= raw.count else { throw PostgresStoreError("a packed row ended early") }
                defer { at += 4 }
                return Int(Int32(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: Int32.self)))
            }
            guard try length() == kinds.count else { throw PostgresStoreError("a packed row of other columns") }
            for kind in kinds {
                at += 4  // the column's type oid
                let count = try length()
                if count < 0 {
                    rows.appendNull()
                    continue
                }
                guard at + count <= raw.count else { throw PostgresStoreError("a packed row ended early") }
                switch kind {
                case .int:
                    guard count == 8 else { throw PostgresStoreError("a packed integer of \(count) bytes") }
                    rows.append(Int64(bigEndian: raw.loadUnaligned(fromByteOffset: at, as: Int64.self)))
                case .text:
                    rows.append(text: UnsafeRawBufferPointer(rebasing: raw[at..<at + count]))
                }
                at += count
            }
        }
        rows.endRow()
    }

    // MARK: - Cursors over the record tables

    func forEachFetchedRow(_ scan: RowScan, _ body: (FetchedRow) throws -> Void) throws {
        try forEachRow(of: Self.sql(of: scan), kinds: scan.kinds, body)
    }

    /// The query of each scan, as ``SQLiteSnapshot``'s: the same columns in the same row order.
    static func sql(of scan: RowScan) -> String {
        switch scan {
        case .requests(let resolvingTokens, let broadcasts):
            let activity =
                resolvingTokens
                ? """
                coalesce(a.activity_id, (SELECT o.activity_id FROM pg_temp.arrival_token_owner AS o
                                         WHERE o.push_token = a.push_token))
                """
                : "a.activity_id"
            return """
                SELECT a.id, a.sent_at, a.status, a.reason, a.push_token, \(activity), a.seq, a.event,
                       a.aps_timestamp, a.payload_bytes, a.topic, a.priority,
                       (CASE a.provider WHEN 'fcm' THEN 1 WHEN 'tencent_chat' THEN 2 ELSE 0 END)::int8\(broadcasts ? ", (a.channel_id IS NOT NULL)::int::int8" : "")
                FROM arrival.apns AS a ORDER BY a.id
                """
        case .renders:
            return
                "SELECT activity_id, os_version, app_version, seq, rendered_at, id, channel_id, frequent_pushes, device_id "
                + "FROM arrival.renders ORDER BY id"
        case .callbacks:
            return """
                SELECT activity_id, os_version, app_version, callback, seq, received_at,
                       CASE callback WHEN 'activity_state' THEN state END, id, channel_id, frequent_pushes, device_id
                FROM arrival.callbacks ORDER BY id
                """
        case .pushTokenCallbacks:
            return
                "SELECT push_token, activity_id, received_at FROM arrival.callbacks WHERE callback = 'push_token' ORDER BY id"
        case .requestTokens:
            return "SELECT push_token, sent_at FROM arrival.apns"
        }
    }

    func forEachBroadcast(channels: [String]?, _ body: (BroadcastRow) throws -> Void) throws {
        let columns = """
            id, sent_at, status, channel_id, seq, event, aps_timestamp, topic, priority,
            (CASE provider WHEN 'fcm' THEN 1 WHEN 'tencent_chat' THEN 2 ELSE 0 END)::int8, apns_id, reason, payload_bytes
            """
        let make = { (row: PostgresRow) throws -> BroadcastRow in
            let (
                id, sentAt, status, channel, seq, event, apsTimestamp, topic, priority, provider, apnsID, reason, bytes
            ) =
                try row.decode(
                    (
                        Int64, Int64, Int64, String, Int64?, String?, Int64, String?, Int64?, Int64, String, String?,
                        Int64?
                    ).self)
            return BroadcastRow(
                rowID: id, sentAt: sentAt, status: status, channelID: channel, seq: seq, event: event,
                apsTimestamp: apsTimestamp, topic: topic, priority: priority, providerIndex: Int(provider),
                apnsID: apnsID, reason: reason, payloadBytes: bytes)
        }
        guard let channels else {
            // Every broadcast: a cursor (there may be many), as the other scans.
            try forEachRow(
                of: "SELECT \(columns) FROM arrival.broadcasts ORDER BY id",
                kinds: [.int, .int, .int, .text, .int, .text, .int, .text, .int, .int, .text, .text, .int]
            ) { row in
                try body(
                    BroadcastRow(
                        rowID: row.int(0), sentAt: row.int(1), status: row.int(2), channelID: row.string(3) ?? "",
                        seq: row.optionalInt(4), event: row.string(5), apsTimestamp: row.int(6), topic: row.string(7),
                        priority: row.optionalInt(8), providerIndex: Int(row.int(9)), apnsID: row.string(10) ?? "",
                        reason: row.string(11), payloadBytes: row.optionalInt(12)))
            }
            return
        }
        var binds = PostgresBindings()
        binds.append(channels)
        for row in try run(
            PostgresQuery(
                unsafeSQL: "SELECT \(columns) FROM arrival.broadcasts WHERE channel_id = ANY($1) ORDER BY id",
                binds: binds))
        {
            try body(try make(row))
        }
    }

    func resolveTokenOwners() throws {
        // As SQLite's: the earliest push_token callback, then the smallest activity id by bytes.
        try run("DROP TABLE IF EXISTS pg_temp.arrival_token_owner")
        try run(
            """
            CREATE TEMP TABLE arrival_token_owner (push_token text PRIMARY KEY, activity_id text NOT NULL)
            ON COMMIT DROP
            """)
        try run(
            """
            INSERT INTO pg_temp.arrival_token_owner (push_token, activity_id)
            SELECT DISTINCT ON (push_token) push_token, activity_id FROM arrival.callbacks
            WHERE callback = 'push_token' AND push_token IS NOT NULL
            ORDER BY push_token, received_at, activity_id COLLATE "C"
            """)
        try run("ANALYZE pg_temp.arrival_token_owner")
    }

    func rowEstimates() throws -> (requests: Int, renders: Int, callbacks: Int) {
        guard
            let row = try run(
                """
                SELECT coalesce((SELECT max(id) FROM arrival.apns), 0), coalesce((SELECT max(id) FROM arrival.renders), 0),
                       coalesce(greatest((SELECT max(id) FROM arrival.callbacks), (SELECT max(id) FROM arrival.start_tokens)), 0)
                """
            ).first
        else { return (0, 0, 0) }
        let (requests, renders, callbacks) = try row.decode((Int64, Int64, Int64).self)
        return (Int(requests), Int(renders), Int(callbacks))
    }

    func hasBroadcasts() throws -> Bool {
        try run("SELECT EXISTS (SELECT 1 FROM arrival.broadcasts)").first?.decode(Bool.self) ?? false
    }

    func forEachKillingRequest(
        _ body: (
            _ token: String, _ sentAt: Int64, _ apnsID: String, _ row: Int64, _ topic: String?,
            _ provider: String, _ status: Int64, _ reason: String?
        ) throws -> Void
    ) throws {
        let reasons = Self.deadTokenReasons.map { "'\($0)'" }.joined(separator: ", ")
        try forEachRow(
            of: """
                SELECT push_token, sent_at, apns_id, id, topic, coalesce(provider, 'apns'), status, reason
                FROM arrival.apns WHERE push_token <> '' AND (status = 410 OR reason IN (\(reasons))) ORDER BY id
                """, kinds: [.text, .int, .text, .int, .text, .text, .int, .text]
        ) { row in
            try body(
                row.string(0) ?? "", row.int(1), row.string(2) ?? "", row.int(3), row.string(4),
                row.string(5) ?? "apns", row.int(6), row.string(7))
        }
    }

    // MARK: - Single rows by id

    /// A look-up of `column` of `table` by id: one query a row, or from what
    /// a prefetch read for many rows in one query (the lost updates' tokens).
    private func lookup(_ column: String, of table: String) -> RowLookup {
        let prefetched = Prefetched()
        return RowLookup(
            { id in
                if let text = prefetched.text(of: id) { return text }
                var binds = PostgresBindings()
                binds.append(id)
                return try run(PostgresQuery(unsafeSQL: "SELECT \(column) FROM \(table) WHERE id = $1", binds: binds))
                    .first?.decode(String?.self) ?? ""
            },
            prefetch: { ids in
                for chunk in Self.chunks(of: ids) {
                    var binds = PostgresBindings()
                    binds.append(chunk)
                    var found: [(Int64, String)] = []
                    for row in try run(
                        PostgresQuery(unsafeSQL: "SELECT id, \(column) FROM \(table) WHERE id = ANY($1)", binds: binds))
                    {
                        let (id, text) = try row.decode((Int64, String?).self)
                        found.append((id, text ?? ""))
                    }
                    prefetched.keep(found)
                }
            })
    }

    func apnsIDLookup() throws -> RowLookup {
        lookup("apns_id", of: "arrival.apns")
    }

    func callbackTokenLookup() throws -> RowLookup {
        lookup(
            "push_token",
            of:
                "(SELECT id, push_token FROM arrival.callbacks UNION ALL SELECT id, push_token FROM arrival.start_tokens) AS c"
        )
    }

    func pushTokenLookup() throws -> RowLookup {
        lookup("push_token", of: "arrival.apns")
    }

    func forEachViewOutcome(_ body: (ViewOutcome) throws -> Void) throws {
        try forEachRow(
            of: "SELECT \(ViewOutcome.columns) FROM arrival.update_outcomes",
            kinds: [.text, .int, .text, .text, .int, .text, .int, .text, .int, .text, .int]
        ) { row in
            try body(
                ViewOutcome(
                    activityID: row.string(0) ?? "", seq: row.int(1), outcome: row.string(2), lossCause: row.string(3),
                    at: row.int(4), app: row.string(5) ?? "", priority: row.optionalInt(6), channel: row.string(7),
                    priority10LastHour: row.optionalInt(8), frequentPushes: row.string(9), subscribed: row.int(10) != 0)
            )
        }
    }

    /// The rows of `sql` (which selects `id` first, by `id = ANY($1)`), in the order of `ids`.
    private func rows<Row>(_ sql: String, ids: [Int64], _ make: (PostgresRow) throws -> Row) throws -> [(Int64, Row)] {
        guard !ids.isEmpty else { return [] }
        var binds = PostgresBindings()
        binds.append(ids)
        var byID: [Int64: Row] = [:]
        for row in try run(PostgresQuery(unsafeSQL: sql, binds: binds)) {
            byID[try row.makeRandomAccess()[0].decode(Int64.self)] = try make(row)
        }
        return ids.compactMap { id in byID[id].map { (id, $0) } }
    }

    func requestAnswers(rowIDs: [Int64]) throws -> [(rowID: Int64, answer: RequestAnswer)] {
        try rows(
            "SELECT id, seq, sent_at, status, reason, apns_id, payload_bytes FROM arrival.apns WHERE id = ANY($1)",
            ids: rowIDs
        ) { row in
            let (_, seq, sentAt, status, reason, apnsID, payloadBytes) = try row.decode(
                (Int64, Int64?, Int64, Int64, String?, String, Int64?).self)
            return RequestAnswer(
                seq: seq ?? 0, sentAt: sentAt, status: status, reason: reason, apnsID: apnsID,
                payloadBytes: payloadBytes)
        }
    }

    func renderSightings(rowIDs: [Int64]) throws -> [(rowID: Int64, sighting: RenderSighting)] {
        try rows(
            "SELECT id, seq, surface, device_id, rendered_at FROM arrival.renders WHERE id = ANY($1)", ids: rowIDs
        ) { row in
            let (_, seq, surface, device, renderedAt) = try row.decode((Int64, Int64, String?, String?, Int64).self)
            return RenderSighting(seq: seq, surface: surface, deviceID: device, renderedAt: renderedAt)
        }
    }

    // MARK: - One activity

    func activityRecords(_ id: String) throws -> ActivityRecords {
        var records = ActivityRecords(activityID: id)
        var byActivity = PostgresBindings()
        byActivity.append(id)
        for row in try run(
            PostgresQuery(
                unsafeSQL: """
                    SELECT id, callback, seq, state, push_token, received_at, device_id, os_version, app_version, channel_id,
                           frequent_pushes
                    FROM arrival.callbacks WHERE activity_id = $1 ORDER BY id
                    """, binds: byActivity))
        {
            let (rowID, callback, seq, state, token, receivedAt, device, os, app, channel, frequent) = try row.decode(
                (Int64, String, Int64?, String?, String?, Int64, String?, String?, String?, String?, String?).self)
            records.callbacks.append(
                ActivityRecords.Callback(
                    rowID: rowID, callback: callback, seq: seq, state: state, pushToken: token,
                    receivedAt: receivedAt, deviceID: device, osVersion: os, appVersion: app, channelID: channel,
                    frequentPushes: frequent))
        }

        // The tokens it reported, and which of them it owns (as SQLite's look-up decides it).
        let reported = Set(records.callbacks.filter { $0.callback == "push_token" }.compactMap(\.pushToken))
        var owned: [String] = []
        if !reported.isEmpty {
            var tokens = PostgresBindings()
            tokens.append(reported.sorted())
            for row in try run(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT DISTINCT ON (push_token) push_token, activity_id FROM arrival.callbacks
                        WHERE callback = 'push_token' AND push_token = ANY($1)
                        ORDER BY push_token, received_at, activity_id COLLATE "C"
                        """, binds: tokens))
            {
                let (token, activity) = try row.decode((String, String).self)
                if activity.utf8.elementsEqual(id.utf8) { owned.append(token) }
            }
            owned.sort()
        }

        var requestBinds = PostgresBindings()
        requestBinds.append(id)
        requestBinds.append(owned)
        let columns = """
            id, apns_id, sent_at, status, reason, push_token, (activity_id IS NULL)::int::int8, seq, event,
            aps_timestamp, payload_bytes, topic, priority, coalesce(provider, 'apns')
            """
        for row in try run(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(columns) FROM arrival.requests WHERE activity_id = $1
                    UNION ALL
                    SELECT \(columns) FROM arrival.token_requests WHERE push_token = ANY($2)
                    ORDER BY id
                    """, binds: requestBinds))
        {
            let cells = row.makeRandomAccess()
            records.requests.append(
                ActivityRecords.Request(
                    rowID: try cells[0].decode(Int64.self), apnsID: try cells[1].decode(String.self),
                    sentAt: try cells[2].decode(Int64.self), status: try cells[3].decode(Int64.self),
                    reason: try cells[4].decode(String?.self), pushToken: try cells[5].decode(String?.self) ?? "",
                    attributedByToken: try cells[6].decode(Int64.self) != 0, seq: try cells[7].decode(Int64?.self),
                    event: try cells[8].decode(String?.self), apsTimestamp: try cells[9].decode(Int64.self),
                    payloadBytes: try cells[10].decode(Int64?.self), topic: try cells[11].decode(String?.self),
                    priority: try cells[12].decode(Int64?.self), provider: try cells[13].decode(String.self)))
        }

        for row in try run(
            PostgresQuery(
                unsafeSQL: """
                    SELECT id, seq, rendered_at, surface, device_id, os_version, app_version, channel_id, frequent_pushes
                    FROM arrival.renders WHERE activity_id = $1 ORDER BY id
                    """, binds: byActivity))
        {
            let (rowID, seq, renderedAt, surface, device, os, app, channel, frequent) = try row.decode(
                (Int64, Int64, Int64, String?, String?, String?, String?, String?, String?).self)
            records.renders.append(
                ActivityRecords.Render(
                    rowID: rowID, seq: seq, renderedAt: renderedAt, surface: surface, deviceID: device,
                    osVersion: os, appVersion: app, channelID: channel, frequentPushes: frequent))
        }

        let channels = Set(records.renders.compactMap(\.channelID) + records.callbacks.compactMap(\.channelID))
        if !channels.isEmpty {
            try forEachBroadcast(channels: channels.sorted()) { records.broadcasts.append($0) }
        }
        return records
    }

    // MARK: - The file registry and data quality

    func appleMetrics(from: Int64?, to: Int64?) throws -> AppleMetrics {
        // A store of an arrival before Apple's tables, read only, has none.
        guard let table = try run("SELECT to_regclass('arrival.apple_delivery') IS NOT NULL").first,
            try table.decode(Bool.self)
        else { return AppleMetrics() }
        return try PostgresAppleMetrics.metrics(from: from, to: to) { try run($0) }
    }

    func storeWideQuality() throws -> StoreWideQuality {
        var quality = StoreWideQuality()
        for row in try run("SELECT cause, count(*) FROM arrival.malformed_lines GROUP BY cause") {
            let (cause, count) = try row.decode((String, Int64).self)
            quality.malformedByCause[ExactString(cause), default: 0] += Int(count)
        }
        if let row = try run(
            """
            SELECT (SELECT coalesce(sum(duplicate_count), 0) FROM arrival.files)::int8,
                   (SELECT count(*) FROM arrival.skipped_files)
            """
        ).first {
            let (duplicates, skipped) = try row.decode((Int64, Int64).self)
            quality.duplicateRecords = Int(duplicates)
            quality.filesSkippedAsDuplicate = Int(skipped)
        }
        return quality
    }

    func sourceTotals() throws -> (files: Int, gzipFiles: Int, bytes: Int64, records: Int, byKind: [Int]) {
        guard
            let row = try run(
                """
                SELECT count(*), coalesce(sum(gzip::int), 0)::int8, coalesce(sum(byte_count), 0)::int8,
                       coalesce(sum(record_count), 0)::int8, (SELECT count(*) FROM arrival.apns),
                       (SELECT count(*) FROM arrival.renders),
                       (SELECT count(*) FROM arrival.callbacks) + (SELECT count(*) FROM arrival.start_tokens)
                FROM arrival.files
                """
            ).first
        else { return (0, 0, 0, 0, [0, 0, 0]) }
        let (files, gzip, bytes, records, apns, renders, callbacks) = try row.decode(
            (Int64, Int64, Int64, Int64, Int64, Int64, Int64).self)
        return (Int(files), Int(gzip), bytes, Int(records), [Int(apns), Int(renders), Int(callbacks)])
    }

    func largestFiles(limit: Int) throws -> [(path: String, records: Int)] {
        try run(
            """
            SELECT path, record_count + duplicate_count AS held FROM arrival.files
            ORDER BY held DESC, path COLLATE "C", content_sha256 LIMIT \(max(0, limit))
            """
        ).map { row in
            let (path, held) = try row.decode((String, Int64).self)
            return (path, Int(held))
        }
    }

    func malformedByFile(limit: Int) throws -> (rows: [(path: String, cause: String, lines: Int)], total: Int) {
        var rows: [(String, String, Int)] = []
        var total = 0
        try forEachRow(
            of: """
                SELECT f.path, m.cause, count(*) AS lines
                FROM arrival.malformed_lines AS m JOIN arrival.files AS f ON f.id = m.file_id
                GROUP BY m.file_id, f.path, m.cause ORDER BY lines DESC, f.path COLLATE "C", m.cause COLLATE "C", m.file_id
                """, kinds: [.text, .text, .int]
        ) { row in
            total += 1
            guard total <= limit else { return }
            rows.append((row.string(0) ?? "", row.string(1) ?? "", Int(row.int(2))))
        }
        return (rows, total)
    }

    func malformedProblems() throws -> [(path: String, line: Int, cause: String, problem: String?)] {
        var rows: [(String, Int, String, String?)] = []
        try forEachRow(
            of: """
                SELECT f.path, m.line, m.cause, m.problem
                FROM arrival.malformed_lines AS m JOIN arrival.files AS f ON f.id = m.file_id
                ORDER BY f.path COLLATE "C", m.line, m.file_id
                """, kinds: [.text, .int, .text, .text]
        ) { row in
            rows.append((row.string(0) ?? "", Int(row.int(1)), row.string(2) ?? "", row.string(3)))
        }
        return rows
    }

    /// As ``SQLiteSnapshot/duplicatesByFile(limit:)`` counts them: per file,
    /// its lines whose record appears more than once, the file that stored
    /// the record first counting it too; owners and paths looked up by id in
    /// sets, not one row at a time.
    func duplicatesByFile(limit: Int) throws -> [(path: String, records: Int)] {
        var lines: [Int64: Int] = [:]
        var repeated: [String: Set<Int64>] = [:]
        try forEachRow(
            of: "SELECT file_id, kind, record_id, repeats FROM arrival.record_repeats",
            kinds: [.int, .text, .int, .int]
        ) { row in
            lines[row.int(0), default: 0] += Int(row.int(3))
            repeated[row.string(1) ?? "", default: []].insert(row.int(2))
        }
        guard !lines.isEmpty else { return [] }
        for (kind, ids) in repeated {
            let table =
                switch RecordKind(rawValue: kind) ?? .apns {
                case .apns: "arrival.apns"
                case .render: "arrival.renders"
                case .callback:
                    "(SELECT id, file_id FROM arrival.callbacks UNION ALL SELECT id, file_id FROM arrival.start_tokens)"
                }
            for chunk in Self.chunks(of: Array(ids)) {
                var binds = PostgresBindings()
                binds.append(chunk)
                for row in try run(
                    PostgresQuery(
                        unsafeSQL: "SELECT file_id, count(*) FROM \(table) AS t WHERE t.id = ANY($1) GROUP BY file_id",
                        binds: binds))
                {
                    let (file, count) = try row.decode((Int64, Int64).self)
                    lines[file, default: 0] += Int(count)
                }
            }
        }
        var files: [(path: String, sha256: String, records: Int)] = []
        for chunk in Self.chunks(of: Array(lines.keys)) {
            var binds = PostgresBindings()
            binds.append(chunk)
            for row in try run(
                PostgresQuery(
                    unsafeSQL: "SELECT id, path, content_sha256 FROM arrival.files WHERE id = ANY($1)", binds: binds))
            {
                let (id, path, sha256) = try row.decode((Int64, String, String).self)
                files.append((path, sha256, lines[id] ?? 0))
            }
        }
        files.sort {
            if $0.records != $1.records { return $0.records > $1.records }
            if !$0.path.utf8.elementsEqual($1.path.utf8) { return $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
            return $0.sha256 < $1.sha256
        }
        return files.prefix(limit).map { ($0.path, $0.records) }
    }

    /// Ids in arrays of at most 50,000 (one bound parameter each).
    private static func chunks(of ids: [Int64]) -> [[Int64]] {
        stride(from: 0, to: ids.count, by: 50_000).map { Array(ids[$0..<min($0 + 50_000, ids.count)]) }
    }

    func skippedFiles(limit: Int) throws -> [(path: String, firstPath: String)] {
        try run(
            """
            WITH paths(sha, path) AS (
                SELECT content_sha256, path FROM arrival.files
                WHERE content_sha256 IN (SELECT content_sha256 FROM arrival.skipped_files)
                UNION SELECT content_sha256, path FROM arrival.skipped_files
            ),
            groups(sha, first) AS (SELECT sha, min(path COLLATE "C") FROM paths GROUP BY sha)
            SELECT p.path, g.first FROM paths AS p JOIN groups AS g ON g.sha = p.sha
            WHERE p.path <> g.first ORDER BY p.path COLLATE "C", g.first COLLATE "C" LIMIT \(max(0, limit))
            """
        ).map { try $0.decode((String, String).self) }
    }
}

/// The snapshot handed to a cursor's fetching thread: its connection is
/// used under the snapshot's lock, one query at a time.
/// `@unchecked Sendable`: the snapshot's connection is used only under the snapshot's lock, one query at a time.
private struct UncheckedSnapshot: @unchecked Sendable {
    let value: PostgresStoreSnapshot
    init(_ value: PostgresStoreSnapshot) { self.value = value }
}

/// The texts a look-up read ahead, by row id (shared by the look-up's copies).
private final class Prefetched: Sendable {
    private let texts = NIOLockedValueBox([Int64: String]())

    func text(of id: Int64) -> String? {
        texts.withLockedValue { $0[id] }
    }

    func keep(_ rows: [(Int64, String)]) {
        texts.withLockedValue { texts in for (id, text) in rows { texts[id] = text } }
    }
}

/// Names the cursors of one snapshot apart (a scan may run inside another's body).
private final class Counter: Sendable {
    private let value = NIOLockedValueBox(0)

    func next() -> Int {
        value.withLockedValue { value in
            value += 1
            return value
        }
    }
}

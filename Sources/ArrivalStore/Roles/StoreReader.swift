package import ArrivalModel

/// The store's reader role: what the analysis, the reports, `lost`,
/// `activity`, `tokens`, `diff` and `gate` read, whatever the engine.
/// ``SQLiteStore`` reads its file in place; the PostgreSQL store of
/// `ArrivalPostgres` reads the server's tables through cursors, a page of
/// rows at a time, with no local copy. Both hand the same rows in the same
/// order to the one analysis, so a report is the same from either engine,
/// byte for byte.
package protocol StoreReader: AnyObject {
    /// The store as messages name it: a path, or a URL without its password.
    var label: String { get }

    /// Runs `body` in one consistent snapshot of the store, even while
    /// writers commit. `mapped` says the body reads every row of the record
    /// tables once (an engine that reads a file may map it).
    func read<T>(mapped: Bool, _ body: (any StoreSnapshot) throws -> T) throws -> T

    /// How many requests the store holds and the first and last `sent_at`
    /// among them (ms since the epoch); nil when it holds none. Says where
    /// the data is when a report's window holds nothing.
    func requestSpan() throws -> (count: Int, first: Int64, last: Int64)?

    /// The `apns` records of `window` in `apns_id` order (byte order), then
    /// `sent_at`, `status`, `reason` (none first) and row order: the
    /// record-level diff merges two of these.
    func requestsByApnsID(window: ReportWindow?) throws -> any RequestCursor
}

extension StoreReader {
    /// ``read(mapped:_:)`` of rows read as the body asks.
    package func read<T>(_ body: (any StoreSnapshot) throws -> T) throws -> T {
        try read(mapped: false, body)
    }

    /// The tokens to purge for a window (``DeadTokenTally``): those that
    /// died in it, and those that died before it and were still sent to in
    /// it; every token that ever died without a window. Most requests after
    /// death first, then the earliest death, then the token by code point.
    package func deadTokens(from: Int64? = nil, to: Int64? = nil) throws -> [DeadToken] {
        try read { snapshot in
            var tally = try DeadTokenTally(snapshot: snapshot, from: from, to: to)
            if !tally.isEmpty {
                try snapshot.forEachRequestToken { token, sentAt in _ = tally.note(token, sentAt: sentAt) }
            }
            return tally.tokens().list
        }
    }
}

/// A cursor of ``StoreReader/requestsByApnsID(window:)``.
package protocol RequestCursor: AnyObject {
    typealias Row = (apnsID: String, sentAt: Int64, status: Int64, reason: String?, activityID: String?, seq: Int64?)

    /// The next record; nil at the end.
    func next() throws -> Row?
}

/// The scans of the record tables the analysis makes, each in row order;
/// an engine answers each with rows of the columns ``kinds`` gives
/// (``StoreSnapshot/forEachFetchedRow(_:_:)``).
package enum RowScan: Sendable, Equatable {
    /// Every `apns` row (``RequestRow``): with `resolvingTokens`, a row
    /// without an activity gets its push token's owner's (after
    /// ``StoreSnapshot/resolveTokenOwners()``); with `broadcasts`, a last
    /// column tells broadcasts.
    case requests(resolvingTokens: Bool, broadcasts: Bool)
    /// Every `renders` row (``RenderRow``).
    case renders
    /// Every `callbacks` row that names its activity (``CallbackRow``).
    case callbacks
    /// `push_token`, `activity_id` and `received_at` of every `push_token` callback.
    case pushTokenCallbacks
    /// `push_token` and `sent_at` of every request (no set order).
    case requestTokens

    /// How each column is read.
    package var kinds: [FetchedRow.Kind] {
        switch self {
        case .requests(_, let broadcasts): broadcasts ? RequestRow.kindsWithBroadcasts : RequestRow.kinds
        case .renders: RenderRow.kinds
        case .callbacks: CallbackRow.kinds
        case .pushTokenCallbacks: [.text, .text, .int]
        case .requestTokens: [.text, .int]
        }
    }
}

/// One consistent snapshot of a store (``StoreReader/read(mapped:_:)``):
/// the queries of the analysis and the reports. Large reads are cursors:
/// each calls its body once per row with a view of that row, valid only
/// during the call.
package protocol StoreSnapshot {
    /// The rows of `scan`, in row order, each as ``RowScan/kinds`` reads it.
    func forEachFetchedRow(_ scan: RowScan, _ body: (FetchedRow) throws -> Void) throws

    /// Every broadcast (an `apns` row with a channel, contract 3.0), or
    /// those to `channels` when given, in row order.
    func forEachBroadcast(channels: [String]?, _ body: (BroadcastRow) throws -> Void) throws

    /// Resolves every push token's owner for ``RowScan/requests(resolvingTokens:broadcasts:)``:
    /// its `push_token` callback with the earliest `received_at`, then the
    /// smallest activity id (byte order), held by the engine, not in memory here.
    func resolveTokenOwners() throws

    /// The largest row id of each record table (callbacks with start
    /// tokens), to size the analysis' partitions.
    func rowEstimates() throws -> (requests: Int, renders: Int, callbacks: Int)

    /// Whether the store holds a broadcast.
    func hasBroadcasts() throws -> Bool

    /// Every request that killed a token: answered 410, or with a reason of ``deadTokenReasons``.
    func forEachKillingRequest(
        _ body: (
            _ token: String, _ sentAt: Int64, _ apnsID: String, _ row: Int64, _ topic: String?,
            _ provider: String, _ status: Int64, _ reason: String?
        ) throws -> Void
    ) throws

    /// Looks up the `apns_id` of `apns` rows by row id.
    func apnsIDLookup() throws -> RowLookup
    /// Looks up the `push_token` of `callbacks` rows by row id.
    func callbackTokenLookup() throws -> RowLookup
    /// Looks up the `push_token` of `apns` rows by row id.
    func pushTokenLookup() throws -> RowLookup

    /// Every logical update with the outcome the SQL views give it (the
    /// `update_outcomes` view, for dashboards and ad-hoc queries).
    func forEachViewOutcome(_ body: (ViewOutcome) throws -> Void) throws

    /// The `apns` rows with these row ids, in the order of the ids (ids that no longer exist are left out).
    func requestAnswers(rowIDs: [Int64]) throws -> [(rowID: Int64, answer: RequestAnswer)]
    /// The `renders` rows with these row ids, in the order of the ids.
    func renderSightings(rowIDs: [Int64]) throws -> [(rowID: Int64, sighting: RenderSighting)]

    /// The records of one activity (``ActivityRecords``).
    func activityRecords(_ id: String) throws -> ActivityRecords

    /// Apple's rows (issue 54) of the days in [from, to) (all without bounds); none in a store of an
    /// arrival before them.
    func appleMetrics(from: Int64?, to: Int64?) throws -> AppleMetrics

    // MARK: The file registry and data quality

    /// Counts that cover everything ingested, whatever the window.
    func storeWideQuality() throws -> StoreWideQuality
    /// What the store holds: files (gzip ones among them), their bytes and
    /// records, and the rows of each record table.
    func sourceTotals() throws -> (files: Int, gzipFiles: Int, bytes: Int64, records: Int, byKind: [Int])
    /// The files that held the most records, ties by path (byte order), then content hash.
    func largestFiles(limit: Int) throws -> [(path: String, records: Int)]
    /// Malformed lines per file and cause, most first, then path and cause;
    /// `total` counts every (file, cause) pair, also those past `limit`.
    func malformedByFile(limit: Int) throws -> (rows: [(path: String, cause: String, lines: Int)], total: Int)
    /// Every malformed line with its problem, by file then line.
    func malformedProblems() throws -> [(path: String, line: Int, cause: String, problem: String?)]
    /// Files with repeated records, most first (``SQLiteSnapshot/duplicatesByFile(limit:)`` says how they count).
    func duplicatesByFile(limit: Int) throws -> [(path: String, records: Int)]
    /// Paths whose bytes were the same as another path's: (path, the first
    /// of its group in byte order), sorted.
    func skippedFiles(limit: Int) throws -> [(path: String, firstPath: String)]
}

extension StoreSnapshot {
    /// The reasons that kill a token, whatever the status (contract 3.0).
    package static var deadTokenReasons: [String] { SQLiteStore.deadTokenReasons }

    /// Every `apns` row, in row order (``RowScan/requests(resolvingTokens:broadcasts:)``).
    package func forEachRequest(
        resolvingTokens: Bool = false, broadcasts: Bool = true, _ body: (RequestRow) throws -> Void
    ) throws {
        try forEachFetchedRow(.requests(resolvingTokens: resolvingTokens, broadcasts: broadcasts)) {
            try body(RequestRow(row: $0, broadcasts: broadcasts))
        }
    }

    /// Every broadcast, in row order.
    package func forEachBroadcast(_ body: (BroadcastRow) throws -> Void) throws {
        try forEachBroadcast(channels: nil, body)
    }

    /// Every `renders` row, in row order.
    package func forEachRender(_ body: (RenderRow) throws -> Void) throws {
        try forEachFetchedRow(.renders) { try body(RenderRow(row: $0)) }
    }

    /// Every `callbacks` row that names its activity, in row order.
    package func forEachCallback(_ body: (CallbackRow) throws -> Void) throws {
        try forEachFetchedRow(.callbacks) { try body(CallbackRow(row: $0)) }
    }

    /// Every `push_token` callback that names both its token and its activity.
    package func forEachPushTokenCallback(
        _ body: (_ token: String, _ activity: String, _ receivedAt: Int64) throws -> Void
    ) throws {
        try forEachFetchedRow(.pushTokenCallbacks) { row in
            guard let token = row.string(0), let activity = row.string(1) else { return }
            try body(token, activity, row.int(2))
        }
    }

    /// Calls `body` with the push token (its bytes, valid during the call)
    /// and `sent_at` of every request: the pass `arrival tokens` makes.
    package func forEachRequestToken(_ body: (UnsafeRawBufferPointer?, Int64) throws -> Void) throws {
        try forEachFetchedRow(.requestTokens) { row in
            try row.withText(0) { try body($0, row.int(1)) }
        }
    }

    /// Roughly the most updates an analysis holds, to size its partitions:
    /// one a request; with broadcasts (contract 3.0), which stand for an
    /// update of each subscriber, one a render and a callback as well (an
    /// activity is a subscriber by its renders and callbacks, and a
    /// broadcast's updates that reach the screen render at least once).
    package func analysisRowEstimate() throws -> Int {
        let rows = try rowEstimates()
        return try hasBroadcasts() ? rows.requests + rows.renders + rows.callbacks : rows.requests
    }
}

/// A query by row id that answers one text column.
package struct RowLookup {
    private let lookUp: (Int64) throws -> String
    private let prefetchRows: ([Int64]) throws -> Void

    /// A look-up by `lookUp`, which answers the text of a row id (empty when
    /// the row has none); `prefetch` reads rows about to be looked up at once
    /// (an engine whose every query is a round trip keeps them for `lookUp`).
    package init(
        _ lookUp: @escaping (Int64) throws -> String, prefetch: @escaping ([Int64]) throws -> Void = { _ in }
    ) {
        self.lookUp = lookUp
        self.prefetchRows = prefetch
    }

    /// Says that the rows `ids` are about to be looked up.
    package func prefetch(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try prefetchRows(ids)
    }

    /// The text of row `id` (empty when the row has none). Safe while a
    /// cursor of the same snapshot reads its rows ahead on another thread.
    package func text(ofRow id: Int64) throws -> String {
        try lookUp(id)
    }
}

/// Counts that cover everything ingested, whatever the window.
package struct StoreWideQuality {
    package var malformedByCause: [ExactString: Int] = [:]
    package var duplicateRecords = 0
    package var filesSkippedAsDuplicate = 0

    package init() {}
}

/// One request of an activity's timeline.
package struct RequestAnswer {
    package var seq: Int64
    package var sentAt: Int64
    package var status: Int64
    package var reason: String?
    package var apnsID: String
    package var payloadBytes: Int64?

    package init(seq: Int64, sentAt: Int64, status: Int64, reason: String?, apnsID: String, payloadBytes: Int64?) {
        self.seq = seq
        self.sentAt = sentAt
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.payloadBytes = payloadBytes
    }
}

/// One render of an activity's timeline.
package struct RenderSighting {
    package var seq: Int64
    package var surface: String?
    package var deviceID: String?
    package var renderedAt: Int64

    package init(seq: Int64, surface: String?, deviceID: String?, renderedAt: Int64) {
        self.seq = seq
        self.surface = surface
        self.deviceID = deviceID
        self.renderedAt = renderedAt
    }
}

extension SQLiteStore: StoreReader {
    package var label: String { path }
}

/// One row of the `update_outcomes` view (``StoreSnapshot/forEachViewOutcome(_:)``).
package struct ViewOutcome: Sendable {
    package var activityID: String
    package var seq: Int64
    package var outcome: String?
    package var lossCause: String?
    package var at: Int64
    package var app: String
    package var priority: Int64?
    package var channel: String?
    /// Contract 3.1: other accepted priority-10 updates of the activity in the hour before (nil: not such an update).
    package var priority10LastHour: Int64?
    /// The activity's "More Frequent Updates" switch (contract 3.1).
    package var frequentPushes: String?
    /// Whether the activity is subscribed to a broadcast channel.
    package var subscribed: Bool

    /// The columns of `update_outcomes` this reads, in this order.
    package static let columns =
        "activity_id, seq, outcome, loss_cause, at, app, priority, channel_id, priority_10_last_hour, frequent_pushes, subscribed"

    package init(
        activityID: String, seq: Int64, outcome: String?, lossCause: String?, at: Int64, app: String,
        priority: Int64?, channel: String?, priority10LastHour: Int64?, frequentPushes: String?, subscribed: Bool
    ) {
        self.activityID = activityID
        self.seq = seq
        self.outcome = outcome
        self.lossCause = lossCause
        self.at = at
        self.app = app
        self.priority = priority
        self.channel = channel
        self.priority10LastHour = priority10LastHour
        self.frequentPushes = frequentPushes
        self.subscribed = subscribed
    }
}

package import ArrivalModel
import ArrivalStore

/// The outcomes and metrics (Documentation/Outcomes.md, Metrics.md)
/// computed in one pass over each table.
///
/// The same rules are written as SQL views (``OutcomeRules/viewSQL``) for
/// dashboards and ad-hoc queries; SQLite evaluates their window functions
/// over wide rows far more slowly than this pass, so the report reads each
/// table once through a cursor and applies ``OutcomeRules/outcome(rendered:acceptedAt:isEnd:apsTimestamp:activityStartedAt:activityEndedAt:earlierMaxTimestamp:laterRendered:)``
/// in memory (about 100 bytes per update). A test checks that both give
/// every update the same outcome.
package struct DeliveryAnalysis {
    /// One logical update (activity, seq) and the request that speaks for it.
    package struct Update {
        package var activity: Int32
        package var seq: Int64
        package var accepted = false
        /// Accept time when accepted, else the earliest request's sent_at.
        package var at: Int64
        var apsTimestamp: Int64
        var isEnd = false
        var isStart = false
        var app: Int32
        var priority: Int64?
        /// The request's provider, by its index in ``PushProvider/allCases``.
        var provider: UInt8 = 0
        /// The request's broadcast channel in ``Broadcasts/channels`` (-1: sent to a token).
        var channel: Int32 = -1
        /// Row id of the picked request, to compare `apns_id` on a tie.
        var pickRow: Int64
        /// The picked request's push token in ``DeliveryAnalysis/tokens``,
        /// read by row id once the update is known to be lost (-1 otherwise:
        /// only a lost update's token is asked about, and reading every
        /// request's 64-character token was a fifth of the scan).
        var token: Int32 = -1
        var firstRenderedAt: Int64?
        var hasContentCallback = false
        package var outcome: Outcome?
        /// Why it was lost, when its outcome is `lost` (contract 3.0).
        package var lossCause: LossCause?
        /// For an accepted priority-10 update sent to the activity's token
        /// (no channel): how many other such updates of the activity were
        /// accepted in the hour before its accept time (contract 3.1,
        /// `breakdowns.priority_10_last_hour`); -1 for any other update.
        package var recentPriority10: Int32 = -1
    }

    /// What is known of one activity: its bounds and what its device told.
    struct Activity {
        var startedAt: Int64?
        /// The earlier of its earliest accepted `end` and its earliest `ended` callback.
        var endedAt: Int64?
        /// Its earliest `activity_state` `dismissed` callback.
        var dismissedAt: Int64?
        /// Its earliest and latest `activity_state` `ended` callbacks.
        var firstEndedCallbackAt: Int64?
        var lastEndedCallbackAt: Int64?
        /// The latest render or callback of it; nil: the device never told anything.
        var lastDeviceAt: Int64?
        /// Its earliest `push_token` callback.
        var firstTokenAt: Int64?
        /// Its `push_token` callbacks: when, and the row to read the token from
        /// (only a lost update's cause asks; reading every callback's token
        /// cost more than the rest of the callback scan).
        var tokenCallbacks: [(at: Int64, row: Int64)] = []
        var hasTokenCallback: Bool { firstTokenAt != nil }
        var os: (time: Int64, value: String)?
        var appVersion: (time: Int64, value: String)?
        /// The user's "More Frequent Updates" switch, from the earliest evidence that says (contract 3.1).
        var frequentPushes: (time: Int64, value: String)?
        /// Its device's `device_id`, from the earliest evidence that says, as `os` (contract 3.2: `outliers`).
        var device: (time: Int64, value: String)?
        /// Whether any render or callback of it names a broadcast channel:
        /// it is updated through the channel and expects no update token (contract 3.1).
        var subscribed = false
    }

    package internal(set) var updates: [Update] = []
    private(set) var activities: [Activity] = []
    /// Activity ids and apps by number (keyed by code points: canonically
    /// equivalent spellings are different values).
    package private(set) var activityNames = Interner()
    private(set) var apps = Interner()
    /// Push tokens of lost updates and of their activities' newest `push_token` callbacks, by number.
    private(set) var tokens = Interner()
    /// Per lost update (by index), its activity's newest `push_token`
    /// callback at or before its accept time, when there is one.
    private(set) var newestTokenOfLost: [Int: (at: Int64, token: Int32)] = [:]
    /// The app of a topic, for the pass over all requests of a partitioned analysis.
    static func app(ofTopic topic: String?, in apps: inout Interner) -> Int32 {
        apps.intern(Contract.app(ofTopic: topic))
    }
    private var topicApp: [ExactString: Int32] = [:]
    var updateIndex = UpdateTable()
    /// The store's broadcasts (contract 3.0), expanded over this analysis' activities by ``expandBroadcasts(apnsID:pushToken:)``.
    private(set) var broadcasts = Broadcasts()
    /// (activity << 32 | channel) of every activity a render or callback says follows a channel broadcasts name.
    var subscriptions: Set<UInt64> = []
    /// Which broadcasts (by index in ``Broadcasts/all``) reached an activity of this analysis.
    var reachedBroadcasts: [Bool] = []
    /// Renders and `content_update` callbacks of updates not known when they
    /// were read, whose seq a broadcast carries: a broadcast's update may
    /// claim them once the broadcasts are expanded.
    var pendingRenders: [UpdateKey: Int64] = [:]
    var pendingContentCallbacks: Set<UpdateKey> = []

    /// Requests seen, for the report's request metrics (filled while scanning).
    struct RequestTally {
        var total = 0, accepted = 0, oversizeFailures = 0, oversizeRisk = 0, unattributed = 0, withoutSeq = 0
        /// Requests sent to a token after its death (contract 3.0).
        var toDeadTokens = 0
        /// Broadcasts among them (contract 3.0).
        var broadcasts = 0
        var byReason: [ExactString: Int] = [:]

        /// Counts one request of the window (Documentation/Metrics.md, `requests` and two `data_quality` counts).
        /// A broadcast is always attributed and never to a dead token (it names no token).
        mutating func add(
            status: Int64, reason: String?, payloadBytes: Int64?, attributed: Bool, hasSeq: Bool, toDeadToken: Bool,
            broadcast: Bool = false
        ) {
            total += 1
            if toDeadToken { toDeadTokens += 1 }
            if broadcast { broadcasts += 1 }
            if status == 200 {
                accepted += 1
                let risk = broadcast ? Contract.broadcastOversizeRiskBytes : Contract.oversizeRiskBytes
                if let payloadBytes, payloadBytes > risk { oversizeRisk += 1 }
            } else {
                // An empty reason is none (contract 3.0).
                let key = reason.flatMap { $0.isEmpty ? nil : $0 } ?? (status == 0 ? "NoResponse" : "HTTP\(status)")
                byReason[ExactString(key), default: 0] += 1
            }
            if isOversizeFailure(status, reason) { oversizeFailures += 1 }
            if !attributed { unattributed += 1 }
            if !hasSeq { withoutSeq += 1 }
        }

        /// The counts above: each a sum over requests, so tallies of disjoint sets add up.
        private static let counts: [any WritableKeyPath<RequestTally, Int> & Sendable] = [
            \.total, \.accepted, \.oversizeFailures, \.oversizeRisk, \.unattributed, \.withoutSeq, \.toDeadTokens,
            \.broadcasts,
        ]

        /// Adds another tally (of a disjoint set of requests).
        mutating func merge(_ other: RequestTally) {
            for count in Self.counts { self[keyPath: count] += other[keyPath: count] }
            byReason.merge(other.byReason, uniquingKeysWith: +)
        }
    }

    private(set) var requests = RequestTally()
    /// The dead tokens, with the window's requests after death counted per token
    /// (empty for the analysis of a partition: the pass over all requests has them).
    private(set) var deadTokens = DeadTokenTally()
    /// The same tally for every UTC day (key: ``utcDay(of:)``) and every
    /// hour (key: ``utcHour(of:)``) of all stored requests, so reports of
    /// several whole days (trends, comparisons with earlier days) come from
    /// this one pass instead of one analysis per day.
    private(set) var requestsByDay: [Int64: RequestTally] = [:]
    private(set) var requestsByHour: [Int64: RequestTally] = [:]
    /// With `tallyByDayAndHour`: the activity of every request and render row
    /// (by row id), so the HTML report fetches the rows of a few activities by
    /// id instead of scanning the tables again.
    private(set) var requestRows: [(row: Int64, activity: Int32)] = []
    private(set) var renderRows: [(row: Int64, activity: Int32)] = []

    /// In-window requests per activity (requests without one are their own
    /// clusters), filled only when asked for, for ``ActivitySamples``.
    struct RequestCluster {
        var total = 0, accepted = 0, oversizeFailures = 0
    }

    private(set) var requestClusters: [ExactString: RequestCluster] = [:]
    private(set) var unattributedClusters: [RequestCluster] = []

    // MARK: - Building

    /// Analyses every stored update; `requests` tallies the requests of
    /// `window`; with `tallyByDayAndHour`, `requestsByDay` and
    /// `requestsByHour` tally every request as well; with `samplingRequests`,
    /// ``requestClusters`` gathers the window's requests per activity.
    init(
        snapshot: any StoreSnapshot, window: ReportWindow?, tallyByDayAndHour: Bool = false,
        samplingRequests: Bool = false,
        listingDeadTokens: Bool = false
    ) throws {
        let owners = try Self.tokenOwners(snapshot)
        let pickApnsID = try snapshot.apnsIDLookup()
        let pickToken = try snapshot.pushTokenLookup()
        let callbackToken = try snapshot.callbackTokenLookup()
        deadTokens = try DeadTokenTally(
            snapshot: snapshot, from: window?.from, to: window?.to, listing: listingDeadTokens)
        let checkDeaths = !deadTokens.isEmpty
        broadcasts = try Broadcasts(snapshot: snapshot, apps: &apps)
        // At most one update a request: room for them all at once, where
        // doubling would copy the updates and rebuild the index as they grow.
        reserve(updates: try snapshot.rowEstimates().requests)

        // Consecutive rows often repeat the previous row's topic or activity.
        var lastTopic = LastText()
        var lastActivity = LastText()
        var tallies = RequestTallies(window: window, byDayAndHour: tallyByDayAndHour)
        // Requests: tally them, and pick each update's deciding request.
        try snapshot.forEachRequest(broadcasts: !broadcasts.isEmpty) { row in
            let sentAt = row.sentAt
            let status = row.status
            let reason = row.reason
            let accepted = status == 200
            let seq = row.seq
            if row.isBroadcast {
                // Counted once here; its updates come from ``expandBroadcasts(apnsID:pushToken:)``.
                _ = tallies.add(
                    sentAt: sentAt, status: status, reason: reason, payloadBytes: row.payloadBytes, attributed: true,
                    hasSeq: seq != nil, toDeadToken: false, broadcast: true)
                return
            }
            let activityName = row.activityID ?? row.pushToken.flatMap { owners[ExactString($0)] }
            let inWindow = tallies.add(
                sentAt: sentAt, status: status, reason: reason, payloadBytes: row.payloadBytes,
                attributed: activityName != nil, hasSeq: seq != nil,
                toDeadToken: checkDeaths && row.withPushTokenBytes { deadTokens.note($0, sentAt: sentAt) })
            if inWindow && samplingRequests {
                let one = RequestCluster(
                    total: 1, accepted: accepted ? 1 : 0, oversizeFailures: isOversizeFailure(status, reason) ? 1 : 0)
                if let activityName {
                    requestClusters[ExactString(activityName), default: RequestCluster()].add(one)
                } else {
                    unattributedClusters.append(one)
                }
            }
            guard let activityName, let seq else { return }
            let activity = intern(activity: activityName)
            if tallyByDayAndHour { requestRows.append((row.rowID, activity)) }
            let event = row.event ?? "update"
            let app = row.topic(through: &lastTopic) { self.app(ofTopic: $0) } ?? 0
            try consider(
                Update(
                    activity: activity, seq: seq, accepted: accepted, at: sentAt, apsTimestamp: row.apsTimestamp,
                    isEnd: event == "end", isStart: event == "start", app: app, priority: row.priority,
                    provider: UInt8(truncatingIfNeeded: row.providerIndex), pickRow: row.rowID),
                apnsID: { try pickApnsID.text(ofRow: $0) }, pushToken: { try pickToken.text(ofRow: $0) })
        }

        tallies.finish()
        (requests, requestsByDay, requestsByHour) = (tallies.window, tallies.byDay, tallies.byHour)

        // Renders: first render per update, activity start, device evidence.
        // With broadcasts, every activity counts: one may have no direct request.
        let withBroadcasts = !broadcasts.isEmpty
        var channels = ChannelLookup()
        try snapshot.forEachRender { row in
            guard
                let activity = row.activity(
                    through: &lastActivity,
                    { $0.flatMap { withBroadcasts ? intern(activity: $0) : activityNames.id(of: $0) } })
            else { return }
            if tallyByDayAndHour { renderRows.append((row.rowID, activity)) }
            if withBroadcasts, let channel = row.withChannelBytes({ channels.channel($0, in: broadcasts) }) {
                noteSubscription(activity: activity, channel: channel)
            }
            considerRender(
                activity: activity, seq: row.seq, at: row.renderedAt, os: { row.osVersion },
                appVersion: { row.appVersion }, frequentPushes: { row.frequentPushes }, device: { row.deviceID },
                subscribed: row.hasChannel)
        }

        // Callbacks: activity start, content-update and token callbacks, device evidence.
        lastActivity = LastText()
        try snapshot.forEachCallback { row in
            guard
                let activity = row.activity(
                    through: &lastActivity,
                    { $0.flatMap { withBroadcasts ? intern(activity: $0) : activityNames.id(of: $0) } })
            else { return }
            if withBroadcasts, let channel = row.withChannelBytes({ channels.channel($0, in: broadcasts) }) {
                noteSubscription(activity: activity, channel: channel)
            }
            considerCallback(
                activity: activity, kind: CallbackKind(row.callback, state: row.state), seq: row.seq,
                at: row.receivedAt, row: row.rowID, os: { row.osVersion }, appVersion: { row.appVersion },
                frequentPushes: { row.frequentPushes }, device: { row.deviceID }, subscribed: row.hasChannel)
        }
        try finish(
            apnsID: { try pickApnsID.text(ofRow: $0) }, pushToken: { try pickToken.text(ofRow: $0) },
            callbackToken: { try callbackToken.text(ofRow: $0) },
            prefetch: { requests, callbacks in
                try pickToken.prefetch(requests)
                try callbackToken.prefetch(callbacks)
            })
    }

    /// An empty analysis of one partition of the activities
    /// (``AnalysisPartitions``), filled by its ``consider(_:apnsID:)``,
    /// ``considerRender(activity:seq:at:os:appVersion:frequentPushes:device:subscribed:)`` and
    /// ``considerCallback(activity:kind:seq:at:row:os:appVersion:frequentPushes:device:subscribed:)`` calls, then
    /// ``finish()``. `apps` numbers the apps as the pass over all requests
    /// did; the request tallies stay empty (they are that pass's).
    init(partitionNumberingAppsAs apps: Interner, broadcasts: Broadcasts) {
        self.apps = apps
        self.broadcasts = broadcasts
    }

    /// What a callback row tells the analysis.
    enum CallbackKind: UInt8 {
        case other = 0
        case contentUpdate = 1
        case pushToken = 2
        /// `activity_state` with `ended` or `dismissed` (contract 3.0: `state` is read on `activity_state` only).
        case ended = 3
        case dismissed = 4

        init(_ name: String?, state: @autoclosure () -> String?) {
            switch name {
            case "content_update": self = .contentUpdate
            case "push_token": self = .pushToken
            case "activity_state":
                switch state() {
                case "ended": self = .ended
                case "dismissed": self = .dismissed
                default: self = .other
                }
            default: self = .other
            }
        }
    }

    /// Reads a text column of a request by row id: for ties, and for lost updates.
    typealias RowText = (Int64) throws -> String
    /// Says which rows the lost updates' look-ups will read (their requests'
    /// push tokens, the `push_token` callbacks that may be their activities'
    /// newest), before they are read: an engine across a network reads them
    /// in one query each instead of one a row.
    typealias LookupPrefetch = (_ requestRows: [Int64], _ callbackRows: [Int64]) throws -> Void

    /// Takes `candidate` as its update's deciding request if it precedes the one held.
    /// `apnsID` and `pushToken` read those columns of a request by row id (for ties).
    mutating func consider(_ candidate: Update, apnsID: RowText, pushToken: RowText) throws {
        if let index = updateIndex.find(activity: candidate.activity, seq: candidate.seq, in: updates) {
            if try precedes(candidate, updates[index], apnsID: apnsID, pushToken: pushToken) {
                updates[index] = candidate
            }
        } else {
            updates.append(candidate)
            updateIndex.insert(updates.count - 1, in: updates)
        }
    }

    /// A render: its update's first render, the activity's start and device
    /// evidence (``noteEvidence(activity:at:os:appVersion:frequentPushes:device:subscribed:)``).
    mutating func considerRender(
        activity: Int32, seq: Int64, at: Int64, os: () -> String?, appVersion: () -> String?,
        frequentPushes: () -> String?, device: () -> String?, subscribed: Bool
    ) {
        if let index = updateIndex.find(activity: activity, seq: seq, in: updates) {
            updates[index].firstRenderedAt = min(updates[index].firstRenderedAt ?? at, at)
        } else if !broadcasts.isEmpty, broadcasts.seqs.contains(seq) {
            let key = UpdateKey(activity: activity, seq: seq)
            pendingRenders[key] = min(pendingRenders[key] ?? at, at)
        }
        noteEvidence(
            activity: activity, at: at, os: os, appVersion: appVersion, frequentPushes: frequentPushes,
            device: device, subscribed: subscribed)
    }

    /// A callback: content-update and token callbacks, the device's ends
    /// and dismissals, the activity's start and device evidence. `row` is
    /// its row id (a `push_token` callback's token is read by it when needed).
    mutating func considerCallback(
        activity: Int32, kind: CallbackKind, seq: Int64?, at: Int64, row: Int64, os: () -> String?,
        appVersion: () -> String?, frequentPushes: () -> String?, device: () -> String?, subscribed: Bool
    ) {
        let i = Int(activity)
        switch kind {
        case .contentUpdate:
            if let seq, let index = updateIndex.find(activity: activity, seq: seq, in: updates) {
                updates[index].hasContentCallback = true
            } else if let seq, !broadcasts.isEmpty, broadcasts.seqs.contains(seq) {
                pendingContentCallbacks.insert(UpdateKey(activity: activity, seq: seq))
            }
        case .pushToken:
            activities[i].firstTokenAt = min(activities[i].firstTokenAt ?? at, at)
            activities[i].tokenCallbacks.append((at, row))
        case .ended:
            activities[i].endedAt = min(activities[i].endedAt ?? at, at)
            activities[i].firstEndedCallbackAt = min(activities[i].firstEndedCallbackAt ?? at, at)
            activities[i].lastEndedCallbackAt = max(activities[i].lastEndedCallbackAt ?? at, at)
        case .dismissed:
            activities[i].dismissedAt = min(activities[i].dismissedAt ?? at, at)
        case .other:
            break
        }
        noteEvidence(
            activity: activity, at: at, os: os, appVersion: appVersion, frequentPushes: frequentPushes,
            device: device, subscribed: subscribed)
    }

    /// The indices of the updates whose time falls in `window` (all, without one).
    func updateIndices(in window: ReportWindow?) -> LazyFilterSequence<Range<Int>> {
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max
        return updates.indices.lazy.filter { updates[$0].at >= from && updates[$0].at < to }
    }

    /// Makes room for `count` updates at once: growing the array and its
    /// index by doubling would hold the old and the new copy together.
    mutating func reserve(updates count: Int) {
        updates.reserveCapacity(count)
        updateIndex = UpdateTable(capacity: count)
    }

    /// Expands the broadcasts, then decides every update's outcome once all
    /// rows were considered; `apnsID` and `pushToken` read a request's
    /// columns by row id (ties; lost updates), `callbackToken` a
    /// `push_token` callback's (lost updates only).
    mutating func finish(
        apnsID: RowText, pushToken: RowText, callbackToken: RowText, prefetch: LookupPrefetch = { _, _ in }
    ) throws {
        try expandBroadcasts(apnsID: apnsID, pushToken: pushToken)
        updateIndex = UpdateTable()
        try decideOutcomes(pushToken: pushToken, callbackToken: callbackToken, prefetch: prefetch)
    }

    /// Notes a request row of an update's activity (HTML timelines).
    mutating func noteRequestRow(_ row: Int64, activity: Int32) { requestRows.append((row, activity)) }
    mutating func noteRenderRow(_ row: Int64, activity: Int32) { renderRows.append((row, activity)) }
    /// Counts an in-window request of a named activity, for ``ActivitySamples``.
    mutating func noteCluster(_ name: String, _ one: RequestCluster) {
        requestClusters[ExactString(name), default: RequestCluster()].add(one)
    }

    /// The activity each push token belongs to: its `push_token` callback
    /// with the earliest received_at, then the smallest activity_id.
    private static func tokenOwners(_ snapshot: any StoreSnapshot) throws -> [ExactString: String] {
        var owners: [ExactString: (Int64, String)] = [:]
        try snapshot.forEachPushTokenCallback { token, activity, receivedAt in
            let candidate = (receivedAt, activity)
            let key = ExactString(token)
            if let current = owners[key],
                !(candidate.0 < current.0 || (candidate.0 == current.0 && codePointOrder(candidate.1, current.1)))
            {
                return
            }
            owners[key] = candidate
        }
        return owners.mapValues(\.1)
    }

    /// Whether `candidate` is the update's deciding request rather than
    /// `current`: accepted first, then the earliest sent_at, the smaller
    /// apns_id, the smaller aps_timestamp; remaining ties by the fields the
    /// request decides (event, app, priority, provider) so the choice never
    /// depends on ingest order.
    func precedes(
        _ candidate: Update, _ current: Update, apnsID: RowText, pushToken: RowText
    )
        throws -> Bool
    {
        if candidate.accepted != current.accepted { return candidate.accepted }
        if candidate.at != current.at { return candidate.at < current.at }
        let candidateApnsID = try apnsID(candidate.pickRow)
        let currentApnsID = try apnsID(current.pickRow)
        if !candidateApnsID.utf8.elementsEqual(currentApnsID.utf8) {
            return codePointOrder(candidateApnsID, currentApnsID)
        }
        if candidate.apsTimestamp != current.apsTimestamp { return candidate.apsTimestamp < current.apsTimestamp }
        let eventRank = { (u: Update) in u.isEnd ? 0 : u.isStart ? 1 : 2 }  // "end" < "start" < "update"
        if eventRank(candidate) != eventRank(current) { return eventRank(candidate) < eventRank(current) }
        if candidate.app != current.app { return apps[Int(candidate.app)] < apps[Int(current.app)] }
        switch (candidate.priority, current.priority) {
        case (let a?, let b?) where a != b: return a < b
        case (nil, .some): return true  // NULL sorts first, as in SQL
        case (.some, nil): return false
        default: break
        }
        // PushProvider's cases are in the order of their names.
        if candidate.provider != current.provider { return candidate.provider < current.provider }
        // Then the broadcast channel (contract 3.0), a direct request (none) first.
        if candidate.channel != current.channel {
            if candidate.channel < 0 || current.channel < 0 { return candidate.channel < 0 }
            return broadcasts.channels[Int(candidate.channel)] < broadcasts.channels[Int(current.channel)]
        }
        // Then the push token (contract 3.0's full order): the only field
        // left that the analysis reads, and only of an accepted update; the
        // rest of the order cannot change what is reported.
        guard candidate.accepted else { return false }
        let candidateToken = try pushToken(candidate.pickRow)
        let currentToken = try pushToken(current.pickRow)
        return codePointOrder(candidateToken, currentToken)
    }

    mutating func intern(activity name: String) -> Int32 {
        let id = activityNames.intern(name)
        if Int(id) == activities.count { activities.append(Activity()) }
        return id
    }

    /// The app of a topic (cached: a fleet has few topics).
    mutating func app(ofTopic topic: String?) -> Int32 {
        guard let topic else { return Self.app(ofTopic: nil, in: &apps) }
        let key = ExactString(topic)
        if let app = topicApp[key] { return app }
        let app = Self.app(ofTopic: topic, in: &apps)
        topicApp[key] = app
        return app
    }

    /// Notes a render's or callback's time and device evidence: `os`,
    /// `appVersion`, `frequentPushes` (contract 3.1) and `device` (3.2) are read only when
    /// they could be the earliest (most rows come later than the activity's
    /// first evidence, and making a String per row is most of the cost of a
    /// scan); `subscribed`: the row names a broadcast channel.
    private mutating func noteEvidence(
        activity: Int32, at: Int64, os: () -> String?, appVersion: () -> String?, frequentPushes: () -> String?,
        device: () -> String?, subscribed: Bool
    ) {
        let i = Int(activity)
        activities[i].startedAt = min(activities[i].startedAt ?? at, at)
        activities[i].lastDeviceAt = max(activities[i].lastDeviceAt ?? at, at)
        if subscribed { activities[i].subscribed = true }
        Self.noteEarliest(at, os, in: &activities[i].os)
        Self.noteEarliest(at, appVersion, in: &activities[i].appVersion)
        Self.noteEarliest(at, frequentPushes, in: &activities[i].frequentPushes)
        Self.noteEarliest(at, device, in: &activities[i].device)
    }

    /// Keeps `(at, value())` in `earliest` when it is earlier (ties: the smaller value by code point).
    private static func noteEarliest(
        _ at: Int64, _ value: () -> String?, in earliest: inout (time: Int64, value: String)?
    ) {
        if earliest.map({ at <= $0.time }) ?? true, let value = value(), Self.earlier((at, value), than: earliest) {
            earliest = (at, value)
        }
    }

    private static func earlier(_ a: (Int64, String), than b: (time: Int64, value: String)?) -> Bool {
        guard let b else { return true }
        return a.0 < b.time || (a.0 == b.time && codePointOrder(a.1, b.value))
    }

    // MARK: - Outcomes (Documentation/Outcomes.md)

    /// The newest `push_token` callback of `activity` at or before `time`
    /// (the latest received_at; ties: the greatest token by code point).
    /// `activity.tokenCallbacks` must be sorted by time; `resolved` keeps
    /// the greatest token of each instant already read (an app that reports
    /// thousands of tokens at once costs one read of each, once).
    private mutating func newestToken(
        of activity: Activity, at time: Int64, callbackToken: RowText, resolved: inout [Int64: Int32]
    ) throws -> (at: Int64, token: Int32)? {
        let callbacks = activity.tokenCallbacks
        guard let low = Self.latestTokenCallbacks(callbacks, at: time) else { return nil }
        let latest = callbacks[low - 1].at
        if let token = resolved[latest] { return (latest, token) }
        var greatest: String?
        var index = low - 1
        while index >= 0 && callbacks[index].at == latest {
            let token = try callbackToken(callbacks[index].row)
            if greatest.map({ codePointOrder($0, token) }) ?? true { greatest = token }
            index -= 1
        }
        let token = tokens.intern(greatest ?? "")
        resolved[latest] = token
        return (latest, token)
    }

    /// One past the last of `callbacks` (sorted by time) at or before `time`
    /// (binary search); nil when none is.
    private static func latestTokenCallbacks(_ callbacks: [(at: Int64, row: Int64)], at time: Int64) -> Int? {
        var low = 0
        var high = callbacks.count
        while low < high {
            let mid = (low + high) / 2
            if callbacks[mid].at <= time { low = mid + 1 } else { high = mid }
        }
        return low > 0 ? low : nil
    }

    /// Why the lost update `update` of `activity` was lost, given the
    /// activity's newest token at its accept time.
    private func lossCause(
        of update: Update, in activity: Activity, newest: (at: Int64, token: Int32)?
    ) -> LossCause {
        OutcomeRules.lossCause(
            acceptedAt: update.at, hasContentCallback: update.hasContentCallback,
            sentWithToken: update.token >= 0 && !tokens[Int(update.token)].text.isEmpty,
            newestTokenMatches: newest.map { $0.token == update.token },
            activityDismissedAt: activity.dismissedAt, lastEndedCallbackAt: activity.lastEndedCallbackAt,
            lastDeviceAt: activity.lastDeviceAt)
    }

    private mutating func decideOutcomes(
        pushToken: RowText, callbackToken: RowText, prefetch: LookupPrefetch
    ) throws {
        // Activity start and end from accepted start and end updates.
        for update in updates where update.accepted {
            let i = Int(update.activity)
            if update.isStart { activities[i].startedAt = min(activities[i].startedAt ?? update.at, update.at) }
            if update.isEnd { activities[i].endedAt = min(activities[i].endedAt ?? update.at, update.at) }
        }
        // Accepted updates of each activity in order of (accept time, seq).
        var order = updates.indices.filter { updates[$0].accepted }
        order.sort { a, b in
            let x = updates[a]
            let y = updates[b]
            if x.activity != y.activity { return x.activity < y.activity }
            if x.at != y.at { return x.at < y.at }
            return x.seq < y.seq
        }
        var lost: [Int] = []
        var priority10Times: [Int64] = []
        var start = 0
        while start < order.count {
            var end = start
            let activity = updates[order[start]].activity
            while end < order.count && updates[order[end]].activity == activity { end += 1 }
            let group = order[start..<end]
            // Later rendered: walk backwards.
            var laterRendered = [Bool](repeating: false, count: group.count)
            var seenRendered = false
            for (offset, index) in group.enumerated().reversed() {
                laterRendered[offset] = seenRendered
                if updates[index].firstRenderedAt != nil { seenRendered = true }
            }
            activities[Int(activity)].tokenCallbacks.sort { $0.at < $1.at }
            let bounds = activities[Int(activity)]
            var earlierMax: Int64?
            for (offset, index) in group.enumerated() {
                let u = updates[index]
                let outcome = OutcomeRules.outcome(
                    rendered: u.firstRenderedAt != nil, acceptedAt: u.at, isEnd: u.isEnd, apsTimestamp: u.apsTimestamp,
                    activityStartedAt: bounds.startedAt, activityEndedAt: bounds.endedAt,
                    activityDismissedAt: bounds.dismissedAt, earlierMaxTimestamp: earlierMax,
                    laterRendered: laterRendered[offset])
                updates[index].outcome = outcome
                if outcome == .lost { lost.append(index) }
                earlierMax = max(earlierMax ?? u.apsTimestamp, u.apsTimestamp)
            }
            countRecentPriority10(group, times: &priority10Times)
            start = end
        }
        try explainLosses(lost, pushToken: pushToken, callbackToken: callbackToken, prefetch: prefetch)
    }

    /// Sets ``Update/recentPriority10`` of the accepted priority-10 updates
    /// without a channel in `group` (one activity's accepted updates in
    /// order of accept time): the number of others accepted at or after an
    /// hour before each one's accept time and strictly before it. `times`
    /// is scratch space (their accept times so far, in order).
    private mutating func countRecentPriority10(_ group: ArraySlice<Int>, times: inout [Int64]) {
        times.removeAll(keepingCapacity: true)
        // `first`: the first time within the hour; `sameFrom`: where the run of times equal to the last began.
        var first = 0
        var sameFrom = 0
        for index in group where updates[index].priority == 10 && updates[index].channel < 0 {
            let at = updates[index].at
            while first < times.count && times[first] < at - Contract.priority10WindowMS { first += 1 }
            if times.last != at { sameFrom = times.count }
            updates[index].recentPriority10 = Int32(clamping: sameFrom - first)
            times.append(at)
        }
    }

    /// The token and loss cause of each lost update, in the order they were
    /// decided (by activity): the rows they read are named to `prefetch` first.
    private mutating func explainLosses(
        _ lost: [Int], pushToken: RowText, callbackToken: RowText, prefetch: LookupPrefetch
    ) throws {
        guard !lost.isEmpty else { return }
        var callbackRows: [Int64] = []
        for index in lost {
            let callbacks = activities[Int(updates[index].activity)].tokenCallbacks
            guard let low = Self.latestTokenCallbacks(callbacks, at: updates[index].at) else { continue }
            var at = low - 1
            while at >= 0 && callbacks[at].at == callbacks[low - 1].at {
                callbackRows.append(callbacks[at].row)
                at -= 1
            }
        }
        try prefetch(lost.map { updates[$0].pickRow }, callbackRows)
        var resolvedTokens: [Int64: Int32] = [:]
        var activity: Int32 = -1
        for index in lost {
            let u = updates[index]
            if u.activity != activity {
                activity = u.activity
                resolvedTokens = [:]
            }
            let bounds = activities[Int(activity)]
            updates[index].token = tokens.intern(try pushToken(u.pickRow))
            let newest = try newestToken(of: bounds, at: u.at, callbackToken: callbackToken, resolved: &resolvedTokens)
            if let newest { newestTokenOfLost[index] = newest }
            updates[index].lossCause = lossCause(of: updates[index], in: bounds, newest: newest)
        }
    }
}

/// Whether a request failed for its size (413, or APNs's `PayloadTooLarge`).
func isOversizeFailure(_ status: Int64, _ reason: String?) -> Bool {
    status == 413 || reason == "PayloadTooLarge"
}

/// The request tallies of one pass over every request: those of a window,
/// and, with `byDayAndHour`, every request's by UTC hour and day.
struct RequestTallies {
    private(set) var window = DeliveryAnalysis.RequestTally()
    private(set) var byHour: [Int64: DeliveryAnalysis.RequestTally] = [:]
    private(set) var byDay: [Int64: DeliveryAnalysis.RequestTally] = [:]
    private let from: Int64
    private let to: Int64
    private let byDayAndHour: Bool
    private var currentHour: Int64?
    private var currentHourTally = DeliveryAnalysis.RequestTally()

    init(window: ReportWindow?, byDayAndHour: Bool) {
        from = window?.from ?? Int64.min
        to = window?.to ?? Int64.max
        self.byDayAndHour = byDayAndHour
    }

    /// Counts one request; returns whether it was sent in the window.
    mutating func add(
        sentAt: Int64, status: Int64, reason: String?, payloadBytes: Int64?, attributed: Bool, hasSeq: Bool,
        toDeadToken: Bool, broadcast: Bool = false
    ) -> Bool {
        let inWindow = sentAt >= from && sentAt < to
        if inWindow {
            window.add(
                status: status, reason: reason, payloadBytes: payloadBytes, attributed: attributed, hasSeq: hasSeq,
                toDeadToken: toDeadToken, broadcast: broadcast)
        }
        if byDayAndHour {
            // Rows come roughly in time order: keep the current hour's tally at hand.
            let hour = utcHour(of: sentAt)
            if hour != currentHour {
                if let currentHour { byHour[currentHour] = currentHourTally }
                currentHour = hour
                currentHourTally = byHour.removeValue(forKey: hour) ?? DeliveryAnalysis.RequestTally()
            }
            currentHourTally.add(
                status: status, reason: reason, payloadBytes: payloadBytes, attributed: attributed, hasSeq: hasSeq,
                toDeadToken: toDeadToken, broadcast: broadcast)
        }
        return inWindow
    }

    /// Puts the hour at hand away and sums the hours into days; call once, after the last request.
    mutating func finish() {
        if let currentHour { byHour[currentHour] = currentHourTally }
        currentHour = nil
        for (hour, tally) in byHour {
            byDay[utcDay(of: hour * Milliseconds.hour), default: DeliveryAnalysis.RequestTally()].merge(tally)
        }
    }
}

/// An open-addressing index from (activity, seq) to a position in the
/// updates array: Swift's `Dictionary` spends most of its time in SipHash
/// here, and this key is two integers.
struct UpdateTable {
    /// A slot holds its key next to the index, so a probe reads one 16-byte
    /// slot instead of following the index to a ~100-byte update (a cache
    /// miss per probe on two million updates).
    private struct Slot {
        var index: Int32 = -1
        var activity: Int32 = 0
        var seq: Int64 = 0
    }

    private var slots: [Slot]
    private var count = 0

    /// An index that holds `capacity` updates without growing.
    init(capacity: Int = 0) {
        var size = 1 << 16
        while size < 2 * capacity { size <<= 1 }
        slots = [Slot](repeating: Slot(), count: size)
    }

    @inline(__always)
    /// Runs of 16 seqs of one activity sit side by side (4 cache lines), the
    /// runs scattered by a hash of the activity and the run: the renders and
    /// callbacks of one activity, which come one after another, find their
    /// updates in the same few lines instead of a miss each (the table of two
    /// million updates is 32 MB), and an activity with thousands of updates
    /// makes no long cluster for others to probe through.
    private static func hash(_ activity: Int32, _ seq: Int64) -> Int {
        let run = UInt64(bitPattern: seq >> 4)
        var h = run &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(UInt32(bitPattern: activity))
        h ^= h >> 31
        h = h &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 29
        return Int(truncatingIfNeeded: (h << 4) | UInt64(bitPattern: seq & 15))
    }

    func find(activity: Int32, seq: Int64, in updates: [DeliveryAnalysis.Update]) -> Int? {
        let mask = slots.count - 1
        var i = Self.hash(activity, seq) & mask
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let slot = slots[i]
                if slot.index < 0 { return nil }
                if slot.activity == activity && slot.seq == seq { return Int(slot.index) }
                i = (i + 1) & mask
            }
        }
    }

    /// Adds the update at `index` (its key must not be present yet).
    mutating func insert(_ index: Int, in updates: [DeliveryAnalysis.Update]) {
        if (count + 1) * 2 > slots.count { grow() }
        let u = updates[index]
        place(Slot(index: Int32(index), activity: u.activity, seq: u.seq))
        count += 1
    }

    private mutating func place(_ slot: Slot) {
        let mask = slots.count - 1
        var i = Self.hash(slot.activity, slot.seq) & mask
        while slots[i].index >= 0 { i = (i + 1) & mask }
        slots[i] = slot
    }

    private mutating func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(), count: old.count * 2)
        for slot in old where slot.index >= 0 { place(slot) }
    }
}

/// Numbers distinct strings (by code point) in order of first appearance.
package struct Interner {
    private var ids: [ExactString: Int32] = [:]
    private(set) var values: [ExactString] = []

    package subscript(id: Int) -> ExactString { values[id] }

    func id(of text: String) -> Int32? { ids[ExactString(text)] }

    mutating func intern(_ text: String) -> Int32 {
        let key = ExactString(text)
        if let id = ids[key] { return id }
        let id = Int32(values.count)
        ids[key] = id
        values.append(key)
        return id
    }
}

extension DeliveryAnalysis.RequestCluster {
    mutating func add(_ other: Self) {
        total += other.total
        accepted += other.accepted
        oversizeFailures += other.oversizeFailures
    }
}

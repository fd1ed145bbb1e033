import ArrivalModel
import ArrivalStore

/// The store's broadcasts (contract 3.0, Documentation/Outcomes.md,
/// "Broadcasts"): one record stands for one request per subscribed activity
/// that is open when it is sent. They are few records that stand for many
/// updates, so they are read once, before anything else, and expanded
/// inside each analysis (of everything, or of one partition) over its own
/// activities: a broadcast to 200,000 subscribers is never 200,000 rows,
/// in the store or in a partition's file.
struct Broadcasts: Sendable {
    struct Broadcast: Sendable {
        var rowID: Int64
        var sentAt: Int64
        var accepted: Bool
        var channel: Int32
        var seq: Int64?
        var isEnd: Bool
        var isStart: Bool
        var apsTimestamp: Int64
        var app: Int32
        var priority: Int64?
        var provider: UInt8
    }

    private(set) var all: [Broadcast] = []
    /// Channel ids by number, in order of first appearance among the broadcasts.
    private(set) var channels = Interner()
    /// Per channel, its broadcasts' indices in ``all``, by `sent_at` (then row id).
    private(set) var byChannel: [[Int32]] = []
    /// The seqs broadcasts carry: a render or `content_update` callback of
    /// an update that no direct request made may prove a broadcast's update,
    /// which exists only once the broadcasts are expanded.
    private(set) var seqs: Set<Int64> = []

    var isEmpty: Bool { all.isEmpty }

    init() {}

    /// Reads every broadcast of `snapshot`; their apps are numbered in `apps`.
    init(snapshot: any StoreSnapshot, apps: inout Interner) throws {
        try snapshot.forEachBroadcast { add($0, apps: &apps) }
        sortChannels()
    }

    /// These broadcasts (one activity's channels', for its story).
    init(_ rows: [BroadcastRow], apps: inout Interner) {
        for row in rows { add(row, apps: &apps) }
        sortChannels()
    }

    private mutating func add(_ row: BroadcastRow, apps: inout Interner) {
        let channel = channels.intern(row.channelID)
        if Int(channel) == byChannel.count { byChannel.append([]) }
        byChannel[Int(channel)].append(Int32(all.count))
        if let seq = row.seq { seqs.insert(seq) }
        all.append(
            Broadcast(
                rowID: row.rowID, sentAt: row.sentAt, accepted: row.status == 200, channel: channel, seq: row.seq,
                isEnd: row.event == "end", isStart: row.event == "start", apsTimestamp: row.apsTimestamp,
                app: apps.intern(Contract.app(ofTopic: row.topic)), priority: row.priority,
                provider: UInt8(truncatingIfNeeded: row.providerIndex)))
    }

    private mutating func sortChannels() {
        for channel in byChannel.indices {
            byChannel[channel].sort {
                let (a, b) = (all[Int($0)], all[Int($1)])
                return a.sentAt != b.sentAt ? a.sentAt < b.sentAt : a.rowID < b.rowID
            }
        }
    }

    /// The first position in `byChannel[channel]` whose broadcast was sent at or after `time`.
    func firstPosition(in channel: Int32, from time: Int64) -> Int {
        let list = byChannel[Int(channel)]
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if all[Int(list[mid])].sentAt < time { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// How many broadcasts of `window` stand for no activity, given which
    /// ones reached one (by index in ``all``).
    func withoutSubscribers(in window: ReportWindow?, reached: [Bool]) -> Int {
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max
        return all.indices.count {
            all[$0].sentAt >= from && all[$0].sentAt < to && !(reached.indices.contains($0) && reached[$0])
        }
    }
}

/// Finds the number of a render's or callback's channel id among the
/// broadcasts' channels by its bytes, comparing with the previous row's
/// first (the rows of one activity repeat their channel).
struct ChannelLookup {
    private var lastBytes: [UInt8] = []
    private var last: Int32?? = nil

    /// The channel `bytes` names, nil when no broadcast names it (or none is given).
    mutating func channel(_ bytes: UnsafeRawBufferPointer?, in broadcasts: Broadcasts) -> Int32? {
        guard let bytes else { return nil }
        if let last, bytes.elementsEqual(lastBytes) { return last }
        let found = broadcasts.channels.id(of: String(decoding: bytes, as: UTF8.self))
        lastBytes = Array(bytes)
        last = .some(found)
        return found
    }
}

/// An update's key, for evidence that came before its update existed.
struct UpdateKey: Hashable {
    var activity: Int32
    var seq: Int64
}

extension DeliveryAnalysis {
    /// Notes that `activity` follows `channel` (a render or callback named it).
    mutating func noteSubscription(activity: Int32, channel: Int32) {
        subscriptions.insert(UInt64(UInt32(bitPattern: activity)) << 32 | UInt64(UInt32(bitPattern: channel)))
    }

    /// Expands every broadcast over the subscribed activities open at its
    /// `sent_at`, by the start, end and dismissal computed without any
    /// broadcast (contract 3.0): each becomes a request of that activity's
    /// update, taken as any direct request is. Called once every row was
    /// considered, before outcomes are decided (which compute start and end
    /// again, over all updates).
    mutating func expandBroadcasts(apnsID: RowText, pushToken: RowText) throws {
        reachedBroadcasts = Array(repeating: false, count: broadcasts.all.count)
        guard !broadcasts.isEmpty, !subscriptions.isEmpty else { return }
        var startedAt = activities.map(\.startedAt)
        var endedAt = activities.map(\.endedAt)
        for update in updates where update.accepted {
            let i = Int(update.activity)
            if update.isStart { startedAt[i] = min(startedAt[i] ?? update.at, update.at) }
            if update.isEnd { endedAt[i] = min(endedAt[i] ?? update.at, update.at) }
        }
        // In order of activity, then channel: the same updates in any row order.
        for pair in subscriptions.sorted() {
            let activity = Int32(bitPattern: UInt32(truncatingIfNeeded: pair >> 32))
            let channel = Int32(bitPattern: UInt32(truncatingIfNeeded: pair))
            let i = Int(activity)
            guard let start = startedAt[i] else { continue }
            let latest = start + Contract.activityLifetimeMS
            // Open: start <= sent_at <= start + 8 h, and no end or dismissal at or before sent_at.
            let closedAt = min(endedAt[i] ?? Int64.max, activities[i].dismissedAt ?? Int64.max)
            let list = broadcasts.byChannel[Int(channel)]
            for position in broadcasts.firstPosition(in: channel, from: start)..<list.count {
                let index = Int(list[position])
                let b = broadcasts.all[index]
                if b.sentAt > latest || b.sentAt >= closedAt { break }
                reachedBroadcasts[index] = true
                guard let seq = b.seq else { continue }
                try considerBroadcast(
                    Update(
                        activity: activity, seq: seq, accepted: b.accepted, at: b.sentAt, apsTimestamp: b.apsTimestamp,
                        isEnd: b.isEnd, isStart: b.isStart, app: b.app, priority: b.priority, provider: b.provider,
                        channel: b.channel, pickRow: b.rowID),
                    apnsID: apnsID, pushToken: pushToken)
            }
        }
        pendingRenders = [:]
        pendingContentCallbacks = []
    }

    /// Takes a broadcast's request like ``consider(_:apnsID:pushToken:)``
    /// takes a direct one; the update keeps the renders and callbacks already
    /// matched to it, and a new one takes those that waited for it.
    private mutating func considerBroadcast(_ candidate: Update, apnsID: RowText, pushToken: RowText) throws {
        if let index = updateIndex.find(activity: candidate.activity, seq: candidate.seq, in: updates) {
            guard try precedes(candidate, updates[index], apnsID: apnsID, pushToken: pushToken) else { return }
            var taken = candidate
            taken.firstRenderedAt = updates[index].firstRenderedAt
            taken.hasContentCallback = updates[index].hasContentCallback
            updates[index] = taken
        } else {
            var taken = candidate
            let key = UpdateKey(activity: candidate.activity, seq: candidate.seq)
            taken.firstRenderedAt = pendingRenders[key]
            taken.hasContentCallback = pendingContentCallbacks.contains(key)
            updates.append(taken)
            updateIndex.insert(updates.count - 1, in: updates)
        }
    }
}

package import ArrivalModel
package import ArrivalStore

/// One activity's story, for `arrival activity ID`: every request, render
/// and callback in time order, and each update's outcome and loss cause
/// with the evidence that decided it.
///
/// The outcome rules read only an activity's own records (once a request
/// without an activity is attributed by its token), so the story is the
/// same analysis as the report's, run on this activity's records alone:
/// its outcomes are the report's.
package struct ActivityStory: Sendable {
    package struct UpdateLine: Sendable {
        package var seq: Int64
        package var event: String
        package var accepted: Bool
        /// Accept time, or the earliest request's sent_at when never accepted.
        package var at: Int64
        package var requests: Int
        package var outcome: Outcome?
        package var lossCause: LossCause?
        package var evidence: String
        /// The broadcast channel of its deciding request (nil: sent to a token).
        package var channel: String?
        /// For an accepted priority-10 update sent to a token, the other such
        /// updates accepted in the hour before (contract 3.1); nil otherwise.
        package var priority10LastHour: Int?
    }

    /// One record of the timeline.
    package struct Entry: Sendable {
        package enum Kind: String, Sendable { case request, render, callback }
        package var time: Int64
        package var kind: Kind
        package var seq: Int64?
        /// What happened, in a few words (status and reason, surface, callback and state).
        package var what: String
        /// Its fields by name, as stored (for `--format json`).
        package var fields: [(String, FieldValue)]
    }

    package enum FieldValue: Sendable {
        case text(String?)
        case number(Int64?)
        case flag(Bool)
    }

    package var activityID: String
    package var app: String?
    package var startedAt: Int64?
    package var endedAt: Int64?
    package var dismissedAt: Int64?
    package var lastDeviceAt: Int64?
    package var osVersion: String?
    package var appVersion: String?
    /// The user's "More Frequent Updates" switch, from the earliest evidence that says (contract 3.1).
    package var frequentPushes: String?
    package var updates: [UpdateLine] = []
    package var timeline: [Entry] = []

    package init(records: ActivityRecords) throws {
        activityID = records.activityID
        // The broadcasts to its channels, expanded over it as the report does (contract 3.0).
        var apps = Interner()
        let broadcasts = Broadcasts(records.broadcasts, apps: &apps)
        var analysis = DeliveryAnalysis(partitionNumberingAppsAs: apps, broadcasts: broadcasts)
        let activity = analysis.intern(activity: records.activityID)
        let apnsIDs = Dictionary(
            records.requests.map { ($0.rowID, $0.apnsID) } + records.broadcasts.map { ($0.rowID, $0.apnsID) },
            uniquingKeysWith: { a, _ in a })
        let tokens = Dictionary(records.requests.map { ($0.rowID, $0.pushToken) }, uniquingKeysWith: { a, _ in a })
        let callbackTokens = Dictionary(
            records.callbacks.map { ($0.rowID, $0.pushToken ?? "") }, uniquingKeysWith: { a, _ in a })
        var requestCount: [Int64: Int] = [:]
        for r in records.requests {
            guard let seq = r.seq else { continue }
            requestCount[seq, default: 0] += 1
            let provider = PushProvider.allCases.firstIndex { $0.rawValue == r.provider } ?? 0
            try analysis.consider(
                DeliveryAnalysis.Update(
                    activity: activity, seq: seq, accepted: r.status == 200, at: r.sentAt, apsTimestamp: r.apsTimestamp,
                    isEnd: r.event == "end", isStart: r.event == "start", app: analysis.app(ofTopic: r.topic),
                    priority: r.priority, provider: UInt8(provider), pickRow: r.rowID),
                apnsID: { apnsIDs[$0] ?? "" }, pushToken: { tokens[$0] ?? "" })
        }
        for channel in Set(records.renders.compactMap(\.channelID) + records.callbacks.compactMap(\.channelID)) {
            if let number = broadcasts.channels.id(of: channel) {
                analysis.noteSubscription(activity: activity, channel: number)
            }
        }
        for r in records.renders {
            analysis.considerRender(
                activity: activity, seq: r.seq, at: r.renderedAt, os: { r.osVersion }, appVersion: { r.appVersion },
                frequentPushes: { r.frequentPushes }, device: { r.deviceID }, subscribed: r.channelID != nil)
        }
        for c in records.callbacks {
            analysis.considerCallback(
                activity: activity, kind: DeliveryAnalysis.CallbackKind(c.callback, state: c.state), seq: c.seq,
                at: c.receivedAt, row: c.rowID, os: { c.osVersion }, appVersion: { c.appVersion },
                frequentPushes: { c.frequentPushes }, device: { c.deviceID }, subscribed: c.channelID != nil)
        }
        try analysis.finish(
            apnsID: { apnsIDs[$0] ?? "" }, pushToken: { tokens[$0] ?? "" }, callbackToken: { callbackTokens[$0] ?? "" })
        // The broadcasts that stood for a request of it.
        let reached = records.broadcasts.indices.filter { analysis.reachedBroadcasts[$0] }.map {
            records.broadcasts[$0]
        }
        for b in reached { if let seq = b.seq { requestCount[seq, default: 0] += 1 } }

        let bounds = analysis.activities[Int(activity)]
        startedAt = bounds.startedAt
        endedAt = bounds.endedAt
        dismissedAt = bounds.dismissedAt
        lastDeviceAt = bounds.lastDeviceAt
        osVersion = bounds.os?.value
        appVersion = bounds.appVersion?.value
        frequentPushes = bounds.frequentPushes?.value
        let all = Array(analysis.updates.indices)
        let ordered = all.sorted {
            (analysis.updates[$0].at, analysis.updates[$0].seq) < (analysis.updates[$1].at, analysis.updates[$1].seq)
        }
        app = ordered.first.map { analysis.apps[Int(analysis.updates[$0].app)].text }
        for index in ordered {
            let u = analysis.updates[index]
            updates.append(
                UpdateLine(
                    seq: u.seq, event: u.isEnd ? "end" : u.isStart ? "start" : "update", accepted: u.accepted, at: u.at,
                    requests: requestCount[u.seq] ?? 0, outcome: u.outcome, lossCause: u.lossCause,
                    evidence: analysis.evidence(ofUpdate: index, siblings: all),
                    channel: u.channel < 0 ? nil : broadcasts.channels[Int(u.channel)].text,
                    priority10LastHour: u.recentPriority10 >= 0 ? Int(u.recentPriority10) : nil))
        }
        timeline = Self.entries(records, broadcasts: reached)
    }

    /// Every record as a timeline entry, in time order (ties: requests,
    /// then renders, then callbacks, each in row order).
    private static func entries(_ records: ActivityRecords, broadcasts: [BroadcastRow]) -> [Entry] {
        var entries: [(Entry, Int, Int64)] = []
        for r in broadcasts {
            var what = r.status == 200 ? "accepted (200)" : r.status == 0 ? "no response" : "HTTP \(r.status)"
            if let reason = r.reason, !reason.isEmpty { what += " " + reason }
            what += " · \(r.event ?? "update") · broadcast to channel \(r.channelID)"
            let provider = PushProvider.allCases[min(r.providerIndex, PushProvider.allCases.count - 1)].rawValue
            entries.append(
                (
                    Entry(
                        time: r.sentAt, kind: .request, seq: r.seq, what: what,
                        fields: [
                            ("apns_id", .text(r.apnsID)), ("status", .number(r.status)), ("reason", .text(r.reason)),
                            ("push_token", .text(nil)), ("attributed_by_token", .flag(false)),
                            ("event", .text(r.event ?? "update")), ("aps_timestamp", .number(r.apsTimestamp)),
                            ("payload_bytes", .number(r.payloadBytes)), ("topic", .text(r.topic)),
                            ("priority", .number(r.priority)), ("provider", .text(provider)),
                            ("channel_id", .text(r.channelID)),
                        ]), 0, r.rowID
                ))
        }
        for r in records.requests {
            var what = r.status == 200 ? "accepted (200)" : r.status == 0 ? "no response" : "HTTP \(r.status)"
            if let reason = r.reason, !reason.isEmpty { what += " " + reason }
            what += " · \(r.event ?? "update")"
            if r.provider != "apns" { what += " via \(r.provider)" }
            what += " · token \(DeliveryAnalysis.short(r.pushToken))"
            if r.attributedByToken { what += " (activity from its token)" }
            entries.append(
                (
                    Entry(
                        time: r.sentAt, kind: .request, seq: r.seq, what: what,
                        fields: [
                            ("apns_id", .text(r.apnsID)), ("status", .number(r.status)), ("reason", .text(r.reason)),
                            ("push_token", .text(r.pushToken)), ("attributed_by_token", .flag(r.attributedByToken)),
                            ("event", .text(r.event ?? "update")), ("aps_timestamp", .number(r.apsTimestamp)),
                            ("payload_bytes", .number(r.payloadBytes)), ("topic", .text(r.topic)),
                            ("priority", .number(r.priority)), ("provider", .text(r.provider)),
                            ("channel_id", .text(nil)),
                        ]), 0, r.rowID
                ))
        }
        for r in records.renders {
            entries.append(
                (
                    Entry(
                        time: r.renderedAt, kind: .render, seq: r.seq,
                        what: "rendered" + (r.surface.map { " on \($0)" } ?? ""),
                        fields: [
                            ("surface", .text(r.surface)), ("device_id", .text(r.deviceID)),
                            ("os_version", .text(r.osVersion)), ("app_version", .text(r.appVersion)),
                            ("channel_id", .text(r.channelID)), ("frequent_pushes", .text(r.frequentPushes)),
                        ]), 1, r.rowID
                ))
        }
        for c in records.callbacks {
            var what = c.callback
            if c.callback == "activity_state", let state = c.state { what += " " + state }
            if let token = c.pushToken { what += " " + DeliveryAnalysis.short(token) }
            entries.append(
                (
                    Entry(
                        time: c.receivedAt, kind: .callback, seq: c.seq, what: what,
                        fields: [
                            ("callback", .text(c.callback)),
                            ("state", .text(c.callback == "activity_state" ? c.state : nil)),
                            ("push_token", .text(c.pushToken)), ("device_id", .text(c.deviceID)),
                            ("os_version", .text(c.osVersion)), ("app_version", .text(c.appVersion)),
                            ("channel_id", .text(c.channelID)), ("frequent_pushes", .text(c.frequentPushes)),
                        ]), 2, c.rowID
                ))
        }
        return entries.sorted { ($0.0.time, $0.1, $0.2) < ($1.0.time, $1.1, $1.2) }.map(\.0)
    }
}

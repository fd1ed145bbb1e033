package import ArrivalModel
import ArrivalStore

/// One lost update of `arrival lost`: where it went, when, and why it was lost.
package struct LostUpdate: Sendable, Equatable {
    package var activityID: String
    package var seq: Int64
    package var app: String
    package var provider: String
    package var acceptedAt: Int64
    package var cause: LossCause
    /// The push token of its deciding request (empty when a broadcast decided it).
    package var pushToken: String
    package var evidence: String
    /// The broadcast channel of its deciding request (contract 3.0); nil when it was sent to a token.
    package var channel: String? = nil
    /// For an accepted priority-10 update sent to a token: the other such
    /// updates its activity had accepted in the hour before (contract 3.1,
    /// evidence for Apple's budget); nil for any other update.
    package var priority10LastHour: Int? = nil
}

extension ReportBuilder {
    /// The lost updates accepted in `window` (all without one), those of
    /// `causes` and `apps` only when given, in order of accept time, then
    /// activity id (code points), then seq. The same analysis as the
    /// report's, so that their count by cause is the report's
    /// `updates.lost_by_cause` for the same window. `channels`: only updates
    /// a broadcast to one of these channels decided. `devices`: only updates of
    /// activities whose device (contract 3.2, as the report's `outliers`) is one of these.
    package func lostUpdates(
        window: ReportWindow?, causes: Set<LossCause>? = nil, apps: Set<String>? = nil, channels: Set<String>? = nil,
        devices: Set<String>? = nil
    ) throws -> [LostUpdate] {
        // Compared by code points, as the report names devices (a `String` compares canonical equivalence).
        let devices = devices.map { Set($0.map { ExactString($0) }) }
        func collect(_ analysis: DeliveryAnalysis) -> [LostUpdate] {
            var found: [LostUpdate] = []
            for index in analysis.updateIndices(in: window) {
                let u = analysis.updates[index]
                guard u.outcome == .lost, let cause = u.lossCause else { continue }
                if let causes, !causes.contains(cause) { continue }
                let app = analysis.apps[Int(u.app)].text
                if let apps, !apps.contains(app) { continue }
                let channel = u.channel < 0 ? nil : analysis.broadcasts.channels[Int(u.channel)].text
                if let channels, !(channel.map { channels.contains($0) } ?? false) { continue }
                if let devices,
                    !(analysis.activities[Int(u.activity)].device.map { devices.contains(ExactString($0.value)) }
                        ?? false)
                {
                    continue
                }
                found.append(
                    LostUpdate(
                        activityID: analysis.activityNames[Int(u.activity)].text, seq: u.seq, app: app,
                        provider: PushProvider.allCases[Int(u.provider)].rawValue, acceptedAt: u.at, cause: cause,
                        pushToken: u.token >= 0 ? analysis.tokens[Int(u.token)].text : "",
                        evidence: analysis.evidence(ofUpdate: index), channel: channel,
                        priority10LastHour: u.recentPriority10 >= 0 ? Int(u.recentPriority10) : nil))
            }
            return found
        }
        let all = try collected(window: window, collect)
        return all.sorted {
            if $0.acceptedAt != $1.acceptedAt { return $0.acceptedAt < $1.acceptedAt }
            if !$0.activityID.utf8.elementsEqual($1.activityID.utf8) {
                return codePointOrder($0.activityID, $1.activityID)
            }
            return $0.seq < $1.seq
        }
    }
}

extension ReportBuilder {
    /// What `collect` finds in the report's analysis of `window`: of the
    /// whole store at once, or of each partition of a large one (their
    /// activities are disjoint), concatenated in no particular order.
    func collected<Found>(
        window: ReportWindow?, _ collect: (DeliveryAnalysis) -> [Found]
    ) throws -> [Found] {
        var all: [Found] = []
        try store.read { snapshot in
            let partitionCount = partitioning.count(requests: try snapshot.analysisRowEstimate())
            if partitionCount > 1 {
                let partitions = try AnalysisPartitions(
                    snapshot: snapshot, window: window, count: partitionCount, tallyByDayAndHour: false,
                    samplingRequests: false)
                defer { partitions.close() }
                try partitions.forEach { _, analysis in
                    collect(analysis)
                } combine: {
                    all += $0
                }
            } else {
                all = collect(try DeliveryAnalysis(snapshot: snapshot, window: window))
            }
        }
        return all
    }
}

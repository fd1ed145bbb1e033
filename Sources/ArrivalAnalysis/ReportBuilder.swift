import ArrivalModel
import ArrivalStore

/// Computes the report of a window (Documentation/Outcomes.md). Outcomes
/// are decided over all stored data; the window only chooses which requests
/// and updates are counted.
public struct ReportBuilder {
    private let store: Store

    public init(store: Store) {
        self.store = store
    }

    public func build(window: ReportWindow?) throws -> Report {
        try build(window: window, sampling: false).report
    }

    /// The report, and with `sampling` the per-activity sums of its rates
    /// (for significance tests), with the analysis it came from.
    package func build(window: ReportWindow?, sampling: Bool) throws -> (
        report: Report, samples: ActivitySamples?, analysis: DeliveryAnalysis
    ) {
        // One read transaction: a consistent snapshot even while an ingest commits.
        try store.read { snapshot in
            try build(snapshot: snapshot, window: window, sampling: sampling)
        }
    }

    private func build(
        snapshot: StoreSnapshot, window: ReportWindow?, sampling: Bool
    ) throws -> (report: Report, samples: ActivitySamples?, analysis: DeliveryAnalysis) {
        let analysis = try DeliveryAnalysis(snapshot: snapshot, window: window, samplingRequests: sampling)
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max
        var report = Self.report(
            of: analysis, keys: BreakdownKeys(analysis), window: window, requests: analysis.requests,
            updates: analysis.updates.indices.lazy.filter {
                analysis.updates[$0].at >= from && analysis.updates[$0].at < to
            })
        Self.apply(try snapshot.storeWideQuality(), to: &report)
        return (report, sampling ? Self.samples(of: analysis, window: window) : nil, analysis)
    }

    /// Per-activity sums of every rate of the window: activities are the
    /// sampling unit of ``Significance`` (updates of one activity are not
    /// independent). Requests without an activity are clusters of one.
    static func samples(of analysis: DeliveryAnalysis, window: ReportWindow?) -> ActivitySamples {
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max
        var perActivity = Array(repeating: UpdateCounts(), count: analysis.activities.count)
        var contentReceived = Array(repeating: 0, count: analysis.activities.count)
        for update in analysis.updates where update.at >= from && update.at < to {
            let activity = Int(update.activity)
            perActivity[activity].count(update)
            if update.outcome == .rendered, update.firstRenderedAt != nil, update.hasContentCallback {
                contentReceived[activity] += 1
            }
        }
        var samples = ActivitySamples()
        for (index, counts) in perActivity.enumerated() {
            samples.add(.arrivalRate, counts.rendered, of: counts.deliverable)
            samples.add(.effectiveArrivalRate, counts.rendered + counts.superseded, of: counts.deliverable)
            samples.add(.staleShare, counts.staleTimestamp, of: counts.accepted)
            samples.add(.callbackLossRate, counts.rendered - contentReceived[index], of: counts.rendered)
            if counts.rendered > 0 {
                samples.add(.tokenCallbackLossRate, analysis.activities[index].hasTokenCallback ? 0 : 1, of: 1)
            }
        }
        for cluster in analysis.requestClusters.values.map({ $0 }) + analysis.unattributedClusters {
            samples.add(.acceptanceRate, cluster.accepted, of: cluster.total)
            samples.add(.oversizeShare, cluster.oversizeFailures, of: cluster.total)
        }
        return samples
    }

    /// The breakdown key of every activity's OS and app version and of every
    /// update's priority, numbered once per analysis so that a report of
    /// each of several windows does not hash strings per update.
    struct BreakdownKeys {
        var osOfActivity: [Int32] = []
        var appVersionOfActivity: [Int32] = []
        var versions = Interner()

        init(_ analysis: DeliveryAnalysis) {
            let unknown = versions.intern("unknown")
            osOfActivity.reserveCapacity(analysis.activities.count)
            appVersionOfActivity.reserveCapacity(analysis.activities.count)
            for activity in analysis.activities {
                osOfActivity.append(activity.os.map { versions.intern($0.value) } ?? unknown)
                appVersionOfActivity.append(activity.appVersion.map { versions.intern($0.value) } ?? unknown)
            }
        }
    }

    /// The report of `window` from an analysis: `requests` is the tally of
    /// the window's requests, `updates` the indices of its updates. Leaves
    /// the store-wide data-quality counts at zero.
    static func report(
        of analysis: DeliveryAnalysis, keys: BreakdownKeys, window: ReportWindow?,
        requests tally: DeliveryAnalysis.RequestTally, updates: some Sequence<Int>
    ) -> Report {
        var report = Report(window: window)
        report.requests.total = tally.total
        report.requests.accepted = tally.accepted
        report.requests.rejected = tally.total - tally.accepted
        report.requests.byReason = tally.byReason
        report.requests.oversizeFailures = tally.oversizeFailures
        report.requests.oversizeRisk = tally.oversizeRisk
        report.dataQuality.unattributed = tally.unattributed
        report.dataQuality.apnsWithoutSeq = tally.withoutSeq

        var byApp: [Int32: UpdateCounts] = [:]
        var byPriority: [Int64?: UpdateCounts] = [:]
        var byProvider = [UpdateCounts](repeating: UpdateCounts(), count: PushProvider.allCases.count)
        var byOS: [Int32: UpdateCounts] = [:]
        var byAppVersion: [Int32: UpdateCounts] = [:]
        var latencies: [Int64] = []
        var renderedActivities = Set<Int32>()
        for index in updates {
            let update = analysis.updates[index]
            let activity = Int(update.activity)
            report.updates.count(update)
            byApp[update.app, default: UpdateCounts()].count(update)
            byPriority[update.priority, default: UpdateCounts()].count(update)
            byProvider[Int(update.provider)].count(update)
            byOS[keys.osOfActivity[activity], default: UpdateCounts()].count(update)
            byAppVersion[keys.appVersionOfActivity[activity], default: UpdateCounts()].count(update)
            guard update.outcome == .rendered, let rendered = update.firstRenderedAt else { continue }
            report.callbacks.contentUpdateExpected += 1
            if update.hasContentCallback { report.callbacks.contentUpdateReceived += 1 }
            renderedActivities.insert(update.activity)
            let latency = rendered - update.at
            if latency < 0 { report.dataQuality.clockSkewNegative += 1 }
            latencies.append(max(0, latency))
        }
        report.callbacks.tokenExpected = renderedActivities.count
        report.callbacks.tokenReceived =
            renderedActivities.filter { analysis.activities[Int($0)].hasTokenCallback }.count
        report.breakdowns["app"] = Dictionary(
            uniqueKeysWithValues: byApp.map { (analysis.apps[Int($0.key)], $0.value) })
        report.breakdowns["priority"] = Dictionary(
            uniqueKeysWithValues: byPriority.map {
                (ExactString($0.key.map { String($0) } ?? "unknown"), $0.value)
            })
        report.breakdowns["provider"] = Dictionary(
            uniqueKeysWithValues: zip(PushProvider.allCases, byProvider).filter { $0.1.sent > 0 }.map {
                (ExactString($0.0.rawValue), $0.1)
            })
        report.breakdowns["os_version"] = Dictionary(
            uniqueKeysWithValues: byOS.map { (keys.versions[Int($0.key)], $0.value) })
        report.breakdowns["app_version"] = Dictionary(
            uniqueKeysWithValues: byAppVersion.map { (keys.versions[Int($0.key)], $0.value) })

        latencies.sort()
        report.latency = Report.Latency(
            count: latencies.count,
            p50: nearestRank(latencies, percent: 50),
            p90: nearestRank(latencies, percent: 90),
            p99: nearestRank(latencies, percent: 99))
        return report
    }

    /// Sets the data-quality counts that cover everything ingested, whatever the window.
    static func apply(_ quality: StoreSnapshot.StoreWideQuality, to report: inout Report) {
        report.dataQuality.malformedByCause = quality.malformedByCause
        report.dataQuality.duplicateRecords = quality.duplicateRecords
        report.dataQuality.filesSkippedAsDuplicate = quality.filesSkippedAsDuplicate
    }
}

extension UpdateCounts {
    mutating func count(_ update: DeliveryAnalysis.Update) {
        sent += 1
        guard update.accepted, let outcome = update.outcome else { return }
        accepted += 1
        self[outcome] += 1
    }
}

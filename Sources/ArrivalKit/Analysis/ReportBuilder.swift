/// Computes the report of a window (contract sections 3 and 4). Outcomes
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
    /// (for significance tests) and the analysis it came from.
    func build(window: ReportWindow?, sampling: Bool) throws -> (report: Report, samples: ActivitySamples?, analysis: DeliveryAnalysis) {
        let connection = store.connection
        var report = Report(window: window)
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max

        // One read transaction: a consistent snapshot even while an ingest commits.
        try connection.execute("BEGIN")
        defer { try? connection.execute("ROLLBACK") }
        let analysis = try DeliveryAnalysis(connection: connection, window: window, samplingRequests: sampling)
        var perActivity: [UpdateCounts] = sampling ? Array(repeating: UpdateCounts(), count: analysis.activities.count) : []
        var contentReceived: [Int] = sampling ? Array(repeating: 0, count: analysis.activities.count) : []

        let tally = analysis.requests
        report.requests.total = tally.total
        report.requests.accepted = tally.accepted
        report.requests.rejected = tally.total - tally.accepted
        report.requests.byReason = tally.byReason
        report.requests.oversizeFailures = tally.oversizeFailures
        report.requests.oversizeRisk = tally.oversizeRisk
        report.dataQuality.unattributed = tally.unattributed
        report.dataQuality.apnsWithoutSeq = tally.withoutSeq

        var byApp: [Int32: UpdateCounts] = [:]
        var byPriority: [ExactString: UpdateCounts] = [:]
        var byOS: [ExactString: UpdateCounts] = [:]
        var byAppVersion: [ExactString: UpdateCounts] = [:]
        var latencies: [Int64] = []
        var renderedActivities = Set<Int32>()
        for update in analysis.updates where update.at >= from && update.at < to {
            let activity = analysis.activities[Int(update.activity)]
            report.updates.count(update)
            if sampling { perActivity[Int(update.activity)].count(update) }
            byApp[update.app, default: UpdateCounts()].count(update)
            byPriority[ExactString(update.priority.map { String($0) } ?? "unknown"), default: UpdateCounts()].count(update)
            byOS[ExactString(activity.os?.value ?? "unknown"), default: UpdateCounts()].count(update)
            byAppVersion[ExactString(activity.appVersion?.value ?? "unknown"), default: UpdateCounts()].count(update)
            guard update.outcome == .rendered, let rendered = update.firstRenderedAt else { continue }
            report.callbacks.contentUpdateExpected += 1
            if update.hasContentCallback {
                report.callbacks.contentUpdateReceived += 1
                if sampling { contentReceived[Int(update.activity)] += 1 }
            }
            renderedActivities.insert(update.activity)
            let latency = rendered - update.at
            if latency < 0 { report.dataQuality.clockSkewNegative += 1 }
            latencies.append(max(0, latency))
        }
        report.callbacks.tokenExpected = renderedActivities.count
        report.callbacks.tokenReceived = renderedActivities.filter { analysis.activities[Int($0)].hasTokenCallback }.count
        report.breakdowns["app"] = Dictionary(uniqueKeysWithValues: byApp.map { (analysis.apps[Int($0.key)], $0.value) })
        report.breakdowns["priority"] = byPriority
        report.breakdowns["os_version"] = byOS
        report.breakdowns["app_version"] = byAppVersion

        latencies.sort()
        report.latency = Report.Latency(
            count: latencies.count,
            p50: nearestRank(latencies, percent: 50),
            p90: nearestRank(latencies, percent: 90),
            p99: nearestRank(latencies, percent: 99))

        // Data quality over everything ingested, whatever the window.
        let malformed = try connection.prepare("SELECT cause, count(*) FROM malformed_lines GROUP BY cause")
        try malformed.forEach { row in
            report.dataQuality.malformedByCause[ExactString(row.string(0) ?? ""), default: 0] += Int(row.int(1))
        }
        let files = try connection.prepare("""
            SELECT (SELECT coalesce(sum(duplicate_count), 0) FROM files), (SELECT count(*) FROM skipped_files)
            """)
        try files.forEach { row in
            report.dataQuality.duplicateRecords = Int(row.int(0))
            report.dataQuality.filesSkippedAsDuplicate = Int(row.int(1))
        }
        guard sampling else { return (report, nil, analysis) }
        var samples = ActivitySamples()
        for (index, counts) in perActivity.enumerated() {
            let deliverable = counts.rendered + counts.superseded + counts.lost
            samples.add("updates.arrival_rate", counts.rendered, of: deliverable)
            samples.add("updates.effective_arrival_rate", counts.rendered + counts.superseded, of: deliverable)
            samples.add("updates.stale_share", counts.staleTimestamp, of: counts.accepted)
            samples.add("callbacks.callback_loss_rate", counts.rendered - contentReceived[index], of: counts.rendered)
            if counts.rendered > 0 {
                samples.add("callbacks.token_callback_loss_rate", analysis.activities[index].hasTokenCallback ? 0 : 1, of: 1)
            }
        }
        let requestClusters = analysis.requestClusters.values.map { $0 } + analysis.unattributedClusters
        for cluster in requestClusters {
            samples.add("requests.acceptance_rate", cluster.accepted, of: cluster.total)
            samples.add("requests.oversize_share", cluster.oversizeFailures, of: cluster.total)
        }
        return (report, samples, analysis)
    }
}

extension UpdateCounts {
    mutating func count(_ update: DeliveryAnalysis.Update) {
        sent += 1
        guard update.accepted, let outcome = update.outcome else { return }
        accepted += 1
        switch outcome {
        case .rendered: rendered += 1
        case .ended: ended += 1
        case .expired: expired += 1
        case .staleTimestamp: staleTimestamp += 1
        case .superseded: superseded += 1
        case .lost: lost += 1
        }
    }
}

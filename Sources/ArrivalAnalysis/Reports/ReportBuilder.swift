package import ArrivalModel
package import ArrivalStore

/// Computes the report of a window (Documentation/Outcomes.md). Outcomes
/// are decided over all stored data; the window only chooses which requests
/// and updates are counted.
package struct ReportBuilder {
    let store: any StoreReader

    package init(store: any StoreReader) {
        self.store = store
    }

    package func build(window: ReportWindow?) throws -> Report {
        try build(window: window, sampling: false).report
    }

    /// The report, and with `sampling` the per-activity sums of its rates
    /// (for significance tests), with the analysis it came from.
    package func build(window: ReportWindow?, sampling: Bool) throws -> (
        report: Report, samples: ActivitySamples?, analysis: DeliveryAnalysis?
    ) {
        // One read transaction: a consistent snapshot even while an ingest commits.
        try store.read { snapshot in
            try build(snapshot: snapshot, window: window, sampling: sampling)
        }
    }

    /// When the analysis goes in partitions (tests make them small).
    package var partitioning = PartitionPolicy.standard

    /// The report of a snapshot: from one analysis of everything, or, for a
    /// store of more than ``PartitionPolicy/analysedWholeUpTo`` requests, from one analysis
    /// per partition of the activities (``AnalysisPartitions``), whose
    /// counts add up to the same report. The analysis is returned only in
    /// the first case.
    private func build(
        snapshot: any StoreSnapshot, window: ReportWindow?, sampling: Bool
    ) throws -> (report: Report, samples: ActivitySamples?, analysis: DeliveryAnalysis?) {
        // Apple's numbers (issue 54) are set beside arrival's figures of each day they cover: those days
        // are counted apart too, and requests tallied by day.
        let apple = try snapshot.appleMetrics(from: window?.from, to: window?.to)
        let appleDays = Report.Apple.days(of: apple, in: window)
        let dayNumbers = Set(appleDays.map { utcDay(of: $0) })
        // What the report counts of one analysis (of everything, or of one partition).
        func part(_ analysis: DeliveryAnalysis) -> Part {
            let keys = BreakdownKeys(analysis)
            return Part(
                summary: UpdateSummary(of: analysis, keys: keys, updates: analysis.updateIndices(in: window)),
                samples: sampling ? Self.samples(of: analysis, window: window) : nil,
                days: UpdateSummary.byDay(of: analysis, keys: keys, days: dayNumbers))
        }
        func finish(
            _ whole: Part, requests: DeliveryAnalysis.RequestTally, byDay: [Int64: DeliveryAnalysis.RequestTally]
        )
            throws -> Report
        {
            let storeWide = try snapshot.storeWideQuality()
            var report = try whole.summary.report(window: window, requests: requests)
            Self.apply(storeWide, to: &report)
            report.apple = try Report.Apple.make(apple, days: appleDays) { day in
                var report = try UpdateSummary.report(ofDay: utcDay(of: day), whole.days, byDay)
                Self.apply(storeWide, to: &report)
                return report
            }
            return report
        }
        let partitionCount = partitioning.count(requests: try snapshot.analysisRowEstimate())
        guard partitionCount > 1 else {
            let analysis = try DeliveryAnalysis(
                snapshot: snapshot, window: window, tallyByDayAndHour: !dayNumbers.isEmpty, samplingRequests: sampling)
            let whole = part(analysis)
            return (
                try finish(whole, requests: analysis.requests, byDay: analysis.requestsByDay), whole.samples, analysis
            )
        }
        let partitions = try AnalysisPartitions(
            snapshot: snapshot, window: window, count: partitionCount, tallyByDayAndHour: !dayNumbers.isEmpty,
            samplingRequests: sampling)
        defer { partitions.close() }
        var whole = Part(summary: UpdateSummary(), samples: ActivitySamples(), days: [:])
        try partitions.forEach { _, analysis in
            part(analysis)
        } combine: { part in
            whole.merge(part)
        }
        if sampling, partitions.unattributedClusters.accepted.clusters > 0 {
            whole.samples?.merge(.acceptanceRate, partitions.unattributedClusters.accepted)
            whole.samples?.merge(.oversizeShare, partitions.unattributedClusters.oversize)
        }
        let report = try finish(whole, requests: partitions.requests, byDay: partitions.requestsByDay)
        return (report, sampling ? whole.samples : nil, nil)
    }

    /// What one analysis (of everything, or of a partition) counts for a report, in sums over partitions.
    private struct Part {
        var summary: UpdateSummary
        var samples: ActivitySamples?
        /// Per day (``utcDay(of:)``) asked for, the day's updates.
        var days: [Int64: UpdateSummary]

        mutating func merge(_ other: Part) {
            summary.merge(other.summary)
            if let partSamples = other.samples { samples?.merge(partSamples) }
            for (day, summary) in other.days { days[day, default: UpdateSummary()].merge(summary) }
        }
    }

    /// Per-activity sums of every rate of the window: activities are the
    /// sampling unit of ``Significance`` (updates of one activity are not
    /// independent). Requests without an activity are clusters of one.
    static func samples(of analysis: DeliveryAnalysis, window: ReportWindow?) -> ActivitySamples {
        var perActivity = Array(repeating: UpdateCounts(), count: analysis.activities.count)
        var contentReceived = Array(repeating: 0, count: analysis.activities.count)
        for index in analysis.updateIndices(in: window) {
            let update = analysis.updates[index]
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
            if counts.rendered > 0 && !analysis.activities[index].subscribed {
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
        /// The "More Frequent Updates" switch of each activity (contract 3.1).
        var frequentPushesOfActivity: [Int32] = []
        /// Each activity's device (contract 3.2), numbered in ``devices``; -1: none.
        var deviceOfActivity: [Int32] = []
        var versions = Interner()
        var devices = Interner()

        init(_ analysis: DeliveryAnalysis) {
            let unknown = versions.intern("unknown")
            osOfActivity.reserveCapacity(analysis.activities.count)
            appVersionOfActivity.reserveCapacity(analysis.activities.count)
            frequentPushesOfActivity.reserveCapacity(analysis.activities.count)
            deviceOfActivity.reserveCapacity(analysis.activities.count)
            for activity in analysis.activities {
                deviceOfActivity.append(activity.device.map { devices.intern($0.value) } ?? -1)
                osOfActivity.append(activity.os.map { versions.intern($0.value) } ?? unknown)
                appVersionOfActivity.append(activity.appVersion.map { versions.intern($0.value) } ?? unknown)
                frequentPushesOfActivity.append(activity.frequentPushes.map { versions.intern($0.value) } ?? unknown)
            }
        }
    }

    /// The report of `window` from an analysis: `requests` is the tally of
    /// the window's requests, `updates` the indices of its updates. Leaves
    /// the store-wide data-quality counts at zero.
    static func report(
        of analysis: DeliveryAnalysis, keys: BreakdownKeys, window: ReportWindow?,
        requests tally: DeliveryAnalysis.RequestTally, updates: some Sequence<Int>
    ) throws -> Report {
        try UpdateSummary(of: analysis, keys: keys, updates: updates).report(window: window, requests: tally)
    }

    /// Sets the data-quality counts that cover everything ingested, whatever the window.
    static func apply(_ quality: StoreWideQuality, to report: inout Report) {
        report.dataQuality.malformedByCause = quality.malformedByCause
        report.dataQuality.duplicateRecords = quality.duplicateRecords
        report.dataQuality.filesSkippedAsDuplicate = quality.filesSkippedAsDuplicate
    }
}

/// What a report counts of a set of updates, in sums that add up over
/// disjoint sets (the partitions of an analysis): outcome counts, their
/// breakdowns by key text, the render latencies as a count per value (so
/// the percentiles of the sum are exact), the callback counts.
struct UpdateSummary {
    var updates = UpdateCounts()
    var breakdowns: [String: [ExactString: UpdateCounts]] = [:]
    var latencies: [Int64: Int] = [:]
    /// Push-to-start (contract 3.0); its token latencies as a count per value, like `latencies`.
    var starts = Report.Starts()
    var tokenLatencies: [Int64: Int] = [:]
    var contentExpected = 0
    var contentReceived = 0
    var tokenExpected = 0
    var tokenReceived = 0
    var clockSkewNegative = 0
    /// The store's broadcasts, and which reached an activity (of any
    /// analysis summed in: each partition's activities are its own).
    var broadcasts = Broadcasts()
    var reachedBroadcasts: [Bool] = []
    /// Per channel (by number): render latencies as counts per value, and the
    /// activities with an update of it, for ``Report/channels``. Activities
    /// are counted within one analysis (numbers are an analysis' own) and
    /// summed across partitions, whose activities are disjoint.
    var channelLatencies: [Int32: [Int64: Int]] = [:]
    var channelSubscribers: [Int32: Int] = [:]
    /// Each device's counter pair and its `updates` blocks' log (contract 3.2: `outliers`),
    /// summed across partitions.
    var devices = DeviceTally()
    /// Whether ``devices`` were counted: not for the days of a page's trend,
    /// whose reports show no outliers (a block per device and day is what the
    /// page's memory would grow by); their reports then have none.
    var countsDevices = true

    init() {}

    init(
        of analysis: DeliveryAnalysis, keys: ReportBuilder.BreakdownKeys, updates indices: some Sequence<Int>,
        countingDevices: Bool = true
    ) {
        countsDevices = countingDevices
        // A part's blocks stay in memory (bounded by the part); the sum's go to a file past a megabyte.
        devices = DeviceTally(spilling: false)
        // Apps and versions are numbered densely, so their counts are arrays
        // (a hash per update and key was most of this loop); a key counted
        // at least once has `sent` > 0, and only those are reported.
        var byApp = [UpdateCounts](repeating: UpdateCounts(), count: analysis.apps.values.count)
        var byPriority = SmallCounts()
        var byProvider = [UpdateCounts](repeating: UpdateCounts(), count: PushProvider.allCases.count)
        var byOS = [UpdateCounts](repeating: UpdateCounts(), count: keys.versions.values.count)
        var byAppVersion = byOS
        var byFrequentPushes = byOS
        var byPriority10 = [UpdateCounts](repeating: UpdateCounts(), count: Contract.priority10Buckets.count)
        var byChannel = [UpdateCounts](repeating: UpdateCounts(), count: analysis.broadcasts.channels.values.count)
        var byDevice = [UpdateCounts](repeating: UpdateCounts(), count: countingDevices ? keys.devices.values.count : 0)
        var renderedActivity = [Bool](repeating: false, count: analysis.activities.count)
        var subscribed: Set<UInt64> = []
        defer {
            for pair in subscribed {
                channelSubscribers[Int32(bitPattern: UInt32(truncatingIfNeeded: pair >> 32)), default: 0] += 1
            }
        }
        broadcasts = analysis.broadcasts
        reachedBroadcasts = analysis.reachedBroadcasts
        for index in indices {
            let update = analysis.updates[index]
            let activity = Int(update.activity)
            updates.count(update)
            byApp[Int(update.app)].count(update)
            byPriority.count(update, key: update.priority)
            byProvider[Int(update.provider)].count(update)
            byOS[Int(keys.osOfActivity[activity])].count(update)
            byAppVersion[Int(keys.appVersionOfActivity[activity])].count(update)
            byFrequentPushes[Int(keys.frequentPushesOfActivity[activity])].count(update)
            let device = keys.deviceOfActivity[activity]
            if device >= 0 && countingDevices { byDevice[Int(device)].count(update) }
            if update.recentPriority10 >= 0 {
                byPriority10[Contract.priority10Bucket(of: Int(update.recentPriority10))].count(update)
            }
            if update.channel >= 0 {
                byChannel[Int(update.channel)].count(update)
                subscribed.insert(
                    UInt64(UInt32(bitPattern: update.channel)) << 32 | UInt64(UInt32(bitPattern: update.activity)))
            }
            if update.isStart { countStart(update, of: analysis.activities[activity]) }
            guard update.outcome == .rendered, let rendered = update.firstRenderedAt else { continue }
            contentExpected += 1
            if update.hasContentCallback { contentReceived += 1 }
            // An activity subscribed to a channel never gets an update token (contract 3.1).
            if !renderedActivity[activity] && !analysis.activities[activity].subscribed {
                renderedActivity[activity] = true
                tokenExpected += 1
                if analysis.activities[activity].hasTokenCallback { tokenReceived += 1 }
            }
            let latency = rendered - update.at
            if latency < 0 { clockSkewNegative += 1 }
            latencies[max(0, latency), default: 0] += 1
            if update.channel >= 0 { channelLatencies[update.channel, default: [:]][max(0, latency), default: 0] += 1 }
        }
        func counted(_ counts: [UpdateCounts], named name: (Int) -> ExactString) -> [ExactString: UpdateCounts] {
            Dictionary(
                uniqueKeysWithValues: counts.indices.filter { counts[$0].sent > 0 }.map { (name($0), counts[$0]) })
        }
        breakdowns["app"] = counted(byApp) { analysis.apps[$0] }
        breakdowns["priority"] = Dictionary(
            uniqueKeysWithValues: byPriority.entries.map {
                (ExactString($0.key.map { String($0) } ?? "unknown"), $0.counts)
            })
        breakdowns["provider"] = counted(byProvider) { ExactString(PushProvider.allCases[$0].rawValue) }
        breakdowns["os_version"] = counted(byOS) { keys.versions[$0] }
        breakdowns["app_version"] = counted(byAppVersion) { keys.versions[$0] }
        breakdowns["channel"] = counted(byChannel) { analysis.broadcasts.channels[$0] }
        breakdowns["frequent_pushes"] = counted(byFrequentPushes) { keys.versions[$0] }
        breakdowns["priority_10_last_hour"] = counted(byPriority10) { ExactString(Contract.priority10Buckets[$0].key) }
        for device in byDevice.indices where byDevice[device].sent > 0 {
            devices.add(byDevice[device], to: keys.devices[device])
        }
    }

    /// Counts a push-to-start: sent, accepted, appeared (any render or
    /// callback of its activity), given an update token (a `push_token`
    /// callback; asked of an activity not subscribed to a channel only,
    /// contract 3.1), and how long after the accept time the first token came.
    private mutating func countStart(_ update: DeliveryAnalysis.Update, of activity: DeliveryAnalysis.Activity) {
        starts.sent += 1
        guard update.accepted else { return }
        starts.accepted += 1
        guard activity.lastDeviceAt != nil else { return }
        starts.appeared += 1
        guard !activity.subscribed else { return }
        starts.updateTokenExpected += 1
        guard let tokenAt = activity.firstTokenAt else { return }
        starts.updateTokenReceived += 1
        tokenLatencies[max(0, tokenAt - update.at), default: 0] += 1
    }

    /// Counts by a key that usually has few values (an update's priority: 5,
    /// 10 or none), found along a short list; past ``listed`` values (a
    /// sender's own numbering) the others go to a dictionary.
    private struct SmallCounts {
        private var listed: [(key: Int64?, counts: UpdateCounts)] = []
        private var others: [Int64?: UpdateCounts] = [:]
        static let listed = 8

        var entries: [(key: Int64?, counts: UpdateCounts)] {
            listed + others.map { (key: $0.key, counts: $0.value) }
        }

        mutating func count(_ update: DeliveryAnalysis.Update, key: Int64?) {
            if let index = listed.firstIndex(where: { $0.key == key }) {
                listed[index].counts.count(update)
            } else if listed.count < Self.listed {
                var counts = UpdateCounts()
                counts.count(update)
                listed.append((key, counts))
            } else {
                others[key, default: UpdateCounts()].count(update)
            }
        }
    }

    /// Adds the summary of a disjoint set of updates.
    /// The summaries of the updates of each of `days` (``utcDay(of:)`` of their `at`), without devices:
    /// a day beside the window's report (a trend's, the days before, Apple's).
    static func byDay(
        of analysis: DeliveryAnalysis, keys: ReportBuilder.BreakdownKeys, days: Set<Int64>
    ) -> [Int64: UpdateSummary] {
        guard !days.isEmpty else { return [:] }
        var updatesByDay: [Int64: [Int]] = [:]
        for (index, update) in analysis.updates.enumerated() {
            let day = utcDay(of: update.at)
            if days.contains(day) { updatesByDay[day, default: []].append(index) }
        }
        return updatesByDay.mapValues {
            UpdateSummary(of: analysis, keys: keys, updates: $0, countingDevices: false)
        }
    }

    /// The report of one day (``utcDay(of:)``) from the days' summaries and requests (none: zeros).
    static func report(
        ofDay day: Int64, _ summaries: [Int64: UpdateSummary], _ requests: [Int64: DeliveryAnalysis.RequestTally]
    ) throws -> Report {
        try (summaries[day] ?? UpdateSummary()).report(
            window: ReportWindow(from: day * Milliseconds.day, to: (day + 1) * Milliseconds.day),
            requests: requests[day] ?? DeliveryAnalysis.RequestTally())
    }

    mutating func merge(_ other: UpdateSummary) {
        updates.add(other.updates)
        for (name, values) in other.breakdowns {
            breakdowns[name, default: [:]].merge(values) { a, b in
                var sum = a
                sum.add(b)
                return sum
            }
        }
        latencies.merge(other.latencies, uniquingKeysWith: +)
        starts.add(other.starts)
        tokenLatencies.merge(other.tokenLatencies, uniquingKeysWith: +)
        contentExpected += other.contentExpected
        contentReceived += other.contentReceived
        tokenExpected += other.tokenExpected
        tokenReceived += other.tokenReceived
        clockSkewNegative += other.clockSkewNegative
        if broadcasts.isEmpty { broadcasts = other.broadcasts }
        for (channel, counts) in other.channelLatencies {
            channelLatencies[channel, default: [:]].merge(counts, uniquingKeysWith: +)
        }
        channelSubscribers.merge(other.channelSubscribers, uniquingKeysWith: +)
        countsDevices = countsDevices && other.countsDevices
        devices.add(other.devices)
        if reachedBroadcasts.isEmpty {
            reachedBroadcasts = other.reachedBroadcasts
        } else {
            for index in other.reachedBroadcasts.indices where other.reachedBroadcasts[index] {
                reachedBroadcasts[index] = true
            }
        }
    }

    func report(window: ReportWindow?, requests tally: DeliveryAnalysis.RequestTally) throws -> Report {
        var report = Report(window: window)
        report.schema = 2
        report.requests.total = tally.total
        report.requests.accepted = tally.accepted
        report.requests.rejected = tally.total - tally.accepted
        report.requests.byReason = tally.byReason
        report.requests.oversizeFailures = tally.oversizeFailures
        report.requests.oversizeRisk = tally.oversizeRisk
        report.requests.toDeadTokens = tally.toDeadTokens
        report.requests.broadcasts = tally.broadcasts
        report.dataQuality.broadcastsWithoutSubscribers = broadcasts.withoutSubscribers(
            in: window, reached: reachedBroadcasts)
        report.dataQuality.unattributed = tally.unattributed
        report.dataQuality.apnsWithoutSeq = tally.withoutSeq
        report.updates = updates
        report.callbacks.contentUpdateExpected = contentExpected
        report.callbacks.contentUpdateReceived = contentReceived
        report.callbacks.tokenExpected = tokenExpected
        report.callbacks.tokenReceived = tokenReceived
        report.dataQuality.clockSkewNegative = clockSkewNegative
        for name in Report.allDimensions {
            report.breakdowns[name] = breakdowns[name] ?? [:]
        }
        report.latency = Self.latency(of: latencies)
        report.outliers =
            countsDevices
            ? try Outliers.find(
                fleet: updates, deviceCount: devices.count, pair: { devices.pair($0) }, id: { devices.id($0) },
                blocks: { try devices.blocks($0) })
            : nil
        report.channels = channels(window: window)
        report.starts = starts
        report.starts.updateTokenLatency = Self.latency(of: tokenLatencies)
        return report
    }

    /// ``Report/channels``: every channel with a broadcast in the window or an update.
    private func channels(window: ReportWindow?) -> [ExactString: Report.Channel] {
        var channels: [Int32: Report.Channel] = [:]
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max
        for broadcast in broadcasts.all where broadcast.sentAt >= from && broadcast.sentAt < to {
            channels[broadcast.channel, default: Report.Channel()].broadcasts += 1
            if broadcast.accepted { channels[broadcast.channel, default: Report.Channel()].accepted += 1 }
        }
        for (channel, count) in channelSubscribers {
            channels[channel, default: Report.Channel()].subscribers = count
        }
        for (channel, counts) in channelLatencies {
            channels[channel, default: Report.Channel()].latency = Self.latency(of: counts)
        }
        return Dictionary(uniqueKeysWithValues: channels.map { (broadcasts.channels[Int($0.key)], $0.value) })
    }

    /// Count and nearest-rank percentiles of latencies given as a count per
    /// value, as ``nearestRank(_:percent:)`` over the sorted values.
    static func latency(of counts: [Int64: Int]) -> Report.Latency {
        let values = counts.keys.sorted()
        let n = counts.values.reduce(0, +)
        func percentile(_ percent: Int) -> Int64? {
            guard n > 0 else { return nil }
            let rank = min(max(1, (percent * n + 99) / 100), n)
            var seen = 0
            for value in values {
                seen += counts[value] ?? 0
                if seen >= rank { return value }
            }
            return values.last
        }
        return Report.Latency(count: n, p50: percentile(50), p90: percentile(90), p99: percentile(99))
    }
}

extension UpdateCounts {
    mutating func count(_ update: DeliveryAnalysis.Update) {
        sent += 1
        guard update.accepted, let outcome = update.outcome else { return }
        accepted += 1
        self[outcome] += 1
        if let cause = update.lossCause { lostByCause[cause] += 1 }
    }
}

package import ArrivalModel
package import ArrivalStore

/// Everything the HTML report shows, computed from one ``DeliveryAnalysis``
/// pass: the contract report of the window, the same report for each earlier
/// day it is compared with and each day of the trend, and the detail behind
/// the charts (outcomes by hour, latency distribution, the activities that
/// lost the most updates with their timelines, data quality by file).
///
/// Every report here comes from ``ReportBuilder/report(of:keys:window:requests:updates:)``,
/// the function the JSON report uses, so the figures agree with
/// `arrival report --format json` for the same window.
package struct DailyReport: Sendable {
    /// The report of the window (the same as the JSON report's).
    package var report: Report
    /// The window shown (`nil`: all data) and, when it is one whole UTC day,
    /// that day's index (days since 1970-01-01).
    package var window: ReportWindow?
    package var day: Int64?
    /// The report of the day before, when the window is a day and the store holds requests of that day.
    package var previousDay: Report?
    /// Reports of the (up to) 7 days before, those the store holds requests of.
    package var previousWeek: [Report] = []
    /// One report per day of the trend (`--days N`), oldest first.
    package var trend: [Report] = []
    /// Time buckets of the window (hours, or days for windows longer than 48 hours).
    package var buckets: [Bucket] = []
    package var bucketsAreHours = true
    /// Days per bucket when the buckets are not hours (1 up to 92 days of data, more beyond).
    package var bucketDays = 0
    /// Render latency (first render − accept time, negatives as 0) by range.
    package var latencyHistogram: [LatencyBin] = []
    /// The activities with the most updates that did not show, most first.
    package var worstActivities: [ActivityTimeline] = []
    /// How many activities had at least one update that did not show.
    package var activitiesMissingUpdates = 0
    package var sources = Sources()
    package var quality = QualityDetail()
    /// Dead tokens listed on the page.
    package static let deadTokensShown = 20
    /// The first ``deadTokensShown`` dead tokens to purge for the window
    /// (``StoreReader/deadTokens(from:to:)``), most requests after death first, and how many there are in all.
    package var deadTokens: [DeadToken] = []
    package var deadTokenCount = 0

    package struct Bucket: Sendable, Equatable {
        /// Start of the bucket (ms since the epoch, UTC).
        package var start: Int64
        package var updates = UpdateCounts()
        /// Requests sent in the bucket (whole UTC hours or days).
        package var requests = 0
        package var acceptedRequests = 0
    }

    package struct LatencyBin: Sendable, Equatable {
        package var label: String
        /// Lower bound inclusive, upper bound exclusive (`nil`: no bound), in ms.
        package var lower: Int64
        package var upper: Int64?
        package var count = 0
    }

    package struct ActivityTimeline: Sendable {
        package var activityID: String
        package var app: String
        package var sent = 0
        package var rendered = 0
        package var superseded = 0
        /// Updates of the window that did not show: not accepted, lost, stale, ended, expired.
        package var missed = 0
        package var osVersion: String
        package var appVersion: String
        /// Devices that rendered any of its updates.
        package var devices: [String] = []
        /// Its updates that did not show, each with the update just before it,
        /// up to ``ActivityTimeline/stepLimit``.
        package var steps: [Step] = []
        /// Updates of the activity in the window not listed.
        package var stepsNotShown = 0

        package static let stepLimit = 30
    }

    /// One update of an activity: what was sent, what APNs said, what became of it.
    package struct Step: Sendable {
        package var seq: Int64
        package var event: String
        /// Accept time, or the earliest request's sent_at when never accepted.
        package var at: Int64
        package var requests: [RequestAnswer] = []
        /// `nil` when APNs never accepted it.
        package var outcome: String?
        package var firstRenderedAt: Int64?
        /// Where it was rendered (`surface` of its render beacons).
        package var surfaces: [String] = []
    }

    package struct RequestAnswer: Sendable {
        package var sentAt: Int64
        package var status: Int64
        package var reason: String?
        package var apnsID: String
        package var payloadBytes: Int64?
    }

    /// What the store was built from.
    package struct Sources: Sendable {
        package var files = 0
        package var gzipFiles = 0
        package var bytes: Int64 = 0
        package var records = 0
        package var apnsRecords = 0
        package var renderRecords = 0
        package var callbackRecords = 0
        /// The files with the most records, most first.
        package var largestFiles: [FileRow] = []
        /// First and last UTC day with requests.
        package var firstDay: Int64?
        package var lastDay: Int64?
    }

    package struct FileRow: Sendable {
        package var path: String
        /// Records in the file, or its repeated records in ``QualityDetail/duplicatesByFile``.
        package var records: Int
    }

    /// Store-wide data quality with its whereabouts.
    package struct QualityDetail: Sendable {
        /// (file, cause, lines), most lines first.
        package var malformedByFile: [(path: String, cause: String, lines: Int)] = []
        package var malformedFilesNotShown = 0
        /// Files with repeated records, most first.
        package var duplicatesByFile: [FileRow] = []
        /// Paths skipped because their bytes were ingested from another path.
        package var skippedFiles: [(path: String, firstPath: String)] = []
    }

    package static let topFiles = 10
    package static let topActivities = 10
}

/// Builds a ``DailyReport`` from a store.
package struct DailyReportBuilder {
    private let store: any StoreReader

    package init(store: any StoreReader) {
        self.store = store
    }

    /// - Parameters:
    ///   - window: the window of `sent_at` (`nil`: all data).
    ///   - trendDays: days of the trend, ending at `trendEnd`, or at the window's
    ///     last day, or at the last day in the store.
    package func build(window: ReportWindow?, trendDays: Int? = nil) throws -> DailyReport {
        let partitionCount = partitioning.count(requests: try store.read { try $0.analysisRowEstimate() })
        // Map the file for a read of everything at once: the analysis reads every
        // row of the three record tables. Partitions read them once, in order.
        return try store.read(mapped: partitionCount == 1) { snapshot in
            try build(snapshot: snapshot, window: window, trendDays: trendDays, partitionCount: partitionCount)
        }
    }

    /// When the analysis goes in partitions (tests make them small).
    package var partitioning = PartitionPolicy.standard

    /// What the page counts of the updates, in sums over the partitions of
    /// the analysis (one partition: the whole store).
    private struct Sums {
        var window = UpdateSummary()
        var days: [Int64: UpdateSummary] = [:]
        var byHour: [Int64: UpdateCounts] = [:]
        var byDay: [Int64: UpdateCounts] = [:]
        /// The earliest and latest `at` of the window's updates.
        var first: Int64?
        var last: Int64?
        var latency: [DailyReport.LatencyBin] = []
        var worst: [DailyReport.ActivityTimeline] = []
        var activitiesMissingUpdates = 0

        /// Adds the sums of a disjoint set of activities.
        mutating func merge(_ other: Sums) {
            window.merge(other.window)
            for (day, summary) in other.days { days[day, default: UpdateSummary()].merge(summary) }
            for (hour, counts) in other.byHour { byHour[hour, default: UpdateCounts()].add(counts) }
            for (day, counts) in other.byDay { byDay[day, default: UpdateCounts()].add(counts) }
            if let first = other.first { self.first = min(self.first ?? first, first) }
            if let last = other.last { self.last = max(self.last ?? last, last) }
            if latency.isEmpty {
                latency = other.latency
            } else {
                for bin in other.latency.indices { latency[bin].count += other.latency[bin].count }
            }
            worst = DailyReportBuilder.worstFirst(worst + other.worst)
            activitiesMissingUpdates += other.activitiesMissingUpdates
        }
    }

    private func build(
        snapshot: any StoreSnapshot, window: ReportWindow?, trendDays: Int?, partitionCount: Int
    ) throws -> DailyReport {
        let storeWide = try snapshot.storeWideQuality()
        var requests: DeliveryAnalysis.RequestTally
        var requestsByDay: [Int64: DeliveryAnalysis.RequestTally]
        var requestsByHour: [Int64: DeliveryAnalysis.RequestTally]
        var partitions: AnalysisPartitions?
        var whole: DeliveryAnalysis?
        if partitionCount > 1 {
            let spilled = try AnalysisPartitions(
                snapshot: snapshot, window: window, count: partitionCount, tallyByDayAndHour: true,
                samplingRequests: false, listingDeadTokens: true)
            (requests, requestsByDay, requestsByHour) =
                (spilled.requests, spilled.requestsByDay, spilled.requestsByHour)
            partitions = spilled
        } else {
            let analysis = try DeliveryAnalysis(
                snapshot: snapshot, window: window, tallyByDayAndHour: true, listingDeadTokens: true)
            (requests, requestsByDay, requestsByHour) =
                (analysis.requests, analysis.requestsByDay, analysis.requestsByHour)
            whole = analysis
        }
        defer { partitions?.close() }

        var daily = DailyReport(report: Report(window: window))
        daily.window = window
        daily.sources.firstDay = requestsByDay.keys.min()
        daily.sources.lastDay = requestsByDay.keys.max()
        // The days compared with and the days of the trend.
        daily.day = window?.wholeDay
        var wantedDays = Set<Int64>()
        if let day = daily.day {
            for back in 1...7 where requestsByDay[day - Int64(back)] != nil {
                wantedDays.insert(day - Int64(back))
            }
        }
        // Apple's numbers (issue 54) are set beside arrival's figures of each day they cover.
        let apple = try snapshot.appleMetrics(from: window?.from, to: window?.to)
        let appleDays = Report.Apple.days(of: apple, in: window)
        wantedDays.formUnion(appleDays.map { utcDay(of: $0) })
        var trendDayList: [Int64] = []
        if let trendDays, trendDays > 0 {
            let end = window.map { utcDay(of: $0.to - 1) } ?? daily.sources.lastDay
            if let end {
                trendDayList = (0..<Int64(trendDays)).reversed().map { end - $0 }
                wantedDays.formUnion(trendDayList)
            }
        }

        // What one analysis (of everything, or of one partition) adds to the sums.
        func part(_ analysis: DeliveryAnalysis, sql: (() throws -> Void) throws -> Void) throws -> Sums {
            var part = Sums()
            let keys = ReportBuilder.BreakdownKeys(analysis)
            let inWindow = Array(analysis.updateIndices(in: window))
            part.window = UpdateSummary(of: analysis, keys: keys, updates: inWindow)
            part.days = UpdateSummary.byDay(of: analysis, keys: keys, days: wantedDays)
            for index in inWindow {
                let update = analysis.updates[index]
                part.byHour[utcHour(of: update.at), default: UpdateCounts()].count(update)
                part.byDay[utcDay(of: update.at), default: UpdateCounts()].count(update)
                part.first = min(part.first ?? update.at, update.at)
                part.last = max(part.last ?? update.at, update.at)
            }
            var page = DailyReport(report: Report(window: window))
            Self.fillLatency(&page, analysis: analysis, updates: inWindow)
            part.latency = page.latencyHistogram
            try sql {
                try Self.fillWorstActivities(
                    &page, analysis: analysis, keys: keys, updates: inWindow, snapshot: snapshot)
            }
            part.activitiesMissingUpdates = page.activitiesMissingUpdates
            part.worst = page.worstActivities
            return part
        }
        var sums = Sums()
        if let whole {
            sums.merge(try part(whole) { try $0() })
        } else if let partitions {
            try partitions.forEach { _, analysis in
                try part(analysis) { body in try partitions.withConnection(body) }
            } combine: {
                sums.merge($0)
            }
        }

        daily.report = try sums.window.report(window: window, requests: requests)
        ReportBuilder.apply(storeWide, to: &daily.report)
        func dayReport(_ day: Int64) throws -> Report {
            var report = try UpdateSummary.report(ofDay: day, sums.days, requestsByDay)
            ReportBuilder.apply(storeWide, to: &report)
            return report
        }
        daily.report.apple = try Report.Apple.make(apple, days: appleDays) { try dayReport(utcDay(of: $0)) }
        if let day = daily.day {
            if requestsByDay[day - 1] != nil { daily.previousDay = try dayReport(day - 1) }
            daily.previousWeek = try (1...7).map { day - Int64($0) }.filter { requestsByDay[$0] != nil }.map(dayReport)
        }
        // The window's own day, when the trend includes it, is the report already made.
        daily.trend = try trendDayList.map { $0 == daily.day ? daily.report : try dayReport($0) }

        Self.fillBuckets(
            &daily, sums: sums, requestsByHour: requestsByHour, requestsByDay: requestsByDay, window: window)
        daily.latencyHistogram = sums.latency
        daily.worstActivities = sums.worst
        daily.activitiesMissingUpdates = sums.activitiesMissingUpdates
        (daily.deadTokens, daily.deadTokenCount) = (whole?.deadTokens ?? partitions?.deadTokens ?? DeadTokenTally())
            .tokens(limit: DailyReport.deadTokensShown)
        try Self.fillSources(&daily, snapshot: snapshot)
        try Self.fillQuality(&daily, snapshot: snapshot)
        return daily
    }

    /// The ``DailyReport/topActivities`` timelines that missed the most, ties
    /// by activity id (code points): the worst of every partition's worst.
    fileprivate static func worstFirst(_ timelines: [DailyReport.ActivityTimeline]) -> [DailyReport.ActivityTimeline] {
        Array(
            timelines.sorted { a, b in
                a.missed != b.missed ? a.missed > b.missed : ExactString(a.activityID) < ExactString(b.activityID)
            }.prefix(DailyReport.topActivities))
    }

    // MARK: - Charts

    private static func fillBuckets(
        _ daily: inout DailyReport, sums: Sums, requestsByHour: [Int64: DeliveryAnalysis.RequestTally],
        requestsByDay: [Int64: DeliveryAnalysis.RequestTally], window: ReportWindow?
    ) {
        // The window's span: given, or that of the data.
        var first = window?.from
        var last = window.map { $0.to - 1 }
        if window == nil {
            first = sums.first
            last = sums.last
            if let firstDay = daily.sources.firstDay, let lastDay = daily.sources.lastDay {
                first = min(first ?? firstDay * Milliseconds.day, firstDay * Milliseconds.day)
                last = max(last ?? (lastDay + 1) * Milliseconds.day - 1, (lastDay + 1) * Milliseconds.day - 1)
            }
        }
        guard let first, let last, last >= first else { return }
        // Hours up to 48 hours, days up to 92 days, else runs of days: never more than 92 buckets.
        let hours = last - first < 48 * Milliseconds.hour
        daily.bucketsAreHours = hours
        let unit = hours ? Milliseconds.hour : Milliseconds.day
        let firstUnit = hours ? utcHour(of: first) : utcDay(of: first)
        let lastUnit = hours ? utcHour(of: last) : utcDay(of: last)
        let span = lastUnit - firstUnit + 1
        let perBucket = hours ? 1 : (span + 91) / 92
        daily.bucketDays = hours ? 0 : Int(perBucket)
        let count = Int((span + perBucket - 1) / perBucket)
        var buckets = (0..<count).map { DailyReport.Bucket(start: (firstUnit + Int64($0) * perBucket) * unit) }
        for (key, counts) in hours ? sums.byHour : sums.byDay {
            buckets[Int((key - firstUnit) / perBucket)].updates.add(counts)
        }
        let tallies = hours ? requestsByHour : requestsByDay
        for (key, tally) in tallies where key >= firstUnit && key <= lastUnit {
            let i = Int((key - firstUnit) / perBucket)
            buckets[i].requests += tally.total
            buckets[i].acceptedRequests += tally.accepted
        }
        daily.buckets = buckets
    }

    static let latencyBounds: [(String, Int64)] = [
        ("< 1 s", 0), ("1–2 s", Milliseconds.second), ("2–5 s", 2 * Milliseconds.second),
        ("5–10 s", 5 * Milliseconds.second), ("10–30 s", 10 * Milliseconds.second),
        ("30–60 s", 30 * Milliseconds.second), ("1–5 min", Milliseconds.minute), ("5–15 min", 5 * Milliseconds.minute),
        ("15–60 min", 15 * Milliseconds.minute), ("≥ 1 h", Milliseconds.hour),
    ]

    private static func fillLatency(_ daily: inout DailyReport, analysis: DeliveryAnalysis, updates: [Int]) {
        var bins = latencyBounds.enumerated().map { i, bound in
            DailyReport.LatencyBin(
                label: bound.0, lower: bound.1, upper: i + 1 < latencyBounds.count ? latencyBounds[i + 1].1 : nil)
        }
        for index in updates {
            let update = analysis.updates[index]
            guard update.outcome == .rendered, let rendered = update.firstRenderedAt else { continue }
            let latency = max(0, rendered - update.at)
            let bin = bins.lastIndex { $0.lower <= latency } ?? 0
            bins[bin].count += 1
        }
        daily.latencyHistogram = bins
    }

    // MARK: - Activities that lost the most

    /// Whether an update "did not show" and counts against its activity:
    /// not accepted, lost, stale, ended or expired. An update sent after the
    /// user dismissed the activity did not fail (contract 3.0), so it does not.
    static func didNotShow(_ update: DeliveryAnalysis.Update) -> Bool {
        switch update.outcome {
        case .rendered, .superseded, .dismissed: false
        case .lost, .staleTimestamp, .ended, .expired, nil: true
        }
    }

    private static func fillWorstActivities(
        _ daily: inout DailyReport, analysis: DeliveryAnalysis, keys: ReportBuilder.BreakdownKeys, updates: [Int],
        snapshot: any StoreSnapshot
    ) throws {
        var missed: [Int32: Int] = [:]
        for index in updates {
            let update = analysis.updates[index]
            if Self.didNotShow(update) { missed[update.activity, default: 0] += 1 }
        }
        daily.activitiesMissingUpdates = missed.count
        // The top N by count (ties by activity id): sort only those at or above the N-th count.
        let threshold = missed.values.sorted(by: >).prefix(DailyReport.topActivities).last ?? 0
        let worst = missed.filter { $0.value >= threshold }.sorted { a, b in
            a.value != b.value
                ? a.value > b.value : analysis.activityNames[Int(a.key)] < analysis.activityNames[Int(b.key)]
        }.prefix(DailyReport.topActivities).map(\.key)
        guard !worst.isEmpty else { return }
        let worstSet = Set(worst)
        var timelines: [Int32: DailyReport.ActivityTimeline] = [:]
        var stepIndex: [Int32: [Int64: Int]] = [:]
        for activity in worst {
            let i = Int(activity)
            timelines[activity] = DailyReport.ActivityTimeline(
                activityID: analysis.activityNames[i].text, app: "", missed: missed[activity] ?? 0,
                osVersion: keys.versions[Int(keys.osOfActivity[i])].text,
                appVersion: keys.versions[Int(keys.appVersionOfActivity[i])].text)
        }
        // The window's updates of those activities, in order of time then seq.
        var chosen = updates.filter { worstSet.contains(analysis.updates[$0].activity) }
        chosen.sort { a, b in
            let x = analysis.updates[a]
            let y = analysis.updates[b]
            return x.at != y.at ? x.at < y.at : x.seq < y.seq
        }
        // Keep the updates that did not show and the one just before each.
        var previous: [Int32: Int] = [:]
        var keep = Set<Int>()
        for index in chosen {
            let update = analysis.updates[index]
            if Self.didNotShow(update) {
                keep.insert(index)
                if let before = previous[update.activity] { keep.insert(before) }
            }
            previous[update.activity] = index
        }
        for index in chosen {
            let update = analysis.updates[index]
            guard var timeline = timelines[update.activity] else { continue }
            timeline.sent += 1
            if update.outcome == .rendered { timeline.rendered += 1 }
            if update.outcome == .superseded { timeline.superseded += 1 }
            if timeline.app.isEmpty { timeline.app = analysis.apps[Int(update.app)].text }
            if keep.contains(index) && timeline.steps.count < DailyReport.ActivityTimeline.stepLimit {
                stepIndex[update.activity, default: [:]][update.seq] = timeline.steps.count
                timeline.steps.append(
                    DailyReport.Step(
                        seq: update.seq, event: update.isEnd ? "end" : update.isStart ? "start" : "update",
                        at: update.at,
                        outcome: update.outcome?.name, firstRenderedAt: update.firstRenderedAt))
            } else {
                timeline.stepsNotShown += 1
            }
            timelines[update.activity] = timeline
        }
        // Their requests (with the activity resolved through push-token callbacks) and renders, by row id.
        let requestIDs = analysis.requestRows.filter { worstSet.contains($0.activity) }
        var answers: [(activity: Int32, seq: Int64, answer: DailyReport.RequestAnswer)] = []
        let activityOfRequest = Dictionary(
            requestIDs.map { ($0.row, $0.activity) }, uniquingKeysWith: { first, _ in first })
        for (row, answer) in try snapshot.requestAnswers(rowIDs: requestIDs.map(\.row)) {
            guard let activity = activityOfRequest[row] else { continue }
            answers.append(
                (
                    activity, answer.seq,
                    DailyReport.RequestAnswer(
                        sentAt: answer.sentAt, status: answer.status, reason: answer.reason, apnsID: answer.apnsID,
                        payloadBytes: answer.payloadBytes)
                ))
        }
        answers.sort { a, b in
            a.answer.sentAt != b.answer.sentAt
                ? a.answer.sentAt < b.answer.sentAt
                : a.answer.apnsID.utf8.lexicographicallyPrecedes(b.answer.apnsID.utf8)
        }
        for (activity, seq, answer) in answers {
            guard let step = stepIndex[activity]?[seq] else { continue }
            timelines[activity]?.steps[step].requests.append(answer)
        }
        let renderIDs = analysis.renderRows.filter { worstSet.contains($0.activity) }
        var sightings: [(activity: Int32, seq: Int64, surface: String?, device: String?, at: Int64)] = []
        let activityOfRender = Dictionary(
            renderIDs.map { ($0.row, $0.activity) }, uniquingKeysWith: { first, _ in first })
        for (row, sighting) in try snapshot.renderSightings(rowIDs: renderIDs.map(\.row)) {
            guard let activity = activityOfRender[row] else { continue }
            sightings.append((activity, sighting.seq, sighting.surface, sighting.deviceID, sighting.renderedAt))
        }
        sightings.sort { $0.at < $1.at }
        for sighting in sightings {
            guard var timeline = timelines[sighting.activity] else { continue }
            if let device = sighting.device, !timeline.devices.contains(where: { $0.utf8.elementsEqual(device.utf8) }) {
                timeline.devices.append(device)
            }
            if let step = stepIndex[sighting.activity]?[sighting.seq] {
                let surface = sighting.surface ?? "unknown surface"
                if !timeline.steps[step].surfaces.contains(where: { $0.utf8.elementsEqual(surface.utf8) }) {
                    timeline.steps[step].surfaces.append(surface)
                }
            }
            timelines[sighting.activity] = timeline
        }
        daily.worstActivities = worst.compactMap { timelines[$0] }
    }

    // MARK: - Sources and data quality

    private static func fillSources(_ daily: inout DailyReport, snapshot: any StoreSnapshot) throws {
        let totals = try snapshot.sourceTotals()
        (daily.sources.files, daily.sources.gzipFiles, daily.sources.bytes, daily.sources.records) =
            (totals.files, totals.gzipFiles, totals.bytes, totals.records)
        (daily.sources.apnsRecords, daily.sources.renderRecords, daily.sources.callbackRecords) =
            (totals.byKind[0], totals.byKind[1], totals.byKind[2])
        daily.sources.largestFiles = try snapshot.largestFiles(limit: DailyReport.topFiles).map {
            DailyReport.FileRow(path: $0.path, records: $0.records)
        }
    }

    private static func fillQuality(_ daily: inout DailyReport, snapshot: any StoreSnapshot) throws {
        let limit = 20
        let malformed = try snapshot.malformedByFile(limit: limit)
        daily.quality.malformedByFile = malformed.rows
        daily.quality.malformedFilesNotShown = max(0, malformed.total - limit)
        daily.quality.duplicatesByFile = try snapshot.duplicatesByFile(limit: limit).map {
            DailyReport.FileRow(path: $0.path, records: $0.records)
        }
        daily.quality.skippedFiles = try snapshot.skippedFiles(limit: limit)
    }
}

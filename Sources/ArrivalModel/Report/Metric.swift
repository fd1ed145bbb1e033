/// One figure of the report that `diff` compares and `gate` rules test,
/// named by its path in the report JSON (`updates.arrival_rate`).
///
/// Two shares that the report JSON does not hold are derived from its
/// counts, because CI rules are naturally written on them:
/// `updates.stale_share` (stale-timestamp drops per accepted update) and
/// `requests.oversize_share` (oversize failures per request).
public struct Metric: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A fraction in [0, 1] with a numerator and a denominator.
        case rate
        /// A whole count.
        case count
        /// Milliseconds (latency percentiles).
        case milliseconds
    }

    /// Which way is better, so a change can be called a regression.
    public enum Direction: Sendable, Hashable {
        case higherIsBetter, lowerIsBetter, neutral
    }

    public let id: String
    public let kind: Kind
    public let direction: Direction
    /// The first report schema that has it: a report of an earlier schema
    /// lacks the figure, which is then absent, never 0.
    public var since = 1
    /// The breakdown the figure is read from, when a report of its schema
    /// may still lack it (contract 3.1's, in a report of arrival before
    /// them): without it the figure is absent, never 0.
    public var dimension: String?
    /// The breakdown entry a `breakdowns.<dimension>.<key>.<figure>` figure
    /// is read from (nil for every other figure): `gate` tells a key no
    /// report has (a typo) from a figure that is only undefined.
    public var breakdownEntry: (dimension: String, key: String)?
    /// Read from `outliers` (contract 3.2): a report without it (an earlier arrival's) lacks the figure.
    public var needsOutliers = false
    /// For rates: the proportion as (numerator, denominator). Loss rates are
    /// `1 − received / expected`, so their numerator is the lost count.
    let proportion: @Sendable (Report) -> (numerator: Int, denominator: Int)
    /// For counts and milliseconds: the value.
    let amount: @Sendable (Report) -> Double?
    /// The population a figure is measured on (a rate's denominator; the
    /// requests or updates a count is drawn from), for minimum sample sizes.
    let population: @Sendable (Report) -> Int

    public var description: String { id }

    public static func == (lhs: Metric, rhs: Metric) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// The figure in `report`; nil for a rate whose denominator is 0 or a
    /// percentile over no updates.
    public func value(in report: Report) -> Double? {
        guard isPresent(in: report) else { return nil }
        switch kind {
        case .rate:
            let (numerator, denominator) = proportion(report)
            return denominator == 0 ? nil : Double(numerator) / Double(denominator)
        case .count, .milliseconds:
            return amount(report)
        }
    }

    /// Whether `report`'s schema has this figure at all.
    public func isPresent(in report: Report) -> Bool {
        report.schema >= since && (dimension.map { report.breakdowns[$0] != nil } ?? true)
            && (!needsOutliers || report.outliers != nil)
    }

    /// This metric, from report schema `schema` on.
    private func since(_ schema: Int) -> Metric {
        var metric = self
        metric.since = schema
        return metric
    }

    /// The sample the figure rests on (see ``population``).
    public func sampleSize(in report: Report) -> Int { population(report) }

    public func fraction(in report: Report) -> (numerator: Int, denominator: Int)? {
        kind == .rate ? proportion(report) : nil
    }

    private static func rate(
        _ id: String, _ direction: Direction, _ proportion: @escaping @Sendable (Report) -> (Int, Int)
    ) -> Metric {
        Metric(
            id: id, kind: .rate, direction: direction, proportion: { proportion($0) }, amount: { _ in nil },
            population: { proportion($0).1 })
    }

    /// The share of `expected` callbacks that never came: 1 − received / expected.
    private static func lossRate(
        _ id: String, expected: any KeyPath<Report, Int> & Sendable, received: any KeyPath<Report, Int> & Sendable
    ) -> Metric {
        rate(id, .lowerIsBetter) { ($0[keyPath: expected] - $0[keyPath: received], $0[keyPath: expected]) }
    }

    private static func count(
        _ id: String, _ direction: Direction, of population: @escaping @Sendable (Report) -> Int,
        _ amount: @escaping @Sendable (Report) -> Int
    ) -> Metric {
        Metric(
            id: id, kind: .count, direction: direction, proportion: { _ in (0, 0) },
            amount: { Double(amount($0)) }, population: population)
    }

    private static func latency(_ id: String, _ value: @escaping @Sendable (Report) -> Int64?) -> Metric {
        Metric(
            id: id, kind: .milliseconds, direction: .lowerIsBetter, proportion: { _ in (0, 0) },
            amount: { value($0).map(Double.init) }, population: { $0.latency.count })
    }

    private static let requests: @Sendable (Report) -> Int = { $0.requests.total }
    private static let updates: @Sendable (Report) -> Int = { $0.updates.sent }
    private static let lines: @Sendable (Report) -> Int = { $0.requests.total + $0.dataQuality.malformedLines }
    private static let renderedUpdates: @Sendable (Report) -> Int = { $0.callbacks.contentUpdateExpected }
    private static let renderingActivities: @Sendable (Report) -> Int = { $0.callbacks.tokenExpected }
    private static let latencies: @Sendable (Report) -> Int = { $0.latency.count }

    // MARK: - The metrics, in report order

    public static let requestsTotal = count("requests.total", .neutral, of: requests, \.requests.total)
    public static let requestsAccepted = count("requests.accepted", .neutral, of: requests, \.requests.accepted)
    public static let requestsRejected = count("requests.rejected", .lowerIsBetter, of: requests, \.requests.rejected)
    public static let acceptanceRate = rate("requests.acceptance_rate", .higherIsBetter) {
        ($0.requests.accepted, $0.requests.total)
    }
    public static let requestsOversizeFailures = count(
        "requests.oversize_failures", .lowerIsBetter, of: requests, \.requests.oversizeFailures)
    public static let oversizeShare = rate("requests.oversize_share", .lowerIsBetter) {
        ($0.requests.oversizeFailures, $0.requests.total)
    }
    public static let requestsOversizeRisk = count(
        "requests.oversize_risk", .lowerIsBetter, of: requests, \.requests.oversizeRisk)
    public static let updatesSent = count("updates.sent", .neutral, of: updates, \.updates.sent)
    public static let updatesAccepted = count("updates.accepted", .neutral, of: updates, \.updates.accepted)
    public static let updatesRendered = count("updates.rendered", .neutral, of: updates, \.updates.rendered)
    public static let updatesEnded = count("updates.ended", .lowerIsBetter, of: updates, \.updates.ended)
    public static let updatesExpired = count("updates.expired", .lowerIsBetter, of: updates, \.updates.expired)
    public static let updatesStaleTimestamp = count(
        "updates.stale_timestamp", .lowerIsBetter, of: updates, \.updates.staleTimestamp)
    public static let staleShare = rate("updates.stale_share", .lowerIsBetter) {
        ($0.updates.staleTimestamp, $0.updates.accepted)
    }
    public static let updatesSuperseded = count("updates.superseded", .neutral, of: updates, \.updates.superseded)
    public static let updatesLost = count("updates.lost", .lowerIsBetter, of: updates, \.updates.lost)
    public static let arrivalRate = rate("updates.arrival_rate", .higherIsBetter) {
        ($0.updates.rendered, $0.updates.deliverable)
    }
    public static let effectiveArrivalRate = rate("updates.effective_arrival_rate", .higherIsBetter) {
        ($0.updates.rendered + $0.updates.superseded, $0.updates.deliverable)
    }
    public static let callbacksContentUpdateExpected = count(
        "callbacks.content_update_expected", .neutral, of: renderedUpdates, \.callbacks.contentUpdateExpected)
    public static let callbacksContentUpdateReceived = count(
        "callbacks.content_update_received", .neutral, of: renderedUpdates, \.callbacks.contentUpdateReceived)
    public static let callbackLossRate = lossRate(
        "callbacks.callback_loss_rate", expected: \.callbacks.contentUpdateExpected,
        received: \.callbacks.contentUpdateReceived)
    public static let callbacksTokenExpected = count(
        "callbacks.token_expected", .neutral, of: renderingActivities, \.callbacks.tokenExpected)
    public static let callbacksTokenReceived = count(
        "callbacks.token_received", .neutral, of: renderingActivities, \.callbacks.tokenReceived)
    public static let tokenCallbackLossRate = lossRate(
        "callbacks.token_callback_loss_rate", expected: \.callbacks.tokenExpected, received: \.callbacks.tokenReceived)
    public static let latencyCount = count("latency_ms.count", .neutral, of: latencies, \.latency.count)
    public static let latencyP50 = latency("latency_ms.p50", \.latency.p50)
    public static let latencyP90 = latency("latency_ms.p90", \.latency.p90)
    public static let latencyP99 = latency("latency_ms.p99", \.latency.p99)
    public static let qualityMalformedLines = count(
        "data_quality.malformed_lines", .lowerIsBetter, of: lines, \.dataQuality.malformedLines)
    public static let qualityDuplicateRecords = count(
        "data_quality.duplicate_records", .neutral, of: requests, \.dataQuality.duplicateRecords)
    public static let qualityFilesSkippedAsDuplicate = count(
        "data_quality.files_skipped_as_duplicate", .neutral, of: requests, \.dataQuality.filesSkippedAsDuplicate)
    public static let qualityApnsWithoutSeq = count(
        "data_quality.apns_without_seq", .lowerIsBetter, of: requests, \.dataQuality.apnsWithoutSeq)
    public static let qualityUnattributed = count(
        "data_quality.unattributed", .lowerIsBetter, of: requests, \.dataQuality.unattributed)
    public static let qualityClockSkewNegative = count(
        "data_quality.clock_skew_negative", .lowerIsBetter, of: latencies, \.dataQuality.clockSkewNegative)

    // Report schema 2 (contract 3.0).
    private static let accepted: @Sendable (Report) -> Int = { $0.updates.accepted }
    public static let updatesDismissed = count("updates.dismissed", .neutral, of: accepted, \.updates.dismissed)
        .since(2)
    public static let lostByCause: [Metric] = zip(LossCauses.keys, LossCauses.paths).map { key, path in
        count("updates.lost_by_cause.\(key)", .lowerIsBetter, of: accepted) { $0.updates.lostByCause[keyPath: path] }
            .since(2)
    }
    public static let startsAppearanceRate = rate("starts.appearance_rate", .higherIsBetter) {
        ($0.starts.appeared, $0.starts.accepted)
    }.since(2)
    public static let startsUpdateTokenRate = rate("starts.update_token_rate", .higherIsBetter) {
        ($0.starts.updateTokenReceived, $0.starts.updateTokenExpected)
    }.since(2)
    public static let requestsToDeadTokens = count(
        "requests.to_dead_tokens", .lowerIsBetter, of: requests, \.requests.toDeadTokens
    ).since(2)
    public static let requestsBroadcasts = count(
        "requests.broadcasts", .neutral, of: requests, \.requests.broadcasts
    ).since(2)
    public static let qualityBroadcastsWithoutSubscribers = count(
        "data_quality.broadcasts_without_subscribers", .lowerIsBetter, of: { $0.requests.broadcasts },
        \.dataQuality.broadcastsWithoutSubscribers
    ).since(2)

    // Contract 3.2: how many devices were tested, and how many are far below the fleet.
    private static let devicesTested: @Sendable (Report) -> Int = { $0.outliers?.devicesTested ?? 0 }
    public static let outliersDevicesTested: Metric = {
        var metric = count("outliers.devices_tested", .neutral, of: devicesTested, devicesTested).since(2)
        metric.needsOutliers = true
        return metric
    }()
    public static let outliersDevices: Metric = {
        var metric = count("outliers.devices", .lowerIsBetter, of: devicesTested) { $0.outliers?.devices.count ?? 0 }
            .since(2)
        metric.needsOutliers = true
        return metric
    }()

    /// The figures that only broadcasts move (contract 3.0).
    public static let broadcastOnly: Set<Metric> = [requestsBroadcasts, qualityBroadcastsWithoutSubscribers]

    /// Every metric, in report order.
    public static let all: [Metric] =
        [
            requestsTotal, requestsAccepted, requestsRejected, acceptanceRate, requestsOversizeFailures, oversizeShare,
            requestsOversizeRisk, requestsBroadcasts, requestsToDeadTokens, updatesSent, updatesAccepted,
            updatesRendered, updatesDismissed,
            updatesEnded, updatesExpired, updatesStaleTimestamp, staleShare, updatesSuperseded, updatesLost,
        ] + lostByCause + [
            arrivalRate, effectiveArrivalRate, startsAppearanceRate, startsUpdateTokenRate,
            callbacksContentUpdateExpected, callbacksContentUpdateReceived, callbackLossRate, callbacksTokenExpected,
            callbacksTokenReceived, tokenCallbackLossRate, latencyCount, latencyP50, latencyP90, latencyP99,
            outliersDevicesTested, outliersDevices, qualityMalformedLines, qualityDuplicateRecords,
            qualityFilesSkippedAsDuplicate, qualityApnsWithoutSeq,
            qualityUnattributed, qualityClockSkewNegative, qualityBroadcastsWithoutSubscribers,
        ]

    private static let byID: [String: Metric] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

    /// The metric named `id`; a bare name (`arrival_rate`) is accepted when
    /// only one metric ends with it; `breakdowns.<dimension>.<key>.<figure>`
    /// names a figure of one breakdown entry (``breakdown(_:_:_:)``).
    public static func named(_ id: String) -> Metric? {
        if let metric = byID[id] { return metric }
        if id.hasPrefix("breakdowns.") { return breakdown(named: id) }
        let matches = all.filter { $0.id.hasSuffix("." + id) }
        return matches.count == 1 ? matches[0] : nil
    }

    /// The figures of an `updates` block that a breakdown entry has, by
    /// their names in it: counts, the two rates and each loss cause.
    public static let breakdownFigures: [String] =
        ["sent", "accepted"] + Outcome.displayOrder.map(\.name) + LossCauses.keys.map { "lost_by_cause." + $0 }
        + ["arrival_rate", "effective_arrival_rate"]

    /// `breakdowns.<dimension>.<key>.<figure>`: the key may hold dots (a
    /// channel id, an app), so the figure is matched at the end.
    private static func breakdown(named id: String) -> Metric? {
        let rest = id.dropFirst("breakdowns.".count)
        for dimension in Report.allDimensions where rest.hasPrefix(dimension + ".") {
            let entry = rest.dropFirst(dimension.count + 1)
            for figure in breakdownFigures where entry.hasSuffix("." + figure) && entry.count > figure.count + 1 {
                return breakdown(dimension, String(entry.dropLast(figure.count + 1)), figure)
            }
        }
        return nil
    }

    /// One figure (``breakdownFigures``) of the entry `key` of breakdown
    /// `dimension` (an entry a report lacks counts 0, its rates are
    /// undefined); `breakdowns.channel` is a figure of schema 2.
    public static func breakdown(_ dimension: String, _ key: String, _ figure: String) -> Metric? {
        let id = "breakdowns.\(dimension).\(key).\(figure)"
        let exact = ExactString(key)
        let entry: @Sendable (Report) -> UpdateCounts = { $0.breakdowns[dimension]?[exact] ?? UpdateCounts() }
        let since = Report.breakdownDimensions.contains(dimension) ? 1 : 2
        var metric = figureMetric(id, figure, entry)?.since(since)
        metric?.breakdownEntry = (dimension, key)
        // Contract 3.1's breakdowns: a schema-2 report of an earlier arrival lacks them.
        if dimension == "frequent_pushes" || dimension == "priority_10_last_hour" { metric?.dimension = dimension }
        return metric
    }

    /// A breakdown entry's `figure` (``breakdownFigures``), read by `entry`.
    private static func figureMetric(
        _ id: String, _ figure: String, _ entry: @escaping @Sendable (Report) -> UpdateCounts
    ) -> Metric? {
        switch figure {
        case "arrival_rate":
            return rate(id, .higherIsBetter) { (entry($0).rendered, entry($0).deliverable) }
        case "effective_arrival_rate":
            return rate(id, .higherIsBetter) { (entry($0).rendered + entry($0).superseded, entry($0).deliverable) }
        case "sent", "accepted":
            return count(
                id, .neutral, of: { entry($0).sent }, { figure == "sent" ? entry($0).sent : entry($0).accepted })
        default:
            if let outcome = Outcome.displayOrder.first(where: { $0.name == figure }) {
                let direction: Direction =
                    outcome == .rendered || outcome == .superseded || outcome == .dismissed
                    ? .neutral : .lowerIsBetter
                return count(id, direction, of: { entry($0).accepted }, { entry($0)[outcome] })
            }
            guard let index = LossCauses.keys.firstIndex(where: { "lost_by_cause." + $0 == figure }) else { return nil }
            let path = LossCauses.paths[index]
            return count(id, .lowerIsBetter, of: { entry($0).accepted }, { entry($0).lostByCause[keyPath: path] })
        }
    }
}

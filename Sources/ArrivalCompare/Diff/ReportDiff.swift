package import ArrivalModel
import ArrivalRendering

/// Two reports side by side: every metric with its change and whether the
/// change is more than noise, the APNs reasons and outcomes that moved, and
/// the breakdown rows that moved most. B is the newer side ("after").
package struct ReportDiff: Sendable {
    /// How a change reads.
    package enum Verdict: String, Sendable {
        case unchanged
        /// A significant change in the good direction.
        case better
        /// A significant change in the bad direction.
        case worse
        /// A change of a rate within noise at the stated confidence.
        case noise
        /// A change with no direction or no test (counts, percentiles).
        case changed
        /// Undefined on a side (a rate over nothing).
        case undefined
        /// Not in one side's report at all: a figure of report schema 2
        /// compared with a report of schema 1. Shown as absent, never as 0.
        case absent
    }

    package struct MetricChange: Sendable {
        package var metric: Metric
        package var a: Double?
        package var b: Double?
        package var sampleA: Int
        package var sampleB: Int
        package var significance: Significance?
        package var verdict: Verdict
        /// Whether each side's report has the figure (``Metric/isPresent(in:)``).
        package var presentA = true
        package var presentB = true

        package var absolute: Double? {
            guard let a, let b else { return nil }
            return b - a
        }

        /// (B − A) / |A|; nil when A is 0 or undefined.
        package var relative: Double? {
            guard let a, let b, a != 0 else { return nil }
            return (b - a) / abs(a)
        }
    }

    /// A keyed count on both sides (APNs reasons, outcomes).
    package struct CountChange: Sendable, Equatable {
        package enum Status: String, Sendable {
            case appeared, vanished, moved, unchanged
        }

        package var key: String
        package var a: Int
        package var b: Int

        package var status: Status {
            if a == b { return .unchanged }
            if a == 0 { return .appeared }
            if b == 0 { return .vanished }
            return .moved
        }
    }

    /// One breakdown row's arrival rate on both sides.
    package struct BreakdownChange: Sendable {
        package var dimension: String
        package var key: String
        package var a: UpdateCounts
        package var b: UpdateCounts
        /// Binomial test of the arrival-rate change (per-row activity sums
        /// are not kept).
        package var significance: Significance?

        package var change: Double? {
            guard let ra = a.arrivalRate, let rb = b.arrivalRate else { return nil }
            return rb - ra
        }
    }

    /// A device far below the fleet on one side and not on the other
    /// (contract 3.2's `outliers`): its block and p-value on the side that lists it.
    package struct DeviceChange: Sendable {
        package enum Status: String, Sendable {
            /// Listed by B only: it fell far below the fleet.
            case appeared
            /// Listed by A only: B no longer lists it.
            case vanished
        }

        package var deviceID: String
        package var status: Status
        package var updates: UpdateCounts
        package var pValue: Double
    }

    package struct Side: Sendable {
        package var path: String
        package var source: ComparisonSide.Source
        package var window: ReportWindow?

        package init(path: String, source: ComparisonSide.Source, window: ReportWindow?) {
            self.path = path
            self.source = source
            self.window = window
        }
    }

    package var a: Side
    package var b: Side
    package var confidence: Double
    package var metrics: [MetricChange]
    package var reasons: [CountChange]
    package var outcomes: [CountChange]
    /// The rows whose arrival rate moved most, at most ``breakdownLimit``.
    package var breakdowns: [BreakdownChange]
    /// The devices one side lists far below the fleet and the other does not,
    /// A's first, each in its side's order; nil when a side's report has no
    /// `outliers` (an earlier arrival's).
    package var devices: [DeviceChange]?
    package var records: RecordDiff?
    /// Rendered and deliverable updates on each side: a rate of 0 % with no
    /// render at all says "no beacons", not "nothing arrived" (``notes``).
    package var rendered: (a: Int, b: Int) = (0, 0)
    package var deliverable: (a: Int, b: Int) = (0, 0)
    /// Each side's report schema (1, or 2 for contract 3.0).
    package var schemas: (a: Int, b: Int) = (1, 1)

    /// Rows need this many deliverable updates on both sides to be ranked.
    package static let breakdownMinimum = 30
    package static let breakdownLimit = 10

    package init(_ sideA: ComparisonSide, _ sideB: ComparisonSide, confidence: Double = 0.95) {
        self.init(
            a: sideA.report, samplesA: sideA.samples, b: sideB.report, samplesB: sideB.samples, confidence: confidence,
            sideA: Side(path: sideA.path, source: sideA.source, window: sideA.report.window),
            sideB: Side(path: sideB.path, source: sideB.source, window: sideB.report.window))
    }

    package init(
        a reportA: Report, samplesA: ActivitySamples?, b reportB: Report, samplesB: ActivitySamples?,
        confidence: Double = 0.95, sideA: Side, sideB: Side
    ) {
        a = sideA
        b = sideB
        self.confidence = confidence
        rendered = (reportA.updates.rendered, reportB.updates.rendered)
        schemas = (reportA.schema, reportB.schema)
        deliverable = (reportA.updates.deliverable, reportB.updates.deliverable)
        // A figure neither side's report has (both of schema 1) is left out, not listed as absent twice.
        // The broadcast figures only when a side has a broadcast: elsewhere they are 0 on both sides.
        let broadcasts = reportA.requests.broadcasts > 0 || reportB.requests.broadcasts > 0
        metrics = Metric.all.filter {
            ($0.isPresent(in: reportA) || $0.isPresent(in: reportB))
                && (broadcasts || !Metric.broadcastOnly.contains($0))
        }.map { metric in
            Self.compare(metric, reportA, samplesA, reportB, samplesB, confidence: confidence)
        }
        let reasonKeys = Set(reportA.requests.byReason.keys).union(reportB.requests.byReason.keys).sorted()
        reasons = reasonKeys.map {
            CountChange(key: $0.text, a: reportA.requests.byReason[$0] ?? 0, b: reportB.requests.byReason[$0] ?? 0)
        }
        outcomes = Self.outcomeNames.map { name, count in
            CountChange(key: name, a: count(reportA.updates), b: count(reportB.updates))
        }
        var rows: [BreakdownChange] = []
        // With APNs alone on both sides, the provider breakdown only repeats the totals.
        // Broadcast channels too (schema 2): an entry per channel either side has.
        for dimension in Report.allDimensions
        where reportA.showsBreakdown(dimension) || reportB.showsBreakdown(dimension) {
            let tableA = reportA.breakdowns[dimension] ?? [:]
            let tableB = reportB.breakdowns[dimension] ?? [:]
            for key in Set(tableA.keys).union(tableB.keys).sorted() {
                let countsA = tableA[key] ?? UpdateCounts()
                let countsB = tableB[key] ?? UpdateCounts()
                let deliverableA = countsA.deliverable
                let deliverableB = countsB.deliverable
                guard deliverableA >= Self.breakdownMinimum, deliverableB >= Self.breakdownMinimum else { continue }
                let significance = Significance.test(
                    a: (countsA.rendered, deliverableA), b: (countsB.rendered, deliverableB),
                    clustersA: nil, clustersB: nil, confidence: confidence)
                rows.append(
                    BreakdownChange(
                        dimension: dimension, key: key.text, a: countsA, b: countsB,
                        significance: significance))
            }
        }
        if let listedA = reportA.outliers?.devices, let listedB = reportB.outliers?.devices {
            let idsA = Set(listedA.map(\.deviceID))
            let idsB = Set(listedB.map(\.deviceID))
            devices =
                listedA.filter { !idsB.contains($0.deviceID) }.map {
                    DeviceChange(deviceID: $0.deviceID.text, status: .vanished, updates: $0.updates, pValue: $0.pValue)
                }
                + listedB.filter { !idsA.contains($0.deviceID) }.map {
                    DeviceChange(deviceID: $0.deviceID.text, status: .appeared, updates: $0.updates, pValue: $0.pValue)
                }
        }
        // Largest move first; ties in report order (the sort is stable).
        breakdowns = Array(
            rows.filter { ($0.change ?? 0) != 0 }
                .sorted { abs($0.change ?? 0) > abs($1.change ?? 0) }
                .prefix(Self.breakdownLimit))
    }

    static let outcomeNames: [(String, @Sendable (UpdateCounts) -> Int)] = {
        var names: [(String, @Sendable (UpdateCounts) -> Int)] = [("sent", { $0.sent }), ("accepted", { $0.accepted })]
        for outcome in Outcome.displayOrder { names.append((outcome.name, { $0[outcome] })) }
        return names
    }()

    static func compare(
        _ metric: Metric, _ a: Report, _ samplesA: ActivitySamples?, _ b: Report, _ samplesB: ActivitySamples?,
        confidence: Double
    ) -> MetricChange {
        let valueA = metric.value(in: a)
        let valueB = metric.value(in: b)
        var change = MetricChange(
            metric: metric, a: valueA, b: valueB, sampleA: metric.sampleSize(in: a), sampleB: metric.sampleSize(in: b),
            significance: nil, verdict: .unchanged, presentA: metric.isPresent(in: a), presentB: metric.isPresent(in: b)
        )
        guard change.presentA && change.presentB else {
            change.verdict = .absent
            return change
        }
        guard let valueA, let valueB else {
            change.verdict = (valueA == nil && valueB == nil) ? .unchanged : .undefined
            return change
        }
        if let fractionA = metric.fraction(in: a), let fractionB = metric.fraction(in: b) {
            change.significance = Significance.test(
                a: fractionA, b: fractionB, clustersA: samplesA?[metric], clustersB: samplesB?[metric],
                confidence: confidence)
        }
        if valueA == valueB {
            change.verdict = .unchanged
        } else if let significance = change.significance {
            if !significance.isSignificant {
                change.verdict = .noise
            } else {
                switch metric.direction {
                case .higherIsBetter: change.verdict = valueB > valueA ? .better : .worse
                case .lowerIsBetter: change.verdict = valueB < valueA ? .better : .worse
                case .neutral: change.verdict = .changed
                }
            }
        } else {
            change.verdict = .changed
        }
        return change
    }

    /// Whether nothing at all differs (every metric, reason and outcome).
    package var isEmpty: Bool {
        metrics.allSatisfy { $0.verdict == .unchanged } && reasons.allSatisfy { $0.status == .unchanged }
            && breakdowns.isEmpty && (records?.isEmpty ?? true)
    }
}

extension ReportDiff {
    /// What a reader must know before trusting the rates: a side whose
    /// deliverable updates have not one render has no render beacons (a
    /// sender-only batch), so its arrival rates are 0 % by construction.
    package var notes: [String] {
        var notes: [String] = []
        if schemas.a != schemas.b {
            let older = schemas.a < schemas.b ? "A" : "B"
            notes.append(
                "\(older) is a report of schema \(min(schemas.a, schemas.b)) (before contract 3.0): the figures of "
                    + "schema \(max(schemas.a, schemas.b)) are absent there, and the updates sent after a dismissal "
                    + "or a device-reported end still count there as lost, expired or stale (the rules before them), "
                    + "so its outcome counts and arrival rates are not like for like.")
        }
        return notes + renderNotes
    }

    private var renderNotes: [String] {
        let withoutRenders = [("A", rendered.a, deliverable.a), ("B", rendered.b, deliverable.b)]
            .filter { $0.1 == 0 && $0.2 > 0 }.map(\.0)
        switch withoutRenders.count {
        case 2:
            return [
                "Neither side has a rendered update: without the widget's render beacons the arrival rates are "
                    + "0 % by construction, not a measurement. Ingest the devices' uploads with the sender logs."
            ]
        case 1:
            return [
                "\(withoutRenders[0]) has no rendered update: without the widget's render beacons its arrival rates "
                    + "are 0 % by construction, so the arrival_rate change compares beacons, not delivery."
            ]
        default:
            return []
        }
    }
}

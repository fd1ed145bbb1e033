import ArrivalModel

/// The view model of the HTML report: every figure already formatted, every
/// chart already laid out, so the templates in `Dashboards/templates` only
/// place values. Stored properties only: the template engine reads them by
/// reflection.
struct HTMLReportPage {
    struct Tile {
        var name: String
        var value: String
        var detail: String
        var deltas: [Delta]
        var tone: String
    }

    struct Delta {
        var against: String
        var text: String
        var tone: String
        var arrow: String
        var word: String
    }

    struct Cell {
        var text: String
        /// Right-aligned: a count, rate or duration.
        var num: Bool

        init(text: String) {
            self.text = text
            num = Self.looksNumeric(text)
        }

        static func looksNumeric(_ text: String) -> Bool {
            let units: Set<String> = ["", "%", " ms", " s", " min", " h", " pt"]
            var body = Substring(text)
            guard let first = body.first,
                first.isNumber || first == "−" || first == "+" || String(first) == ReportFormat.none
            else { return false }
            if text == ReportFormat.none { return true }
            body = body.drop { $0 == "−" || $0 == "+" }
            let digits = body.prefix { $0.isASCII && ($0.isNumber || $0 == "," || $0 == ".") }
            return !digits.isEmpty && units.contains(String(body.dropFirst(digits.count)))
        }
    }
    struct Row {
        var cells: [Cell]

        /// The first cell names the row: never right-aligned, even when it reads like a number ("10", "18.2").
        init(cells: [Cell]) {
            self.cells = cells
            if !self.cells.isEmpty { self.cells[0].num = false }
        }
    }

    struct Table {
        var caption: String
        var header: [Cell]
        var rows: [Row]
        var tableNote: String?

        /// A table of texts: a cell is right-aligned when it reads as a number,
        /// except the first of a row, which names it.
        init(caption: String, header: [String], rows: [[String]], note: String? = nil) {
            self.caption = caption
            self.header = header.map(Cell.init)
            self.rows = rows.map { Row(cells: $0.map(Cell.init)) }
            tableNote = note
        }
    }

    struct OutcomeRow {
        var name: String
        var cls: String
        var count: String
        var share: String
        var meaning: String
    }

    struct ReasonRow {
        var reason: String
        var count: String
        var share: String
        var meaning: String
        var action: String
    }

    struct Breakdown {
        var title: String
        var chart: SVGChart
        var table: Table
    }

    struct Activity {
        var id: String
        var app: String
        var os: String
        var appVersion: String
        var devices: String
        var summary: String
        var steps: [Step]
        var more: String?
    }

    struct Step {
        var seq: String
        var event: String
        var at: String
        var answers: String
        var outcome: String
        var outcomeCls: String
        var rendered: String
        var surfaces: String
    }

    struct Legend {
        var name: String
        var cls: String
    }

    var title: String
    var windowText: String
    var generated: String
    /// The arrival that made the page (``ArrivalVersion/current``).
    var version = ArrivalVersion.current
    var verdict: String
    var verdictPoints: [Cell]
    var comparisonNote: String?
    var tiles: [Tile]
    var sources: Table
    /// The directory all listed files are in (their paths are shown relative to it).
    var pathRoot: String
    var sourcesSummary: String
    var funnel: SVGChart
    var funnelTable: Table
    var outcomes: [OutcomeRow]
    var legend: [Legend]
    var timeChart: SVGChart?
    var timeTable: Table?
    var timeTitle: String
    /// Contract 3.0: why the lost updates were lost, push-to-start, tokens to purge.
    var lossSummary: String
    var lossTable: Table?
    var startsSummary: String
    var startsTable: Table?
    /// Contract 3.2: "Devices far below the fleet" (nil: a report without `outliers`).
    var outliersSummary: String?
    var outliersTable: Table?
    /// Apple's numbers beside arrival's (issue 54): nil without them.
    var appleSummary: String?
    var appleTables: [Table] = []
    var deadTokensSummary: String
    var deadTokensTable: Table?
    /// Contract 3.0: per broadcast channel (nil: no broadcast in the window).
    var channelsSummary: String
    var channelsTable: Table?
    var reasons: [ReasonRow]
    var reasonChart: SVGChart?
    var rejectedTotal: String
    var latencyChart: SVGChart
    var latencyTable: Table
    var latencySummary: String
    var breakdowns: [Breakdown]
    /// Contract 3.1: "Is Apple throttling these updates?" (nil: no evidence in the window).
    var throttlingNote: String?
    var throttling: [Breakdown]
    var trendCharts: [SVGChart]
    var trendTable: Table?
    var activities: [Activity]
    var activitiesNote: String
    var qualitySummary: Table
    var malformedTable: Table?
    var duplicatesTable: Table?
    var skippedTable: Table?
}

/// The headline metrics: tiles, comparisons and trend lines.
struct HeadlineMetric {
    enum Kind { case rate, count, milliseconds }
    var name: String
    var kind: Kind
    var higherIsBetter: Bool
    var value: @Sendable (Report) -> Double?

    static let all: [HeadlineMetric] = [
        HeadlineMetric(name: "Arrival rate", kind: .rate, higherIsBetter: true) { $0.updates.arrivalRate },
        HeadlineMetric(name: "Effective arrival rate", kind: .rate, higherIsBetter: true) {
            $0.updates.effectiveArrivalRate
        },
        HeadlineMetric(name: "APNs acceptance", kind: .rate, higherIsBetter: true) { $0.requests.acceptanceRate },
        HeadlineMetric(name: "Stale-timestamp drops", kind: .count, higherIsBetter: false) {
            Double($0.updates.staleTimestamp)
        },
        HeadlineMetric(name: "Oversize failures", kind: .count, higherIsBetter: false) {
            Double($0.requests.oversizeFailures)
        },
        HeadlineMetric(name: "Callback loss", kind: .rate, higherIsBetter: false) { $0.callbacks.callbackLossRate },
        HeadlineMetric(name: "Token-callback loss", kind: .rate, higherIsBetter: false) {
            $0.callbacks.tokenCallbackLossRate
        },
        HeadlineMetric(name: "Render latency p50", kind: .milliseconds, higherIsBetter: false) {
            $0.latency.p50.map(Double.init)
        },
        HeadlineMetric(name: "Render latency p90", kind: .milliseconds, higherIsBetter: false) {
            $0.latency.p90.map(Double.init)
        },
    ]

    func format(_ value: Double?) -> String {
        guard let value else { return ReportFormat.none }
        switch kind {
        case .rate: return ReportFormat.percent(value)
        case .count: return ReportFormat.count(Int(value))
        case .milliseconds: return ReportFormat.duration(Int64(value))
        }
    }

    /// The change from `before` to `now`, in points for rates.
    func delta(now: Double?, before: Double?, against: String) -> HTMLReportPage.Delta? {
        guard let now, let before else { return nil }
        let change = now - before
        let text: String
        switch kind {
        case .rate: text = (change >= 0 ? "+" : "−") + ReportFormat.fixed(abs(change) * 100, 1) + " pt"
        case .count: text = (change >= 0 ? "+" : "−") + ReportFormat.count(Int(abs(change).rounded()))
        case .milliseconds: text = (change >= 0 ? "+" : "−") + ReportFormat.duration(Int64(abs(change).rounded()))
        }
        let negligible = kind == .rate ? abs(change) < 0.0005 : abs(change) < 0.5
        if negligible {
            return HTMLReportPage.Delta(against: against, text: text, tone: "flat", arrow: "■", word: "no change")
        }
        let better = (change > 0) == higherIsBetter
        return HTMLReportPage.Delta(
            against: against, text: text, tone: better ? "good" : "bad", arrow: change > 0 ? "▲" : "▼",
            word: better ? "better" : "worse")
    }
}

/// The median of some values (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

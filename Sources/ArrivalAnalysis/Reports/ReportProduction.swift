package import ArrivalModel
package import ArrivalStore

/// What the analysis produces for one report of a store: the contract's
/// report, or the daily report (that report with the tables, timelines and
/// trend the HTML page shows). The analysis produces it; rendering only
/// turns it into text (`ReportOutput`), so the report's path runs one way.
///
/// Its static functions are the one way the command line, the collector
/// and `arrival diff` get a report, or what a report is made of (its samples
/// for significance tests, its lost updates), from a store: the report
/// builders behind them are the analysis' own (tests and benchmarks call
/// them directly, to set partitions or time one step).
package enum ProducedReport: Sendable {
    case report(Report)
    case daily(DailyReport)

    /// The contract's report, whichever was produced.
    package var report: Report {
        switch self {
        case .report(let report): report
        case .daily(let daily): daily.report
        }
    }

    /// Produces the report of `window` (nil: all data) of `store`: the daily
    /// report when `daily` (with `trendDays` of trend lines), else the
    /// contract's report.
    package static func of(
        _ store: any StoreReader, window: ReportWindow?, daily: Bool, trendDays: Int? = nil
    ) throws -> ProducedReport {
        daily
            ? .daily(try DailyReportBuilder(store: store).build(window: window, trendDays: trendDays))
            : .report(try ReportBuilder(store: store).build(window: window))
    }

    /// The contract's report of `window` with the per-activity sums of its
    /// rates (``ActivitySamples``, for ``Significance``) and, for a store
    /// analysed whole rather than in partitions, the analysis it came from
    /// (what `arrival diff --records` compares): one side of a comparison.
    package static func sampled(_ store: any StoreReader, window: ReportWindow?) throws -> (
        report: Report, samples: ActivitySamples?, analysis: DeliveryAnalysis?
    ) {
        try ReportBuilder(store: store).build(window: window, sampling: true)
    }

    /// The lost updates of `window` (`arrival lost`), from the same analysis
    /// as the report's, so that their count by cause is the report's
    /// `updates.lost_by_cause` (``ReportBuilder/lostUpdates(window:causes:apps:channels:)``).
    package static func lostUpdates(
        of store: any StoreReader, window: ReportWindow?, causes: Set<LossCause>? = nil, apps: Set<String>? = nil,
        channels: Set<String>? = nil, devices: Set<String>? = nil
    ) throws -> [LostUpdate] {
        try ReportBuilder(store: store).lostUpdates(
            window: window, causes: causes, apps: apps, channels: channels, devices: devices)
    }

    /// One device's activities and their updates of `window` (`arrival activity --device`), from the
    /// same analysis as the report's (``ReportBuilder/deviceActivities(device:window:)``).
    package static func deviceActivities(
        of store: any StoreReader, device: String, window: ReportWindow?
    ) throws -> DeviceActivities {
        try ReportBuilder(store: store).deviceActivities(device: device, window: window)
    }
}

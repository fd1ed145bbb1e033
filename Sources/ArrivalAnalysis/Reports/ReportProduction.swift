package import ArrivalModel
package import ArrivalStore

/// What the analysis produces for one report of a store: the contract's
/// report, or the daily report (that report with the tables, timelines and
/// trend the HTML page shows). The analysis produces it; rendering only
/// turns it into text (`ReportOutput`), so the report's path runs one way.
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
}

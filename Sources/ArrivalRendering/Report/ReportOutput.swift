import ArrivalAnalysis
package import ArrivalModel
package import ArrivalStore
import Foundation

/// A report of a store as `arrival report` prints it and the collector's
/// `GET /v1/report` serves it: one function for both, so both give the same bytes.
package enum ReportOutput: String, CaseIterable, Sendable {
    /// The contract's report object (`arrival.report/2`).
    case json
    case markdown
    /// The daily report: one self-contained page with charts.
    case html

    /// The media type the collector serves this format as.
    package var contentType: String {
        switch self {
        case .json: "application/json; charset=utf-8"
        case .markdown: "text/markdown; charset=utf-8"
        case .html: "text/html; charset=utf-8"
        }
    }

    /// The report of `window` (nil: all data) in this format, and how many
    /// requests the window holds (0: nothing to report on). `trendDays` adds
    /// the HTML report's trend lines.
    package func render(of store: Store, window: ReportWindow?, trendDays: Int? = nil) throws
        -> (text: String, requests: Int)
    {
        switch self {
        case .json, .markdown:
            let report = try ReportBuilder(store: store).build(window: window)
            return (self == .json ? report.jsonText() : report.markdownText(), report.requests.total)
        case .html:
            let daily = try DailyReportBuilder(store: store).build(window: window, trendDays: trendDays)
            let text = try daily.htmlText(generatedAt: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
            return (text, daily.report.requests.total)
        }
    }
}

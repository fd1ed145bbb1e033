package import ArrivalAnalysis
import ArrivalModel
import Foundation

/// A report as `arrival report` prints it and the collector's
/// `GET /v1/report` serves it: one function for both, so both give the same
/// bytes. The analysis produces the report (``ProducedReport``); this only
/// renders it.
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

    /// Whether this format shows the daily report (``ProducedReport/daily(_:)``)
    /// rather than the contract's report alone.
    package var showsDailyReport: Bool { self == .html }

    /// The text of `produced` in this format. The JSON and markdown of a
    /// daily report are those of its contract report.
    package func render(_ produced: ProducedReport) throws -> String {
        switch (self, produced) {
        case (.json, _): produced.report.jsonText()
        case (.markdown, _): produced.report.markdownText()
        case (.html, .daily(let daily)):
            try daily.htmlText(generatedAt: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        case (.html, .report(let report)):
            throw ReportOutputError(
                "the HTML page needs the daily report, not the contract's report alone (\(report.requests.total) requests)"
            )
        }
    }
}

/// A report produced for another format than the one asked for (a programming error, never input).
package struct ReportOutputError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import Foundation
import Metrics

/// What the collector counts, through swift-metrics (the `serve` command
/// bootstraps its Prometheus backend; `GET /metrics` prints the registry).
/// Request counts and durations come from Hummingbird's `MetricsMiddleware`.
struct CollectorMetrics: Sendable {
    /// An upload's result, as the `result` label of `arrival_uploads_total`.
    enum UploadResult: String, CaseIterable {
        case queued, duplicate, unauthorized, forbidden
        case tooLarge = "too_large"
        case empty
        case badName = "bad_name"
        case spoolFull = "spool_full"
        case failed
    }

    func upload(role: Role?, result: UploadResult) {
        Counter(
            label: "arrival_uploads_total",
            dimensions: [("role", role?.rawValue ?? "none"), ("result", result.rawValue)]
        ).increment()
    }

    func received(bytes: Int, role: Role) {
        Counter(label: "arrival_upload_bytes_total", dimensions: [("role", role.rawValue)]).increment(by: bytes)
    }

    /// What one ingested upload added.
    func ingested(_ summary: IngestSummary) {
        for kind in RecordKind.allCases {
            let count = summary.records[kind] ?? 0
            if count > 0 {
                Counter(label: "arrival_records_ingested_total", dimensions: [("kind", kind.rawValue)])
                    .increment(by: count)
            }
        }
        if summary.duplicateRecords > 0 {
            Counter(label: "arrival_duplicate_records_total").increment(by: summary.duplicateRecords)
        }
        for (cause, count) in summary.malformedByCause {
            Counter(label: "arrival_malformed_lines_total", dimensions: [("cause", cause.rawValue)])
                .increment(by: count)
        }
        Counter(label: "arrival_uploads_ingested_total").increment()
    }

    func ingestFailed() {
        Counter(label: "arrival_ingest_failures_total").increment()
    }

    /// The spool's depth and the ingest lag (the oldest queued upload's age).
    func spool(uploads: Int, bytes: Int, oldestReceivedAt: Int64?, now: Int64) {
        Gauge(label: "arrival_spool_uploads").record(uploads)
        Gauge(label: "arrival_spool_bytes").record(bytes)
        Gauge(label: "arrival_ingest_lag_seconds").record(
            Double(oldestReceivedAt.map { max(0, now - $0) } ?? 0) / 1000)
    }

    /// Today's (UTC) arrival and effective arrival rate per app.
    func dailyRates(_ report: Report) {
        for (app, counts) in report.breakdowns["app"] ?? [:] {
            let dimensions = [("app", app.text)]
            if let rate = counts.arrivalRate {
                Gauge(label: "arrival_app_arrival_rate", dimensions: dimensions).record(rate)
            }
            if let rate = counts.effectiveArrivalRate {
                Gauge(label: "arrival_app_effective_arrival_rate", dimensions: dimensions).record(rate)
            }
            Gauge(label: "arrival_app_updates_sent", dimensions: dimensions).record(counts.sent)
        }
    }
}

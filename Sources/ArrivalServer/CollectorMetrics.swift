import ArrivalIngest
import ArrivalModel
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
        /// A Transfer-Encoding other than chunked: 501.
        case unsupportedEncoding = "unsupported_encoding"
        case spoolFull = "spool_full"
        /// The spool's file system is full (ENOSPC): 503, back-pressure.
        case diskFull = "disk_full"
        /// Past the cap of uploads at once for the role or the address: 429.
        case rateLimited = "rate_limited"
        /// The client hung up or stopped short of its Content-Length.
        case aborted
        /// A connection limit passed (body idle, whole upload, shutdown grace): 408.
        case timedOut = "timed_out"
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

    /// What a run of ingested uploads added, and how long it took.
    func ingested(_ summary: IngestSummary, uploads: Int, seconds: Double) {
        FloatingPointCounter(label: "arrival_ingest_seconds_total").increment(by: seconds)
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
        Counter(label: "arrival_uploads_ingested_total").increment(by: uploads)
    }

    /// Why a run stopped before its end (its unfinished uploads stay queued).
    enum RunStop: String {
        /// Sender uploads were waiting and the device run's slice was over.
        case preempted
        case shutdown
    }

    func runStopped(_ reason: RunStop) {
        Counter(label: "arrival_ingest_runs_stopped_total", dimensions: [("reason", reason.rawValue)]).increment()
    }

    /// Uploads and bytes queued per role, and the age of each role's oldest.
    func queue(role: Role, uploads: Int, bytes: Int, oldestReceivedAt: Int64?, now: Int64) {
        Gauge(label: "arrival_ingest_queue_uploads", dimensions: [("role", role.rawValue)]).record(uploads)
        Gauge(label: "arrival_ingest_queue_bytes", dimensions: [("role", role.rawValue)]).record(bytes)
        Gauge(label: "arrival_ingest_queue_lag_seconds", dimensions: [("role", role.rawValue)]).record(
            Double(oldestReceivedAt.map { max(0, now - $0) } ?? 0) / 1000)
    }

    /// A report request: computed, served from the cache, answered by a
    /// computation another request started, or refused past the cap.
    enum ReportResult: String {
        case computed
        case cached
        case shared
        case refused
    }

    func report(_ result: ReportResult) {
        Counter(label: "arrival_reports_total", dimensions: [("result", result.rawValue)]).increment()
    }

    func ingestFailed() {
        Counter(label: "arrival_ingest_failures_total").increment()
    }

    /// An upload the store refused alone, attempt after attempt, was set aside.
    func setAside(role: Role) {
        Counter(label: "arrival_uploads_set_aside_total", dimensions: [("role", role.rawValue)]).increment()
    }

    /// Uploads set aside now, per role, and whether the store can be written (1) or not (0) as of the last run.
    func rejected(byRole: [Role: Int], storeWritable: Bool) {
        for (role, count) in byRole {
            Gauge(label: "arrival_uploads_rejected", dimensions: [("role", role.rawValue)]).record(count)
        }
        Gauge(label: "arrival_store_writable").record(storeWritable ? 1 : 0)
    }

    /// Whether the store answered the last time it was asked (1) or not (0).
    func store(reachable: Bool) {
        Gauge(label: "arrival_store_reachable").record(reachable ? 1 : 0)
    }

    /// The spool's depth and the ingest lag (the oldest queued upload's age).
    func spool(uploads: Int, bytes: Int, oldestReceivedAt: Int64?, now: Int64) {
        Gauge(label: "arrival_spool_uploads").record(uploads)
        Gauge(label: "arrival_spool_bytes").record(bytes)
        Gauge(label: "arrival_ingest_lag_seconds").record(
            Double(oldestReceivedAt.map { max(0, now - $0) } ?? 0) / 1000)
    }

    /// What each metric means, printed as its `# HELP` line (swift-metrics
    /// has no help text; Prometheus's own lint asks for one).
    static let help: [String: String] = [
        "arrival_uploads_total": "Uploads answered, by the token's role and the result.",
        "arrival_connection_timeouts_total":
            "Connections closed by a limit: header, body_idle, upload (--*-timeout) or shutdown (--shutdown-grace).",
        "arrival_uploads_in_progress":
            "Uploads being received, by role (capped by --max-device-uploads and --max-sender-uploads).",
        "arrival_upload_bytes_total": "Bytes of uploads spooled, by role.",
        "arrival_uploads_ingested_total": "Uploads the worker ingested and removed from the spool.",
        "arrival_records_ingested_total": "New records stored, by kind.",
        "arrival_duplicate_records_total": "Records already stored when an upload repeated them.",
        "arrival_malformed_lines_total": "Malformed lines in ingested uploads, by cause.",
        "arrival_ingest_seconds_total": "Time the worker spent ingesting uploads, commits included.",
        "arrival_ingest_failures_total": "Attempts to ingest an upload that failed (it stays queued).",
        "arrival_uploads_set_aside_total":
            "Uploads set aside, by role: the store refused each alone, attempt after attempt (its bytes stay).",
        "arrival_uploads_rejected":
            "Uploads set aside now (GET /v1/uploads?state=rejected lists them), by role; each start tries them again.",
        "arrival_store_writable":
            "1 when the last ingest run could write the store, 0 while a failure of the store as a whole lasts.",
        "arrival_store_reachable":
            "1 when the store answered the last time it was asked (an ingest run, an upload's lookup, /readyz), 0 when it did not: a server down, a connection refused or cut, no answer in time.",
        "arrival_spool_uploads": "Uploads acknowledged and not yet ingested.",
        "arrival_spool_bytes": "Bytes of the uploads waiting in the spool.",
        "arrival_ingest_lag_seconds": "Age of the oldest upload waiting in the spool (0 when empty).",
        "arrival_ingest_queue_uploads": "Uploads acknowledged and not yet ingested, by the role of their token.",
        "arrival_ingest_queue_bytes": "Bytes of the uploads waiting in the spool, by the role of their token.",
        "arrival_ingest_queue_lag_seconds":
            "Age of the oldest upload waiting in the spool, by the role of its token (0 when none waits).",
        "arrival_ingest_runs_stopped_total":
            "Ingest runs stopped between batches, their unfinished uploads left queued: preempted (a device run "
            + "while sender uploads waited) or shutdown.",
        "arrival_reports_total":
            "GET /v1/report requests with a valid query, by result: computed, cached, shared (another request's "
            + "computation) or refused (past --max-concurrent-reports: 503).",
        "arrival_app_arrival_rate": "Today's (UTC) arrival rate per app: rendered / (rendered + superseded + lost).",
        "arrival_app_effective_arrival_rate":
            "Today's (UTC) effective arrival rate per app: (rendered + superseded) / (rendered + superseded + lost).",
        "arrival_app_updates_sent": "Today's (UTC) logical updates per app.",
        "http_server_requests_total": "HTTP requests answered, by route, method and status.",
        "http_server_request_errors_total": "HTTP requests that ended in an error, by route and method.",
        "http_server_request_duration": "Time to answer an HTTP request, in seconds.",
        "http_server_active_requests": "HTTP requests being answered.",
    ]

    /// The registry's text with a `# HELP` line before each `# TYPE` line.
    static func withHelp(_ exposition: String) -> String {
        var out = ""
        out.reserveCapacity(exposition.utf8.count + 2048)
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.dropFirst(7).split(separator: " ").first,
                let text = help[String(name)]
            {
                out += "# HELP \(name) \(text)\n"
            }
            out += line
            out += "\n"
        }
        return String(out.dropLast())
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

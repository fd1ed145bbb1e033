import ArrivalAnalysis
package import ArrivalIngest
package import ArrivalModel
package import ArrivalStore
import Foundation

/// Why a side of `diff` or `gate` could not be read. Each message names the
/// path and says what to do; the command line exits 2 on these.
package enum ComparisonError: Error, CustomStringConvertible, Sendable {
    case notFound(String)
    case unreadable(String, reason: String)
    case notAReport(String, reason: String)
    case noRecords(String, detail: String)
    case windowOnReportJSON(String)
    case noDetail(String)

    package var description: String {
        switch self {
        case .notFound(let path):
            "'\(path)' does not exist. Give a batch file (.jsonl or .jsonl.gz), a directory of batches, an arrival store (.sqlite) or a report JSON."
        case .unreadable(let path, let reason):
            "cannot read '\(path)': \(reason)."
        case .notAReport(let path, let reason):
            "'\(path)' looks like a report JSON but is not one: \(reason). Make it with 'arrival report --format json', or pass the batches it came from."
        case .noRecords(let path, let detail):
            "'\(path)' holds no valid apns record (\(detail)). Is it the right file? A corrupt or empty batch cannot be compared."
        case .windowOnReportJSON(let path):
            "'\(path)' is a report JSON, which already covers a fixed window; drop --day/--from/--to, or pass the store or batches instead."
        case .noDetail(let path):
            "'\(path)' is a report JSON, which has no records; --records needs batches or a store on both sides."
        }
    }
}

/// One side of a comparison: anything `arrival diff` and `arrival gate`
/// accept, read into a report (and, from records, the per-activity sums
/// that make significance tests honest).
///
/// Batches are ingested into a temporary store that is deleted with the
/// side; the user's own store is opened read-only and never written.
package final class ComparisonSide {
    package enum Source: String, Sendable {
        case batches, store
        case reportJSON = "report-json"
    }

    package let path: String
    package let source: Source
    package let report: Report
    /// Per-activity sums of each rate; nil for a report JSON.
    package let samples: ActivitySamples?
    /// What ingesting the batches found; nil for a store or report JSON.
    package let ingestSummary: IngestSummary?
    /// The store the report came from (temporary for batches), for record diffs.
    let store: (any StoreReader)?
    let analysis: DeliveryAnalysis?
    private let temporaryDirectory: URL?

    private init(
        path: String, source: Source, report: Report, samples: ActivitySamples?, ingestSummary: IngestSummary?,
        store: (any StoreReader)?, analysis: DeliveryAnalysis?, temporaryDirectory: URL?
    ) {
        self.path = path
        self.source = source
        self.report = report
        self.samples = samples
        self.ingestSummary = ingestSummary
        self.store = store
        self.analysis = analysis
        self.temporaryDirectory = temporaryDirectory
    }

    deinit {
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    /// What kind of input `path` is: an SQLite file by its header, a report
    /// JSON by its `schema`, anything else (gzip, JSON Lines, a directory)
    /// batches.
    package static func classify(_ path: String) throws(ComparisonError) -> Source {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .notFound(path) }
        if isDirectory.boolValue { return .batches }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .unreadable(path, reason: "permission denied or not a regular file")
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64)) ?? Data()
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return .store }
        if head.starts(with: [0x1F, 0x8B]) { return .batches }
        // A report JSON is one object over several lines whose first line is
        // "{" alone; a JSON Lines batch has a whole record on its first line.
        let text = String(decoding: head, as: UTF8.self)
        let firstLine = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        if firstLine.trimmingCharacters(in: .whitespaces) == "{" { return .reportJSON }
        return .batches
    }

    /// Reads `path` into a side. `window` limits a store or batches to a
    /// window of `sent_at`; `detail` keeps the store and analysis for a
    /// record-level diff.
    package static func load(
        _ path: String, window: ReportWindow?, detail: Bool = false
    ) throws(ComparisonError) -> ComparisonSide {
        let source = try classify(path)
        switch source {
        case .reportJSON:
            guard window == nil else { throw .windowOnReportJSON(path) }
            guard !detail else { throw .noDetail(path) }
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw .unreadable(path, reason: error.localizedDescription)
            }
            let report: Report
            do {
                report = try Report(jsonData: data)
            } catch {
                throw .notAReport(path, reason: error.description)
            }
            return ComparisonSide(
                path: path, source: source, report: report, samples: nil, ingestSummary: nil,
                store: nil, analysis: nil, temporaryDirectory: nil)
        case .store:
            let store: SQLiteStore
            do {
                store = try SQLiteStore(readingAt: path)
            } catch {
                // The store's own words when it has advice (missing, empty, another application's).
                throw .unreadable(
                    path, reason: error.hint != nil ? error.message : "\(error.message); it is no arrival store")
            }
            return try analyse(
                path: path, source: source, store: store, window: window, detail: detail,
                summary: nil, temporaryDirectory: nil)
        case .batches:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("arrival-compare-\(getpid())-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw .unreadable(
                    path, reason: "cannot create a temporary store in \(directory.path): \(error.localizedDescription)")
            }
            do {
                let store = try SQLiteStore(path: directory.appendingPathComponent("side.sqlite").path, throwaway: true)
                let summary = try IngestPipeline(store: store).ingest(paths: [path])
                guard (summary.records[.apns] ?? 0) > 0 else {
                    let malformed = summary.malformedLines
                    let detail =
                        summary.filesRead == 0
                        ? "no batch files found"
                        : "\(summary.filesRead) file(s), \(summary.lines) line(s), \(malformed) malformed"
                            + (summary.firstMalformed.first.map { ", first at \($0)" } ?? "")
                    throw ComparisonError.noRecords(path, detail: detail)
                }
                if detail {
                    // The record diff reads apns records in apns_id order; sorting
                    // them here, on this side's own thread, in a covering index keeps the merge streaming.
                    try store.indexRequestsByApnsID()
                }
                return try analyse(
                    path: path, source: source, store: store, window: window, detail: detail,
                    summary: summary, temporaryDirectory: directory)
            } catch let error as ComparisonError {
                try? FileManager.default.removeItem(at: directory)
                throw error
            } catch {
                try? FileManager.default.removeItem(at: directory)
                throw .unreadable(path, reason: "\(error)")
            }
        }
    }

    /// A side read from a store's reader role in place (a PostgreSQL
    /// store, read on the server), named `name`.
    package static func load(
        reader: any StoreReader, named name: String, window: ReportWindow?, detail: Bool = false
    ) throws(ComparisonError) -> ComparisonSide {
        try analyse(
            path: name, source: .store, store: reader, window: window, detail: detail, summary: nil,
            temporaryDirectory: nil)
    }

    private static func analyse(
        path: String, source: Source, store: any StoreReader, window: ReportWindow?, detail: Bool,
        summary: IngestSummary?, temporaryDirectory: URL?
    ) throws(ComparisonError) -> ComparisonSide {
        do {
            let built = try ProducedReport.sampled(store, window: window)
            return ComparisonSide(
                path: path, source: source, report: built.report, samples: built.samples, ingestSummary: summary,
                store: detail ? store : nil, analysis: detail ? built.analysis : nil,
                temporaryDirectory: temporaryDirectory)
        } catch {
            throw .unreadable(path, reason: "\(error)")
        }
    }
}

extension ComparisonSide {
    /// Loads two sides at once, each on its own thread: ingesting a batch
    /// is mostly one core's work, so two sides take about the time of one.
    package static func loadPair(
        _ a: String, _ b: String, window: ReportWindow?, detail: Bool = false
    ) throws(ComparisonError) -> (ComparisonSide, ComparisonSide) {
        let boxA = LoadBox()
        let boxB = LoadBox()
        let done = DispatchSemaphore(value: 0)
        for (path, box) in [(a, boxA), (b, boxB)] {
            let thread = Thread {
                box.result = Result { () throws(ComparisonError) in try load(path, window: window, detail: detail) }
                done.signal()
            }
            thread.stackSize = 1 << 22
            thread.start()
        }
        done.wait()
        done.wait()
        // A's error first, so the message does not depend on which thread lost.
        guard let resultA = boxA.result, let resultB = boxB.result else {
            throw .unreadable(a, reason: "loading stopped without a result")
        }
        return (try resultA.get(), try resultB.get())
    }
}

/// One thread's result, handed to the waiting thread after the semaphore.
/// `@unchecked Sendable`: the loading thread writes `result` before it signals the semaphore; the caller reads it after the wait.
private final class LoadBox: @unchecked Sendable {
    var result: Result<ComparisonSide, ComparisonError>?
}

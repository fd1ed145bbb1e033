import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Foundation

// Benchmarks of the pipeline's stages, run by Scripts/benchmark.sh on a
// generated fleet. Each mode prints one line: what it did, records, seconds,
// records per second.
//
//   arrival-bench walk PATH…             only list the files an ingest of PATH… would read
//   arrival-bench decode FILE…           read + inflate + decode only (one thread)
//   arrival-bench foundation FILE…       the same with JSONDecoder + Date.ISO8601FormatStyle,
//                                        for comparison (no duplicate-key, depth or type checks)
//   arrival-bench ingest DB FILE…        the full ingest into a store
//   arrival-bench report DB              the JSON report over the whole store
//   arrival-bench html DB [DAY] [DAYS]   the HTML report of one UTC day (default: the whole store)
//                                        with a DAYS-day trend (default 7), written to DB.html

let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first else {
    FileHandle.standardError.write(Data("usage: arrival-bench decode FILE… | ingest DB FILE… | report DB\n".utf8))
    exit(2)
}

let clock = ContinuousClock()
do {
    switch mode {
    case "decode":
        var decoder = RecordDecoder()
        var records = 0
        var malformed = 0
        let elapsed = try clock.measure {
            for path in InputWalker(paths: Array(arguments.dropFirst())).files {
                _ = try LineReader().read(path: path) { line in
                    guard let bytes = line.bytes else {
                        malformed += 1
                        return
                    }
                    switch decoder.decode(bytes) {
                    case .record: records += 1
                    case .malformed: malformed += 1
                    case .blank: break
                    }
                }
            }
        }
        print(
            "decode: \(records) records, \(malformed) malformed, \(String(format: "%.2f", elapsed.inSeconds)) s, \(Int(Double(records) / elapsed.inSeconds)) records/s"
        )
    case "walk":
        var files = 0
        let elapsed = clock.measure { files = InputWalker(paths: Array(arguments.dropFirst())).files.count }
        print("walk: \(files) files, \(String(format: "%.3f", elapsed.inSeconds)) s")
    case "foundation":
        // Field names as the JSON keys, for Decodable.
        // swift-format-ignore: AlwaysUseLowerCamelCase
        struct Line: Decodable {
            var kind: String
            var apns_id: String?
            var sent_at: String?
            var rendered_at: String?
            var received_at: String?
            var status: Int64?
            var push_token: String?
            var activity_id: String?
            var seq: Int64?
            var aps_timestamp: Int64?
        }
        let decoder = JSONDecoder()
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var records = 0
        var malformed = 0
        let elapsed = try clock.measure {
            for path in InputWalker(paths: Array(arguments.dropFirst())).files {
                _ = try LineReader().read(path: path) { line in
                    guard let bytes = line.bytes, !bytes.isEmpty else { return }
                    do {
                        let value = try decoder.decode(Line.self, from: Data(buffer: bytes))
                        if let time = value.sent_at ?? value.rendered_at ?? value.received_at {
                            _ = try style.parse(time)
                        }
                        records += 1
                    } catch {
                        malformed += 1
                    }
                }
            }
        }
        print(
            "foundation: \(records) records, \(malformed) malformed, \(String(format: "%.2f", elapsed.inSeconds)) s, \(Int(Double(records) / elapsed.inSeconds)) records/s"
        )
    case "ingest":
        guard arguments.count >= 3 else { throw CocoaError(.fileNoSuchFile) }
        var summary = IngestSummary()
        // From opening the store to closing it: the close copies what is
        // left in the write-ahead log into the database file.
        let elapsed = try clock.measure {
            let store = try SQLiteStore(path: arguments[1])
            // As `arrival ingest` runs it.
            var options = IngestPipeline.Options()
            options.bulkLoadWhenNew = true
            summary = try IngestPipeline(store: store, options: options).ingest(paths: Array(arguments.dropFirst(2)))
        }
        let total = summary.newRecords + summary.duplicateRecords
        print(
            "ingest: \(total) records (\(summary.newRecords) new), \(summary.malformedLines) malformed, \(String(format: "%.2f", elapsed.inSeconds)) s, \(Int(Double(total) / elapsed.inSeconds)) records/s"
        )
    case "report":
        guard arguments.count >= 2 else { throw CocoaError(.fileNoSuchFile) }
        let store = try SQLiteStore(path: arguments[1])
        var report = Report(window: nil)
        let elapsed = try clock.measure {
            report = try ReportBuilder(store: store).build(window: nil)
        }
        print(
            "report: \(report.updates.sent) updates, \(report.requests.total) requests, \(String(format: "%.2f", elapsed.inSeconds)) s"
        )
    case "html":
        guard arguments.count >= 2 else { throw CocoaError(.fileNoSuchFile) }
        let store = try SQLiteStore(path: arguments[1])
        let window = arguments.count >= 3 ? ReportWindow.day(arguments[2]) : nil
        let days = arguments.count >= 4 ? Int(arguments[3]) ?? 7 : 7
        var daily: DailyReport?
        var html = ""
        let elapsed = try clock.measure {
            let built = try DailyReportBuilder(store: store).build(window: window, trendDays: days)
            html = try built.htmlText(generatedAt: Int64(Date().timeIntervalSince1970 * 1000))
            daily = built
        }
        try Data(html.utf8).write(to: URL(fileURLWithPath: arguments[1] + ".html"))
        print(
            "html: \(daily?.report.updates.sent ?? 0) updates, \(daily?.report.requests.total ?? 0) requests, \(html.utf8.count) bytes, \(String(format: "%.2f", elapsed.inSeconds)) s"
        )
    default:
        FileHandle.standardError.write(Data("unknown mode '\(mode)'\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}

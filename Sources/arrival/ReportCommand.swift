import ArgumentParser
import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Foundation

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Report arrival rates, outcomes, callback loss and data quality for a window of sent_at."
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, markdown, html
    }

    @OptionGroup var store: StoreOptions
    @OptionGroup var window: WindowOptions

    @Option(
        help: ArgumentHelp(
            "Output format: json (the contract's report object), markdown, or html (one self-contained page with charts).",
            discussion:
                "Without it: markdown when standard output is a terminal (a person reads it), json otherwise (a pipe, "
                + "a file, --out: a program reads it)."))
    var format: Format?

    /// The format asked for, or the one for where the report goes.
    var resolvedFormat: Format {
        format ?? (out == nil && isatty(STDOUT_FILENO) == 1 ? .markdown : .json)
    }

    @Option(
        help:
            "With --format html: add day-by-day trend lines for the N days ending at --day (or the window's last day, or the store's last day)."
    )
    var days: Int?

    @Option(help: "Write the report to this file instead of standard output.")
    var out: String?

    @Flag(
        help: ArgumentHelp(
            "Fail (exit 1, no report written) when the window holds no request, instead of a warning.",
            discussion:
                "For daily jobs: a day whose uploads never arrived should fail the job, not mail an empty report."))
    var requireData = false

    func validate() throws {
        _ = try window.resolved()
        if let days {
            guard format == .html else {
                throw ValidationError("--days adds trend lines to the HTML report; add --format html.")
            }
            guard (1...366).contains(days) else { throw ValidationError("--days must be between 1 and 366.") }
        }
    }

    func run() throws {
        // Read-only: a report never changes the store, works in a read-only
        // directory, and says so when --db names no store.
        let database = try store.reading()
        let window = try self.window.resolved()
        let (text, requests) = try renderReport(
            of: database, window: window, format: resolvedFormat, trendDays: days)
        if requests == 0 {
            let empty = try emptyWindow(of: database, window: window)
            if requireData { throw empty }
            try write(text, to: out)
            FileHandle.standardError.write(Data((empty.warningDescription + "\n").utf8))
        } else {
            try write(text, to: out)
        }
    }
}

/// The report of `window` in `format` (the one path of `report` and `demo`),
/// with the number of requests it counts.
func renderReport(of store: any StoreReader, window: ReportWindow?, format: ReportCommand.Format, trendDays: Int? = nil)
    throws
    -> (text: String, requests: Int)
{
    let output = ReportOutput(rawValue: format.rawValue)!
    let produced = try ProducedReport.of(
        store, window: window, daily: output.showsDailyReport, trendDays: trendDays)
    return (try output.render(produced), produced.report.requests.total)
}

private func emptyWindow(of store: any StoreReader, window: ReportWindow?) throws -> Diagnostic {
    func day(_ ms: Int64) -> String { String(RFC3339.format(milliseconds: ms).prefix(10)) }
    guard let span = try store.requestSpan() else {
        return Diagnostic(
            .input, "the store '\(store.label)' holds no requests",
            hint: "ingest the sender's batches first: arrival ingest PATH… --db \(store.label)")
    }
    let asked: String
    if let window, window.wholeDay != nil {
        asked = day(window.from)
    } else if let window {
        asked = WindowOptions.scope(window)
    } else {
        asked = "the store"
    }
    return Diagnostic(
        .input, "the store has no requests in \(asked); it holds \(day(span.first)) … \(day(span.last))",
        hint: "pick a --day (or --from and --to) in that range, or ingest the uploads of \(asked) first.")
}

func write(_ text: String, to path: String?) throws {
    guard let path else {
        FileHandle.standardOutput.write(Data(text.utf8))
        return
    }
    do {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    } catch {
        throw Diagnostic(
            .io, "cannot write '\(path)': \(error.localizedDescription)",
            hint: "check the directory exists and is writable.", location: Diagnostic.Location(path: path))
    }
}

/// `--day D` or `--from T --to T`, resolved in one place.
struct WindowOptions: ParsableArguments {
    @Option(help: "Report one UTC day, YYYY-MM-DD.")
    var day: String?

    @Option(help: "Start of the window (inclusive), an RFC 3339 time such as 2026-11-21T00:00:00Z.")
    var from: String?

    @Option(help: "End of the window (exclusive), an RFC 3339 time.")
    var to: String?

    /// The window as a list's title names it: `all data`, or `FROM – TO`.
    static func scope(_ window: ReportWindow?) -> String {
        guard let window else { return "all data" }
        return RFC3339.format(milliseconds: window.from) + " – " + RFC3339.format(milliseconds: window.to)
    }

    func resolved() throws -> ReportWindow? {
        do {
            return try ReportWindow.parse(day: day, from: from, to: to)
        } catch {
            let message =
                switch error {
                case .dayWithRange: "Give either --day or --from and --to, not both."
                case .notADay(let day): "--day '\(day)' is not a real day; write it as YYYY-MM-DD, e.g. 2026-11-21."
                case .notATime(.from, let from):
                    "--from '\(from)' is not an RFC 3339 time; write e.g. 2026-11-21T00:00:00Z."
                case .notATime(.to, let to): "--to '\(to)' is not an RFC 3339 time; write e.g. 2026-11-22T00:00:00Z."
                case .fromNotBeforeTo: "--from must be earlier than --to."
                case .halfRange: "Give --from and --to together (or --day)."
                }
            throw ValidationError(message)
        }
    }
}

import ArgumentParser
import ArrivalModel
import ArrivalStore
import ArrivalStores
import Foundation

struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove what no report of a window from a time on needs (retention), on either engine.",
        discussion: """
            Removes the records before --before that no report of a window starting at or after it reads, and \
            keeps those such a report still reads: every activity with a record at or after it (or reached then \
            through a token it holds or a channel it subscribes to) stays whole, with the requests to its tokens \
            and the broadcasts to its channels; each token's death (its earliest request answered 410 or with a \
            dead-token reason) and the callback that owns a kept request's token stay. Afterwards every report of \
            a window from --before on is unchanged but for the store-wide data_quality counts (malformed lines \
            of files ingested before --before go); the all-data report loses the updates removed. The file \
            registry stays whole: ingesting the same bytes again is still a no-op.
            A SQLite file is then vacuumed, giving the space back to the file system (it rewrites the file: \
            --no-vacuum skips it, and later ingests reuse the freed pages). A PostgreSQL store's space is \
            reused once autovacuum has seen the tables. Documentation/Retention.md has the rule and why it is safe.
            Exit codes: 0 pruned, 1 the run failed, 2 bad usage (a --before that is no time).
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(
        help: ArgumentHelp(
            "Remove what reports from this time on do not read: an RFC 3339 time, or a UTC day YYYY-MM-DD (its start).",
            valueName: "time"))
    var before: String

    @Flag(help: "Leave a SQLite file's freed pages for later ingests instead of giving them back (no VACUUM).")
    var noVacuum = false

    @Option(help: "Output format: text or json.")
    var format: OutputFormat = .text

    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    func validate() throws {
        _ = try Self.cut(before)
    }

    /// `--before` in milliseconds since the epoch.
    static func cut(_ text: String) throws -> Int64 {
        if let milliseconds = RFC3339.parseMilliseconds(text) { return milliseconds }
        if let day = ReportWindow.day(text) { return day.from }
        throw ValidationError(
            "--before '\(text)' is not a time; write an RFC 3339 time such as 2026-11-21T00:00:00Z, "
                + "or a UTC day such as 2026-11-21.")
    }

    func run() throws {
        guard !store.location.isMissing else {
            FileHandle.standardError.write(
                Data(
                    ("error: no store at '\(store.db)'. Run 'arrival ingest PATH… --db \(store.db)' first, "
                        + "or pass --db.\n").utf8))
            throw ExitCode(1)
        }
        let summary = try store.location.prune(before: try Self.cut(before), vacuum: !noVacuum)
        let text = format == .json ? Self.json(summary) : Self.text(summary, store: store.label)
        print(text, terminator: "")
    }

    static func text(_ summary: PruneSummary, store: String) -> String {
        var lines = [
            "Pruned \(store) before \(RFC3339.format(milliseconds: summary.before)): removed \(summary.records) "
                + "records (\(summary.requests) requests, \(summary.renders) renders, \(summary.callbacks) callbacks), "
                + "\(summary.malformedLines) malformed lines, \(summary.repeats) repeat notes.",
            "Kept \(summary.keptBefore) earlier records that reports from then on still read.",
        ]
        if summary.appleRows > 0 {
            lines.append("Removed \(summary.appleRows) rows of Apple's exports, of days before the cut's.")
        }
        if let before = summary.bytesBefore, let after = summary.bytesAfter {
            if summary.vacuumed {
                lines.append("SQLite file: \(before) bytes before, \(after) bytes after (vacuumed).")
            } else {
                lines.append(
                    "SQLite file: \(after) bytes, \(summary.freePages ?? 0) free pages that later ingests reuse "
                        + "(prune again without --no-vacuum to give them back).")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ summary: PruneSummary) -> String {
        func number(_ value: Int64?) -> String { value.map { String($0) } ?? "null" }
        // Apple's rows (issue 54) only when some were removed: a prune of a store without them says what it said.
        let apple = summary.appleRows > 0 ? ", \"apple_rows\": \(summary.appleRows)" : ""
        return """
            {"schema": "arrival.prune/1", "before": "\(RFC3339.format(milliseconds: summary.before))", \
            "removed": {"requests": \(summary.requests), "renders": \(summary.renders), \
            "callbacks": \(summary.callbacks), "malformed_lines": \(summary.malformedLines), \
            "repeats": \(summary.repeats)\(apple)}, "kept_before": \(summary.keptBefore), \
            "bytes_before": \(number(summary.bytesBefore)), "bytes_after": \(number(summary.bytesAfter)), \
            "free_pages": \(number(summary.freePages)), "vacuumed": \(summary.vacuumed)}

            """
    }
}

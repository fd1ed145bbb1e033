import ArgumentParser
import ArrivalCompare
import ArrivalModel
import ArrivalStore
import ArrivalStores
import Foundation

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two batches, stores or report JSONs: every metric side by side, with significance.",
        discussion: """
            A and B may each be a batch file (.jsonl or .jsonl.gz), a directory of batches, an arrival \
            store (.sqlite, opened read-only) or a report JSON (arrival report --format json). Batches \
            are ingested into a temporary store; your own store is never touched.
            Exit codes: 0 compared, 1 the comparison failed (e.g. --out cannot be written), 2 bad usage or a \
            side that cannot be read (missing, corrupt, a cut report JSON, a database that is no arrival store).
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, markdown, json
    }

    @Argument(help: "The earlier side (before the change).")
    var a: String

    @Argument(help: "The later side (after the change).")
    var b: String

    @Option(help: "Output format: text (aligned, coloured on a terminal), markdown or json.")
    var format: Format = .text

    @Flag(
        help:
            "Add a record-level diff: apns records only on one side or answered differently, updates whose outcome changed."
    )
    var records = false

    @Option(help: "Rows listed per kind with --records.")
    var limit: Int = 20

    @OptionGroup var color: ColorOptions

    @Option(help: "Confidence of the significance tests, e.g. 0.95 or 0.99.")
    var confidence: Double = 0.95

    @OptionGroup var window: WindowOptions

    @Option(help: "Write the diff to this file instead of standard output.")
    var out: String?

    func validate() throws {
        _ = try window.resolved()
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more.") }
        guard confidence > 0.5, confidence < 1 else {
            throw ValidationError("--confidence must be between 0.5 and 1, e.g. 0.95.")
        }
    }

    func run() throws {
        let window = try self.window.resolved()
        let (sideA, sideB) = try loadSides(a, b, window: window, detail: records)
        var diff = ReportDiff(sideA, sideB, confidence: confidence)
        if records {
            diff.records = try RecordDiff(sideA, sideB, limit: limit)
        }
        let text: String
        switch format {
        case .text: text = diff.text(color: out == nil && color.enabled)
        case .markdown: text = diff.markdownText()
        case .json: text = diff.jsonText()
        }
        try write(text, to: out)
    }
}

/// Loads one side of `diff` or `gate`, showing what it does on a terminal.
func loadSide(_ path: String, window: ReportWindow?, detail: Bool = false) throws -> ComparisonSide {
    guard StoreLocation.namesServer(path) else {
        return try whileReading(path) { () throws(ComparisonError) in
            try ComparisonSide.load(path, window: window, detail: detail)
        }
    }
    // A server's store: a snapshot of it, named by its URL without the password.
    let location: StoreLocation
    do throws(StoreLocation.ParseError) {
        location = try StoreLocation(parsing: path)
    } catch {
        let reason = if case .unreadableURL(let error) = error { "\(error)" } else { "no URL" }
        throw Diagnostic(
            .usage, "a side names a PostgreSQL store by a URL that cannot be read: \(reason)",
            hint: "write it as postgres://user@host:port/database (Documentation/PostgreSQL.md).")
    }
    let reader = try location.openReader()
    return try whileReading(reader.label) { () throws(ComparisonError) in
        try ComparisonSide.load(reader: reader, named: reader.label, window: window, detail: detail)
    }
}

/// Loads both sides of `diff` or `gate` at once.
func loadSides(_ a: String, _ b: String, window: ReportWindow?, detail: Bool = false) throws -> (
    ComparisonSide, ComparisonSide
) {
    if StoreLocation.namesServer(a) || StoreLocation.namesServer(b) {
        return (try loadSide(a, window: window, detail: detail), try loadSide(b, window: window, detail: detail))
    }
    return try whileReading("\(a) and \(b)") { () throws(ComparisonError) in
        try ComparisonSide.loadPair(a, b, window: window, detail: detail)
    }
}

/// Shows "reading …" on a terminal's stderr while `body` runs.
private func whileReading<T>(_ what: String, _ body: () throws(ComparisonError) -> T) throws -> T {
    let note = isatty(STDERR_FILENO) == 1
    if note { FileHandle.standardError.write(Data("reading \(what)…\r".utf8)) }
    defer { if note { FileHandle.standardError.write(Data("\u{1B}[2K\r".utf8)) } }
    return try body()
}

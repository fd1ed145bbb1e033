import ArrivalModel
import ArrivalStore
import ArrivalIngest
import ArrivalAnalysis
import ArrivalRendering
import ArrivalCompare
import ArrivalSimulation
import ArgumentParser
import Foundation

struct Ingest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ingest files or directories of apns, render and callback records (plain or gzip JSON Lines).",
        discussion: """
            Files already ingested (same bytes) are skipped; equal records are stored once; malformed lines are \
            counted by cause and the rest of the file is kept. Re-running an interrupted ingest completes it.
            """
    )

    @Argument(help: "Files or directories to ingest (directories are walked recursively; hidden entries skipped).")
    var paths: [String]

    @OptionGroup var store: StoreOptions

    @Flag(help: "Fail on the first malformed line, naming its file and line (that file is not stored).")
    var strict = false

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Name at least one file or directory to ingest.") }
    }

    func run() throws {
        let database = try Store(path: store.db)
        let ingestor = Ingestor(store: database, options: Ingestor.Options(strict: strict))
        let progress = quiet ? nil : TerminalProgress()
        let summary = try ingestor.ingest(paths: paths, progress: progress.map { p in { p.update($0) } })
        progress?.finish()
        if !quiet { print(summary.text(database: store.db)) }
    }
}

/// A one-line progress display on stderr, only when stderr is a terminal.
final class TerminalProgress {
    private var lastDraw = ContinuousClock.now
    private var drawn = false

    init?() {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
    }

    func update(_ progress: IngestProgress) {
        let now = ContinuousClock.now
        guard now - lastDraw > .milliseconds(200) else { return }
        lastDraw = now
        let rate = progress.elapsedSeconds > 0 ? Int(Double(progress.records) / progress.elapsedSeconds) : 0
        let line = "ingesting: file \(progress.filesDone + 1)/\(progress.filesTotal), \(progress.records) records, \(rate) records/s"
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    func finish() {
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

extension IngestSummary {
    func text(database: String) -> String {
        var lines: [String] = []
        lines.append("Ingested into \(database):")
        lines.append("  files read: \(filesRead) (\(bytesRead) bytes, \(self.lines) lines)")
        lines.append("  files skipped as already ingested: \(filesAlreadyIngested + filesSkippedAsDuplicate)"
            + (filesSkippedAsDuplicate > 0 ? " (\(filesSkippedAsDuplicate) under a new name)" : ""))
        if !skippedEntries.isEmpty {
            lines.append("  entries skipped (not regular files): \(skippedEntries.count)")
            for entry in skippedEntries.prefix(5) { lines.append("    \(entry)") }
        }
        let kinds = RecordKind.allCases.map { "\($0.rawValue) \(records[$0] ?? 0)" }.joined(separator: ", ")
        lines.append("  new records: \(newRecords) (\(kinds))")
        lines.append("  duplicate records ignored: \(duplicateRecords)")
        lines.append("  malformed lines: \(malformedLines)")
        for cause in malformedByCause.keys.sorted() {
            lines.append("    \(cause.rawValue): \(malformedByCause[cause] ?? 0)")
            for location in firstMalformed where location.cause == cause {
                lines.append("      \(location.path):\(location.line)" + (location.problem.map { ": " + $0 } ?? ""))
            }
        }
        return lines.joined(separator: "\n")
    }
}

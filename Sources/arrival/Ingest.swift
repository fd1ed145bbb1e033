import ArgumentParser
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStores
import Foundation

struct Ingest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ingest files or directories of apns, render and callback records (plain or gzip JSON Lines).",
        discussion: """
            Files already ingested (same bytes) are skipped; equal records are stored once; malformed lines are \
            counted by cause and the rest of the file is kept. Re-running an interrupted ingest completes it.
            When the paths hold no file, or their files hold no valid record, ingest warns on stderr (also \
            with --quiet); --require-data makes that an error (exit 1) for daily jobs.
            """
    )

    @Argument(
        help:
            "Files or directories to ingest (directories are walked recursively; hidden entries, links and special files are skipped and listed)."
    )
    var paths: [String]

    @OptionGroup var store: StoreOptions

    @Flag(help: "Fail on the first malformed line, naming its file and line (that file is not stored).")
    var strict = false

    @Flag(help: "Print nothing but errors and warnings.")
    var quiet = false

    @Flag(help: "Fail (exit 1) when the paths hold no file to ingest, or the files no valid record.")
    var requireData = false

    @Option(
        help: ArgumentHelp(
            "Decode at most this many lines of each file (none by default).",
            discussion:
                "Past it the lines before are kept and one malformed line, cause too_large, stands for the rest.",
            valueName: "lines"))
    var maxLines: Int?

    @Option(
        help: ArgumentHelp(
            "Decode at most this many bytes of each file, inflated when gzip (none by default).",
            discussion:
                "Past it the lines before are kept and one malformed line, cause too_large, stands for the rest.",
            valueName: "bytes"))
    var maxInflatedBytes: Int?

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Name at least one file or directory to ingest.") }
        if let maxLines, maxLines < 1 { throw ValidationError("--max-lines must be at least 1 (got \(maxLines)).") }
        if let maxInflatedBytes, maxInflatedBytes < 1 {
            throw ValidationError("--max-inflated-bytes must be at least 1 (got \(maxInflatedBytes)).")
        }
    }

    func run() throws {
        // Paths that are not there at all (a typo): when none is, nothing is opened or made.
        let missing = paths.filter { !FileManager.default.fileExists(atPath: $0) }
        if missing.count == paths.count {
            throw Diagnostic(
                .input,
                "nothing to ingest: \(missing.map { "'\($0)'" }.joined(separator: ", ")) "
                    + (missing.count == 1 ? "does" : "do") + " not exist",
                hint: "check the path (\(store.label) was neither made nor changed); ingest takes batch files "
                    + "(.jsonl, .jsonl.gz) and directories of them.",
                location: Diagnostic.Location(path: missing[0]))
        }
        var options = IngestPipeline.Options(strict: strict)
        options.bulkLoadWhenNew = true
        options.limits = LineReader.Limits(inflatedBytes: maxInflatedBytes ?? .max, lines: maxLines ?? .max)
        let writing = try store.location.openWriter()
        let ingestor = IngestPipeline(writer: writing.writer, registry: writing.registry, options: options)
        let progress = quiet ? nil : TerminalProgress()
        let summary = try ingestor.ingest(paths: paths, progress: progress.map { p in { p.update($0) } })
        progress?.finish()
        if !quiet { print(summary.text(database: store.label)) }
        // Said even with --quiet, and a failure: a daily job must see it.
        if let leftOut = leftOut(summary) { throw leftOut }
        if let nothing = nothingRead(summary) {
            if requireData { throw nothing }
            FileHandle.standardError.write(Data((nothing.warningDescription + "\n").utf8))
        }
    }

    /// The paths that could not be read and the files the store refused, all
    /// named, once everything else was stored: nothing of them was.
    private func leftOut(_ summary: IngestSummary) -> Diagnostic? {
        func listed(_ items: [String]) -> String {
            items.prefix(20).map { "\n  \($0)" }.joined()
                + (items.count > 20 ? "\n  … and \(items.count - 20) more" : "")
        }
        func counted(_ count: Int, _ noun: String) -> String {
            "\(count) \(noun)\(count == 1 ? "" : "s"), so nothing of \(count == 1 ? "it" : "them") was stored:"
        }
        var parts: [String] = []
        var hints: [String] = []
        if !summary.unreadable.isEmpty {
            parts.append(
                counted(summary.unreadable.count, "path").replacingOccurrences(
                    of: ", so", with: " could not be read, so")
                    + listed(summary.unreadable.map(\.description)))
            hints.append("fix what each unreadable path's line says (a path, permissions, a file still being written)")
        }
        if !summary.refused.isEmpty {
            parts.append(
                "the store refused " + counted(summary.refused.count, "file")
                    + listed(summary.refused.map(\.description)))
            hints.append(
                "a refusal's reason is the store's own (a trigger or constraint someone added to \(store.label)): "
                    + "remove its cause")
        }
        guard let first = summary.unreadable.first?.path ?? summary.refused.first?.path else { return nil }
        return Diagnostic(
            .input, parts.joined(separator: "\n"),
            hint: (summary.filesRead > 0 ? "everything else was stored. " : "nothing else was there to store. ")
                + hints.joined(separator: "; ").prefix(1).uppercased() + hints.joined(separator: "; ").dropFirst()
                + ", and run the same ingest again: what is stored already is skipped.",
            location: Diagnostic.Location(path: first))
    }

    /// What an ingest that read nothing says: no file under the paths, or
    /// files without one valid record. A file ingested before is no warning:
    /// running a daily ingest twice is fine.
    private func nothingRead(_ summary: IngestSummary) -> Diagnostic? {
        let named = paths.map { "'\($0)'" }.joined(separator: ", ")
        let found = summary.filesRead + summary.filesAlreadyIngested + summary.filesSkippedAsDuplicate
        if found == 0 {
            let skipped =
                summary.skippedEntries.isEmpty
                ? "" : " (\(summary.skippedEntries.count) entries skipped: hidden, links or special files)"
            return Diagnostic(
                .input, "no input files found under \(named)\(skipped)",
                hint: "check the paths: ingest reads every regular file it is given or finds in a directory "
                    + "(walked recursively; hidden entries, links and special files left out), plain or gzip, "
                    + "whatever its name.")
        }
        if summary.filesRead > 0, summary.newRecords == 0, summary.duplicateRecords == 0 {
            return Diagnostic(
                .input,
                "read \(summary.filesRead) file\(summary.filesRead == 1 ? "" : "s") under \(named) but found no valid record (\(summary.malformedLines) malformed line\(summary.malformedLines == 1 ? "" : "s"))",
                hint: "check these are arrival's JSON Lines batches; "
                    + (quiet
                        ? "run without --quiet to see the malformed lines by cause."
                        : "the summary above lists the malformed lines by cause."))
        }
        return nil
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
        let line =
            "ingesting: file \(progress.filesDone + 1)/\(progress.filesTotal)\(progress.listing ? "+" : ""), \(progress.records) records, \(rate) records/s"
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
        lines.append(
            "  files read: \(filesRead) (\(ReportFormat.counted(bytesRead, "byte")), "
                + "\(ReportFormat.counted(self.lines, "line")))")
        if filesReplaced > 0 {
            lines.append("  of them grown since ingested, read again in place of the earlier version: \(filesReplaced)")
        }
        lines.append(
            "  files skipped as already ingested: \(filesAlreadyIngested + filesSkippedAsDuplicate)"
                + (filesSkippedAsDuplicate > 0 ? " (\(filesSkippedAsDuplicate) under a new name)" : ""))
        if !unreadable.isEmpty {
            lines.append("  could not be read (nothing of them stored): \(unreadable.count)")
            for entry in unreadable.prefix(5) { lines.append("    \(entry)") }
            if unreadable.count > 5 { lines.append("    … and \(unreadable.count - 5) more") }
        }
        if !refused.isEmpty {
            lines.append("  refused by the store (nothing of them stored): \(refused.count)")
            for entry in refused.prefix(5) { lines.append("    \(entry)") }
            if refused.count > 5 { lines.append("    … and \(refused.count - 5) more") }
        }
        if !emptyFiles.isEmpty {
            lines.append("  empty files (0 bytes: an upload cut short?): \(emptyFiles.count)")
            for path in emptyFiles.prefix(5) { lines.append("    \(path)") }
            if emptyFiles.count > 5 { lines.append("    … and \(emptyFiles.count - 5) more") }
        }
        if !skippedEntries.isEmpty {
            lines.append("  entries skipped (hidden, or not regular files): \(skippedEntries.count)")
            for entry in skippedEntries.prefix(5) { lines.append("    \(entry)") }
            if skippedEntries.count > 5 { lines.append("    … and \(skippedEntries.count - 5) more") }
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

import ArgumentParser
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalStores
import Foundation

struct Files: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the files ingested into a store, or remove one that was ingested by mistake.",
        discussion: """
            Every file ingest reads is registered by the SHA-256 of its bytes, with its path and counts; a file \
            whose bytes were already registered under another path is only noted as a skipped re-upload. \
            'arrival files list' shows both; 'arrival files remove' takes a file (a README, an HTML report, the \
            wrong day) and everything it added back out of the store, so its records no longer count in any \
            report and the file can be ingested again later.
            """,
        subcommands: [List.self, Remove.self]
    )
}

extension Files {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the ingested files and the skipped re-uploads, sorted by path.",
            discussion: """
                Each ingested file with the first \(FileSelection.shortLength) hex digits of its SHA-256 (json: the \
                whole hash), bytes, whether it was gzip, lines, records it stored, duplicate records, malformed lines \
                and when it was ingested (RFC 3339, UTC). Then each skipped re-upload: a path whose bytes were the \
                same as an ingested file's, so nothing of it was stored. Paths sort in code-point order. \
                The store is opened read-only.
                """
        )

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case text, json
        }

        @OptionGroup var store: StoreOptions

        @Option(
            help:
                "Output format: text (aligned tables) or json (one array of both kinds, with a \"status\" of ingested or skipped)."
        )
        var format: Format = .text

        @Option(help: "Only paths that contain this text (case-sensitive, byte for byte).")
        var match: String?

        func run() throws {
            try requireStore(store)
            // The registry is read whole from one local SQLite file: a PostgreSQL store's registry is copied.
            let readable = try store.location.openLocalCopy(registryOnly: true)
            defer { withExtendedLifetime(readable) {} }
            let database = try SQLiteStore(readingAt: readable.path)
            var (files, skipped) = try database.fileRegistry()
            let total = files.count
            if let match {
                files = files.filter { contains($0.path, match) }
                skipped = skipped.filter { contains($0.path, match) }
            }
            let text =
                format == .json
                ? Self.json(files: files, skipped: skipped)
                : Self.text(files: files, skipped: skipped, total: total, match: match, db: store.label)
            FileHandle.standardOutput.write(Data(text.utf8))
        }

        static func text(files: [IngestedFile], skipped: [SkippedFile], total: Int, match: String?, db: String)
            -> String
        {
            var lines: [String] = []
            let scope = match.map { " matching '\($0)'" } ?? ""
            let records = files.reduce(0) { $0 + $1.records }
            let duplicates = files.reduce(0) { $0 + $1.duplicates }
            let malformed = files.reduce(0) { $0 + $1.malformed }
            lines.append(
                "Ingested files in \(db)\(scope): \(ReportFormat.count(files.count))"
                    + (match != nil ? " of \(ReportFormat.count(total))" : "")
                    + " (\(ReportFormat.count(records)) records, \(ReportFormat.count(duplicates)) duplicates, "
                    + "\(ReportFormat.count(malformed)) malformed lines)")
            if !files.isEmpty {
                var table = TextTable(
                    ["path", "sha256", "bytes", "gzip", "lines", "records", "duplicates", "malformed", "ingested at"],
                    alignments: [.left, .left, .right, .left, .right, .right, .right, .right, .left])
                for file in files {
                    table.add([
                        file.path, FileSelection.shortHash(file.sha256), ReportFormat.count(Int(file.byteCount)),
                        file.gzip ? "yes" : "no", ReportFormat.count(file.lines), ReportFormat.count(file.records),
                        ReportFormat.count(file.duplicates), ReportFormat.count(file.malformed),
                        RFC3339.format(milliseconds: file.ingestedAt),
                    ])
                }
                lines.append(table.render(color: false))
            }
            lines.append(
                "Skipped re-uploads\(scope) (same bytes as an ingested file, nothing stored): \(ReportFormat.count(skipped.count))"
            )
            if !skipped.isEmpty {
                var table = TextTable(["path", "same bytes as"], alignments: [.left, .left])
                for entry in skipped { table.add([entry.path, entry.sameBytesAs]) }
                lines.append(table.render(color: false))
            }
            return lines.joined(separator: "\n") + "\n"
        }

        /// One array of both kinds, sorted by path in code-point order.
        static func json(files: [IngestedFile], skipped: [SkippedFile]) -> String {
            enum Entry {
                case ingested(IngestedFile)
                case skipped(SkippedFile)
                var path: String {
                    switch self {
                    case .ingested(let file): file.path
                    case .skipped(let entry): entry.path
                    }
                }
            }
            // Stable: for one path, ingested files (by id) come before skipped re-uploads.
            let entries = (files.map(Entry.ingested) + skipped.map(Entry.skipped)).enumerated().sorted { a, b in
                if a.element.path.utf8.elementsEqual(b.element.path.utf8) { return a.offset < b.offset }
                return a.element.path.utf8.lexicographicallyPrecedes(b.element.path.utf8)
            }.map(\.element)
            let w = JSONWriter()
            w.array {
                for entry in entries {
                    w.element {
                        w.object {
                            switch entry {
                            case .ingested(let file):
                                w.field("status") { w.string("ingested") }
                                w.field("path") { w.string(file.path) }
                                w.field("sha256") { w.string(file.sha256) }
                                w.field("bytes") { w.int(Int(file.byteCount)) }
                                w.field("gzip") { w.bool(file.gzip) }
                                w.field("lines") { w.int(file.lines) }
                                w.field("records") { w.int(file.records) }
                                w.field("duplicates") { w.int(file.duplicates) }
                                w.field("malformed") { w.int(file.malformed) }
                                w.field("ingested_at") { w.string(RFC3339.format(milliseconds: file.ingestedAt)) }
                            case .skipped(let entry):
                                w.field("status") { w.string("skipped") }
                                w.field("path") { w.string(entry.path) }
                                w.field("sha256") { w.string(entry.sha256) }
                                w.field("same_bytes_as") { w.string(entry.sameBytesAs) }
                                w.field("first_seen_at") { w.string(RFC3339.format(milliseconds: entry.firstSeenAt)) }
                            }
                        }
                    }
                }
            }
            return w.text + "\n"
        }
    }
}

extension Files {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove ingested files and everything they added to the store, in one transaction.",
            discussion: """
                Name each file by its path (as listed by 'arrival files list', or relative to the current \
                directory) or by the start of its SHA-256 (at least \(FileSelection.minimumPrefix) hex digits). \
                A name that matches several files is refused, naming them. For each file, removes the records it \
                stored (apns, render and callback rows), its malformed lines, the skipped re-uploads of the same \
                bytes, and its registry entry: the report counts none of it any more, and ingesting the file \
                again reads it as new. All files named are removed in one transaction: all or nothing.

                Without --yes, on a terminal, prints what it would remove and asks; when standard input is not a \
                terminal it refuses (exit 2): pass --yes to remove, or --dry-run to only print what would be removed \
                (the store is then opened read-only and nothing changes). Answering no exits 1.

                Records shared with other files: a record is stored once, under the first file that held it; a \
                file ingested later that held the same record only counted a duplicate (its "duplicates" in \
                'arrival files list') and did not store it again. Removing the first file removes such records \
                although the later file stays registered, so a report no longer counts them. Ingesting that later \
                file again does not bring them back: its bytes are still registered, so it is skipped as already \
                ingested. To get them back, remove the later file too and ingest it again (arrival files remove \
                LATER --yes, then arrival ingest LATER); its records then count as new wherever no other stored \
                file holds them. When the files removed stored records and files ingested after them counted \
                duplicates, the command names those files.

                Exit codes: 0 removed (or a dry run), 1 the run failed or the answer was no, 2 bad usage: a name \
                that matches no file or several, or no --yes off a terminal.
                """
        )

        @Argument(help: "Paths or SHA-256 prefixes of ingested files.")
        var names: [String]

        @OptionGroup var store: StoreOptions

        @Flag(help: "Print what would be removed; change nothing.")
        var dryRun = false

        @Flag(help: "Remove without asking (needed when standard input is not a terminal).")
        var yes = false

        func validate() throws {
            if names.isEmpty {
                throw ValidationError(
                    "Name at least one ingested file, by path or SHA-256 prefix (see 'arrival files list').")
            }
        }

        func run() throws {
            if !dryRun && !yes && isatty(STDIN_FILENO) != 1 {
                throw failure(
                    "not removing anything without confirmation, and standard input is not a terminal to ask on. "
                        + "Pass --yes to remove, or --dry-run to see what would be removed.", exit: 2)
            }
            try requireStore(store)
            // The plan is made on a read-only connection (on a PostgreSQL store, a snapshot's copy):
            // a dry run, or an answer of no, changes nothing.
            let readable = try store.location.openLocalCopy()
            defer { withExtendedLifetime(readable) {} }
            let reader = try SQLiteStore(readingAt: readable.path)
            let (files, skipped) = try reader.fileRegistry()
            let chosen: [IngestedFile]
            do {
                chosen = try FileSelection.select(
                    names, files: files, skipped: skipped, normalise: InputWalker.normalise)
            } catch {
                throw failure(error.description, exit: 2)
            }
            let ids = chosen.map(\.id)
            if dryRun || !yes {
                let plan = try reader.removalPlan(ids: ids)
                var text = "Would remove from \(store.label):\n" + Self.table(plan) + "\n"
                text += Self.sharedRecordsNote(plan, db: store.label)
                if dryRun { text += "Dry run: nothing removed.\n" }
                FileHandle.standardOutput.write(Data(text.utf8))
                if dryRun { return }
                FileHandle.standardError.write(
                    Data("Remove \(Self.filesPhrase(plan.entries.count)) from \(store.label)? [y/N] ".utf8))
                let answer = (readLine() ?? "").trimmingCharacters(in: .whitespaces).lowercased()
                guard answer == "y" || answer == "yes" else {
                    FileHandle.standardError.write(Data("Nothing removed.\n".utf8))
                    throw ExitCode(1)
                }
            }
            let removal = try store.location.removeFiles(ids: ids, plannedOn: reader)
            var text = "Removed from \(store.label):\n" + Self.table(removal) + "\n"
            let total = removal.total
            text +=
                "Removed \(Self.filesPhrase(removal.entries.count)): \(ReportFormat.count(total.records)) records "
                + "(apns \(ReportFormat.count(total[.apns])), render \(ReportFormat.count(total[.renders])), "
                + "callback \(ReportFormat.count(total[.callbacks]))), \(ReportFormat.count(total[.malformedLines])) malformed lines, "
                + "\(ReportFormat.count(total[.skippedFiles])) skipped re-uploads.\n"
            if removal.entries.count < chosen.count {
                text += "\(Self.filesPhrase(chosen.count - removal.entries.count)) had already been removed.\n"
            }
            if removal.entries.count > 0 {
                text +=
                    removal.entries.count == 1
                    ? "Its bytes are no longer registered: 'arrival ingest' reads the file as new if given it again.\n"
                    : "Their bytes are no longer registered: 'arrival ingest' reads the files as new if given them again.\n"
            }
            // Asked on a terminal, the note came with the plan.
            if yes { text += Self.sharedRecordsNote(removal, db: store.label) }
            FileHandle.standardOutput.write(Data(text.utf8))
        }

        static func filesPhrase(_ count: Int) -> String { count == 1 ? "1 file" : "\(ReportFormat.count(count)) files" }

        /// One row per file (and a total for several): what goes.
        static func table(_ removal: FileRemoval) -> String {
            var table = TextTable(
                ["path", "sha256", "apns", "render", "callback", "malformed lines", "skipped re-uploads"],
                alignments: [.left, .left, .right, .right, .right, .right, .right])
            func row(_ path: String, _ hash: String, _ counts: FileRemoval.Counts) -> [String] {
                [
                    path, hash, ReportFormat.count(counts[.apns]), ReportFormat.count(counts[.renders]),
                    ReportFormat.count(counts[.callbacks]), ReportFormat.count(counts[.malformedLines]),
                    ReportFormat.count(counts[.skippedFiles]),
                ]
            }
            for entry in removal.entries {
                table.add(row(entry.file.path, FileSelection.shortHash(entry.file.sha256), entry.counts))
            }
            if removal.entries.count > 1 { table.add(row("total", "", removal.total)) }
            return table.render(color: false)
        }

        /// The limit of removal, when it applies: records that later files also held go too.
        static func sharedRecordsNote(_ removal: FileRemoval, db: String) -> String {
            let later = removal.laterFilesWithDuplicates
            guard !later.isEmpty else { return "" }
            let shown = 10
            var lines = [
                "Note: a record is stored once, under the first file that held it. These \(filesPhrase(later.count)) "
                    + "also held records the removed files stored first; those records are removed too, "
                    + "although these files stay registered:"
            ]
            for file in later.prefix(shown) {
                let shared = removal.sharedRecords[file.id] ?? 0
                lines.append("  \(file.path) (\(ReportFormat.count(shared)) shared record\(shared == 1 ? "" : "s"))")
            }
            if later.count > shown {
                lines.append("  … and \(later.count - shown) more ('arrival files list --db \(db)')")
            }
            lines.append(
                "To count those records again, remove those files as well and ingest them again "
                    + "('arrival files remove PATH... --db \(db) --yes', then 'arrival ingest PATH... --db \(db)'); "
                    + "ingesting them while they are still registered skips them as already ingested.")
            return lines.joined(separator: "\n") + "\n"
        }
    }
}

/// Exits 1 with a hint when there is no store at `path` (opening it would create one).
private func requireStore(_ store: StoreOptions) throws {
    guard !store.location.isMissing else {
        throw failure(
            "no store at '\(store.db)'. Run 'arrival ingest PATH… --db \(store.db)' first, or pass --db.", exit: 1)
    }
}

/// Prints `message` as an error and returns the exit code to throw; kept to
/// this file so the command does not depend on how the root command maps errors.
private func failure(_ message: String, exit code: Int32) -> ExitCode {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
    return ExitCode(code)
}

/// Whether `text` contains `part`, byte for byte (no Unicode equivalence, case-sensitive).
private func contains(_ text: String, _ part: String) -> Bool {
    let haystack = Array(text.utf8)
    let needle = Array(part.utf8)
    guard !needle.isEmpty else { return true }
    guard needle.count <= haystack.count else { return false }
    for start in 0...(haystack.count - needle.count)
    where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return true
    }
    return false
}

import CSQLite

/// One row of the `files` registry: a file whose bytes were ingested.
package struct IngestedFile: Equatable, Sendable {
    package var id: Int64
    package var path: String
    /// Lower-case hex SHA-256 of the file's bytes as read (before any gunzip).
    package var sha256: String
    package var byteCount: Int64
    package var gzip: Bool
    package var lines: Int
    /// Records this file stored (new when it was ingested).
    package var records: Int
    /// Records this file held that were already stored, by it or by a file ingested before it.
    package var duplicates: Int
    package var malformed: Int
    /// Milliseconds since the Unix epoch.
    package var ingestedAt: Int64

    package init(
        id: Int64, path: String, sha256: String, byteCount: Int64, gzip: Bool, lines: Int, records: Int,
        duplicates: Int, malformed: Int, ingestedAt: Int64
    ) {
        self.id = id
        self.path = path
        self.sha256 = sha256
        self.byteCount = byteCount
        self.gzip = gzip
        self.lines = lines
        self.records = records
        self.duplicates = duplicates
        self.malformed = malformed
        self.ingestedAt = ingestedAt
    }
}

/// One row of `skipped_files`: a path whose bytes had already been ingested
/// from another path (a re-upload), so nothing of it was stored.
package struct SkippedFile: Equatable, Sendable {
    package var path: String
    package var sha256: String
    /// Milliseconds since the Unix epoch.
    package var firstSeenAt: Int64
    /// The registered file that holds the same bytes.
    package var sameBytesAs: String
    package var fileID: Int64
}

/// What removing files takes out of the store, file by file.
package struct FileRemoval: Equatable, Sendable {
    /// The rows removing a file takes with it, besides its `files` row.
    package enum Part: Int, CaseIterable, Sendable {
        /// `record_repeats` rows of the files, and those of other files that
        /// repeat a record the files stored (it goes with them). First: they
        /// are found through the records.
        case repeats
        case apns, renders, callbacks
        case malformedLines
        /// `skipped_files` rows: re-uploads of the same bytes under other paths.
        case skippedFiles

        /// `SELECT file_id, count(*)` of this part for the files whose ids fill `list`.
        func countSQL(_ list: String) -> String {
            switch self {
            case .repeats:
                """
                SELECT owner, count(*) FROM (
                    SELECT CASE WHEN file_id IN (\(list)) THEN file_id ELSE \(Self.repeatedRecordOwner) END AS owner
                    FROM record_repeats
                ) WHERE owner IN (\(list)) GROUP BY owner
                """
            case .apns, .renders, .callbacks, .malformedLines:
                "SELECT file_id, count(*) FROM \(table) WHERE file_id IN (\(list)) GROUP BY file_id"
            case .skippedFiles:
                """
                SELECT f.id, count(*) FROM skipped_files AS s JOIN files AS f ON f.content_sha256 = s.content_sha256
                WHERE f.id IN (\(list)) GROUP BY f.id
                """
            }
        }

        /// The `DELETE` of this part for the files whose ids fill `list`.
        func deleteSQL(_ list: String) -> String {
            switch self {
            case .repeats:
                """
                DELETE FROM record_repeats WHERE file_id IN (\(list)) OR \(Self.repeatedRecordOwner) IN (\(list))
                """
            case .apns, .renders, .callbacks, .malformedLines:
                "DELETE FROM \(table) WHERE file_id IN (\(list))"
            case .skippedFiles:
                """
                DELETE FROM skipped_files
                WHERE content_sha256 IN (SELECT content_sha256 FROM files WHERE id IN (\(list)))
                """
            }
        }

        /// The file that stored the record a `record_repeats` row repeats
        /// (by the record's id: its key's index may be put off).
        private static let repeatedRecordOwner = """
            CASE kind
                WHEN 'apns' THEN (SELECT file_id FROM apns WHERE apns.id = record_repeats.record_id)
                WHEN 'render' THEN (SELECT file_id FROM renders WHERE renders.id = record_repeats.record_id)
                ELSE (SELECT file_id FROM callbacks WHERE callbacks.id = record_repeats.record_id)
            END
            """

        private var table: String {
            switch self {
            case .repeats: "record_repeats"
            case .apns: "apns"
            case .renders: "renders"
            case .callbacks: "callbacks"
            case .malformedLines: "malformed_lines"
            case .skippedFiles: "skipped_files"
            }
        }
    }

    /// Rows by part.
    package struct Counts: Equatable, Sendable {
        private var rows = [Int](repeating: 0, count: Part.allCases.count)

        package init() {}

        package subscript(part: Part) -> Int {
            get { rows[part.rawValue] }
            set { rows[part.rawValue] = newValue }
        }

        package var records: Int { self[.apns] + self[.renders] + self[.callbacks] }

        mutating func add(_ other: Counts) {
            for part in Part.allCases { self[part] += other[part] }
        }
    }

    package struct Entry: Equatable, Sendable {
        package var file: IngestedFile
        package var counts: Counts
    }

    /// The files, in the order they were asked for.
    package var entries: [Entry] = []
    /// Files that stay and held records a removed file stored first: those
    /// records go with the removed file, and these files only counted them
    /// as duplicates (`record_repeats` says which). Sorted by path.
    package var laterFilesWithDuplicates: [IngestedFile] = []
    /// How many of the removed files' records each of those files held, by file id.
    package var sharedRecords: [Int64: Int] = [:]

    package var total: Counts {
        var total = Counts()
        for entry in entries { total.add(entry.counts) }
        return total
    }
}

/// Why names given to `arrival files remove` select no single file.
package enum FileSelectionError: Error, Equatable, Sendable {
    /// Neither a registered path nor the start of a registered SHA-256.
    case noMatch(name: String)
    /// A path that was only skipped as a re-upload of `sameBytesAs`.
    case onlySkipped(name: String, sameBytesAs: [String])
    /// The name selects several files.
    case ambiguous(name: String, files: [IngestedFile])
}

extension SQLiteStore {
    /// Every ingested file, sorted by path in code-point order (SQLite's
    /// BINARY collation compares the UTF-8 bytes), then by id.
    package func listFiles() throws(DatabaseError) -> [IngestedFile] {
        let query = try connection.prepare(
            """
            SELECT id, path, content_sha256, byte_count, gzip, line_count, record_count, duplicate_count,
                   malformed_count, ingested_at
            FROM files ORDER BY path, id
            """)
        var files: [IngestedFile] = []
        do {
            try query.forEachRow { row in
                files.append(
                    IngestedFile(
                        id: row.int(0), path: row.string(1) ?? "", sha256: row.string(2) ?? "", byteCount: row.int(3),
                        gzip: row.int(4) != 0, lines: Int(row.int(5)), records: Int(row.int(6)),
                        duplicates: Int(row.int(7)), malformed: Int(row.int(8)), ingestedAt: row.int(9)))
            }
        } catch {
            throw Self.asDatabaseError(error, "listing the ingested files")
        }
        return files
    }

    /// Every skipped re-upload with the registered file of the same bytes,
    /// sorted by path in code-point order.
    package func skippedFiles() throws(DatabaseError) -> [SkippedFile] {
        let query = try connection.prepare(
            """
            SELECT s.path, s.content_sha256, s.first_seen_at, f.path, f.id
            FROM skipped_files AS s JOIN files AS f ON f.content_sha256 = s.content_sha256
            ORDER BY s.path, s.content_sha256
            """)
        var skipped: [SkippedFile] = []
        do {
            try query.forEachRow { row in
                skipped.append(
                    SkippedFile(
                        path: row.string(0) ?? "", sha256: row.string(1) ?? "", firstSeenAt: row.int(2),
                        sameBytesAs: row.string(3) ?? "", fileID: row.int(4)))
            }
        } catch {
            throw Self.asDatabaseError(error, "listing the skipped re-uploads")
        }
        return skipped
    }

    /// ``listFiles()`` and ``skippedFiles()`` from one snapshot of the store.
    package func fileRegistry() throws(DatabaseError) -> (files: [IngestedFile], skipped: [SkippedFile]) {
        try connection.execute("BEGIN")
        defer { try? connection.execute("ROLLBACK") }
        return (try listFiles(), try skippedFiles())
    }

    /// What ``removeFiles(ids:)`` would remove, counted without changing
    /// anything. Ids that are not registered are left out.
    package func removalPlan(ids: [Int64]) throws(DatabaseError) -> FileRemoval {
        try connection.execute("BEGIN")
        defer { try? connection.execute("ROLLBACK") }
        return try countRemoval(ids: ids)
    }

    /// Removes the files with these ids and everything stored because of
    /// them, in one transaction (all or nothing): their records (`apns`,
    /// `renders` and `callbacks` rows with their `file_id`), their
    /// `malformed_lines`, the `skipped_files` rows of re-uploads of their
    /// bytes, and their `files` rows, so the same bytes can be ingested
    /// again. Returns what was removed. Ids that are not registered are left
    /// out.
    ///
    /// A record is stored once, under the first file that held it; files
    /// ingested later that held it too only counted a duplicate. Removing
    /// the first file therefore removes such records although those files
    /// stay (``FileRemoval/laterFilesWithDuplicates`` names the candidates).
    package func removeFiles(ids: [Int64]) throws(DatabaseError) -> FileRemoval {
        precondition(!batchOpen, "files are removed outside an ingest batch")
        try connection.execute("BEGIN IMMEDIATE")
        do throws(DatabaseError) {
            let removal = try removeInTransaction(ids: ids)
            try connection.execute("COMMIT")
            return removal
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Removes earlier versions of the file being ingested (the same path,
    /// whose bytes are the start of the file's: it grew since), inside the
    /// file's savepoint, before any of its rows go in: if the file is rolled
    /// back, so is the removal.
    package func replaceEarlierVersions(ids: [Int64]) throws(DatabaseError) -> FileRemoval {
        precondition(batchOpen, "an earlier version is replaced inside the file's savepoint")
        return try removeInTransaction(ids: ids)
    }

    /// Counts and removes, inside the caller's transaction.
    private func removeInTransaction(ids: [Int64]) throws(DatabaseError) -> FileRemoval {
        do {
            let removal = try countRemoval(ids: ids)
            let present = removal.entries.map(\.file.id)
            if !present.isEmpty {
                let list = Self.placeholders(present.count)
                let total = removal.total
                // Children before parents: malformed_lines and skipped_files
                // reference files, and foreign keys are on (outside an
                // ingest batch; inside one, this order keeps them whole).
                let steps =
                    FileRemoval.Part.allCases.map { (sql: $0.deleteSQL(list), expected: total[$0]) }
                    + [(sql: "DELETE FROM files WHERE id IN (\(list))", expected: present.count)]
                for step in steps {
                    let statement = try connection.prepare(step.sql)
                    for (index, id) in present.enumerated() { statement.bind(Int32(index + 1), id) }
                    try statement.run()
                    // Counted and deleted in the same write transaction: a difference is a bug.
                    guard connection.changes == step.expected else {
                        throw DatabaseError(
                            code: SQLITE_MISMATCH,
                            message: "removed \(connection.changes) rows, counted \(step.expected)",
                            context: "running \(step.sql.prefix(80))")
                    }
                }
            }
            return removal
        }
    }

    /// Counts what removing `ids` takes out, inside the caller's transaction.
    private func countRemoval(ids: [Int64]) throws(DatabaseError) -> FileRemoval {
        var seen: Set<Int64> = []
        let wanted = ids.filter { seen.insert($0).inserted }
        var removal = FileRemoval()
        guard !wanted.isEmpty else { return removal }
        let byID = Dictionary(uniqueKeysWithValues: try listFiles().map { ($0.id, $0) })
        let present = wanted.filter { byID[$0] != nil }
        guard !present.isEmpty else { return removal }
        let list = Self.placeholders(present.count)
        var counts: [Int64: FileRemoval.Counts] = [:]
        for part in FileRemoval.Part.allCases {
            let sql = part.countSQL(list)
            let query = try connection.prepare(sql)
            for (index, id) in present.enumerated() { query.bind(Int32(index + 1), id) }
            do {
                try query.forEachRow { row in counts[row.int(0), default: .init()][part] = Int(row.int(1)) }
            } catch {
                throw Self.asDatabaseError(error, "counting \(sql.prefix(80))")
            }
        }
        removal.entries = present.map { FileRemoval.Entry(file: byID[$0]!, counts: counts[$0] ?? .init()) }
        if removal.total.records > 0 {
            // The files that stay whose repeated records point at a record a removed file stored.
            let sql = """
                SELECT file_id, sum(repeats) FROM record_repeats
                WHERE file_id NOT IN (\(list)) AND CASE kind
                    WHEN 'apns' THEN record_id IN (SELECT id FROM apns WHERE file_id IN (\(list)))
                    WHEN 'render' THEN record_id IN (SELECT id FROM renders WHERE file_id IN (\(list)))
                    ELSE record_id IN (SELECT id FROM callbacks WHERE file_id IN (\(list)))
                END
                GROUP BY file_id
                """
            let query = try connection.prepare(sql)
            for (index, id) in present.enumerated() { query.bind(Int32(index + 1), id) }
            do {
                try query.forEachRow { row in removal.sharedRecords[row.int(0)] = Int(row.int(1)) }
            } catch {
                throw Self.asDatabaseError(error, "counting records shared with other files")
            }
            removal.laterFilesWithDuplicates = removal.sharedRecords.keys.compactMap { byID[$0] }
                .sorted {
                    $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) || ($0.path == $1.path && $0.id < $1.id)
                }
        }
        return removal
    }

    private static func placeholders(_ count: Int) -> String {
        // Numbered, so a list used twice in one statement binds once.
        (1...max(count, 1)).map { "?\($0)" }.joined(separator: ", ")
    }

    private static func asDatabaseError(_ error: any Error, _ context: String) -> DatabaseError {
        (error as? DatabaseError) ?? DatabaseError(code: SQLITE_ERROR, message: "\(error)", context: context)
    }
}

extension FileSelectionError: CustomStringConvertible {
    package var description: String {
        switch self {
        case .noMatch(let name):
            return "'\(name)' is neither the path of an ingested file nor the start of one's SHA-256 "
                + "(at least \(FileSelection.minimumPrefix) hex digits). See 'arrival files list'."
        case .onlySkipped(let name, let sameBytesAs):
            return "'\(name)' was never ingested: its bytes were skipped as the same as "
                + sameBytesAs.map { "'\($0)'" }.joined(separator: ", ")
                + ". Remove that file instead; its skipped re-uploads go with it."
        case .ambiguous(let name, let files):
            let listed = files.map { "\(FileSelection.shortHash($0.sha256))  \($0.path)" }
            return "'\(name)' matches \(files.count) ingested files:\n  " + listed.joined(separator: "\n  ")
                + "\nName one by a longer SHA-256 prefix (several may be given)."
        }
    }
}

/// How the names given to `arrival files remove` select registered files.
package enum FileSelection {
    /// Fewest hex digits that are taken as the start of a SHA-256.
    package static let minimumPrefix = 4
    /// Hex digits of a SHA-256 shown in listings.
    package static let shortLength = 12

    package static func shortHash(_ sha256: String) -> String { String(sha256.prefix(shortLength)) }

    /// The files `names` select, each name exactly one file, in the order
    /// named (a file named twice once). A name selects the files registered
    /// under it, as given or as `normalise` makes it (the absolute form
    /// ingest stores), and the files whose SHA-256 starts with it (at least
    /// ``minimumPrefix`` hex digits, any case). Paths compare byte for byte.
    package static func select(
        _ names: [String], files: [IngestedFile], skipped: [SkippedFile], normalise: (String) -> String = { $0 }
    ) throws(FileSelectionError) -> [IngestedFile] {
        var chosen: [IngestedFile] = []
        for name in names {
            let absolute = normalise(name)
            func isPath(_ path: String) -> Bool {
                path.utf8.elementsEqual(name.utf8) || path.utf8.elementsEqual(absolute.utf8)
            }
            let prefix = name.lowercased()
            let isHex =
                name.utf8.count >= minimumPrefix
                && name.utf8.allSatisfy {
                    ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
                }
            let matches = files.filter { isPath($0.path) || (isHex && $0.sha256.hasPrefix(prefix)) }
            switch matches.count {
            case 1:
                if !chosen.contains(where: { $0.id == matches[0].id }) { chosen.append(matches[0]) }
            case 0:
                let sources = skipped.filter { isPath($0.path) }.map(\.sameBytesAs)
                if sources.isEmpty { throw .noMatch(name: name) }
                throw .onlySkipped(name: name, sameBytesAs: sources)
            default:
                throw .ambiguous(name: name, files: matches)
            }
        }
        return chosen
    }
}

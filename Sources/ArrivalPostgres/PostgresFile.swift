package import ArrivalHandOff
package import ArrivalModel
package import ArrivalStore
import Foundation
import NIOCore
import PostgresNIO

/// One file being stored into a ``PostgresStore``, in the savepoint
/// `arrival_file` of the store's batch transaction (``PostgresStore`` says how).
package final class PostgresFile: FileWriter {
    private let store: PostgresStore
    /// The file's registry id: drawn by the statement that stores it, or
    /// before, when earlier versions are folded into it (``fileIDDrawn()``).
    private(set) var fileID: Int64?
    private let path: String
    private let now: Int64
    /// Rows of each kind copied into the stage tables.
    private var staged = [0, 0, 0]
    private var malformed = 0
    /// Malformed lines held to be stored inline with the file's rows (while
    /// they are few and the rows are held), else nil.
    private var heldMalformed: [(line: Int64, cause: String, problem: String?)]? = []
    /// Malformed lines not yet copied (COPY text rows).
    private var pendingMalformed = ByteBuffer()
    /// Whether earlier versions were folded into this file (its new records are then counted by file).
    var replaced = false
    private var finished = false

    init(store: PostgresStore, path: String, now: Int64) {
        self.store = store
        self.path = path
        self.now = now
        store.currentFile = self
    }

    private var session: PostgresSession { store.session }

    package func store(_ batch: RowBatch) throws -> [Int]? {
        // A file of one batch (most device files) is held, and stored with
        // its rows bound to the storing statement: no temporary table.
        if !staging, held == nil {
            held = batch
            for row in batch.rows { staged[row.kind.index] += 1 }
            return nil
        }
        try stageHeld()
        try copyToStage(batch)
        return nil
    }

    /// The rows of a file held to be stored inline, if they are.
    private var held: RowBatch?
    /// Whether the file's rows go through the stage tables.
    private var staging = false

    /// From here on the file's rows go through the stage tables, the held ones first.
    private func stageHeld() throws {
        staging = true
        if let batch = held {
            held = nil
            // Counted again as they are copied.
            staged = [0, 0, 0]
            try copyToStage(batch)
        }
    }

    private func copyToStage(_ batch: RowBatch) throws {
        try store.storeAloneFromHere()
        var counts = [0, 0, 0]
        for row in batch.rows { counts[row.kind.index] += 1 }
        for kind in RecordKind.allCases where counts[kind.index] > 0 {
            var data = ByteBuffer()
            data.reserveCapacity(batch.bytes.count + counts[kind.index] * 64)
            do {
                try CopyText.encode(batch, kind: kind, into: &data)
            } catch let error as PostgresStoreError {
                throw PostgresStoreError("\(path):\(error.description)")
            }
            try session.copy(into: kind.stageTable, columns: ["line", "content_hash"] + kind.columns, data)
            staged[kind.index] += counts[kind.index]
        }
    }

    package func noteMalformed(line: Int, cause: MalformedCause, problem: String?) throws {
        // A problem quotes the line, which may hold U+0000; PostgreSQL's text cannot.
        let problem = problem.map { $0.contains("\u{0}") ? $0.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : $0 }
        malformed += 1
        if heldMalformed != nil, !staging, malformed <= Self.inlineMalformedLimit {
            heldMalformed?.append((Int64(line), cause.rawValue, problem))
            return
        }
        stageMalformed()
        appendMalformed(Int64(line), cause.rawValue, problem)
        if pendingMalformed.readableBytes >= 1 << 20 { try flushMalformed() }
    }

    /// The most malformed lines stored inline with a file's rows.
    static let inlineMalformedLimit = 1_000

    /// From here on malformed lines go through their stage table, the held ones first.
    private func stageMalformed() {
        guard let held = heldMalformed else { return }
        heldMalformed = nil
        for line in held { appendMalformed(line.line, line.cause, line.problem) }
    }

    private func appendMalformed(_ line: Int64, _ cause: String, _ problem: String?) {
        pendingMalformed.writeString("\(line)\t\(cause)\t")
        if let problem {
            CopyText.writeText(Array(problem.utf8), into: &pendingMalformed)
        } else {
            pendingMalformed.writeString("\\N")
        }
        pendingMalformed.writeInteger(UInt8(ascii: "\n"))
    }

    private func flushMalformed() throws {
        guard pendingMalformed.readableBytes > 0 else { return }
        try store.storeAloneFromHere()
        try session.copy(into: "arrival_stage_malformed", columns: ["line", "cause", "problem"], pendingMalformed)
        pendingMalformed.clear()
    }

    package func finish(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit {
        do {
            // A file is stored whole by the prepared statement or through the stage tables: one whose
            // rows are staged stages its malformed lines, one with more malformed lines than are held its rows.
            if staging || heldMalformed == nil {
                try stageHeld()
                stageMalformed()
            }
            try flushMalformed()
            // A file that wrote nothing yet (all held, nothing replaced) retries from its own savepoint.
            let retryPoint = staging || replaced ? "arrival_store" : "arrival_file"
            if retryPoint == "arrival_store" { try session.execute("SAVEPOINT arrival_store") }
            var attempt = 0
            while true {
                do {
                    let commit = try storeAtOnce(sha256: sha256, byteCount: byteCount, lines: lines, gzip: gzip)
                    finished = true
                    return commit
                } catch let error as PostgresStoreError where error.isRetryable && attempt < 8 {
                    // A deadlock with another writer storing the same records in another order: again,
                    // with the locks of the batch's earlier files released (``PostgresStore/storeAloneFromHere()``).
                    attempt += 1
                    try session.execute("ROLLBACK TO SAVEPOINT \(retryPoint)")
                    if retryPoint == "arrival_file" { try store.storeAloneFromHere() }
                }
            }
        } catch {
            rollback()
            throw error
        }
    }

    /// The file's registry id, drawn now if it was not yet.
    func fileIDDrawn() throws -> Int64 {
        if let fileID { return fileID }
        let id = try session.run("SELECT nextval('arrival.file_ids')").first!.decode(Int64.self)
        fileID = id
        return id
    }

    /// Claims the bytes, moves the file's rows into the record tables and
    /// commits; or finds the bytes stored and rolls back. The rows of every
    /// route, the malformed lines and the registry row with its counts go in
    /// one statement (data-modifying `WITH` queries): a tree of small device
    /// files is mostly round trips, and this is one instead of one per step.
    /// The registry row is written last, with the counts: when another writer
    /// stored the same bytes meanwhile, its claim conflicts and the whole
    /// file is rolled back. A file that grew from earlier versions (folded
    /// into it when it began) counts its records by file afterwards.
    private func storeAtOnce(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit {
        let result =
            staging
            ? try storeStaged(sha256: sha256, byteCount: byteCount, lines: lines, gzip: gzip)
            : try storeInline(sha256: sha256, byteCount: byteCount, lines: lines, gzip: gzip)
        return try stored(result, sha256: sha256)
    }

    /// Stores a file whose rows and malformed lines are held, by the prepared ``InlineFileStatement``.
    private func storeInline(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws
        -> (Int64, Int64, Int64, Int64, Int64)
    {
        var columns: [[ColumnArray]] = []
        do {
            for kind in RecordKind.allCases { columns.append(try InlineFileStatement.columns(of: held, kind: kind)) }
        } catch let error as PostgresStoreError {
            throw PostgresStoreError("\(path):\(error.description)")
        }
        var malformedColumns = [ColumnArray(.int8), ColumnArray(.text), ColumnArray(.text)]
        for line in heldMalformed ?? [] {
            malformedColumns[0].append(line.line)
            malformedColumns[1].append(line.cause)
            if let problem = line.problem {
                malformedColumns[2].append(problem)
            } else {
                malformedColumns[2].appendNull()
            }
        }
        let statement = InlineFileStatement(
            fileID: fileID, columns: columns, malformed: malformedColumns, sha256: sha256, path: path,
            byteCount: Int64(byteCount), gzip: gzip, lines: Int64(lines), records: Int64(staged.reduce(0, +)),
            malformedCount: Int64(malformed), now: now)
        guard let row = try session.execute(statement).first else {
            throw PostgresStoreError("\(path): the store said nothing of the file")
        }
        return row
    }

    /// Stores a file through the stage tables.
    private func storeStaged(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws
        -> (Int64, Int64, Int64, Int64, Int64)
    {
        var binds = PostgresBindings(capacity: 8)
        // A file that replaces earlier versions drew its id when it took over their records.
        var steps = ["file AS (SELECT \(fileID.map { "\($0)::bigint" } ?? "nextval('arrival.file_ids')") AS id)"]
        var counts: [String] = []
        for kind in RecordKind.allCases {
            guard staged[kind.index] > 0 else {
                counts.append("0")
                continue
            }
            let (inserts, count) = kind.storingSteps(from: kind.stageTable)
            steps += inserts
            counts.append(count)
        }
        steps.append("counted AS (SELECT \(counts[0]) AS apns, \(counts[1]) AS renders, \(counts[2]) AS callbacks)")
        if malformed > 0 {
            steps.append(
                """
                malformed AS (
                    INSERT INTO arrival.malformed_lines (file_id, line, cause, problem)
                    SELECT file.id, m.line, m.cause, m.problem FROM arrival_stage_malformed AS m CROSS JOIN file
                    ON CONFLICT DO NOTHING RETURNING 1)
                """)
        }
        // The values are bound: the path is the user's, and the hash checked by the table.
        let first = binds.count + 1
        let p = (first..<first + 8).map { "$\($0)" }
        steps.append(
            """
            claim AS (
                INSERT INTO arrival.files (content_sha256, id, path, byte_count, gzip, line_count, record_count,
                                           duplicate_count, malformed_count, ingested_at)
                SELECT \(p[0]), file.id, \(p[1]), \(p[2]), \(p[3]), \(p[4]), c.apns + c.renders + c.callbacks,
                       \(p[5]) - (c.apns + c.renders + c.callbacks), \(p[6]), \(p[7])
                FROM file CROSS JOIN counted AS c
                ON CONFLICT (content_sha256) DO NOTHING RETURNING id)
            """)
        binds.append(sha256)
        binds.append(path)
        binds.append(Int64(byteCount))
        binds.append(gzip)
        binds.append(Int64(lines))
        binds.append(Int64(staged.reduce(0, +)))
        binds.append(Int64(malformed))
        binds.append(now)
        let rows = try session.run(
            PostgresQuery(
                unsafeSQL: "WITH " + steps.joined(separator: ",\n")
                    + "\nSELECT file.id, c.apns, c.renders, c.callbacks, (SELECT count(*) FROM claim) "
                    + "FROM file CROSS JOIN counted AS c",
                binds: binds))
        guard let row = rows.first else { throw PostgresStoreError("\(path): the store said nothing of the file") }
        return try row.decode((Int64, Int64, Int64, Int64, Int64).self)
    }

    /// What follows the storing statement: the file rolled back when its
    /// bytes were stored meanwhile, else its records counted and repeats noted.
    private func stored(_ result: (Int64, Int64, Int64, Int64, Int64), sha256: String) throws -> FileCommit {
        let (id, apns, renders, callbacks, claimed) = result
        if claimed == 0 {
            // Another writer stored these bytes since admission looked: nothing of this file is kept.
            try session.execute("ROLLBACK TO SAVEPOINT arrival_file", "RELEASE SAVEPOINT arrival_file")
            let status = try store.status(ofContent: sha256, at: path)
            finished = true
            return FileCommit(status: status == .new ? .alreadyIngestedHere : status)
        }
        fileID = id
        var new = [Int(apns), Int(renders), Int(callbacks)]
        if replaced {
            // Records of the versions this file grew from are its own again: counted by file.
            for kind in RecordKind.allCases {
                let counts = kind.routes.map { "(SELECT count(*) FROM arrival.\($0.table) WHERE file_id = \(id))" }
                let count = try session.run(PostgresQuery(unsafeSQL: "SELECT " + counts.joined(separator: " + ")))
                new[kind.index] = Int(try count.first?.decode(Int64.self) ?? 0)
            }
            let total = Int64(new.reduce(0, +))
            try session.run(
                """
                UPDATE arrival.files SET record_count = \(total), duplicate_count = \(Int64(staged.reduce(0, +)) - total)
                WHERE id = \(id) AND content_sha256 = \(sha256)
                """)
        }
        for kind in RecordKind.allCases
        where new[kind.index] < staged[kind.index] || (replaced && staged[kind.index] > 0) {
            try noteRepeats(of: kind)
        }
        if staging {
            // The stage tables are emptied at commit; the next file of the batch needs them empty now.
            for kind in RecordKind.allCases where staged[kind.index] > 0 {
                try session.execute("DELETE FROM \(kind.stageTable)")
            }
        }
        if malformed > 0, heldMalformed == nil { try session.execute("DELETE FROM arrival_stage_malformed") }
        try session.execute("RELEASE SAVEPOINT arrival_file")
        return FileCommit(status: .new, newByKind: new)
    }

    /// The staged lines whose record was stored before them (by another
    /// file, or by an earlier line of this one), counted: one
    /// `record_repeats` row per record they repeat.
    private func noteRepeats(of kind: RecordKind) throws {
        guard let fileID else { return }
        for route in kind.routes {
            let identity = route.identity.joined(separator: ", ")
            let join = route.identity.map { "t.\($0) = s.\($0)" }.joined(separator: " AND ")
            // The rows held (bound, numbered in line order), or the stage table.
            let binds = try held.map { try InlineFileStatement.bindings(of: $0, kind: kind) } ?? PostgresBindings()
            let input =
                held == nil
                ? ""
                : "WITH input_\(kind.rawValue) AS (SELECT row_number() OVER () AS id, u.* FROM \(kind.unnest(from: 1)))"
            try session.run(
                PostgresQuery(
                    unsafeSQL: """
                        \(input)
                        INSERT INTO arrival.record_repeats (file_id, kind, record_id, repeats)
                        SELECT \(fileID), '\(kind.rawValue)', t.id, count(*)
                        FROM (SELECT id, \(identity),
                                     row_number() OVER (PARTITION BY \(identity) ORDER BY id) AS n
                              FROM \(held == nil ? kind.stageTable : "input_\(kind.rawValue)")
                              WHERE \(route.condition)) AS s
                        JOIN arrival.\(route.table) AS t ON \(join)
                        WHERE s.n > 1 OR t.file_id <> \(fileID)
                        GROUP BY t.id
                        ORDER BY min(s.id)
                        """, binds: binds))
        }
    }

    /// Undoes the file (its stage rows with it); the batch's other files stay.
    package func rollback() {
        guard !finished else { return }
        finished = true
        try? session.execute("ROLLBACK TO SAVEPOINT arrival_file", "RELEASE SAVEPOINT arrival_file")
    }

    deinit { rollback() }
}

/// Rows in `COPY`'s text format: fields split by tabs, `\N` for null,
/// backslash, tab, newline and carriage return escaped.
enum CopyText {
    /// The rows of `kind` in `batch`: line, content hash, then the kind's columns.
    static func encode(_ batch: RowBatch, kind: RecordKind, into data: inout ByteBuffer) throws {
        try batch.bytes.withUnsafeBufferPointer { arena in
            for row in batch.rows where row.kind == kind {
                data.writeString(String(row.line))
                data.writeInteger(UInt8(ascii: "\t"))
                data.writeString(String(Int64(bitPattern: row.hash)))
                for cell in batch.cells(of: row) {
                    data.writeInteger(UInt8(ascii: "\t"))
                    switch cell {
                    case .int(let value):
                        data.writeString(String(value))
                    case .noInt, .noText:
                        data.writeStaticString("\\N")
                    case .text(let offset, let count):
                        writeText(try storable(arena, offset, count, line: row.line), into: &data)
                    }
                }
                data.writeInteger(UInt8(ascii: "\n"))
            }
        }
    }

    /// The bytes `offset..<offset + count` of a batch's arena, unless they
    /// hold U+0000, which PostgreSQL's `text` cannot (a JSON string may, as
    /// "\u0000"): then the error names the line.
    static func storable(_ arena: UnsafeBufferPointer<UInt8>, _ offset: Int32, _ count: Int32, line: Int) throws
        -> UnsafeBufferPointer<UInt8>
    {
        let text = UnsafeBufferPointer(rebasing: arena[Int(offset)..<Int(offset + count)])
        if text.contains(0) {
            throw PostgresStoreError(
                "\(line): a text field holds U+0000, which PostgreSQL cannot store; nothing of this file was "
                    + "stored, the files before it were")
        }
        return text
    }

    /// `text`'s bytes, escaped for COPY's text format.
    static func writeText(_ text: some Collection<UInt8>, into data: inout ByteBuffer) {
        for byte in text {
            switch byte {
            case UInt8(ascii: "\\"): data.writeStaticString("\\\\")
            case UInt8(ascii: "\t"): data.writeStaticString("\\t")
            case UInt8(ascii: "\n"): data.writeStaticString("\\n")
            case UInt8(ascii: "\r"): data.writeStaticString("\\r")
            default: data.writeInteger(byte)
            }
        }
    }
}

package import ArrivalHandOff
package import ArrivalModel
package import ArrivalStore
import NIOCore
import PostgresNIO

/// One file being stored into a ``PostgresStore``, in a transaction of its
/// own (``PostgresStore`` says how).
package final class PostgresFile: FileWriter {
    private let store: PostgresStore
    let fileID: Int64
    private let path: String
    private let now: Int64
    /// Rows of each kind copied into the stage tables.
    private var staged = [0, 0, 0]
    private var malformed = 0
    /// Malformed lines not yet copied (COPY text rows).
    private var pendingMalformed = ByteBuffer()
    /// Whether earlier versions were folded into this file (its new records are then counted by file).
    var replaced = false
    private var finished = false

    init(store: PostgresStore, fileID: Int64, path: String, now: Int64) {
        self.store = store
        self.fileID = fileID
        self.path = path
        self.now = now
        store.currentFile = self
    }

    private var session: PostgresSession { store.session }

    package func store(_ batch: RowBatch) throws -> [Int]? {
        var counts = [0, 0, 0]
        for row in batch.rows { counts[row.kind.index] += 1 }
        for kind in RecordKind.allCases where counts[kind.index] > 0 {
            var data = ByteBuffer()
            data.reserveCapacity(batch.bytes.count + counts[kind.index] * 64)
            try CopyText.encode(batch, kind: kind, into: &data)
            try session.copy(into: kind.stageTable, columns: ["line", "content_hash"] + kind.columns, data)
            staged[kind.index] += counts[kind.index]
        }
        return nil
    }

    package func noteMalformed(line: Int, cause: MalformedCause, problem: String?) throws {
        pendingMalformed.writeString("\(line)\t\(cause.rawValue)\t")
        if let problem {
            CopyText.writeText(Array(problem.utf8), into: &pendingMalformed)
        } else {
            pendingMalformed.writeString("\\N")
        }
        pendingMalformed.writeInteger(UInt8(ascii: "\n"))
        malformed += 1
        if pendingMalformed.readableBytes >= 1 << 20 { try flushMalformed() }
    }

    private func flushMalformed() throws {
        guard pendingMalformed.readableBytes > 0 else { return }
        try session.copy(into: "arrival_stage_malformed", columns: ["line", "cause", "problem"], pendingMalformed)
        pendingMalformed.clear()
    }

    package func finish(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit {
        do {
            try flushMalformed()
            try session.execute("SAVEPOINT arrival_store")
            var attempt = 0
            while true {
                do {
                    let commit = try storeStaged(sha256: sha256, byteCount: byteCount, lines: lines, gzip: gzip)
                    finished = true
                    return commit
                } catch let error as PostgresStoreError where error.isRetryable && attempt < 8 {
                    // A deadlock with another writer storing the same records in another order: again.
                    attempt += 1
                    try session.execute("ROLLBACK TO SAVEPOINT arrival_store")
                }
            }
        } catch {
            rollback()
            throw error
        }
    }

    /// Claims the bytes, moves the staged rows into the record tables and
    /// commits; or finds the bytes stored and rolls back.
    private func storeStaged(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit {
        let claimed = try session.run(
            """
            INSERT INTO arrival.files (content_sha256, id, path, byte_count, gzip, line_count, record_count,
                                       duplicate_count, malformed_count, ingested_at)
            VALUES (\(sha256), \(fileID), \(path), \(Int64(byteCount)), \(gzip), \(Int64(lines)), 0, 0, 0, \(now))
            ON CONFLICT (content_sha256) DO NOTHING
            """)
        if (claimed.metadata.rows ?? 0) == 0 {
            // Another writer stored these bytes since admission looked (or is storing them, and committed).
            let status = try store.status(ofContent: sha256, at: path)
            try session.execute("ROLLBACK")
            finished = true
            return FileCommit(status: status == .new ? .alreadyIngestedHere : status)
        }
        var new = [0, 0, 0]
        for kind in RecordKind.allCases where staged[kind.index] > 0 {
            let columns = kind.columns.joined(separator: ", ")
            for route in kind.routes {
                let inserted = try session.run(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO arrival.\(route.table) (id, file_id, content_hash, \(columns))
                            SELECT id, $1, content_hash, \(columns) FROM \(kind.stageTable)
                            WHERE \(route.condition) ORDER BY id
                            ON CONFLICT (\(route.identity.joined(separator: ", "))) DO NOTHING
                            """, binds: PostgresStore.binds(fileID)))
                new[kind.index] += inserted.metadata.rows ?? 0
            }
            if replaced {
                // Records of the versions this file grew from are its own again: count them by file.
                new[kind.index] = 0
                for route in kind.routes {
                    let count = try session.run(
                        PostgresQuery(
                            unsafeSQL: "SELECT count(*) FROM arrival.\(route.table) WHERE file_id = $1",
                            binds: PostgresStore.binds(fileID)))
                    new[kind.index] += Int(try count.first?.decode(Int64.self) ?? 0)
                }
            }
            if new[kind.index] < staged[kind.index] || replaced {
                try noteRepeats(of: kind)
            }
        }
        if malformed > 0 {
            try session.run(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO arrival.malformed_lines (file_id, line, cause, problem)
                        SELECT $1, line, cause, problem FROM arrival_stage_malformed ON CONFLICT DO NOTHING
                        """, binds: PostgresStore.binds(fileID)))
        }
        let total = new.reduce(0, +)
        try session.run(
            """
            UPDATE arrival.files SET record_count = \(Int64(total)),
                duplicate_count = \(Int64(staged.reduce(0, +) - total)), malformed_count = \(Int64(malformed))
            WHERE content_sha256 = \(sha256)
            """)
        try session.execute("COMMIT")
        return FileCommit(status: .new, newByKind: new)
    }

    /// One `record_repeats` row per staged line whose record was stored
    /// before it: by another file, or by an earlier line of this one.
    private func noteRepeats(of kind: RecordKind) throws {
        for route in kind.routes {
            let identity = route.identity.joined(separator: ", ")
            let join = route.identity.map { "t.\($0) = s.\($0)" }.joined(separator: " AND ")
            try session.run(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO arrival.record_repeats (file_id, kind, record_id)
                        SELECT $1, '\(kind.rawValue)', t.id
                        FROM (SELECT id, \(identity),
                                     row_number() OVER (PARTITION BY \(identity) ORDER BY id) AS n
                              FROM \(kind.stageTable) WHERE \(route.condition)) AS s
                        JOIN arrival.\(route.table) AS t ON \(join)
                        WHERE s.n > 1 OR t.file_id <> $1
                        ORDER BY s.id
                        """, binds: PostgresStore.binds(fileID)))
        }
    }

    package func rollback() {
        guard !finished else { return }
        finished = true
        try? session.execute("ROLLBACK")
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
                        let text = UnsafeBufferPointer(rebasing: arena[Int(offset)..<Int(offset + count)])
                        // PostgreSQL's text cannot hold U+0000 (a JSON string may, as "\u0000").
                        if text.contains(0) {
                            throw PostgresStoreError(
                                "line \(row.line): a text field holds U+0000, which PostgreSQL cannot store")
                        }
                        writeText(text, into: &data)
                    }
                }
                data.writeInteger(UInt8(ascii: "\n"))
            }
        }
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

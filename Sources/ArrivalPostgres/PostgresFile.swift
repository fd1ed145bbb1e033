package import ArrivalHandOff
package import ArrivalModel
package import ArrivalStore
import Foundation
import NIOCore
import PostgresNIO

/// One file being stored into a ``PostgresStore``: its rows and malformed
/// lines are written, in `COPY`'s text format, to the store's stage of the
/// open batch under the file's ordinal (``PostgresStore`` says what happens
/// to them at the batch's commit). Nothing of it reaches the server's
/// tables before then, so undoing it is forgetting what it staged.
package final class PostgresFile: FileWriter {
    private let store: PostgresStore
    /// The file's place in the batch: its rows are staged under it.
    let ordinal: Int64
    /// The file's registry id when it was drawn before the batch's merge
    /// (earlier versions were folded into it: ``fileIDDrawn()``).
    private(set) var fileID: Int64?
    private let path: String
    private let now: Int64
    /// Whether the file was begun to replace earlier versions: alone in its batch, undone by rolling the batch back.
    private let replaces: Bool
    /// Rows of each kind staged.
    private var staged = [0, 0, 0]
    private var malformed = 0
    /// Whether earlier versions were folded into this file (its new records are then counted by file).
    var replaced = false
    /// Where the file's stage began, to forget it (``PostgresStore/StageMark``).
    private let mark: PostgresStore.StageMark
    private var finished = false

    init(store: PostgresStore, ordinal: Int64, path: String, now: Int64, replaces: Bool) {
        self.store = store
        self.ordinal = ordinal
        self.path = path
        self.now = now
        self.replaces = replaces
        mark = store.stageMark()
        store.currentFile = self
    }

    package func store(_ batch: RowBatch) throws -> [Int]? {
        for kind in RecordKind.allCases {
            let count = store.stage(batch, kind: kind, ordinal: ordinal)
            staged[kind.index] += count
        }
        try store.flushStageIfLarge()
        return nil
    }

    package func noteMalformed(line: Int, cause: MalformedCause, problem: String?) throws {
        // A problem never holds U+0000: the decoder writes a quoted one as \u0000 (RecordDecoder.lastProblem).
        malformed += 1
        store.stageMalformed(ordinal: ordinal, line: Int64(line), cause: cause.rawValue, problem: problem)
        try store.flushStageIfLarge()
    }

    /// Adds the file to the batch; its commit is settled when the batch
    /// commits (``PostgresStore/commitFiles()``). A file that took over
    /// earlier versions' records is alone in its batch, which commits now.
    package func finish(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws -> FileCommit? {
        finished = true
        do {
            try store.addFile(
                PostgresStore.StagedFile(
                    ordinal: ordinal, fileID: fileID, path: path, sha256: sha256, byteCount: Int64(byteCount),
                    gzip: gzip, lines: Int64(lines), staged: staged, malformed: Int64(malformed), now: now,
                    replaced: replaced))
            if replaces { try store.mergeAndCommit() }
        } catch {
            if replaces { store.rollbackBatch() }
            throw error
        }
        return nil
    }

    /// The file's registry id, drawn now if it was not yet.
    func fileIDDrawn() throws -> Int64 {
        if let fileID { return fileID }
        let id = try store.session.run("SELECT nextval('arrival.file_ids')").first!.decode(Int64.self)
        fileID = id
        return id
    }

    /// Forgets what the file staged; one that took over earlier versions'
    /// records rolls its batch (itself alone) back. The batch's other files stay.
    package func rollback() {
        guard !finished else { return }
        finished = true
        if replaces {
            store.rollbackBatch()
        } else {
            store.forgetStage(since: mark)
        }
    }

    deinit { rollback() }
}

/// Rows in `COPY`'s text format: fields split by tabs, `\N` for null,
/// backslash, tab, newline and carriage return escaped.
enum CopyText {
    /// The rows of `kind` in `batch`: `ordinal`, id drawn by the server's
    /// default, line, content hash, then the kind's columns. Returns how many.
    /// No text holds U+0000, which PostgreSQL's `text` cannot: the decoder makes such a line malformed
    /// (contract 3.2), the same on every engine.
    static func encode(_ batch: RowBatch, kind: RecordKind, ordinal: Int64, into data: inout ByteBuffer) -> Int {
        let prefix = String(ordinal) + "\t"
        var count = 0
        batch.bytes.withUnsafeBufferPointer { arena in
            for row in batch.rows where row.kind == kind {
                count += 1
                data.writeString(prefix)
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
                        writeText(UnsafeBufferPointer(rebasing: arena[Int(offset)..<Int(offset + count)]), into: &data)
                    }
                }
                data.writeInteger(UInt8(ascii: "\n"))
            }
        }
        return count
    }

    /// `text`'s bytes, escaped for COPY's text format.
    static func writeText(_ text: some Collection<UInt8>, into data: inout ByteBuffer) {
        // Runs without a byte to escape (most text has none) are written whole.
        var start = text.startIndex
        var index = start
        while index != text.endIndex {
            let escape: StaticString? =
                switch text[index] {
                case UInt8(ascii: "\\"): "\\\\"
                case UInt8(ascii: "\t"): "\\t"
                case UInt8(ascii: "\n"): "\\n"
                case UInt8(ascii: "\r"): "\\r"
                default: nil
                }
            if let escape {
                data.writeBytes(text[start..<index])
                data.writeStaticString(escape)
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        data.writeBytes(text[start..<index])
    }
}

package import ArrivalHandOff
package import ArrivalModel

/// One file being ingested, inside the store's batch transaction. Records
/// are inserted with prepared statements reused for every row;
/// ``commit(sha256:byteCount:lines:gzip:)`` writes the file's registry
/// counts and releases the file into the batch, ``rollback()`` leaves no
/// trace of it (``SQLiteStore/beginFile(path:now:replaces:)`` says how).
package final class FileTransaction {
    /// How the file is rolled back.
    enum Undo: Equatable {
        /// `ROLLBACK TO` its savepoint.
        case savepoint
        /// Delete the rows it added: those past these (``RecordStatements/lastRowIDs()``).
        case rowsAfter(RecordStatements.RowIDs)
    }

    private let store: SQLiteStore
    let fileID: Int64
    private let undo: Undo
    private(set) var inserted = 0
    private(set) var duplicates = 0
    private(set) var malformed = 0
    private var finished = false

    private let statements: RecordStatements

    init(store: SQLiteStore, fileID: Int64, undo: Undo) throws(DatabaseError) {
        self.store = store
        self.fileID = fileID
        self.undo = undo
        self.statements = try store.recordStatements()
    }

    /// Stores `record` unless an equal record is already stored; returns
    /// whether it was new. `key` overrides the record's own (tests use it to
    /// force a collision).
    @discardableResult
    func insert(_ record: Record, key: UInt64? = nil) throws(DatabaseError) -> Bool {
        let new = try statements.insert(record, fileID: fileID, key: key)
        if new { inserted += 1 } else { duplicates += 1 }
        return new
    }

    /// Stores every row of `batch` that is not already stored; returns how
    /// many of each kind were new (indexed by ``RecordKind/index``).
    package func insertRows(of batch: RowBatch) throws(DatabaseError) -> [Int] {
        var new = [0, 0, 0]
        try statements.insertRows(of: batch, fileID: fileID) { (row, stored) throws(DatabaseError) in
            guard let stored else {
                new[row.kind.index] += 1
                return
            }
            try noteRepeat(kind: row.kind, of: stored)
        }
        let total = new[0] + new[1] + new[2]
        inserted += total
        duplicates += batch.rows.count - total
        return new
    }

    /// Notes that a line of this file held a record equal to the `stored`
    /// one, so that which files repeat which records can be told in any
    /// ingest order.
    private func noteRepeat(kind: RecordKind, of stored: StoredRecord) throws(DatabaseError) {
        statements.repeated.bind(1, fileID)
        statements.repeated.bind(2, kind.rawValue)
        statements.repeated.bind(3, stored.id)
        try statements.repeated.run()
    }

    package func addMalformed(line: Int, cause: MalformedCause, problem: String? = nil) throws(DatabaseError) {
        statements.malformed.bind(1, fileID)
        statements.malformed.bind(2, Int64(line))
        statements.malformed.bind(3, cause.rawValue)
        statements.malformed.bind(4, problem)
        try statements.malformed.run()
        malformed += 1
    }

    /// The `content_sha256` of the one file being read, until it is committed
    /// (a real hash is 64 hex digits: no file's bytes can have it).
    static let pendingHash = "pending"

    /// Registers the file as holding the bytes with this hash, with its
    /// counts, and releases it into the store's batch transaction. The caller
    /// has checked, inside that transaction, that the bytes are new.
    package func commit(sha256: String, byteCount: Int, lines: Int, gzip: Bool) throws(DatabaseError) {
        let statement = statements.finishFile
        statement.bind(1, sha256)
        statement.bind(2, Int64(byteCount))
        statement.bind(3, Int64(lines))
        statement.bind(4, Int64(inserted))
        statement.bind(5, Int64(duplicates))
        statement.bind(6, Int64(malformed))
        statement.bind(7, Int64(gzip ? 1 : 0))
        statement.bind(8, fileID)
        try statement.run()
        if undo == .savepoint { try statements.release.run() }
        finished = true
    }

    /// Leaves no trace of the file. Should that fail (a full disk, an I/O
    /// error), the whole batch is rolled back, so that no part of the file
    /// can be committed with the files before it.
    package func rollback() {
        guard !finished else { return }
        finished = true
        switch undo {
        case .savepoint:
            do {
                try store.connection.execute("ROLLBACK TO arrival_file; RELEASE arrival_file")
            } catch {
                store.abandonBatch()
            }
        case .rowsAfter(let last):
            do {
                try statements.deleteRows(after: last, fileID: fileID)
            } catch {
                store.abandonBatch()
            }
        }
    }

    deinit {
        rollback()
    }
}

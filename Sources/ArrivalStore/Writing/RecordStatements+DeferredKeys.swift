import ArrivalHandOff
import ArrivalModel
import CSQLite

/// The unique indexes on `record_key`, put off while the first transaction
/// of a bulk load fills empty record tables, and the keys kept in memory in
/// their stead.
///
/// Why: rows reach a store in the order of their files, not of their keys.
/// A device's file holds one activity's records over hours, so in a tree of
/// device files each new row's index entry lands on a page of its own, and
/// keeping the indexes would be most of what SQLite does in a first load.
/// Built once the rows are in, an index is one sort and pages written in
/// order. A table whose keys do arrive in order (a sender's log: the
/// key's high bits are the record's time window) keeps, once its first rows
/// (``Limits/sampleRows``) have shown that order, only the keys of its last
/// three windows in its directory (``recentWindows``): a row of an older
/// window never comes in such a table, and the directory stays small enough
/// for the CPU's caches, where SQLite's index would search its pages for
/// every row (within a window, keys are in hash order: issue 51 measured
/// that search at a third of the writer's time on one large sender file).
/// Should a row of an older window come all the same, the table's index is
/// made at once from its rows and the load goes on with it.
///
/// Nothing changes for what is stored: the writer asks its
/// ``KeyDirectory`` what it would have asked the index (is a row stored at
/// this key, and is it equal to this one; else the next key), so every row
/// gets the key and id it would have got. An index still put off when the
/// transaction commits is left to the next write transaction, of this run
/// or any later one, which makes it before it stores a record
/// (``RecordStatements/ensureKeyIndexes()``): a store ingested once and
/// then only read (a day's tree loaded for its report) never pays for the
/// indexes of its device tables, and a store written again pays once, the
/// same sort it would have paid at the commit. Nothing that reads a store
/// needs them: a repeated record's owner is found by its id
/// (`record_repeats.record_id`). When the directories would pass their
/// memory limit, the indexes are made at once and the load goes on with
/// them. A run killed meanwhile rolls back to the empty store, indexes and
/// all, since SQLite's `DROP INDEX` is part of the transaction.
package final class DeferredKeyIndex {
    /// By ``RecordKind/index``; nil once that table has its index again.
    var directories: [KeyDirectory?]
    /// The id the next row of each table gets: its largest id plus one
    /// (SQLite's choice, no other writer having the store meanwhile).
    var nextIDs: [Int64] = [1, 1, 1]
    /// The largest id each directory holds: past ``nextIDs`` while rows
    /// planned are not inserted yet, or when their insert failed.
    private var largestIDs: [Int64] = [0, 0, 0]
    let limits: Limits
    /// Per table, of its first ``Limits/sampleRows`` new rows: the largest key
    /// seen, and how many rows came more than ``farBehind`` below it.
    private var largestKeys: [Int64] = [.min, .min, .min]
    private var sampled = [0, 0, 0]
    private var behind = [0, 0, 0]
    private var decided = [false, false, false]
    /// Per table: its keys come in window order, and its directory keeps
    /// the keys of the last ``recentWindows`` windows only.
    private var windowed = [false, false, false]
    /// Per table: the oldest window whose keys its directory still holds
    /// (0: every window).
    private var floorWindows: [UInt64] = [0, 0, 0]
    /// What ``KeyDirectory/touch(_:)`` read, kept so that its reads are made.
    private(set) var touched: UInt64 = 0

    /// Keys of records two time windows (about 35 minutes,
    /// ``recordKey(time:hash:)``) older than the newest so far. Within a
    /// window keys are in hash order, so only a whole window tells time.
    static let farBehind = Int64(2) << 42

    /// The windows a table in window order keeps in its directory: the
    /// newest and the two before it (``farBehind``: what its first rows were
    /// judged by).
    static let recentWindows: UInt64 = 3

    /// A key's time window (``recordKey(time:hash:)``).
    @inline(__always)
    static func window(_ key: Int64) -> UInt64 { UInt64(bitPattern: key) >> 42 }

    package struct Limits: Sendable {
        /// The most bytes the directories may take together (64 MiB: three
        /// tables of 700,000 rows, or one of 1.4 million); past it the
        /// indexes are made at once.
        package var byteLimit = 64 << 20
        /// The rows a table's order is judged on.
        package var sampleRows = 8192
        /// The slots a directory starts with (a power of two).
        package var initialSlots = KeyDirectory.initialSlots
        /// A directory of a table in window order lets go of older windows'
        /// keys once it holds this many (its rebuild then costs little per row).
        package var windowedKeys = 1 << 16

        package init() {}
    }

    init(limits: Limits) {
        self.limits = limits
        directories = Array(repeating: KeyDirectory(slots: limits.initialSlots), count: 3)
    }

    var byteCount: Int { directories.reduce(0) { $0 + ($1?.byteCount ?? 0) } }

    /// Brings the home slots of `keys` in a table's directory into the cache, all at once.
    func prefetch(_ keys: some Sequence<Int64>, kind: Int) {
        if let directory = directories[kind] { touched ^= directory.touch(keys) }
    }

    /// Notes a new row's key for the judgement of its table's order.
    @inline(__always)
    func sample(_ key: Int64, kind: Int) {
        guard !decided[kind] else { return }
        if key < largestKeys[kind] &- Self.farBehind { behind[kind] += 1 }
        largestKeys[kind] = max(largestKeys[kind], key)
        sampled[kind] += 1
    }

    /// Whether rows of `kind` with these `keys` go through the
    /// directory. Once its first rows were sampled, a table whose keys come
    /// in order (at most a quarter far behind the newest) keeps only its
    /// recent windows' keys; a row older than those has the table's index
    /// made now, and the rows go through the index from then on.
    func keepsKeys(of kind: RecordKind, keys: some Sequence<Int64>, statements: RecordStatements)
        throws(DatabaseError) -> Bool
    {
        let index = kind.index
        guard directories[index] != nil else { return false }
        if !decided[index], sampled[index] >= limits.sampleRows {
            decided[index] = true
            windowed[index] = behind[index] * 4 <= sampled[index]
        }
        guard windowed[index] else { return true }
        letGoOfOldWindows(index)
        guard keys.allSatisfy({ Self.window($0) >= floorWindows[index] }) else {
            try statements.buildKeyIndex(of: kind)
            return false
        }
        return true
    }

    /// In a table in window order, forgets the keys of windows before the
    /// last ``recentWindows`` once the directory holds
    /// ``Limits/windowedKeys`` keys.
    /// Asked between runs of rows, never inside one (a run's own keys are
    /// looked up while it is planned).
    private func letGoOfOldWindows(_ index: Int) {
        guard let directory = directories[index], directory.count >= limits.windowedKeys else { return }
        let newest = Self.window(largestKeys[index])
        guard newest >= Self.recentWindows - 1 + floorWindows[index] + 1 else { return }
        let floor = newest - (Self.recentWindows - 1)
        floorWindows[index] = floor
        directories[index]?.keepOnly { Self.window($0) >= floor }
    }

    /// Notes in a table's directory that the row to get `id` is stored at `key`.
    @inline(__always)
    func note(_ key: Int64, id: Int64, kind: Int) {
        directories[kind]?.insert(key, id: id)
        largestIDs[kind] = max(largestIDs[kind], id)
        if windowed[kind], Self.window(key) > Self.window(largestKeys[kind]) { largestKeys[kind] = key }
    }

    /// A rolled-back file's rows are gone, their ids to be given again.
    func forgetRows(after last: [Int64]) {
        for kind in 0..<3 where largestIDs[kind] > last[kind] {
            directories[kind]?.removeIDs(after: last[kind])
            largestIDs[kind] = last[kind]
        }
        for kind in 0..<3 { nextIDs[kind] = min(nextIDs[kind], last[kind] + 1) }
    }
}

extension RecordStatements {
    /// Drops the three unique indexes on `record_key`, inside the open
    /// transaction, when every record table is empty; returns whether it did.
    func deferKeyIndexes(limits: DeferredKeyIndex.Limits) throws(DatabaseError) -> Bool {
        guard deferred == nil else { return true }
        let last = try lastRowIDs()
        guard last.apns == 0, last.renders == 0, last.callbacks == 0 else { return false }
        for name in Migrations.recordKeyIndexNames {
            // A first load that committed no record left them to this one.
            try connection.execute("DROP INDEX IF EXISTS \(name)")
        }
        // Rows are only appended meanwhile: a small page cache does, and leaves the memory to the keys.
        try connection.execute("PRAGMA cache_size = -8192")
        deferred = DeferredKeyIndex(limits: limits)
        return true
    }

    /// Makes a table's unique index again from its rows, inside the open
    /// transaction, and leaves its keys to the index from here on.
    func buildKeyIndex(of kind: RecordKind) throws(DatabaseError) {
        guard let deferred, deferred.directories[kind.index] != nil else { return }
        try createKeyIndex(of: kind)
        deferred.directories[kind.index] = nil
        if deferred.directories.allSatisfy({ $0 == nil }) {
            self.deferred = nil
            try connection.execute("PRAGMA cache_size = -65536")
        } else {
            try connection.execute("PRAGMA cache_size = -8192")
        }
    }

    /// Creates a table's unique index on `record_key` from its rows, with the
    /// page cache at 4 MiB: the sort takes its memory from the cache's size,
    /// and a sort that fits the CPU's caches is faster than a large one. The
    /// caller sets the cache for what follows.
    private func createKeyIndex(of kind: RecordKind) throws(DatabaseError) {
        try connection.execute("PRAGMA cache_size = -4096")
        try connection.execute(
            "CREATE UNIQUE INDEX \(Migrations.recordKeyIndexNames[kind.index]) ON \(kind.table) (record_key)")
    }

    /// Makes every index still put off.
    func buildKeyIndexes() throws(DatabaseError) {
        for kind in RecordKind.allCases { try buildKeyIndex(of: kind) }
    }

    /// The transaction that dropped the indexes ended: rolled back, and with
    /// it the drop, or committed, the indexes still put off left to the next
    /// write (``ensureKeyIndexes()``). The directories are let go either way.
    func forgetDeferral() {
        guard deferred != nil else { return }
        deferred = nil
        try? connection.execute("PRAGMA cache_size = -65536")
    }

    /// Makes the `record_key` indexes a committed first load left off,
    /// inside the open write transaction, before it stores any record: each
    /// is one sort of the table's keys. Asked at the start of every write
    /// transaction that does not put them off itself; when they are there,
    /// that is one look at the schema.
    func ensureKeyIndexes() throws(DatabaseError) {
        precondition(deferred == nil, "the indexes of a load that puts them off are made by buildKeyIndexes()")
        var present: Set<String> = []
        while try keyIndexNames.step() { present.insert(keyIndexNames.string(0) ?? "") }
        keyIndexNames.reset()
        let missing = RecordKind.allCases.filter { !present.contains(Migrations.recordKeyIndexNames[$0.index]) }
        guard !missing.isEmpty else { return }
        defer { try? connection.execute("PRAGMA cache_size = -65536") }
        for kind in missing { try createKeyIndex(of: kind) }
    }

    /// Builds every index still put off when the directories could not take
    /// all rows of `batch` as new within their memory limit, or ids past 32
    /// bits; the load goes on with the indexes.
    func makeRoomForKeys(of batch: RowBatch) throws(DatabaseError) {
        guard let deferred else { return }
        var counts = [0, 0, 0]
        for row in batch.rows { counts[row.kind.index] += 1 }
        var bytes = 0
        for kind in 0..<3 {
            guard let directory = deferred.directories[kind] else { continue }
            var slots = directory.slots
            while (directory.count + counts[kind]) * 10 > slots * 7 { slots *= 2 }
            bytes += slots * KeyDirectory.bytesPerSlot
        }
        let idsFit = deferred.nextIDs.allSatisfy { $0 + Int64(batch.rows.count) < Int64(UInt32.max) }
        if bytes > deferred.limits.byteLimit || !idsFit { try buildKeyIndexes() }
    }

    /// Stores the rows of `run` (all of one kind) while that table's key
    /// index is put off, and tells `done` for each, in order, as
    /// ``insertRows(of:fileID:keys:_:)`` does.
    ///
    /// Each row's key is looked up in the table's directory: a row stored
    /// there and equal is the row's duplicate, a different one sends it on
    /// to the next key (``nextRecordKey(after:hash:)``, as ``insertProbing`` does with the index), and a
    /// free key makes it new, with the next id. The new rows go in 64, 8 or
    /// 1 at a time; a row that may equal one not yet inserted has those
    /// inserted first, then is compared by id.
    func insertRunDeferred(
        _ run: Range<Int>, of batch: RowBatch, fileID: Int64, keys: [UInt64]?, arena base: UnsafeRawPointer,
        directory deferred: DeferredKeyIndex,
        _ done: (_ row: RowBatch.Row, _ stored: StoredRecord?) throws(DatabaseError) -> Void
    ) throws(DatabaseError) {
        let rows = batch.rows
        let kind = rows[run.lowerBound].kind
        let statements = self.statements(for: kind)
        // Planned as new and not yet inserted, with their keys.
        var pending: [(index: Int, key: Int64)] = []
        pending.reserveCapacity(run.count)
        var stored = [StoredRecord?](repeating: nil, count: run.count)

        func flush() throws(DatabaseError) {
            var start = 0
            while start < pending.count {
                let remaining = pending.count - start
                let (count, insert) =
                    statements.multi.first(where: { $0.rows <= remaining }) ?? (1, statements.ignoringOne)
                let stride = Int32(kind.columnCount + 2)
                for offset in 0..<count {
                    let (index, key) = pending[start + offset]
                    let first = Int32(offset) * stride
                    insert.bind(first + 1, key)
                    insert.bind(first + 2, fileID)
                    insert.bind(batch.cells(of: rows[index]), from: first + 3, arena: base)
                }
                try insert.run()
                let firstID = deferred.nextIDs[kind.index]
                guard connection.changes == count, connection.lastInsertRowID == firstID + Int64(count) - 1 else {
                    try refused(Array(pending[start..<(start + count)]), firstID: firstID)
                }
                deferred.nextIDs[kind.index] += Int64(count)
                start += count
            }
            pending.removeAll(keepingCapacity: true)
        }

        /// A row broke a NOT NULL or CHECK constraint and was skipped: the
        /// rows added before it have the first ids. Inserted alone and
        /// strictly it fails with SQLite's own message; the file is then
        /// rolled back, directory and all (``DeferredKeyIndex/forgetRows(after:)``).
        func refused(_ chunk: [(index: Int, key: Int64)], firstID: Int64) throws(DatabaseError) -> Never {
            let range = statements.keysInRange
            range.bind(1, firstID)
            range.bind(2, firstID + Int64(chunk.count) - 1)
            var added: [Int64] = []
            defer { range.reset() }
            while try range.step() { added.append(range.int(0)) }
            let skipped = chunk.indices.first { $0 >= added.count || chunk[$0].key != added[$0] } ?? 0
            let strict = statements.strictOne
            strict.bind(1, chunk[skipped].key)
            strict.bind(2, fileID)
            strict.bind(batch.cells(of: rows[chunk[skipped].index]), from: 3, arena: base)
            try strict.run()
            throw DatabaseError(
                code: SQLITE_INTERNAL, message: "a \(kind.rawValue) row was skipped, then taken alone",
                context: "inserting records")
        }

        /// The key a row is first looked up at (the caller's, or its content's).
        func firstKey(_ index: Int) -> Int64 { Int64(bitPattern: keys?[index] ?? rows[index].key) }

        deferred.prefetch(run.lazy.map(firstKey), kind: kind.index)
        for index in run {
            let row = rows[index]
            var key = firstKey(index)
            var duplicate: StoredRecord?
            while let id = deferred.directories[kind.index]?.id(of: key) {
                // Planned in this run: inserted first, to be compared.
                if id >= deferred.nextIDs[kind.index] { try flush() }
                let same = statements.sameAt
                same.bind(1, id)
                same.bind(batch.cells(of: row), from: 3, arena: base)
                let equal = try same.step()
                same.reset()
                if equal {
                    duplicate = StoredRecord(key: key, id: id)
                    break
                }
                key = Int64(bitPattern: nextRecordKey(after: UInt64(bitPattern: key), hash: row.hash))
            }
            if let duplicate {
                stored[index - run.lowerBound] = duplicate
                continue
            }
            deferred.note(key, id: deferred.nextIDs[kind.index] + Int64(pending.count), kind: kind.index)
            deferred.sample(key, kind: kind.index)
            pending.append((index, key))
        }
        try flush()
        for index in run { try done(rows[index], stored[index - run.lowerBound]) }
    }
}

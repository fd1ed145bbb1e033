import ArrivalHandOff
import ArrivalModel
package import ArrivalStore
import Foundation
import NIOCore
import PostgresNIO
import Synchronization

/// The writer role on a PostgreSQL store (``StoreWriter``): ingest's writer
/// stage stores files here as into a SQLite store, and any number of
/// processes may do so at once.
///
/// Files are stored in batches, one transaction each (``batchSpan``), with
/// `COPY`. As a file is decoded, its rows and malformed lines are written in
/// `COPY`'s text format, under the file's ordinal in the batch, to buffers
/// that go by `COPY FROM STDIN` into temporary tables of this connection
/// (the stage); each row's id is drawn from its kind's sequence as it is
/// copied, so ids follow the files' lines. Nothing reaches the store's tables
/// before the batch commits (``mergeAndCommit()``); then, in a savepoint,
/// two statements merge the stage:
/// 1. the batch's registry rows claim their bytes, in file order (the
///    content hash is the primary key: of two writers, or two files of a
///    batch, with the same bytes, one stores them, and the other keeps
///    nothing of its file and counts it as skipped); the rows of the files
///    claimed go into the record tables in id order with
///    `ON CONFLICT DO NOTHING` on each record's identity (equal records from
///    any writer are stored once, and no read comes before a write), their
///    malformed lines with them, and `RETURNING` counts each file's new records;
/// 2. the registry rows get their counts, and the lines whose record was
///    stored before are counted in `record_repeats`.
///
/// The first statement is tried first with the records going in as new,
/// without `ON CONFLICT` (``NewRecordsFirst``): when one was stored before,
/// that try fails whole and is rolled back to its savepoint, and the
/// statement above decides.
///
/// Two writers storing the same records in different orders can deadlock;
/// the server breaks it by failing one statement, and that writer rolls back
/// to the savepoint, which releases every lock the merge took (the stage
/// takes none), and merges again. A statement that fails for another reason
/// is tried again file by file: the files before the one it fails on are
/// committed, and the error names that file. A writer killed at any moment
/// leaves no part of a file: the server rolls its batch back, and the files
/// of it are not registered, so the next ingest stores them.
package final class PostgresStore: StoreWriter {
    /// The writer's connections, each with the batch staged on it (``Lane``):
    /// the second is opened when the first batch is handed over.
    private var lanes: [Lane]
    /// The lane the writer stages on.
    private var current = 0
    private var lane: Lane { lanes[current] }
    /// The connection the writer stages on and asks the store through.
    package var session: PostgresSession { lane.session }
    private let location: PostgresLocation
    private let environment: [String: String]
    package var isThrowaway: Bool { false }
    /// The batch's merge claims the bytes (``PostgresStore``).
    package var claimsBytesAtFinish: Bool { true }

    /// Opens the store at `location`, migrating it first (Documentation/PostgreSQL.md).
    package init(_ location: PostgresLocation, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws
    {
        self.location = location
        self.environment = environment
        lanes = [try Self.openLane(location, environment: environment, migrate: true)]
    }

    /// A connection of the writer, the store migrated first when `migrate`,
    /// with its stage (temporary tables).
    private static func openLane(_ location: PostgresLocation, environment: [String: String], migrate: Bool) throws
        -> Lane
    {
        let session = try PostgresSession(location, environment: environment)
        do {
            if migrate { try PostgresSchema.migrate(session) }
            // The writer's statements run once a batch over rows it just staged: compiling them (PostgreSQL's
            // JIT, for any plan costed over `jit_above_cost`) took a fifth of the server's time on a
            // 20,000-activity fleet and never paid back (issue 52, Documentation/PostgreSQL.md).
            try session.execute("SET jit = off")
            try session.execute(
                Self.stageTable(.apns), Self.stageTable(.render), Self.stageTable(.callback),
                """
                CREATE TEMP TABLE arrival_stage_malformed (
                    ordinal bigint NOT NULL, line bigint NOT NULL, cause text NOT NULL, problem text)
                ON COMMIT DELETE ROWS
                """,
                """
                CREATE TEMP TABLE arrival_stage_files (
                    ordinal bigint NOT NULL, id bigint NOT NULL DEFAULT nextval('arrival.file_ids'),
                    content_sha256 text NOT NULL, path text NOT NULL, byte_count bigint NOT NULL,
                    gzip boolean NOT NULL, line_count bigint NOT NULL, record_count bigint NOT NULL,
                    malformed_count bigint NOT NULL, ingested_at bigint NOT NULL)
                ON COMMIT DELETE ROWS
                """)
        } catch {
            session.close()
            throw error
        }
        return Lane(session: session)
    }

    /// The temporary table the batch's records of one kind wait in, each
    /// under its file's ordinal. `COPY` fills `id` from the kind's sequence
    /// row by row, so ids follow the files' lines whichever table a row goes to.
    private static func stageTable(_ kind: RecordKind) -> String {
        "CREATE TEMP TABLE \(kind.stageTable) (ordinal bigint NOT NULL, "
            + "id bigint NOT NULL DEFAULT nextval('arrival.\(kind.sequence)'), "
            + "line bigint NOT NULL, content_hash bigint NOT NULL, "
            + kind.columns.map { "\($0) \(RecordKind.integerColumns.contains($0) ? "bigint" : "text")" }
            .joined(separator: ", ") + ") ON COMMIT DELETE ROWS"
    }

    deinit {
        for lane in lanes {
            lane.inFlight?.done.wait()
            lane.session.close()
        }
    }

    // MARK: - StoreWriter

    package func status(ofContent sha256: String, at path: String) throws -> ContentStatus {
        try mergeIfStaged(sha256)
        let rows = try session.run("SELECT path FROM arrival.files WHERE content_sha256 = \(sha256)")
        guard let row = rows.first else { return .new }
        let first = try row.decode(String.self)
        return first.utf8.elementsEqual(path.utf8) ? .alreadyIngestedHere : .alreadyIngestedFrom(first)
    }

    /// Merges and commits the open batch when it holds a file with these
    /// bytes: what the store holds is asked about them (an earlier file of
    /// the same run that admission knew them from).
    private func mergeIfStaged(_ sha256: String) throws {
        let staged = { (files: [StagedFile]) in files.contains { $0.sha256 == sha256 } }
        if staged(lane.batchFiles) || lanes.contains(where: { $0.inFlight.map { staged($0.files) } ?? false }) {
            try mergeAndCommit()
        }
    }

    package func restrictedCopy(ofContent sha256: String) throws -> Int64? {
        try mergeIfStaged(sha256)
        let rows = try session.run(Self.restrictedCopySQL(sha256))
        return try rows.first?.decode(Int64.self)
    }

    static func restrictedCopySQL(_ sha256: String) -> PostgresQuery {
        """
        SELECT f.id FROM arrival.files AS f WHERE f.content_sha256 = \(sha256)
            AND EXISTS (SELECT 1 FROM arrival.malformed_lines AS m
                        WHERE m.file_id = f.id AND m.cause = 'kind_not_allowed')
        """
    }

    @discardableResult
    package func recordSkippedDuplicate(sha256: String, path: String, at now: Int64) throws -> Bool {
        let result = try session.run(
            """
            INSERT INTO arrival.skipped_files (content_sha256, path, first_seen_at) VALUES (\(sha256), \(path), \(now))
            ON CONFLICT DO NOTHING
            """)
        return (result.metadata.rows ?? 0) > 0
    }

    /// The longest a batch stages files before the next file merges and
    /// commits it. Files are committed together, as on SQLite (one merge,
    /// one commit and one WAL flush for many small files); the rows of a
    /// batch are locked from its merge to its commit only, but a batch that
    /// merges again after a deadlock does all its work again, so a batch is kept short.
    static let batchSpan: Duration = .seconds(1)
    /// …or once it staged this many rows: a batch merges while the next is
    /// staged on the other lane, so a run is several batches.
    static let batchRows = 1 << 14

    /// The most bytes the stage holds before it is copied.
    static let stageLimit = 8 << 20
    /// What committing did to files merged since ``commitFiles()`` last handed it over, in order.
    private var settled: [FileCommit] = []
    /// The ordinal of the last file begun (never reused, so rows a forgotten file copied stay unclaimed).
    private var lastOrdinal: Int64 = 0

    /// A file read whole and waiting in the stage for its batch's merge.
    struct StagedFile {
        var ordinal: Int64
        /// Drawn before the merge when the file took over earlier versions' records.
        var fileID: Int64?
        var path: String
        var sha256: String
        var byteCount: Int64
        var gzip: Bool
        var lines: Int64
        /// Rows of each kind staged.
        var staged: [Int]
        var malformed: Int64
        var now: Int64
        /// Whether earlier versions were folded into it (its new records are then counted by file).
        var replaced: Bool
    }

    /// Where the stage's buffers ended when a file began: undoing the file
    /// cuts them back there, or, when they were copied since, empties them
    /// (all they hold is the file's) and leaves the rows copied unclaimed.
    struct StageMark {
        var copies: Int
        var rows: [Int]
        var malformed: Int
    }

    package func beginFile(path: String, now: Int64, replaces: Bool) throws -> PostgresFile {
        // A file that takes over earlier versions' records writes before the merge: alone in its batch.
        if replaces { try mergeAndCommit() }
        if let began = lane.batchBegan,
            ContinuousClock.now - began >= Self.batchSpan || lane.stagedRows >= Self.batchRows
        {
            try handOver()
        }
        if lane.batchBegan == nil {
            try lane.session.execute("BEGIN")
            lane.batchBegan = .now
        }
        lastOrdinal += 1
        return PostgresFile(store: self, ordinal: lastOrdinal, path: path, now: now, replaces: replaces)
    }

    func stageMark() -> StageMark {
        StageMark(
            copies: lane.stageCopies, rows: lane.stageRows.map(\.writerIndex),
            malformed: lane.stageMalformedLines.writerIndex)
    }

    /// Stages `batch`'s rows of `kind` under `ordinal`: how many.
    func stage(_ batch: RowBatch, kind: RecordKind, ordinal: Int64) -> Int {
        let lane = self.lane
        for row in batch.rows where row.kind == kind { lane.hashes.staged(row.hash, kind: kind.index) }
        let count = CopyText.encode(batch, kind: kind, ordinal: ordinal, into: &lane.stageRows[kind.index])
        lane.stagedRows += count
        return count
    }

    /// Whether a merge tries its batch's records as all new first (shared by the lanes).
    private let newRecordsOnly = NewRecordsFirst()

    /// When a batch's records go in as new without asking the store whether
    /// it holds them (``mergeSQL(kinds:malformed:newRecordsOnly:)``): what
    /// the store holds is nearly always older than what comes in, and an
    /// insert that need not look for a conflict costs the server a third
    /// less (issue 52). Tried unless a row of the batch repeats another's
    /// content hash (then the batch holds a record twice, which only the
    /// merge that asks can store once: ``BatchHashes``), a file of it took
    /// over earlier versions, or a recent try failed: a failed try (a record
    /// stored before) is rolled back and the batch merged by asking, and the
    /// next 1, 2, 4 … 32 batches are merged by asking before the next try, so
    /// that a run that stores what the store has (a batch ingested again
    /// under other names) wastes at most one try in 33. The lanes' merges
    /// run on their own threads: a lock orders them here.
    final class NewRecordsFirst: Sendable {
        /// The batches still to merge by asking, and the failed tries in a row.
        private let state = Mutex((waiting: 0, misses: 0))

        /// Whether to try `files` (whose rows repeat a content hash when `repeats`) as new; asked once a merge.
        func tryFirst(_ files: [StagedFile], repeats: Bool) -> Bool {
            guard !repeats, !files.contains(where: { $0.replaced || $0.fileID != nil }) else { return false }
            return state.withLock { state in
                guard state.waiting == 0 else {
                    state.waiting -= 1
                    return false
                }
                return true
            }
        }

        func held() { state.withLock { $0.misses = 0 } }

        func missed() {
            state.withLock { state in
                state.misses += 1
                state.waiting = min(1 << (state.misses - 1), 32)
            }
        }
    }

    /// The content hashes of a batch's staged rows, by kind: whether a row
    /// repeats another's of the batch (``NewRecordsFirst``), and whether the
    /// batch may hold a record of another batch (``Lane``).
    struct BatchHashes {
        private var hashes = [Set<UInt64>(), Set<UInt64>(), Set<UInt64>()]
        /// A staged row's content hash repeats another's of its kind in the batch.
        private(set) var repeats = false
        /// More rows than ``trackedRows`` of a kind were staged: not all hashes are known.
        private var overflowed = false
        /// The rows of a batch whose hashes are kept: past it the batch is tried without the check.
        static let trackedRows = 1 << 20

        mutating func staged(_ hash: UInt64, kind: Int) {
            guard !overflowed else { return }
            // Past it the batch is still tried as new (a repeat then fails the try, which is rolled
            // back), but may share a record with any other batch.
            guard hashes[kind].count < Self.trackedRows else {
                overflowed = true
                return
            }
            if !hashes[kind].insert(hash).inserted { repeats = true }
        }

        /// Whether a record of this batch may be one of `other`'s (equal records have equal content hashes).
        func mayShare(_ other: BatchHashes) -> Bool {
            if overflowed || other.overflowed { return true }
            return (0..<3).contains { kind in
                let (small, large) =
                    hashes[kind].count <= other.hashes[kind].count
                    ? (hashes[kind], other.hashes[kind]) : (other.hashes[kind], hashes[kind])
                return small.contains { large.contains($0) }
            }
        }
    }

    func stageMalformed(ordinal: Int64, line: Int64, cause: String, problem: String?) {
        let lane = self.lane
        lane.stageMalformedLines.writeString("\(ordinal)\t\(line)\t\(cause)\t")
        if let problem {
            CopyText.writeText(problem.utf8, into: &lane.stageMalformedLines)
        } else {
            lane.stageMalformedLines.writeStaticString("\\N")
        }
        lane.stageMalformedLines.writeInteger(UInt8(ascii: "\n"))
    }

    /// Copies the stage to the server once it holds ``stageLimit`` bytes: memory stays bounded in a large file.
    func flushStageIfLarge() throws {
        if lane.stageRows.reduce(lane.stageMalformedLines.readableBytes, { $0 + $1.readableBytes }) >= Self.stageLimit {
            try copyStage(lane)
        }
    }

    /// Undoes what a file staged since `mark`.
    func forgetStage(since mark: StageMark) {
        let lane = self.lane
        if mark.copies == lane.stageCopies {
            for kind in 0..<3 { lane.stageRows[kind].moveWriterIndex(to: mark.rows[kind]) }
            lane.stageMalformedLines.moveWriterIndex(to: mark.malformed)
        } else {
            for kind in 0..<3 { lane.stageRows[kind].clear() }
            lane.stageMalformedLines.clear()
        }
    }

    /// `COPY FROM STDIN` of `lane`'s stage buffers into its temporary tables.
    /// On the writer's thread only, so ids are drawn in the files' order.
    private func copyStage(_ lane: Lane) throws {
        for kind in RecordKind.allCases where lane.stageRows[kind.index].readableBytes > 0 {
            try lane.session.copy(
                into: kind.stageTable, columns: ["ordinal", "line", "content_hash"] + kind.columns,
                lane.stageRows[kind.index])
            lane.stageRows[kind.index].clear()
        }
        if lane.stageMalformedLines.readableBytes > 0 {
            try lane.session.copy(
                into: "arrival_stage_malformed", columns: ["ordinal", "line", "cause", "problem"],
                lane.stageMalformedLines)
            lane.stageMalformedLines.clear()
        }
        lane.stageCopies += 1
    }

    /// Adds a file read whole to the batch.
    func addFile(_ file: StagedFile) throws {
        lane.batchFiles.append(file)
    }

    /// Copies the batch's files to `arrival_stage_files`, their ids drawn as
    /// they are (in file order) unless drawn before.
    private func copyFiles(_ files: [StagedFile], on lane: Lane) throws {
        for drawn in [false, true] {
            var data = ByteBuffer()
            for file in files where (file.fileID != nil) == drawn {
                data.writeString("\(file.ordinal)\t")
                if let id = file.fileID { data.writeString("\(id)\t") }
                data.writeString("\(file.sha256)\t")
                CopyText.writeText(file.path.utf8, into: &data)
                data.writeString(
                    "\t\(file.byteCount)\t\(file.gzip ? "t" : "f")\t\(file.lines)\t\(file.staged.reduce(0, +))\t"
                        + "\(file.malformed)\t\(file.now)\n")
            }
            guard data.readableBytes > 0 else { continue }
            try lane.session.copy(
                into: "arrival_stage_files",
                columns: ["ordinal"] + (drawn ? ["id"] : []) + [
                    "content_sha256", "path", "byte_count", "gzip", "line_count", "record_count", "malformed_count",
                    "ingested_at",
                ], data)
        }
    }

    /// One connection of the writer and the batch staged on it. A batch is
    /// staged on one lane while the batch before it merges and commits on the
    /// other, on that lane's own thread (``handOver()``): the server merges
    /// one batch while the next is decoded, encoded and copied, and two
    /// merges may run at once on the server's cores. The writer's thread
    /// alone copies stages and files to the server, in the files' order, so
    /// ids follow the files' lines across lanes as within one.
    final class Lane {
        let session: PostgresSession
        /// When the open batch transaction began (nil: none is open).
        var batchBegan: ContinuousClock.Instant?
        /// The stage not yet copied to the server: each kind's rows (``RecordKind/index``).
        var stageRows = [ByteBuffer(), ByteBuffer(), ByteBuffer()]
        /// Malformed lines not yet copied.
        var stageMalformedLines = ByteBuffer()
        /// How many times the stage was copied to the server (a ``StageMark`` from before is void).
        var stageCopies = 0
        /// The files of the open batch that were read whole, in order.
        var batchFiles: [StagedFile] = []
        /// Rows staged in the open batch, and their content hashes.
        var stagedRows = 0
        var hashes = BatchHashes()
        /// The batch merging on ``queue`` (set and cleared on the writer's thread).
        var inFlight: Flight?
        let queue = DispatchQueue(label: "arrival.postgres.lane")

        init(session: PostgresSession) { self.session = session }
    }

    /// A batch handed to its lane's thread, and what merging it did.
    final class Flight: Sendable {
        let files: [StagedFile]
        let hashes: BatchHashes
        /// Signalled once ``result`` is set.
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<[FileCommit], any Error>>(.success([]))

        init(files: [StagedFile], hashes: BatchHashes) {
            self.files = files
            self.hashes = hashes
        }
    }

    /// Merges and commits the open batch and the one in flight: when it
    /// returns, every file finished is committed (or refused), its commit in
    /// ``settled``.
    func mergeAndCommit() throws {
        if lane.batchBegan != nil { try dispatch(lane) }
        // The other lane's batch is the older: settled first.
        for lane in lanes.indices.map({ lanes[($0 + current + 1) % lanes.count] }) { try settle(lane) }
    }

    /// Hands the open batch to its lane's thread to merge and commit, and
    /// moves the writer to the other lane (opened now the first time) once
    /// the batch merging there is settled.
    private func handOver() throws {
        try dispatch(lane)
        if lanes.count == 1 {
            do {
                lanes.append(try Self.openLane(location, environment: environment, migrate: false))
            } catch {
                try settle(lane)
                throw error
            }
        }
        current = 1 - current
        try settle(lane)
    }

    /// Copies `lane`'s batch to the server and starts its merge on the
    /// lane's thread. A batch that may hold a record of the one merging on
    /// the other lane waits for that one first, so that the two never wait
    /// on each other's rows and a record's first file is the first to come,
    /// as on one connection.
    private func dispatch(_ lane: Lane) throws {
        guard lane.batchBegan != nil else { return }
        let files = lane.batchFiles
        let hashes = lane.hashes
        lane.batchFiles = []
        lane.hashes = BatchHashes()
        lane.stagedRows = 0
        do {
            if !files.isEmpty {
                try copyStage(lane)
                try copyFiles(files, on: lane)
            }
            for other in lanes where other !== lane {
                if let flight = other.inFlight, flight.hashes.mayShare(hashes) { try settle(other) }
            }
        } catch {
            rollbackBatch(lane)
            throw error
        }
        // The batch's transaction is the lane thread's until it is settled.
        lane.batchBegan = nil
        let flight = Flight(files: files, hashes: hashes)
        lane.inFlight = flight
        lane.queue.async { [session = lane.session, newRecordsOnly] in
            let result = Result {
                try Self.commitBatch(flight.files, repeats: flight.hashes.repeats, newRecordsOnly, on: session)
            }
            flight.result.withLock { $0 = result }
            flight.done.signal()
        }
    }

    /// Waits for `lane`'s batch in flight and takes its commits into
    /// ``settled``. When it failed, the batches of the other lanes are waited
    /// for (what they committed stays: the next run finds it stored) and
    /// rolled back when open, and its error is thrown.
    private func settle(_ lane: Lane) throws {
        guard let flight = lane.inFlight else { return }
        flight.done.wait()
        lane.inFlight = nil
        switch flight.result.withLock({ $0 }) {
        case .success(let commits):
            settled += commits
        case .failure(let error):
            for other in lanes where other !== lane {
                other.inFlight?.done.wait()
                other.inFlight = nil
                rollbackBatch(other)
            }
            throw error
        }
    }

    /// Merges `files`, staged on `lane`, into the store and commits them, on
    /// the lane's thread: what committing did to each. A merge that fails on
    /// a rule of the store's is tried file by file: a file the store refuses
    /// (``refusal(of:)``) is left out with the store's reason and the others
    /// are merged and committed (a file that took over earlier versions'
    /// records, alone in its batch, rolls the batch back). Any other failure
    /// rolls the whole batch back and is thrown.
    private static func commitBatch(
        _ files: [StagedFile], repeats: Bool, _ newRecordsOnly: NewRecordsFirst, on session: PostgresSession
    ) throws -> [FileCommit] {
        var commits: [FileCommit] = []
        var rollBack = false
        do {
            if !files.isEmpty {
                do {
                    commits = try merge(files, repeats: repeats, newRecordsOnly, on: session)
                } catch let error as PostgresStoreError where Self.refusalReason(error) != nil {
                    for file in files {
                        do {
                            commits += try merge([file], repeats: repeats, newRecordsOnly, on: session)
                        } catch let error as PostgresStoreError {
                            guard let reason = Self.refusalReason(error) else { throw error }
                            commits.append(FileCommit(status: .new, refused: reason))
                            // Earlier versions were removed in this batch: only its rollback brings them back.
                            if file.fileID != nil { rollBack = true }
                        }
                    }
                }
            }
            if rollBack {
                try session.execute("ROLLBACK")
            } else {
                let result = try session.run("COMMIT")
                if result.metadata.command != "COMMIT" {
                    throw PostgresStoreError(
                        "\(session.location.redacted): the batch of files was rolled back by the server "
                            + "(\(result.metadata.command)); run the same ingest again to store them")
                }
            }
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
        return commits
    }

    /// The store's reason when `error` is the store refusing what one file
    /// holds, by its SQLSTATE class: a value it cannot take (22), a rule of
    /// the operator's (23: a constraint; P0: a trigger's `RAISE EXCEPTION`;
    /// 2F and 39: a function's failure), a limit of a row (54). Anything else
    /// (no connection, a timeout, a full or read-only disk, a lost lock, a
    /// server shutting down) is the store's as a whole: nil.
    package static func refusalReason(_ error: PostgresStoreError) -> String? {
        guard let state = error.sqlState, !error.isRetryable,
            ["22", "23", "P0", "2F", "39", "54"].contains(String(state.prefix(2)))
        else { return nil }
        return error.description.contains(state) ? error.description : "\(error.description) (SQLSTATE \(state))"
    }

    package func refusal(of error: any Error) -> String? {
        (error as? PostgresStoreError).flatMap(Self.refusalReason)
    }

    /// Undoes the open batch, its stage with it (nothing of it is kept).
    func rollbackBatch() {
        rollbackBatch(lane)
    }

    /// Undoes `lane`'s open batch, its stage with it.
    private func rollbackBatch(_ lane: Lane) {
        for kind in 0..<3 { lane.stageRows[kind].clear() }
        lane.stageMalformedLines.clear()
        lane.batchFiles = []
        lane.hashes = BatchHashes()
        lane.stagedRows = 0
        guard lane.batchBegan != nil else { return }
        lane.batchBegan = nil
        try? lane.session.execute("ROLLBACK")
    }

    /// Merges the staged `files` (consecutive ordinals) in a savepoint,
    /// again after a deadlock: what committing them does, in their order.
    private static func merge(
        _ files: [StagedFile], repeats: Bool, _ newRecordsOnly: NewRecordsFirst, on session: PostgresSession
    ) throws -> [FileCommit] {
        try session.execute("SAVEPOINT arrival_merge")
        var attempt = 0
        while true {
            do {
                let commits = try mergeOnce(files, repeats: repeats, newRecordsOnly, on: session)
                try session.execute("RELEASE SAVEPOINT arrival_merge")
                return commits
            } catch let error as PostgresStoreError where error.isRetryable && attempt < 8 {
                // A deadlock with another writer storing the same records in another order: again.
                attempt += 1
                try session.execute("ROLLBACK TO SAVEPOINT arrival_merge")
            } catch {
                try? session.execute("ROLLBACK TO SAVEPOINT arrival_merge", "RELEASE SAVEPOINT arrival_merge")
                throw error
            }
        }
    }

    private static func mergeOnce(
        _ files: [StagedFile], repeats: Bool, _ newRecordsOnly: NewRecordsFirst, on session: PostgresSession
    ) throws -> [FileCommit] {
        guard let first = files.first?.ordinal, let last = files.last?.ordinal else { return [] }
        let kinds = RecordKind.allCases.filter { kind in files.contains { $0.staged[kind.index] > 0 } }
        var claimed: [Int64: (id: Int64, new: [Int])] = [:]
        let malformed = files.contains { $0.malformed > 0 }
        // The stage's temporary tables have no statistics, so the planner guesses their rows; a guess of
        // two rows for a route (`activity_id IS NULL AND channel_id IS NULL`: token requests) made it loop
        // over the claimed files for each staged row, 8.7 s for one batch of 25,000 (issue 52). Every join
        // of the first statement is on the file's ordinal: hash joins, and sorts by id in memory.
        // (The second statement joins the stage to the record tables by their identity: nested loops over
        // their index, as the planner chooses them, once this statement is done.)
        try session.execute("SET LOCAL enable_nestloop = off", "SET LOCAL work_mem = '64MB'")
        var rows: PostgresQueryResult?
        if newRecordsOnly.tryFirst(files, repeats: repeats) {
            // Every record of the batch is new (nearly always): each goes in without asking the store first.
            try session.execute("SAVEPOINT arrival_new")
            do {
                rows = try session.run(
                    PostgresQuery(
                        unsafeSQL: Self.mergeSQL(kinds: kinds, malformed: malformed, newRecordsOnly: true),
                        binds: Self.binds(first, last)))
                try session.execute("RELEASE SAVEPOINT arrival_new")
                newRecordsOnly.held()
            } catch let error as PostgresStoreError where error.sqlState != nil {
                // A record stored before (23505), or anything else the server said: the merge that asks decides.
                try session.execute("ROLLBACK TO SAVEPOINT arrival_new", "RELEASE SAVEPOINT arrival_new")
                newRecordsOnly.missed()
                rows = nil
            }
        }
        let byOrdinal = Dictionary(uniqueKeysWithValues: files.map { ($0.ordinal, $0.staged) })
        let insertedAsNew = rows != nil
        if let rows {
            for row in rows {
                let (ordinal, id, _, _, _) = try row.decode((Int64, Int64, Int64, Int64, Int64).self)
                claimed[ordinal] = (id, byOrdinal[ordinal] ?? [0, 0, 0])
            }
        } else {
            let rows = try session.run(
                PostgresQuery(
                    unsafeSQL: Self.mergeSQL(kinds: kinds, malformed: malformed), binds: Self.binds(first, last)))
            for row in rows {
                let (ordinal, id, apns, renders, callbacks) = try row.decode((Int64, Int64, Int64, Int64, Int64).self)
                claimed[ordinal] = (id, [Int(apns), Int(renders), Int(callbacks)])
            }
        }
        try session.execute("SET LOCAL enable_nestloop = on", "SET LOCAL work_mem = DEFAULT")
        // Bytes another writer, or an earlier file of the batch, stored: where from.
        var holders: [String: String] = [:]
        let unclaimed = files.filter { claimed[$0.ordinal] == nil }
        if !unclaimed.isEmpty {
            var hashes = ColumnArray(.text)
            for file in unclaimed { hashes.append(file.sha256) }
            let rows = try session.run(
                PostgresQuery(
                    unsafeSQL: "SELECT content_sha256, path FROM arrival.files WHERE content_sha256 = ANY($1)",
                    binds: Self.binds(hashes)))
            for row in rows {
                let (sha256, path) = try row.decode((String, String).self)
                holders[sha256] = path
            }
        }
        var commits: [FileCommit] = []
        var counts = (ids: ColumnArray(.int8), hashes: ColumnArray(.text), new: ColumnArray(.int8))
        var staged = ColumnArray(.int8)
        var repeating = (ordinals: ColumnArray(.int8), ids: ColumnArray(.int8))
        var anyClaimed = false
        var anyRepeating = false
        for file in files {
            guard let (id, counted) = claimed[file.ordinal] else {
                // Nothing of this file was kept.
                let status: ContentStatus =
                    holders[file.sha256].map {
                        $0.utf8.elementsEqual(file.path.utf8) ? .alreadyIngestedHere : .alreadyIngestedFrom($0)
                    } ?? .alreadyIngestedHere
                commits.append(FileCommit(status: status))
                continue
            }
            var new = counted
            if file.replaced {
                // Records of the versions this file grew from are its own again: counted by file.
                for kind in RecordKind.allCases {
                    let tables = kind.routes.map { "(SELECT count(*) FROM arrival.\($0.table) WHERE file_id = $1)" }
                    let count = try session.run(
                        PostgresQuery(unsafeSQL: "SELECT " + tables.joined(separator: " + "), binds: Self.binds(id)))
                    new[kind.index] = Int(try count.first?.decode(Int64.self) ?? 0)
                }
            }
            anyClaimed = true
            counts.ids.append(id)
            counts.hashes.append(file.sha256)
            counts.new.append(Int64(new.reduce(0, +)))
            staged.append(Int64(file.staged.reduce(0, +)))
            if RecordKind.allCases.contains(where: {
                new[$0.index] < file.staged[$0.index] || (file.replaced && file.staged[$0.index] > 0)
            }) {
                anyRepeating = true
                repeating.ordinals.append(file.ordinal)
                repeating.ids.append(id)
            }
            commits.append(FileCommit(status: .new, newByKind: new))
        }
        // Inserted as new, the files were registered with their counts and none repeats a record.
        if anyClaimed && !insertedAsNew {
            try session.run(
                PostgresQuery(
                    unsafeSQL: Self.countsSQL(repeating: anyRepeating ? kinds : []),
                    binds: Self.binds(counts.ids, counts.hashes, counts.new, staged, repeating.ordinals, repeating.ids)
                ))
        }
        return commits
    }

    /// The merge's first statement (``PostgresStore``) for the stage's files
    /// with ordinals `$1...$2`, of which `kinds` have rows: a row for each
    /// file claimed, in order: ordinal, id, new records of each kind.
    ///
    /// With `newRecordsOnly`, the records go in without `ON CONFLICT`: the
    /// statement fails (23505) when one of them is stored already, and
    /// otherwise every row staged for a file claimed is new, so none is
    /// returned and counted (the counts it answers are 0), and the files'
    /// registry rows get their counts as they are claimed (all new, none a
    /// duplicate; ``countsSQL(repeating:)`` is not needed).
    static func mergeSQL(kinds: [RecordKind], malformed: Bool, newRecordsOnly: Bool = false) -> String {
        // Without new records only, the counts come with the second statement.
        let counts = newRecordsOnly ? "f.record_count, 0" : "0, f.record_count"
        var steps = [
            """
            claim AS (
                INSERT INTO arrival.files (content_sha256, id, path, byte_count, gzip, line_count, record_count,
                                           duplicate_count, malformed_count, ingested_at)
                SELECT f.content_sha256, f.id, f.path, f.byte_count, f.gzip, f.line_count, \(counts),
                       f.malformed_count, f.ingested_at
                FROM arrival_stage_files AS f WHERE f.ordinal BETWEEN $1 AND $2 ORDER BY f.ordinal
                ON CONFLICT (content_sha256) DO NOTHING RETURNING id)
            """,
            "claimed AS MATERIALIZED (SELECT f.ordinal, f.id FROM arrival_stage_files AS f JOIN claim USING (id))",
        ]
        var news: [String] = []
        for kind in kinds {
            let columns = kind.columns.joined(separator: ", ")
            for route in kind.routes {
                let name = "new_\(route.table)"
                news.append("SELECT file_id, \(kind.index) AS kind FROM \(name)")
                steps.append(
                    """
                    \(name) AS (
                        INSERT INTO arrival.\(route.table) (id, file_id, content_hash, \(columns))
                        SELECT s.id, c.id, s.content_hash, \(kind.columns.map { "s." + $0 }.joined(separator: ", "))
                        FROM \(kind.stageTable) AS s JOIN claimed AS c ON c.ordinal = s.ordinal
                        WHERE \(route.condition) ORDER BY s.id
                        \(newRecordsOnly
                            ? "" : "ON CONFLICT (\(route.identity.joined(separator: ", "))) DO NOTHING RETURNING file_id"))
                    """)
            }
        }
        let counted = RecordKind.allCases.map { "count(*) FILTER (WHERE kind = \($0.index)) AS k\($0.index)" }
        steps.append(
            news.isEmpty || newRecordsOnly
                ? "counted AS (SELECT 0::bigint AS file_id, 0::bigint AS k0, 0::bigint AS k1, 0::bigint AS k2 WHERE FALSE)"
                : "counted AS (SELECT file_id, \(counted.joined(separator: ", ")) FROM ("
                    + news.joined(separator: " UNION ALL ") + ") AS n GROUP BY file_id)")
        if malformed {
            steps.append(
                """
                malformed AS (
                    INSERT INTO arrival.malformed_lines (file_id, line, cause, problem)
                    SELECT c.id, m.line, m.cause, m.problem
                    FROM arrival_stage_malformed AS m JOIN claimed AS c ON c.ordinal = m.ordinal
                    ON CONFLICT DO NOTHING RETURNING 1)
                """)
        }
        return "WITH " + steps.joined(separator: ",\n")
            + "\nSELECT c.ordinal, c.id, coalesce(n.k0, 0), coalesce(n.k1, 0), coalesce(n.k2, 0) "
            + "FROM claimed AS c LEFT JOIN counted AS n ON n.file_id = c.id ORDER BY c.ordinal"
    }

    /// The merge's second statement: the claimed files' counts (ids `$1`,
    /// hashes `$2`, new records `$3`, rows staged `$4`), and for the files
    /// with ordinals `$5` and ids `$6`, the staged lines of `repeating` kinds
    /// whose record was stored before them (by another file, or by an earlier
    /// line of the same file), counted: one `record_repeats` row per file and record.
    static func countsSQL(repeating kinds: [RecordKind]) -> String {
        var steps = [
            """
            counts AS (
                UPDATE arrival.files AS f SET record_count = u.new, duplicate_count = u.staged - u.new
                FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[]) AS u(id, content_sha256, new, staged)
                WHERE f.content_sha256 = u.content_sha256 AND f.id = u.id RETURNING 1)
            """,
            "x AS MATERIALIZED (SELECT * FROM unnest($5::bigint[], $6::bigint[]) AS x(ordinal, file_id))",
        ]
        for kind in kinds {
            for route in kind.routes {
                let identity = route.identity.map { "s." + $0 }.joined(separator: ", ")
                let join = route.identity.map { "t.\($0) = r.\($0)" }.joined(separator: " AND ")
                steps.append(
                    """
                    repeats_\(route.table) AS (
                        INSERT INTO arrival.record_repeats (file_id, kind, record_id, repeats)
                        SELECT r.file_id, '\(kind.rawValue)', t.id, count(*)
                        FROM (SELECT x.file_id, s.id, \(identity),
                                     row_number() OVER (PARTITION BY s.ordinal, \(identity) ORDER BY s.id) AS n
                              FROM \(kind.stageTable) AS s JOIN x ON x.ordinal = s.ordinal
                              WHERE \(route.condition)) AS r
                        JOIN arrival.\(route.table) AS t ON \(join)
                        WHERE r.n > 1 OR t.file_id <> r.file_id
                        GROUP BY r.file_id, t.id
                        ORDER BY min(r.id))
                    """)
            }
        }
        return "WITH " + steps.joined(separator: ",\n") + "\nSELECT count(*) FROM counts"
    }

    /// Commits the open batch and hands over what committing did to the
    /// files merged since the last call, in the order they finished.
    package func commitFiles() throws -> [FileCommit] {
        try mergeAndCommit()
        defer { settled = [] }
        return settled
    }

    /// Hands the open batch over (``handOver()``): the commits settled so
    /// far, the open batch's left in flight.
    package func commitFilesSoFar() throws -> [FileCommit] {
        if lane.batchBegan != nil { try handOver() }
        defer { settled = [] }
        return settled
    }

    /// The earlier versions' records become the new file's (they are its
    /// first lines), and their registry rows, malformed lines and repeats go.
    package func removeReplacedVersions(ids: [Int64]) throws -> Int {
        guard let file = currentFile else { return 0 }
        for table in Self.recordTables {
            try session.run(
                PostgresQuery(
                    unsafeSQL: "UPDATE arrival.\(table) SET file_id = $1 WHERE file_id = ANY($2)",
                    binds: Self.binds(try file.fileIDDrawn(), ids)))
        }
        for table in ["record_repeats", "malformed_lines"] {
            try session.run(
                PostgresQuery(unsafeSQL: "DELETE FROM arrival.\(table) WHERE file_id = ANY($1)", binds: Self.binds(ids))
            )
        }
        let removed = try session.run(
            PostgresQuery(
                unsafeSQL: """
                    WITH gone AS (DELETE FROM arrival.files WHERE id = ANY($1) RETURNING content_sha256),
                         skipped AS (DELETE FROM arrival.skipped_files WHERE content_sha256 IN (SELECT content_sha256 FROM gone))
                    SELECT count(*) FROM gone
                    """, binds: Self.binds(ids)))
        file.replaced = true
        return Int(try removed.first?.decode(Int64.self) ?? 0)
    }

    /// Removes files as `arrival files remove` does on SQLite, in one
    /// transaction: their registry rows, the records they stored (with the
    /// repeats of those records by other files, which counted them as
    /// duplicates), their malformed lines and the re-uploads of their bytes.
    /// Returns the ids of the registry rows removed (fewer than asked when
    /// another process removed some meanwhile).
    package func removeFiles(ids: [Int64]) throws -> Set<Int64> {
        let owned = { (tables: [String]) in
            tables.map { "SELECT id FROM arrival.\($0) WHERE file_id = ANY($1)" }.joined(separator: " UNION ALL ")
        }
        let statements =
            [
                """
                DELETE FROM arrival.record_repeats AS r WHERE r.file_id = ANY($1)
                    OR (r.kind = 'apns' AND r.record_id IN (\(owned(["requests", "token_requests", "broadcasts"]))))
                    OR (r.kind = 'render' AND r.record_id IN (\(owned(["renders"]))))
                    OR (r.kind = 'callback' AND r.record_id IN (\(owned(["callbacks", "start_tokens"]))))
                """
            ] + Self.recordTables.map { "DELETE FROM arrival.\($0) WHERE file_id = ANY($1)" } + [
                "DELETE FROM arrival.malformed_lines WHERE file_id = ANY($1)",
                """
                DELETE FROM arrival.skipped_files
                WHERE content_sha256 IN (SELECT content_sha256 FROM arrival.files WHERE id = ANY($1))
                """,
                "DELETE FROM arrival.files WHERE id = ANY($1) RETURNING id",
            ]
        try mergeAndCommit()
        try session.execute("BEGIN")
        do {
            var removed: Set<Int64> = []
            for statement in statements {
                let rows = try session.run(PostgresQuery(unsafeSQL: statement, binds: Self.binds(ids)))
                if statement.hasSuffix("RETURNING id") { removed = Set(try rows.map { try $0.decode(Int64.self) }) }
            }
            try session.execute("COMMIT")
            return removed
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
    }

    /// The file being stored (one at a time).
    weak var currentFile: PostgresFile?

    static let recordTables = ["requests", "token_requests", "broadcasts", "renders", "callbacks", "start_tokens"]

    static func binds(_ values: any PostgresNonThrowingEncodable...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: values.count)
        for value in values { binds.append(value) }
        return binds
    }

    static func binds(_ arrays: ColumnArray...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: arrays.count)
        for array in arrays { binds.append(array) }
        return binds
    }
}

extension RecordKind {
    /// The temporary table a file's records of this kind wait in.
    var stageTable: String {
        switch self {
        case .apns: "arrival_stage_apns"
        case .render: "arrival_stage_renders"
        case .callback: "arrival_stage_callbacks"
        }
    }

    /// The sequence of this kind's ids.
    var sequence: String {
        switch self {
        case .apns: "request_ids"
        case .render: "render_ids"
        case .callback: "callback_ids"
        }
    }

    /// The tables records of this kind go to, each with the rows it takes
    /// (a condition on the stage table) and the columns of its identity.
    var routes: [(table: String, condition: String, identity: [String])] {
        switch self {
        case .apns:
            [
                ("requests", "activity_id IS NOT NULL", ["activity_id", "sent_at", "content_hash"]),
                (
                    "token_requests", "activity_id IS NULL AND channel_id IS NULL",
                    ["push_token", "sent_at", "content_hash"]
                ),
                ("broadcasts", "channel_id IS NOT NULL", ["channel_id", "sent_at", "content_hash"]),
            ]
        case .render:
            [("renders", "TRUE", ["activity_id", "rendered_at", "content_hash"])]
        case .callback:
            [
                ("callbacks", "activity_id IS NOT NULL", ["activity_id", "received_at", "content_hash"]),
                ("start_tokens", "activity_id IS NULL", ["push_token", "received_at", "content_hash"]),
            ]
        }
    }

    /// The contract fields that are integers (the rest are text).
    static let integerColumns: Set<String> = [
        "sent_at", "status", "seq", "aps_timestamp", "payload_bytes", "priority", "latency_ms", "rendered_at",
        "received_at",
    ]
}

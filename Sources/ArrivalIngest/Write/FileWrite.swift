import ArrivalHandOff
import ArrivalModel
import ArrivalStore

/// One file's write, from its `.file` message to its end: the writer hands
/// it the file's messages one at a time (``take(_:recycle:)``) until it
/// says how the file ended.
///
/// States:
/// - ``State/storing``: each batch's rows go into the file's savepoint and
///   its malformed lines are noted;
/// - ``State/refusing(_:)``: under --strict a batch held a malformed line;
///   later batches are dropped, and the end names that line (read to the end
///   first: the partial last line of a gzip stream that breaks off is that
///   break, not bad JSON).
///
/// Transitions, by message:
/// - `.rows`: stored (`storing`), or dropped (`refusing`); a malformed line
///   under --strict moves `storing` to `refusing`;
/// - `.restart`: the reader reads the file again from its start: the
///   savepoint is rolled back and begun again, earlier versions removed
///   again, and the state is `storing` with nothing counted;
/// - `.end`, `.interrupted`, a message of another file or the channel's end:
///   the file's ``Ending``.
struct FileWrite<Writer: StoreWriter> {
    enum State {
        case storing
        case refusing(StrictFailure)
    }

    /// The first malformed line under --strict.
    struct StrictFailure {
        var line: Int
        var cause: MalformedCause
        var problem: String?
    }

    /// How the file's messages ended.
    enum Ending {
        /// Read to its end.
        case read(ReadFile)
        /// The reader could not read it.
        case failed(InputError)
        /// The run was asked to stop.
        case interrupted
        /// A message of another file, or the channel's end, before this file's end.
        case lostPlace
    }

    let store: Writer
    let path: String
    let now: Int64
    /// The stored versions this file replaces (it grew from them, or upgrades a copy).
    let replacing: [Int64]
    let strict: Bool
    private(set) var state = State.storing
    private var transaction: Writer.File
    /// Rows of earlier versions removed (``StoreWriter/removeReplacedVersions(ids:)``).
    private(set) var replaced = 0
    /// Duplicates and malformed lines of this file.
    private(set) var summary = IngestSummary()
    /// New rows by kind (``RecordKind/index``).
    private(set) var newByKind = [0, 0, 0]

    /// Begins the file's savepoint, with its earlier versions removed inside it: their records are the
    /// file's again, not duplicates of it.
    init(store: Writer, path: String, now: Int64, replacing: [Int64], strict: Bool) throws {
        (self.store, self.path, self.now, self.replacing, self.strict) = (store, path, now, replacing, strict)
        transaction = try store.beginFile(path: path, now: now, replaces: !replacing.isEmpty)
        do {
            replaced = replacing.isEmpty ? 0 : try store.removeReplacedVersions(ids: replacing)
        } catch {
            transaction.rollback()
            throw error
        }
    }

    /// Rows stored or found duplicate so far.
    var records: Int { newByKind.reduce(0, +) + summary.duplicateRecords }

    /// Takes the file's next message (nil: the channel ended); the file's
    /// ending once there is one.
    mutating func take(_ message: FileMessage?, recycle: BatchChannel<RowBatch>) throws -> Ending? {
        switch message {
        case .rows(let batch):
            defer { recycle.offer(batch) }
            try take(batch)
            return nil
        case .restart:
            try restart()
            return nil
        case .end(.success(let read)): return .read(read)
        case .end(.failure(let error)): return .failed(error)
        case .interrupted: return .interrupted
        case .file, .known, .unreadable, nil: return .lostPlace
        }
    }

    private mutating func take(_ batch: RowBatch) throws {
        if case .storing = state, strict, let first = batch.malformed.first {
            state = .refusing(StrictFailure(line: first.0, cause: first.1, problem: first.2))
        }
        guard case .storing = state else { return }
        // An engine that counts new records only at commit counts every row for now.
        let new = try transaction.store(batch) ?? [batch.rows.count, 0, 0]
        for kind in 0..<3 { newByKind[kind] += new[kind] }
        summary.duplicateRecords += batch.rows.count - new.reduce(0, +)
        for (line, cause, problem) in batch.malformed {
            try transaction.noteMalformed(line: line, cause: cause, problem: problem)
            summary.noteMalformed(path: path, line: line, cause: cause, problem: problem)
        }
    }

    /// Back to the state before the file, earlier versions included.
    private mutating func restart() throws {
        transaction.rollback()
        transaction = try store.beginFile(path: path, now: now, replaces: !replacing.isEmpty)
        replaced = replacing.isEmpty ? 0 : try store.removeReplacedVersions(ids: replacing)
        summary = IngestSummary()
        newByKind = [0, 0, 0]
        state = .storing
    }

    /// In ``State/refusing(_:)``, throws the malformed line --strict stops at
    /// (a file that changed while read is named for that instead).
    func throwStrictFailure(read: ReadSummary) throws {
        guard case .refusing(let failure) = state, read.changedWhileRead == nil else { return }
        if read.truncatedGzip, failure.line >= read.lines {
            throw IngestError.malformedLine(
                path: path, line: failure.line, cause: .truncatedGzip,
                problem: "the gzip stream breaks off in this line")
        }
        throw IngestError.malformedLine(path: path, line: failure.line, cause: failure.cause, problem: failure.problem)
    }

    /// Notes the line a file was cut short at: a gzip stream that breaks off,
    /// or a reader's limit (the lines before are kept, the first one not read
    /// stands for the rest). Under --strict, throws it.
    mutating func noteCutShort(_ read: ReadSummary) throws {
        let line = read.lines + 1
        var cuts: [(MalformedCause, String?)] = []
        if read.truncatedGzip { cuts.append((.truncatedGzip, nil)) }
        if let problem = read.pastLimit { cuts.append((.tooLarge, problem)) }
        for (cause, problem) in cuts {
            if strict { throw IngestError.malformedLine(path: path, line: line, cause: cause, problem: problem) }
            try transaction.noteMalformed(line: line, cause: cause, problem: problem)
            summary.noteMalformed(path: path, line: line, cause: cause, problem: problem)
        }
    }

    /// Finishes the file's savepoint: its commit now, or nil when the store
    /// settles it at the batch's commit.
    mutating func commit(_ read: ReadFile) throws -> FileCommit? {
        try transaction.finish(
            sha256: read.sha256, byteCount: read.summary.bytesOnDisk, lines: read.summary.lines,
            gzip: read.summary.gzip)
    }

    mutating func rollback() {
        transaction.rollback()
    }
}

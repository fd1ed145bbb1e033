import ArrivalHandOff
import ArrivalModel
import ArrivalStore
import Foundation

/// The third stage of ingest: the writer, on the thread that owns the
/// store. It takes the reading stage's ``FileMessage``s in order and stores
/// each file all or nothing: a file's rows go into the batch transaction as
/// a unit that can be rolled back alone (``SQLiteStore/beginFile(path:now:replaces:)``),
/// and only once the file was read to its end does admission's writer half
/// (``Admission/confirm(sha256:name:in:)``) say, inside the transaction,
/// whether the bytes are new. Whole files are committed together, by count
/// or, in a bulk load, by time (``IngestPipeline/Options``).
struct BatchWriter<Writer: StoreWriter> {
    let store: Writer
    let options: IngestPipeline.Options
    /// Whether the store is loaded alone (``SQLiteStore/beginBulkLoad()``): commits by time.
    let bulk: Bool
    private(set) var summary: IngestSummary
    /// Files finished whose commit the store settles at the batch's commit
    /// (``StoreWriter/commitFiles()``), in order: counted in ``summary`` then.
    private var unsettled: [FinishedFile] = []
    /// The rows and files of ``unsettled``, for when a commit is due.
    private var unsettledRows = 0

    init(store: Writer, options: IngestPipeline.Options, bulk: Bool, summary: IngestSummary) {
        self.store = store
        self.options = options
        self.bulk = bulk
        self.summary = summary
    }

    /// A file read whole and handed to the store, with what its commit is to count.
    private struct FinishedFile {
        var path: String
        var now: Int64
        var read: ReadFile
        var fileSummary: IngestSummary
        var newByKind: [Int]
        var replaced: Int
        /// Its records (counted toward a commit until it is settled).
        var rows: Int
    }

    /// Writes everything `channel` brings until the reading stage closes it.
    /// On an error, the files finished before the one it happened in are
    /// committed, then the error is thrown.
    mutating func write(
        from channel: BatchChannel<FileMessage>, recycle: BatchChannel<RowBatch>, source: FileSource,
        progress: ((IngestProgress) -> Void)?
    ) throws {
        var clock = CommitClock(started: ContinuousClock.now, summary: summary)
        var index = 0
        do {
            while let message = channel.receive() {
                if let name = message.fileName { clock.current = name }
                let report = progress.map { progressReport($0, source: source, index: index, clock) }
                switch message {
                case .known(let name, let sha256):
                    try skip(known: name, sha256: sha256)
                case .file(let name, let replacing, let upgrading):
                    try write(
                        file: name, replacing: replacing, upgrading: upgrading, from: channel, recycle: recycle,
                        progress: report)
                case .unreadable(let name, let error):
                    try note(IngestSummary.Unreadable(path: name, reason: error.reason))
                case .interrupted(let name):
                    summary.interrupted.append(name)
                case .rows, .end, .restart:
                    throw InputError.readFailed(path: clock.current, reason: "the reader lost its place")
                }
                index += 1
                if clock.isDue(
                    summary: summary, unsettled: unsettled.count, unsettledRows: unsettledRows, bulk: bulk, options)
                {
                    try commit(final: false)
                    clock.committed(summary, unsettled: unsettled.count, unsettledRows: unsettledRows)
                }
            }
        } catch {
            // The files finished before this one are whole: keep them.
            _ = try? store.commitFiles()
            throw error
        }
        try commit()
    }

    /// When the writer last committed, and what had been stored by then: a
    /// commit is due by records or files (by time in a bulk load).
    private struct CommitClock {
        let started: ContinuousClock.Instant
        var records: Int
        var files: Int
        var at: ContinuousClock.Instant
        /// The file the writer is at (named when the reader loses its place).
        var current = ""

        init(started: ContinuousClock.Instant, summary: IngestSummary) {
            self.started = started
            at = started
            records = summary.newRecords + summary.duplicateRecords
            files = summary.filesRead
        }

        /// Files whose commit is not settled yet count as stored.
        func isDue(
            summary: IngestSummary, unsettled: Int, unsettledRows: Int, bulk: Bool, _ options: IngestPipeline.Options
        ) -> Bool {
            if bulk { return ContinuousClock.now - at >= options.bulkCommitInterval }
            return summary.newRecords + summary.duplicateRecords + unsettledRows - records >= options.recordsPerCommit
                || summary.filesRead + unsettled - files >= options.filesPerCommit
        }

        /// A commit was made; `unsettled` files (`unsettledRows` records) it left in flight count as before it.
        mutating func committed(_ summary: IngestSummary, unsettled: Int, unsettledRows: Int) {
            records = summary.newRecords + summary.duplicateRecords + unsettledRows
            files = summary.filesRead + unsettled
            at = ContinuousClock.now
        }
    }

    /// The progress callback for the file `message` begins, given the records read of it so far.
    private func progressReport(
        _ progress: @escaping (IngestProgress) -> Void, source: FileSource, index: Int, _ clock: CommitClock
    ) -> (Int) -> Void {
        let (summary, started, current) = (summary, clock.started, clock.current)
        return { recordsInFile in
            let (listed, listing) = source.listed
            progress(
                IngestProgress(
                    filesDone: index, filesTotal: listed, listing: listing,
                    records: summary.newRecords + summary.duplicateRecords + recordsInFile,
                    currentPath: current, elapsedSeconds: (ContinuousClock.now - started).inSeconds))
        }
    }

    /// Commits the files finished since the last commit, and counts those
    /// whose commit the store settled now: all of them when `final`, else
    /// the oldest, the rest left in flight (``StoreWriter/commitFilesSoFar()``).
    private mutating func commit(final: Bool = true) throws {
        let commits = try final ? store.commitFiles() : store.commitFilesSoFar()
        let files = unsettled
        guard final ? commits.count == files.count : commits.count <= files.count else {
            throw InputError.readFailed(
                path: files.last?.path ?? "", reason: "the store settled \(commits.count) of \(files.count) files")
        }
        unsettled = Array(files.dropFirst(commits.count))
        unsettledRows = unsettled.reduce(0) { $0 + $1.rows }
        for (file, committed) in zip(files, commits) { try settle(file, committed) }
    }

    /// Counts a file admission found known without decoding it.
    private mutating func skip(known name: String, sha256: String) throws {
        let status = try Admission.confirm(sha256: sha256, name: name, in: store)
        guard try !countKnown(status, sha256: sha256, path: name, now: Self.now()) else { return }
        // The copy admission knew was not stored after all (it failed, or was removed meanwhile).
        try note(
            IngestSummary.Unreadable(
                path: name,
                reason: "the copy of its bytes it was to be skipped for is not in the store; nothing was stored, "
                    + "ingest it again"))
    }

    /// Stores one file whose `.file` message was received, consuming its
    /// `.rows` and `.end` from `channel` (``FileWrite``).
    private mutating func write(
        file path: String, replacing earlierVersions: [Int64], upgrading: String?,
        from channel: BatchChannel<FileMessage>, recycle: BatchChannel<RowBatch>, progress: ((Int) -> Void)?
    ) throws {
        var replacing = earlierVersions
        if let id = try Admission.copyToReplace(upgrading: upgrading, in: store) { replacing.append(id) }
        var ending: FileWrite<Writer>.Ending?
        do {
            var file = try FileWrite(
                store: store, path: path, now: Self.now(), replacing: replacing, strict: options.strict)
            do {
                while ending == nil {
                    let message = channel.receive()
                    ending = try file.take(message, recycle: recycle)
                    // A progress call a batch.
                    if case .rows = message { progress?(file.records) }
                }
                if let ending { try finish(&file, ending) }
            } catch {
                file.rollback()
                throw error
            }
        } catch {
            // The store refused this file: it alone is left out, and the run goes on.
            guard let reason = store.refusal(of: error) else { throw error }
            switch ending ?? Self.skipRest(of: channel, recycle: recycle) {
            case .interrupted: summary.interrupted.append(path)
            case .lostPlace: throw InputError.readFailed(path: path, reason: "the reader stopped early")
            case .read, .failed: summary.refused.append(IngestSummary.Refused(path: path, reason: reason))
            }
        }
    }

    /// Consumes the rest of a file the writer left (its batches are dropped), up to its ending.
    private static func skipRest(
        of channel: BatchChannel<FileMessage>, recycle: BatchChannel<RowBatch>
    ) -> FileWrite<Writer>.Ending {
        while true {
            switch channel.receive() {
            case .rows(let batch): recycle.offer(batch)
            case .restart: continue
            case .end(.success(let read)): return .read(read)
            case .end(.failure(let error)): return .failed(error)
            case .interrupted: return .interrupted
            case .file, .known, .unreadable, nil: return .lostPlace
            }
        }
    }

    /// What follows a file's end: rolled back (unreadable, interrupted,
    /// changed while read, known after all), refused (--strict), or
    /// finished and counted now or at the batch's commit.
    private mutating func finish(_ file: inout FileWrite<Writer>, _ ending: FileWrite<Writer>.Ending) throws {
        let path = file.path
        let read: ReadFile
        switch ending {
        case .interrupted:
            file.rollback()
            summary.interrupted.append(path)
            return
        case .failed(let error):
            file.rollback()
            return try note(IngestSummary.Unreadable(path: path, reason: error.reason))
        case .lostPlace:
            throw InputError.readFailed(path: path, reason: "the reader stopped early")
        case .read(let whole):
            read = whole
        }
        try file.throwStrictFailure(read: read.summary)
        if let change = read.summary.changedWhileRead {
            file.rollback()
            return try note(
                IngestSummary.Unreadable(
                    path: path, reason: "\(change); nothing of it was stored, ingest it again once it is complete"))
        }
        let status =
            store.claimsBytesAtFinish ? .new : try Admission.confirm(sha256: read.sha256, name: path, in: store)
        if try countKnown(status, sha256: read.sha256, path: path, now: file.now) {
            return file.rollback()
        }
        try file.noteCutShort(read.summary)
        let finished = FinishedFile(
            path: path, now: file.now, read: read, fileSummary: file.summary, newByKind: file.newByKind,
            replaced: file.replaced, rows: file.records)
        guard let committed = try file.commit(read) else {
            unsettled.append(finished)
            unsettledRows += file.records
            return
        }
        try settle(finished, committed)
    }

    /// Counts a file whose bytes the store holds already (from this path or
    /// another); false for bytes that are new.
    private mutating func countKnown(_ status: ContentStatus, sha256: String, path: String, now: Int64) throws -> Bool {
        switch status {
        case .alreadyIngestedHere:
            summary.filesAlreadyIngested += 1
        case .alreadyIngestedFrom:
            summary.filesSkippedAsDuplicate += 1
            try store.recordSkippedDuplicate(sha256: sha256, path: path, at: now)
        case .new:
            return false
        }
        return true
    }

    /// Counts a file by what committing it did.
    private mutating func settle(_ file: FinishedFile, _ committed: FileCommit) throws {
        let (path, read, replaced) = (file.path, file.read, file.replaced)
        if let reason = committed.refused {
            summary.refused.append(IngestSummary.Refused(path: path, reason: reason))
            return
        }
        var (fileSummary, newByKind) = (file.fileSummary, file.newByKind)
        // Another writer stored the same bytes meanwhile (a store with several writers): skipped as above.
        if try countKnown(committed.status, sha256: read.sha256, path: path, now: file.now) { return }
        if let counted = committed.newByKind {
            let rows = newByKind.reduce(0, +) + fileSummary.duplicateRecords
            newByKind = counted
            fileSummary.duplicateRecords = rows - counted.reduce(0, +)
        }
        summary.lines += read.summary.lines
        summary.filesRead += 1
        if read.summary.bytesOnDisk == 0 { summary.emptyFiles.append(path) }
        summary.filesReplaced += replaced
        summary.bytesRead += read.summary.bytesOnDisk
        summary.duplicateRecords += fileSummary.duplicateRecords
        for kind in RecordKind.allCases where newByKind[kind.index] > 0 {
            summary.records[kind, default: 0] += newByKind[kind.index]
        }
        for location in fileSummary.firstMalformed
        where summary.firstMalformed.lazy.filter({ $0.cause == location.cause }).count < IngestSummary.locationsPerCause
        {
            summary.firstMalformed.append(location)
        }
        for (cause, count) in fileSummary.malformedByCause { summary.malformedByCause[cause, default: 0] += count }
    }

    private static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Names a path that could not be read and goes on; into a throwaway
    /// store (which cannot roll a file back and go on, and whose run is
    /// incomplete without it) it ends the run instead.
    mutating func note(_ unreadable: IngestSummary.Unreadable) throws {
        if store.isThrowaway { throw InputError.readFailed(path: unreadable.path, reason: unreadable.reason) }
        summary.unreadable.append(unreadable)
    }
}

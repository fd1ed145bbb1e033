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
    }

    /// Writes everything `channel` brings until the reading stage closes it.
    /// On an error, the files finished before the one it happened in are
    /// committed, then the error is thrown.
    mutating func write(
        from channel: BatchChannel<FileMessage>, recycle: BatchChannel<RowBatch>, source: FileSource,
        progress: ((IngestProgress) -> Void)?
    ) throws {
        let clock = ContinuousClock()
        let started = clock.now
        var committedRecords = summary.newRecords + summary.duplicateRecords
        var committedFiles = summary.filesRead
        var committedAt = started
        var index = 0
        // The file the writer is at (named when the reader loses its place).
        var current = ""
        do {
            while let message = channel.receive() {
                switch message {
                case .known(let name, _), .unreadable(let name, _), .file(let name, _, _), .interrupted(let name):
                    current = name
                case .rows, .end, .restart: break
                }
                let report: ((Int) -> Void)? = progress.map { progress in
                    { [summary, index, current] recordsInFile in
                        let (listed, listing) = source.listed
                        progress(
                            IngestProgress(
                                filesDone: index, filesTotal: listed, listing: listing,
                                records: summary.newRecords + summary.duplicateRecords + recordsInFile,
                                currentPath: current, elapsedSeconds: (clock.now - started).inSeconds))
                    }
                }
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
                    throw InputError.readFailed(path: current, reason: "the reader lost its place")
                }
                index += 1
                // Files whose commit is not settled yet count as stored.
                let due =
                    bulk
                    ? clock.now - committedAt >= options.bulkCommitInterval
                    : summary.newRecords + summary.duplicateRecords + unsettledRows - committedRecords
                        >= options.recordsPerCommit
                        || summary.filesRead + unsettled.count - committedFiles >= options.filesPerCommit
                if due {
                    try commit()
                    committedRecords = summary.newRecords + summary.duplicateRecords
                    committedFiles = summary.filesRead
                    committedAt = clock.now
                }
            }
        } catch {
            // The files finished before this one are whole: keep them.
            _ = try? store.commitFiles()
            throw error
        }
        try commit()
    }

    /// Commits the files finished since the last commit, and counts those
    /// whose commit the store settled now.
    private mutating func commit() throws {
        let commits = try store.commitFiles()
        let files = unsettled
        unsettled = []
        unsettledRows = 0
        guard commits.count == files.count else {
            throw InputError.readFailed(
                path: files.last?.path ?? "", reason: "the store settled \(commits.count) of \(files.count) files")
        }
        for (file, committed) in zip(files, commits) { try settle(file, committed) }
    }

    /// Counts a file admission found known without decoding it.
    private mutating func skip(known name: String, sha256: String) throws {
        switch try Admission.confirm(sha256: sha256, name: name, in: store) {
        case .alreadyIngestedHere:
            summary.filesAlreadyIngested += 1
        case .alreadyIngestedFrom:
            summary.filesSkippedAsDuplicate += 1
            try store.recordSkippedDuplicate(sha256: sha256, path: name, at: Self.now())
        case .new:
            // The copy admission knew was not stored after all (it failed, or was removed meanwhile).
            try note(
                IngestSummary.Unreadable(
                    path: name,
                    reason: "the copy of its bytes it was to be skipped for is not in the store; nothing was stored, "
                        + "ingest it again"))
        }
    }

    /// Stores one file whose `.file` message was received, consuming its
    /// `.rows` and `.end` from `channel`.
    private mutating func write(
        file path: String, replacing earlierVersions: [Int64], upgrading: String?,
        from channel: BatchChannel<FileMessage>, recycle: BatchChannel<RowBatch>, progress: ((Int) -> Void)?
    ) throws {
        let now = Self.now()
        var replacing = earlierVersions
        if let id = try Admission.copyToReplace(upgrading: upgrading, in: store) { replacing.append(id) }
        var transaction = try store.beginFile(path: path, now: now, replaces: !replacing.isEmpty)
        // An earlier version this file grew from goes first, inside the file's
        // savepoint: its records are the file's again, not duplicates of it.
        var replaced = 0
        if !replacing.isEmpty {
            do {
                replaced = try store.removeReplacedVersions(ids: replacing)
            } catch {
                transaction.rollback()
                throw error
            }
        }
        var fileSummary = IngestSummary()
        var newByKind = [0, 0, 0]
        // --strict: the first malformed line; the file is read to its end before it is named,
        // because the partial last line of a gzip stream that breaks off is that break, not bad JSON.
        var strictFailure: (line: Int, cause: MalformedCause, problem: String?)?
        let read: ReadFile
        do {
            var end: Result<ReadFile, InputError>?
            var interrupted = false
            messages: while let message = channel.receive() {
                switch message {
                case .rows(let batch):
                    if options.strict, strictFailure == nil, let first = batch.malformed.first {
                        strictFailure = (first.0, first.1, first.2)
                    }
                    if strictFailure != nil {
                        recycle.offer(batch)
                        continue
                    }
                    // An engine that counts new records only at commit counts every row for now.
                    let new = try transaction.store(batch) ?? [batch.rows.count, 0, 0]
                    for kind in 0..<3 { newByKind[kind] += new[kind] }
                    fileSummary.duplicateRecords += batch.rows.count - new.reduce(0, +)
                    for (line, cause, problem) in batch.malformed {
                        try transaction.noteMalformed(line: line, cause: cause, problem: problem)
                        fileSummary.noteMalformed(path: path, line: line, cause: cause, problem: problem)
                    }
                    recycle.offer(batch)
                    progress?(newByKind.reduce(0, +) + fileSummary.duplicateRecords)
                case .end(let result):
                    end = result
                    break messages
                case .interrupted:
                    interrupted = true
                    break messages
                case .restart:
                    // Back to the state before the file, earlier versions included, and again.
                    transaction.rollback()
                    transaction = try store.beginFile(path: path, now: now, replaces: !replacing.isEmpty)
                    replaced = replacing.isEmpty ? 0 : try store.removeReplacedVersions(ids: replacing)
                    fileSummary = IngestSummary()
                    newByKind = [0, 0, 0]
                    strictFailure = nil
                case .file, .known, .unreadable:
                    break messages
                }
            }
            if interrupted {
                transaction.rollback()
                summary.interrupted.append(path)
                return
            }
            guard let end else { throw InputError.readFailed(path: path, reason: "the reader stopped early") }
            switch end {
            case .failure(let error):
                transaction.rollback()
                try note(IngestSummary.Unreadable(path: path, reason: error.reason))
                return
            case .success(let file):
                read = file
            }
            if let strictFailure, read.summary.changedWhileRead == nil {
                if read.summary.truncatedGzip, strictFailure.line >= read.summary.lines {
                    throw IngestError.malformedLine(
                        path: path, line: strictFailure.line, cause: .truncatedGzip,
                        problem: "the gzip stream breaks off in this line")
                }
                throw IngestError.malformedLine(
                    path: path, line: strictFailure.line, cause: strictFailure.cause, problem: strictFailure.problem)
            }
            if let change = read.summary.changedWhileRead {
                transaction.rollback()
                try note(
                    IngestSummary.Unreadable(
                        path: path, reason: "\(change); nothing of it was stored, ingest it again once it is complete"))
                return
            }
            switch store.claimsBytesAtFinish ? .new : try Admission.confirm(sha256: read.sha256, name: path, in: store)
            {
            case .alreadyIngestedHere:
                transaction.rollback()
                summary.filesAlreadyIngested += 1
                return
            case .alreadyIngestedFrom:
                transaction.rollback()
                summary.filesSkippedAsDuplicate += 1
                try store.recordSkippedDuplicate(sha256: read.sha256, path: path, at: now)
                return
            case .new:
                break
            }
            if read.summary.truncatedGzip {
                let line = read.summary.lines + 1
                if options.strict {
                    throw IngestError.malformedLine(path: path, line: line, cause: .truncatedGzip, problem: nil)
                }
                try transaction.noteMalformed(line: line, cause: .truncatedGzip, problem: nil)
                fileSummary.noteMalformed(path: path, line: line, cause: .truncatedGzip)
            }
            if let problem = read.summary.pastLimit {
                // As a broken gzip stream: the lines before the limit are kept, the first one not read stands for the rest.
                let line = read.summary.lines + 1
                if options.strict {
                    throw IngestError.malformedLine(path: path, line: line, cause: .tooLarge, problem: problem)
                }
                try transaction.noteMalformed(line: line, cause: .tooLarge, problem: problem)
                fileSummary.noteMalformed(path: path, line: line, cause: .tooLarge, problem: problem)
            }
            let committed = try transaction.finish(
                sha256: read.sha256, byteCount: read.summary.bytesOnDisk, lines: read.summary.lines,
                gzip: read.summary.gzip)
            let file = FinishedFile(
                path: path, now: now, read: read, fileSummary: fileSummary, newByKind: newByKind, replaced: replaced)
            guard let committed else {
                unsettled.append(file)
                unsettledRows += newByKind.reduce(0, +) + fileSummary.duplicateRecords
                return
            }
            try settle(file, committed)
        } catch {
            transaction.rollback()
            throw error
        }
    }

    /// Counts a file by what committing it did.
    private mutating func settle(_ file: FinishedFile, _ committed: FileCommit) throws {
        let (path, read, replaced) = (file.path, file.read, file.replaced)
        var (fileSummary, newByKind) = (file.fileSummary, file.newByKind)
        // Another writer stored the same bytes meanwhile (a store with several writers): skipped as above.
        switch committed.status {
        case .alreadyIngestedHere:
            summary.filesAlreadyIngested += 1
            return
        case .alreadyIngestedFrom:
            summary.filesSkippedAsDuplicate += 1
            try store.recordSkippedDuplicate(sha256: read.sha256, path: path, at: file.now)
            return
        case .new:
            break
        }
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

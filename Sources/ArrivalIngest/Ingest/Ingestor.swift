import ArrivalModel
import ArrivalStore
import Crypto
import Foundation

/// Reads files and directories of the three streams into a ``Store``
/// (Documentation/InputRecords.md): each file all or nothing, de-duplicated files and records,
/// malformed lines counted by cause and never stopping the run (unless
/// ``Options/strict``).
///
/// Files are hashed, read, inflated and decoded on one thread and written on
/// the calling thread, the two joined by a bounded channel of batches. Whole
/// files are committed in batches.
public struct Ingestor {
    public struct Options: Sendable {
        public var strict = false
        public var batchSize = 4096
        /// A batch also goes to the writer once its strings hold this many
        /// bytes, so lines with long fields cannot make a batch large (up to
        /// 4,096 lines of 1 MiB each): memory stays bounded by these two
        /// limits plus one line.
        public var batchBytes = 8 << 20
        public var reader = LineReader()
        /// Whole files are committed together until a batch holds this many records…
        public var recordsPerCommit = 200_000
        /// …or this many files.
        public var filesPerCommit = 2_000
        public init(strict: Bool = false) {
            self.strict = strict
        }
    }

    public var options: Options
    private let store: Store

    public init(store: Store, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// Ingests every file under `paths`.
    ///
    /// A reading thread hashes each file, asks a read-only connection whether
    /// its bytes were ingested before (so known files are not decoded), and
    /// decodes the new ones; the calling thread owns the store and writes.
    /// The two are joined by a bounded channel, so memory stays bounded by
    /// the batch size whatever the input size.
    public func ingest(
        paths: [String], progress: ((IngestProgress) -> Void)? = nil
    ) throws -> IngestSummary {
        let walker = try InputWalker(paths: paths)
        var summary = IngestSummary()
        summary.skippedEntries = walker.skipped
        let clock = ContinuousClock()
        let started = clock.now
        var committedRecords = 0
        var committedFiles = 0

        let channel = BatchChannel<Message>(capacity: 8)
        // Written batches go back to the reading thread to be refilled: their
        // buffers are allocated once per ingest, never per record.
        let recycle = BatchChannel<RowBatch>(capacity: 8)
        let files = walker.files
        let options = self.options
        // A throwaway store starts empty and is locked by its writer: no
        // file in it to look up before decoding.
        let storePath = store.isThrowaway ? "" : store.path
        let producer = Thread {
            Self.produce(files: files, storePath: storePath, options: options, channel: channel, recycle: recycle)
        }
        producer.stackSize = 1 << 20
        producer.start()
        defer { channel.cancel() }

        var index = 0
        do {
            while let message = channel.receive() {
                guard case .file(let path, let sha256, let byteCount, let decoding) = message else {
                    throw InputError.readFailed(path: files[index], reason: "the reader lost its place")
                }
                let report: ((Int) -> Void)? = progress.map { progress in
                    { [summary, index] recordsInFile in
                        let elapsed = clock.now - started
                        progress(
                            IngestProgress(
                                filesDone: index, filesTotal: files.count,
                                records: summary.newRecords + summary.duplicateRecords + recordsInFile,
                                currentPath: path,
                                elapsedSeconds: Double(elapsed.components.seconds) + Double(
                                    elapsed.components.attoseconds) / 1e18))
                    }
                }
                try ingest(
                    file: path, sha256: sha256, byteCount: byteCount, decoded: decoding,
                    from: channel, recycle: recycle, into: &summary, progress: report)
                index += 1
                if summary.newRecords + summary.duplicateRecords - committedRecords >= options.recordsPerCommit
                    || summary.filesRead - committedFiles >= options.filesPerCommit
                {
                    try store.commitBatch()
                    committedRecords = summary.newRecords + summary.duplicateRecords
                    committedFiles = summary.filesRead
                }
            }
        } catch {
            // The files finished before this one are whole: keep them.
            try? store.commitBatch()
            throw error
        }
        try store.commitBatch()
        return summary
    }

    /// What the reading thread sends, per file: `.file`, then, when it decoded
    /// the file, any number of `.rows` and one `.end`.
    enum Message: Sendable {
        case file(path: String, sha256: String, byteCount: Int, decoding: Bool)
        case rows(RowBatch)
        case end(Result<ReadSummary, InputError>)
    }

    /// Stores one file whose `.file` message was received; consumes its
    /// `.rows` and `.end` from `channel` when the reader decoded it.
    private func ingest(
        file path: String, sha256: String, byteCount: Int, decoded: Bool, from channel: BatchChannel<Message>,
        recycle: BatchChannel<RowBatch>,
        into summary: inout IngestSummary, progress: ((Int) -> Void)?
    ) throws {
        /// Drains a decoded file's messages when its records are not wanted.
        func discard() throws {
            guard decoded else { return }
            while let message = channel.receive() {
                switch message {
                case .rows: continue
                case .end(let result):
                    _ = try result.get()
                    return
                case .file: throw InputError.readFailed(path: path, reason: "the reader lost its place")
                }
            }
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        switch try store.status(ofContent: sha256, at: path) {
        case .alreadyIngestedHere:
            summary.filesAlreadyIngested += 1
            return try discard()
        case .alreadyIngestedFrom:
            summary.filesSkippedAsDuplicate += 1
            try store.recordSkippedDuplicate(sha256: sha256, path: path, at: now)
            return try discard()
        case .new:
            guard decoded else {
                // The reader's read-only view was older than this store's; cannot happen
                // while one ingest writes, but never store a file half-seen.
                throw InputError.readFailed(path: path, reason: "the store changed during the ingest")
            }
        }

        let transaction = try store.beginFile(sha256: sha256, path: path, byteCount: byteCount, gzip: false, now: now)
        var fileSummary = IngestSummary()
        var newByKind = [0, 0, 0]
        do {
            var readSummary: ReadSummary?
            messages: while let message = channel.receive() {
                switch message {
                case .rows(let batch):
                    if options.strict, let (line, cause, problem) = batch.malformed.first {
                        throw IngestError.malformedLine(path: path, line: line, cause: cause, problem: problem)
                    }
                    let new = try transaction.insertRows(of: batch)
                    for kind in 0..<3 { newByKind[kind] += new[kind] }
                    fileSummary.duplicateRecords += batch.rows.count - new.reduce(0, +)
                    for (line, cause, problem) in batch.malformed {
                        try transaction.addMalformed(line: line, cause: cause, problem: problem)
                        fileSummary.noteMalformed(path: path, line: line, cause: cause, problem: problem)
                    }
                    recycle.offer(batch)
                    progress?(newByKind.reduce(0, +) + fileSummary.duplicateRecords)
                case .end(let result):
                    readSummary = try result.get()
                    break messages
                case .file:
                    break messages
                }
            }
            guard let readSummary else { throw InputError.readFailed(path: path, reason: "the reader stopped early") }
            if readSummary.truncatedGzip {
                let line = readSummary.lines + 1
                if options.strict {
                    throw IngestError.malformedLine(path: path, line: line, cause: .truncatedGzip, problem: nil)
                }
                try transaction.addMalformed(line: line, cause: .truncatedGzip)
                fileSummary.noteMalformed(path: path, line: line, cause: .truncatedGzip)
            }
            try transaction.commit(lines: readSummary.lines, gzip: readSummary.gzip)
            summary.lines += readSummary.lines
        } catch {
            transaction.rollback()
            throw error
        }
        summary.filesRead += 1
        summary.bytesRead += byteCount
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

    /// The reading thread: hash, pre-check, decode, send.
    private static func produce(
        files: [String], storePath: String, options: Options, channel: BatchChannel<Message>,
        recycle: BatchChannel<RowBatch>
    ) {
        defer { channel.close() }
        // A read-only look at the store, to skip decoding files it already has.
        let lookup = FileRegistryLookup(storePath: storePath)
        for path in files {
            let sha256: String
            let byteCount: Int
            do {
                (sha256, byteCount) = try Self.sha256(of: path, chunkSize: options.reader.chunkSize)
            } catch {
                let failure = (error as? InputError) ?? .readFailed(path: path, reason: "\(error)")
                _ = channel.send(.file(path: path, sha256: "", byteCount: 0, decoding: true))
                _ = channel.send(.end(.failure(failure)))
                return
            }
            let known = lookup?.contains(sha256: sha256) ?? false
            guard channel.send(.file(path: path, sha256: sha256, byteCount: byteCount, decoding: !known)) else {
                return
            }
            if known { continue }
            do {
                let summary = try decode(path: path, options: options, recycle: recycle) { batch in
                    channel.send(.rows(batch))
                }
                guard channel.send(.end(.success(summary))) else { return }
            } catch let error as InputError {
                _ = channel.send(.end(.failure(error)))
                return
            } catch {
                return  // stopped by the writer
            }
        }
    }

    /// Reads and decodes a file, handing batches of rows to `deliver`
    /// (which returns false to stop early).
    private static func decode(
        path: String, options: Options, recycle: BatchChannel<RowBatch>,
        _ deliver: (RowBatch) throws -> Bool
    ) throws -> ReadSummary {
        var decoder = RecordDecoder()
        let batchSize = options.batchSize
        let batchBytes = options.batchBytes
        var batch = recycle.poll() ?? RowBatch(capacity: batchSize)
        batch.removeAll()
        struct Stopped: Error {}
        let summary = try options.reader.read(path: path) { line in
            guard let bytes = line.bytes else {
                batch.appendMalformed(
                    line: line.number, cause: .lineTooLong, problem: "longer than \(options.reader.maxLineBytes) bytes")
                return
            }
            switch decoder.decode(bytes, line: line.number, into: &batch) {
            case .record, .blank: break
            case .malformed(let cause):
                batch.appendMalformed(line: line.number, cause: cause, problem: decoder.lastProblem)
            }
            if batch.count >= batchSize || batch.byteCount >= batchBytes {
                guard try deliver(batch) else { throw Stopped() }
                batch = recycle.poll() ?? RowBatch(capacity: batchSize)
                batch.removeAll()
            }
        }
        if !batch.isEmpty { guard try deliver(batch) else { throw Stopped() } }
        return summary
    }

    /// The SHA-256 of a file's bytes as stored on disk, and its size.
    static func sha256(of path: String, chunkSize: Int) throws -> (String, Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw InputError.cannotOpen(path: path, reason: "cannot be opened for reading")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        var total = 0
        while true {
            let data: Data
            do {
                data = try handle.read(upToCount: max(chunkSize, 1 << 20)) ?? Data()
            } catch {
                throw InputError.readFailed(path: path, reason: "\(error)")
            }
            if data.isEmpty { break }
            total += data.count
            hasher.update(data: data)
        }
        let digest = hasher.finalize()
        return (digest.map { String(format: "%02x", $0) }.joined(), total)
    }
}

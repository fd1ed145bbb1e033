import ArrivalHandOff
import ArrivalModel
package import ArrivalStore
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
package struct Ingestor {
    package struct Options: Sendable {
        package var strict = false
        package var batchSize = 4096
        /// A batch also goes to the writer once its strings hold this many
        /// bytes, so lines with long fields cannot make a batch large (up to
        /// 4,096 lines of 1 MiB each): memory stays bounded by these two
        /// limits plus one line.
        package var batchBytes = 8 << 20
        package var reader = LineReader()
        /// Whole files are committed together until a batch holds this many records…
        package var recordsPerCommit = 200_000
        /// …or this many files.
        package var filesPerCommit = 2_000
        /// In a bulk load (``bulkLoadWhenNew``), whole files are committed
        /// together for this long instead, however many they are: a commit
        /// there syncs the store, and every page the next batch changes
        /// again is journaled first, so commits by count would cost a
        /// large load more than they protect. A run killed
        /// meanwhile loses at most this much work: the next run ingests the
        /// files it had not committed.
        package var bulkCommitInterval: Duration = .seconds(10)
        /// Into a store that holds no file yet and that no other connection
        /// has open, write with a rollback journal and the store held alone
        /// (``Store/beginBulkLoad()``): every page is written once instead of
        /// to the log and then again by the checkpoint. `arrival ingest`
        /// sets it; the collector, whose store is read while it ingests, does
        /// not.
        package var bulkLoadWhenNew = false
        package init(strict: Bool = false) {
            self.strict = strict
        }
    }

    package var options: Options
    private let store: Store

    package init(store: Store, options: Options = Options()) {
        self.store = store
        self.options = options
    }

    /// Ingests every file under `paths`.
    ///
    /// A reading thread reads, inflates and decodes each file and hashes the
    /// very bytes it decodes in the same pass; the calling thread owns the
    /// store and writes. The two are joined by a bounded channel, so memory
    /// stays bounded by the batch size whatever the input size.
    ///
    /// A file's records go into the batch transaction as a unit that can be
    /// rolled back alone (``Store/beginFile(path:now:replaces:)``), and only once the
    /// file was read to its end does the writer decide, by the hash of what
    /// was read and inside its write transaction, whether the bytes are new:
    /// a file ingested before (here, or by another process meanwhile) is
    /// rolled back and counted as skipped, a file that changed while it was
    /// read is rolled back and named in ``IngestSummary/unreadable``, and
    /// only a file read whole and still is registered. Before decoding a
    /// file whose size equals a stored file's, the reader hashes it alone:
    /// a re-run over files already ingested reads each once and decodes none.
    ///
    /// A file or directory that cannot be read is named in
    /// ``IngestSummary/unreadable`` and the run goes on.
    ///
    /// The paths are walked on a thread of their own while the first files
    /// are read (listing a large tree of device files takes a while of its
    /// own); what the walk skipped or could not read comes first in the
    /// summary, as if it had been listed before. A throwaway store, which
    /// must stop at the first path it cannot read, lists everything first.
    package func ingest(
        paths: [String], progress: ((IngestProgress) -> Void)? = nil
    ) throws -> IngestSummary {
        guard !store.isThrowaway else {
            let walker = InputWalker(paths: paths)
            var summary = IngestSummary()
            summary.skippedEntries = walker.skipped
            for unreadable in walker.unreadable { try note(unreadable, in: &summary) }
            return try ingest(
                .list(walker.files.map { NamedFile(path: $0, name: $0) }), into: summary, progress: progress)
        }
        let listing = FileListing()
        let walk = Thread {
            var chunk: [String] = []
            let walker = InputWalker.walk(paths: paths) { path in
                chunk.append(path)
                guard chunk.count == FileListing.chunkSize else { return true }
                defer { chunk.removeAll(keepingCapacity: true) }
                return listing.send(chunk)
            }
            if !chunk.isEmpty { _ = listing.send(chunk) }
            listing.finish(walker)
        }
        // The walk recurses once per directory level: as deep as a path can go (PATH_MAX) fits.
        walk.stackSize = 8 << 20
        walk.start()
        defer { listing.cancel() }
        var summary = try ingest(.listing(listing), into: IngestSummary(), progress: progress)
        guard let walker = listing.result() else { return summary }
        summary.skippedEntries = walker.skipped
        summary.unreadable.insert(contentsOf: walker.unreadable, at: 0)
        return summary
    }

    /// A file to read, and the name the store registers it by (its path,
    /// or for an upload to the collector the name the client gave it).
    package struct NamedFile: Sendable {
        package var path: String
        package var name: String
        /// False for an upload made with a device token (the collector):
        /// its `apns` and `exchange` lines are malformed, `kind_not_allowed`,
        /// because a token that ships inside an app may speak only for the
        /// app's renders and callbacks.
        package var senderRecordsAllowed: Bool
        /// The bytes of `path` that make up the file, when it is a part of
        /// `path` (an upload in one of the collector's spool segments);
        /// nil for the whole file.
        package var range: Range<Int>?
        /// The SHA-256 (lower-case hex) of the file's bytes, when the caller
        /// already checked it (the collector hashes an upload as it arrives
        /// and again when it reopens its spool): the bytes are then not
        /// hashed again, and whether they are stored is asked before they
        /// are read.
        package var sha256: String?

        package init(
            path: String, name: String, senderRecordsAllowed: Bool = true, range: Range<Int>? = nil,
            sha256: String? = nil
        ) {
            self.path = path
            self.name = name
            self.senderRecordsAllowed = senderRecordsAllowed
            self.range = range
            self.sha256 = sha256
        }
    }

    /// Ingests files read from one path and registered under another name:
    /// the name is what the store's file table shows and what "the same
    /// bytes under another name" compares.
    package func ingest(_ files: [NamedFile], progress: ((IngestProgress) -> Void)? = nil) throws -> IngestSummary {
        try ingest(.list(files), into: IngestSummary(), progress: progress)
    }

    private func ingest(
        _ source: FileSource, into start: IngestSummary, progress: ((IngestProgress) -> Void)?
    ) throws -> IngestSummary {
        var summary = start
        let clock = ContinuousClock()
        let started = clock.now
        var committedRecords = 0
        var committedFiles = 0
        var committedAt = started

        // Messages weigh 1, and a batch of rows 1 more per 256 KiB of its
        // strings: a device file is three light messages (`.file`, `.rows`,
        // `.end`), so many small files can queue and neither thread waits on
        // the other every few files, while a sender's large batches weigh
        // several each, so that few of them are held in memory at once.
        let channel = BatchChannel<Message>(capacity: 32) { message in
            guard case .rows(let batch) = message else { return 1 }
            return 1 + batch.byteCount >> 18
        }
        // Written batches go back to the reading thread to be refilled: their
        // buffers are allocated once per ingest, never per record.
        let recycle = BatchChannel<RowBatch>(capacity: 8)
        let options = self.options
        let storePath = store.path
        let throwaway = store.isThrowaway
        // A store loaded alone holds no file the reader could skip, and a
        // connection of the reader's own could not read it meanwhile.
        let bulk = options.bulkLoadWhenNew && store.beginBulkLoad()
        defer { if bulk { store.endBulkLoad() } }
        let producer = Thread {
            Self.produce(
                files: source, storePath: storePath, throwaway: throwaway, looksUpStore: !throwaway && !bulk,
                options: options, channel: channel, recycle: recycle)
        }
        producer.stackSize = 1 << 20
        producer.start()
        defer { channel.cancel() }

        var index = 0
        // The file the writer is at (named when the reader loses its place).
        var current = ""
        do {
            while let message = channel.receive() {
                switch message {
                case .known(let path, _), .unreadable(let path, _), .file(let path, _, _): current = path
                case .rows, .end, .restart: break
                }
                let report: ((Int) -> Void)? = progress.map { progress in
                    { [summary, index, current] recordsInFile in
                        let elapsed = clock.now - started
                        let (listed, listing) = source.listed
                        progress(
                            IngestProgress(
                                filesDone: index, filesTotal: listed, listing: listing,
                                records: summary.newRecords + summary.duplicateRecords + recordsInFile,
                                currentPath: current, elapsedSeconds: elapsed.inSeconds))
                    }
                }
                switch message {
                case .known(let path, let sha256):
                    try skip(known: path, sha256: sha256, into: &summary)
                case .file(let path, let replacing, let upgrading):
                    try ingest(
                        file: path, replacing: replacing, upgrading: upgrading, from: channel, recycle: recycle,
                        into: &summary, progress: report)
                case .unreadable(let path, let error):
                    try note(IngestSummary.Unreadable(path: path, reason: error.reason), in: &summary)
                case .rows, .end, .restart:
                    throw InputError.readFailed(path: current, reason: "the reader lost its place")
                }
                index += 1
                let due =
                    bulk
                    ? clock.now - committedAt >= options.bulkCommitInterval
                    : summary.newRecords + summary.duplicateRecords - committedRecords >= options.recordsPerCommit
                        || summary.filesRead - committedFiles >= options.filesPerCommit
                if due {
                    try store.commitBatch()
                    committedRecords = summary.newRecords + summary.duplicateRecords
                    committedFiles = summary.filesRead
                    committedAt = clock.now
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

    /// What the reading thread sends, per file: `.known` (its bytes are in
    /// the store: not decoded), `.unreadable`, or `.file` followed by any
    /// number of `.rows` and one `.end`.
    enum Message: Sendable {
        case known(path: String, sha256: String)
        case unreadable(path: String, InputError)
        /// `replacing`: the stored versions the file begins with (it grew since they were ingested).
        /// `upgrading`: the content hash of a stored copy of these very bytes that an upload with a
        /// device token stored with lines refused (`kind_not_allowed`); this file may carry those
        /// lines, so it takes that copy's place instead of being skipped as its duplicate.
        case file(path: String, replacing: [Int64], upgrading: String?)
        case rows(RowBatch)
        /// What was sent of the file so far is void: it is read again from
        /// its start (with zlib: ``LineReader/ReadAgainWithZlib``).
        case restart
        case end(Result<ReadFile, InputError>)
    }

    /// A file read to its end: what the reader found, and the SHA-256 of the bytes it decoded.
    struct ReadFile: Sendable {
        var summary: ReadSummary
        var sha256: String
    }

    /// Counts a file the reader found in the store without decoding it.
    private func skip(known path: String, sha256: String, into summary: inout IngestSummary) throws {
        switch try store.status(ofContent: sha256, at: path) {
        case .alreadyIngestedHere:
            summary.filesAlreadyIngested += 1
        case .alreadyIngestedFrom:
            summary.filesSkippedAsDuplicate += 1
            try store.recordSkippedDuplicate(sha256: sha256, path: path, at: Self.now())
        case .new:
            // The copy the reader knew was not stored after all (it failed, or was removed meanwhile).
            try note(
                IngestSummary.Unreadable(
                    path: path,
                    reason: "the copy of its bytes it was to be skipped for is not in the store; nothing was stored, "
                        + "ingest it again"),
                in: &summary)
        }
    }

    /// Stores one file whose `.file` message was received, consuming its
    /// `.rows` and `.end` from `channel`.
    private func ingest(
        file path: String, replacing earlierVersions: [Int64], upgrading: String?, from channel: BatchChannel<Message>,
        recycle: BatchChannel<RowBatch>, into summary: inout IngestSummary, progress: ((Int) -> Void)?
    ) throws {
        let now = Self.now()
        // The writer has the last word on which stored copy a file upgrades (the reader may have
        // met it earlier in this run, before it was stored).
        var replacing = earlierVersions
        if let upgrading, let id = try store.restrictedCopy(ofContent: upgrading) { replacing.append(id) }
        var transaction = try store.beginFile(path: path, now: now, replaces: !replacing.isEmpty)
        // An earlier version this file grew from goes first, inside the file's
        // savepoint: its records are the file's again, not duplicates of it.
        var replaced = 0
        if !replacing.isEmpty {
            do {
                replaced = try store.replaceEarlierVersions(ids: replacing).entries.count
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
                    end = result
                    break messages
                case .restart:
                    // Back to the state before the file, earlier versions included, and again.
                    transaction.rollback()
                    transaction = try store.beginFile(path: path, now: now, replaces: !replacing.isEmpty)
                    replaced = replacing.isEmpty ? 0 : try store.replaceEarlierVersions(ids: replacing).entries.count
                    fileSummary = IngestSummary()
                    newByKind = [0, 0, 0]
                    strictFailure = nil
                case .file, .known, .unreadable:
                    break messages
                }
            }
            guard let end else { throw InputError.readFailed(path: path, reason: "the reader stopped early") }
            switch end {
            case .failure(let error):
                transaction.rollback()
                try note(IngestSummary.Unreadable(path: path, reason: error.reason), in: &summary)
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
                        path: path, reason: "\(change); nothing of it was stored, ingest it again once it is complete"),
                    in: &summary)
                return
            }
            // Decided inside the write transaction, so another writer cannot register the same bytes meanwhile.
            switch try store.status(ofContent: read.sha256, at: path) {
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
                try transaction.addMalformed(line: line, cause: .truncatedGzip)
                fileSummary.noteMalformed(path: path, line: line, cause: .truncatedGzip)
            }
            try transaction.commit(
                sha256: read.sha256, byteCount: read.summary.bytesOnDisk, lines: read.summary.lines,
                gzip: read.summary.gzip)
            summary.lines += read.summary.lines
        } catch {
            transaction.rollback()
            throw error
        }
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
    private func note(_ unreadable: IngestSummary.Unreadable, in summary: inout IngestSummary) throws {
        if store.isThrowaway { throw InputError.readFailed(path: unreadable.path, reason: unreadable.reason) }
        summary.unreadable.append(unreadable)
    }

    /// The reading thread: for each file, hash it first when its bytes may be
    /// known (its size matches a stored file's, or one read earlier in the
    /// run and it is larger than a chunk, or, for a throwaway store, always),
    /// and skip it when they are; else decode and hash in one pass; send. A
    /// file of a size read earlier that its first chunk holds whole is
    /// skipped when that chunk's hash is known, before a line is decoded.
    ///
    /// A throwaway store keeps no journal, so the writer must never roll a
    /// file back and go on: every file is hashed first and duplicates within
    /// the run are found here, before decoding.
    private static func produce(
        files source: FileSource, storePath: String, throwaway: Bool, looksUpStore: Bool, options: Options,
        channel: BatchChannel<Message>, recycle: BatchChannel<RowBatch>
    ) {
        defer { channel.close() }
        // Stopped early (the writer cancelled): the walk stops too.
        defer { source.cancel() }
        var files = source.makeIterator()
        // A read-only look at the store, to skip decoding files it already has,
        // and the files decoded earlier in this run (a re-upload in the same run).
        let lookup = looksUpStore ? FileRegistryLookup(storePath: storePath) : nil
        var seenInRun: Set<String> = []
        // Bytes read earlier in this run with lines refused for the token that sent them: a
        // copy from a token allowed those lines is not their duplicate.
        var refusedInRun: Set<String> = []
        var sizesInRun: Set<Int> = []
        // Whether bytes the store or this run has are a duplicate for this file, or a copy
        // stored with lines refused that this file, allowed them, is to take the place of.
        func known(_ sha256: String, _ file: NamedFile) -> (known: Bool, upgrading: String?) {
            if seenInRun.contains(sha256) { return (true, nil) }
            if refusedInRun.contains(sha256) { return file.senderRecordsAllowed ? (false, sha256) : (true, nil) }
            guard let lookup, lookup.contains(sha256: sha256) else { return (false, nil) }
            if file.senderRecordsAllowed, lookup.hasRefusedLines(sha256: sha256) { return (false, sha256) }
            return (true, nil)
        }
        while let file = files.next() {
            let path = file.path
            let name = file.name
            var expected: String?
            var upgrading: String?
            let size = file.range?.count ?? fileSize(path)
            if let sha256 = file.sha256 {
                let answer = known(sha256, file)
                if answer.known {
                    guard channel.send(.known(path: name, sha256: sha256)) else { return }
                    continue
                }
                upgrading = answer.upgrading
                expected = sha256
            } else if throwaway
                || size.map({
                    (sizesInRun.contains($0) && !Self.decidedFromFirstChunk(size: $0, options.reader))
                        || lookup?.contains(byteCount: $0) == true
                }) == true
            {
                do throws(InputError) {
                    let (sha256, _) = try Self.sha256(of: path, range: file.range)
                    let answer = known(sha256, file)
                    if answer.known {
                        guard channel.send(.known(path: name, sha256: sha256)) else { return }
                        continue
                    }
                    upgrading = answer.upgrading
                    expected = sha256
                } catch {
                    guard channel.send(.unreadable(path: name, error)) else { return }
                    continue
                }
            }
            // A file that grew since a version of it was stored: that version is
            // replaced when its bytes are the start of this file's.
            var earlier: [FileRegistryLookup.Version] = []
            if let lookup, let size {
                let candidates = lookup.earlierVersions(atPath: name, smallerThan: size)
                if let last = candidates.last,
                    let prefixes = try? Self.hash(
                        of: path, range: file.range, upTo: last.byteCount, checkpoints: candidates.map(\.byteCount)
                    ).prefixes
                {
                    earlier = candidates.filter { prefixes[$0.byteCount] == $0.sha256 }
                }
            }
            // A file of the same size as one read earlier in this run may be a copy of it: when the
            // first chunk read is the whole file, its hash decides before a line is decoded.
            let mayBeCopy = expected == nil && file.sha256 == nil && size.map { sizesInRun.contains($0) } == true
            // `.file` goes to the writer with the file's first rows or its end, so that a copy found
            // from its first chunk is sent as `.known` instead.
            var announced = false
            func announce() -> Bool {
                guard !announced else { return true }
                announced = true
                return channel.send(.file(path: name, replacing: earlier.map(\.id), upgrading: upgrading))
            }
            var fileOptions = options
            reading: while true {
                do {
                    var hasher = PrefixHasher(checkpoints: earlier.map(\.byteCount))
                    var refusedLines = 0
                    // Bytes whose hash the caller vouches for are hashed only as far as a stored version goes.
                    let hashed = file.sha256 == nil ? Int.max : (earlier.last?.byteCount ?? 0)
                    var summary = try decode(
                        path: path, range: file.range, senderRecordsAllowed: file.senderRecordsAllowed,
                        options: fileOptions, recycle: recycle, refusedLines: &refusedLines,
                        raw: { bytes in
                            let wanted = hashed - hasher.byteCount
                            if wanted >= bytes.count {
                                hasher.update(bytes)
                            } else if wanted > 0 {
                                hasher.update(UnsafeRawBufferPointer(rebasing: bytes[..<wanted]))
                            }
                        },
                        afterFirstChunk: { wholeFile in
                            guard mayBeCopy, wholeFile else { return }
                            let sha256 = hasher.finalize()
                            if seenInRun.contains(sha256) { throw SeenInRun(sha256: sha256) }
                            if refusedInRun.contains(sha256) {
                                guard file.senderRecordsAllowed else { throw SeenInRun(sha256: sha256) }
                                upgrading = sha256
                            }
                        },
                        deliver: { announce() && channel.send(.rows($0)) })
                    let sha256 = file.sha256 ?? hasher.finalize()
                    if let expected, expected != sha256, summary.changedWhileRead == nil {
                        summary.changedWhileRead = "its bytes changed between two reads"
                    }
                    if earlier.contains(where: { hasher.prefixes[$0.byteCount] != $0.sha256 }),
                        summary.changedWhileRead == nil
                    {
                        summary.changedWhileRead = "its first bytes changed between two reads"
                    }
                    if refusedLines > 0 {
                        refusedInRun.insert(sha256)
                    } else {
                        seenInRun.insert(sha256)
                    }
                    sizesInRun.insert(summary.bytesOnDisk)
                    guard announce(), channel.send(.end(.success(ReadFile(summary: summary, sha256: sha256)))) else {
                        return
                    }
                } catch let copy as SeenInRun {
                    // Nothing of it was sent: it is skipped as a file whose bytes are known.
                    guard channel.send(.known(path: name, sha256: copy.sha256)) else { return }
                } catch is LineReader.ReadAgainWithZlib where fileOptions.reader.fastInflate {
                    // A damaged gzip stream ISA-L read further than zlib: void what was sent, read it with zlib.
                    fileOptions.reader.fastInflate = false
                    guard !announced || channel.send(.restart) else { return }
                    continue reading
                } catch let error as InputError {
                    guard announce(), channel.send(.end(.failure(error))) else { return }
                } catch {
                    return  // stopped by the writer
                }
                break reading
            }
        }
    }

    /// A file read earlier in the run had the same bytes (found from its first chunk).
    private struct SeenInRun: Error {
        var sha256: String
    }

    /// Whether a file of `size` bytes is read whole by its first chunk, so
    /// that whether it copies a file read earlier in the run is decided from
    /// that chunk, in the pass that decodes it, instead of by a pass that
    /// only hashes: in a tree of small device files many share their size
    /// with an earlier one, and nearly none are copies.
    static func decidedFromFirstChunk(size: Int, _ reader: LineReader) -> Bool {
        size < reader.chunkSize
    }

    /// Hashes a file's bytes from the start, up to `limit` bytes (all of
    /// them by default), and the first N bytes on the way for each N of
    /// `checkpoints` (a file shorter than N has none). The one reader for the
    /// passes that only hash: "are these bytes stored?" and "does this file
    /// begin with a stored version of itself?". With `range`, only those
    /// bytes of the file count.
    static func hash(of path: String, range: Range<Int>? = nil, upTo limit: Int = .max, checkpoints: [Int] = [])
        throws(InputError) -> PrefixHasher
    {
        var hasher = PrefixHasher(checkpoints: checkpoints)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        if let range, lseek(fd, off_t(range.lowerBound), SEEK_SET) < 0 {
            throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
        let limit = min(limit, range?.count ?? .max)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while hasher.byteCount < limit {
            let count = read(fd, buffer.baseAddress, min(buffer.count, limit - hasher.byteCount))
            if count < 0 {
                if errno == EINTR { continue }
                throw .readFailed(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        return hasher
    }

    /// The size of a regular file, or nil (it is read and fails there, with its reason).
    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Reads and decodes a file, handing batches of rows to `deliver`
    /// (which returns false to stop early).
    private static func decode(
        path: String, range: Range<Int>? = nil, senderRecordsAllowed: Bool = true, options: Options,
        recycle: BatchChannel<RowBatch>, refusedLines: inout Int,
        raw: (UnsafeRawBufferPointer) -> Void,
        afterFirstChunk: (_ wholeFile: Bool) throws -> Void = { _ in },
        deliver: (RowBatch) throws -> Bool
    ) throws -> ReadSummary {
        var decoder = RecordDecoder()
        let batchSize = options.batchSize
        let batchBytes = options.batchBytes
        var batch = recycle.poll() ?? RowBatch(capacity: batchSize)
        batch.removeAll()
        struct Stopped: Error {}
        let summary = try options.reader.read(path: path, range: range, raw: raw, afterFirstChunk: afterFirstChunk) {
            line in
            guard let bytes = line.bytes else {
                batch.appendMalformed(
                    line: line.number, cause: .lineTooLong, problem: "longer than \(options.reader.maxLineBytes) bytes")
                return
            }
            let mark = batch.mark
            switch decoder.decode(bytes, line: line.number, into: &batch) {
            case .record:
                if !senderRecordsAllowed, batch.lastRowKind == .apns {
                    refusedLines += 1
                    batch.removeLastRow(since: mark)
                    batch.appendMalformed(
                        line: line.number, cause: .kindNotAllowed,
                        problem: "kind: a device token may upload render and callback records only; "
                            + "send apns and exchange lines with a sender token")
                }
            case .blank: break
            case .malformed(let cause):
                batch.appendMalformed(line: line.number, cause: cause, problem: decoder.lastProblem)
            }
            if batch.count >= batchSize || batch.byteCount >= batchBytes {
                batch.computeKeys()
                guard try deliver(batch) else { throw Stopped() }
                batch = recycle.poll() ?? RowBatch(capacity: batchSize)
                batch.removeAll()
            }
        }
        if !batch.isEmpty {
            batch.computeKeys()
            guard try deliver(batch) else { throw Stopped() }
        }
        return summary
    }

    /// The SHA-256 of a file's bytes as stored on disk, and its size.
    static func sha256(of path: String, range: Range<Int>? = nil) throws(InputError) -> (String, Int) {
        let hasher = try hash(of: path, range: range)
        return (hasher.finalize(), hasher.byteCount)
    }
}

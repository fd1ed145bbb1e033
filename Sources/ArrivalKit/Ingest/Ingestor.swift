import Crypto
import Foundation

/// Reads files and directories of the three streams into a ``Store``
/// (contract 2): one transaction per file, de-duplicated files and records,
/// malformed lines counted by cause and never stopping the run (unless
/// ``Options/strict``).
///
/// Each file is read, inflated and decoded on one thread and written on the
/// calling thread, the two joined by a bounded channel of batches.
public struct Ingestor {
    public struct Options: Sendable {
        public var strict = false
        public var batchSize = 4096
        public var reader = LineReader()
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
    public func ingest(
        paths: [String], progress: ((IngestProgress) -> Void)? = nil
    ) throws -> IngestSummary {
        let walker = try InputWalker(paths: paths)
        var summary = IngestSummary()
        summary.skippedEntries = walker.skipped
        let clock = ContinuousClock()
        let started = clock.now
        for (index, path) in walker.files.enumerated() {
            let report: ((Int) -> Void)? = progress.map { progress in
                { [summary] recordsInFile in
                    let elapsed = clock.now - started
                    progress(IngestProgress(
                        filesDone: index, filesTotal: walker.files.count,
                        records: summary.newRecords + summary.duplicateRecords + recordsInFile,
                        currentPath: path,
                        elapsedSeconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
                }
            }
            try ingest(file: path, into: &summary, progress: report)
        }
        return summary
    }

    /// Ingests one regular file (its absolute, normalised path).
    func ingest(file path: String, into summary: inout IngestSummary, progress: ((Int) -> Void)? = nil) throws {
        let (sha256, byteCount) = try Self.sha256(of: path, chunkSize: options.reader.chunkSize)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        switch try store.status(ofContent: sha256, at: path) {
        case .alreadyIngestedHere:
            summary.filesAlreadyIngested += 1
            return
        case .alreadyIngestedFrom:
            summary.filesSkippedAsDuplicate += 1
            try store.recordSkippedDuplicate(sha256: sha256, path: path, at: now)
            return
        case .new:
            break
        }

        let transaction = try store.beginFile(sha256: sha256, path: path, byteCount: byteCount, gzip: false, now: now)
        var fileSummary = IngestSummary()
        let channel = BatchChannel<Batch>(capacity: 4)
        let reader = options.reader
        let batchSize = options.batchSize
        let producer = Thread {
            Self.produce(path: path, reader: reader, batchSize: batchSize, channel: channel)
        }
        producer.stackSize = 1 << 20
        producer.start()
        var readSummary: ReadSummary?
        var newByKind = [0, 0, 0]
        do {
            while let batch = channel.receive() {
                switch batch {
                case .items(let items):
                    for item in items {
                        switch item {
                        case .record(let record, let key):
                            if try transaction.insert(record, key: key) {
                                newByKind[record.kindIndex] += 1
                            } else {
                                fileSummary.duplicateRecords += 1
                            }
                        case .malformed(let line, let cause):
                            if options.strict { throw IngestError.malformedLine(path: path, line: line, cause: cause) }
                            try transaction.addMalformed(line: line, cause: cause)
                            fileSummary.noteMalformed(path: path, line: line, cause: cause)
                        }
                    }
                    progress?(newByKind.reduce(0, +) + fileSummary.duplicateRecords)
                case .finished(let result):
                    readSummary = try result.get()
                }
            }
            guard let readSummary else { throw InputError.readFailed(path: path, reason: "the reader stopped early") }
            if readSummary.truncatedGzip {
                let line = readSummary.lines + 1
                if options.strict { throw IngestError.malformedLine(path: path, line: line, cause: .truncatedGzip) }
                try transaction.addMalformed(line: line, cause: .truncatedGzip)
                fileSummary.noteMalformed(path: path, line: line, cause: .truncatedGzip)
            }
            try transaction.commit(lines: readSummary.lines, gzip: readSummary.gzip)
            for kind in RecordKind.allCases where newByKind[kind.index] > 0 {
                fileSummary.records[kind] = newByKind[kind.index]
            }
            summary.lines += readSummary.lines
        } catch {
            channel.cancel()
            transaction.rollback()
            throw error
        }
        summary.filesRead += 1
        summary.bytesRead += byteCount
        summary.duplicateRecords += fileSummary.duplicateRecords
        for (kind, count) in fileSummary.records { summary.records[kind, default: 0] += count }
        for location in fileSummary.firstMalformed
        where summary.firstMalformed.lazy.filter({ $0.cause == location.cause }).count < IngestSummary.locationsPerCause {
            summary.firstMalformed.append(location)
        }
        for (cause, count) in fileSummary.malformedByCause { summary.malformedByCause[cause, default: 0] += count }
    }

    enum Item: Sendable {
        /// A record and its de-duplication key, hashed on the reading thread.
        case record(Record, key: UInt64)
        case malformed(line: Int, cause: MalformedCause)
    }

    enum Batch: Sendable {
        case items([Item])
        case finished(Result<ReadSummary, InputError>)
    }

    private static func produce(path: String, reader: LineReader, batchSize: Int, channel: BatchChannel<Batch>) {
        var decoder = RecordDecoder()
        var items: [Item] = []
        items.reserveCapacity(batchSize)
        struct Cancelled: Error {}
        do {
            let summary = try reader.read(path: path) { line in
                guard let bytes = line.bytes else {
                    items.append(.malformed(line: line.number, cause: .lineTooLong))
                    return
                }
                switch decoder.decode(bytes) {
                case .record(let record): items.append(.record(record, key: record.storeKey))
                case .blank: return
                case .malformed(let cause): items.append(.malformed(line: line.number, cause: cause))
                }
                if items.count >= batchSize {
                    guard channel.send(.items(items)) else { throw Cancelled() }
                    items.removeAll(keepingCapacity: true)
                }
            }
            if !items.isEmpty { guard channel.send(.items(items)) else { throw Cancelled() } }
            _ = channel.send(.finished(.success(summary)))
        } catch let error as InputError {
            _ = channel.send(.finished(.failure(error)))
        } catch {
            // Cancelled by the writer: nothing more to say.
        }
        channel.close()
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

import ArrivalBeacons
import ArrivalModel
public import Foundation

/// Records every push exchange in hourly gzip batches,
/// `<directory>/<YYYY-MM-DD>/apns-<HH>.jsonl.gz` (UTC), the sender layout
/// the pipeline ingests: a direct APNs exchange (``APNsExchange``) as the
/// `apns` record derived from it, or as the raw `exchange` with
/// ``Configuration/apnsLines`` set to ``APNsLineKind/exchange``; an exchange
/// with any provider, FCM and Tencent Cloud Chat included (``PushExchange``),
/// as an `exchange` line from which the pipeline derives the record. Lines
/// of every kind and provider share the batches.
///
/// - The batch being written is hidden (`.apns-<HH>.jsonl.gz.open`), so an
///   uploader that ships every visible file never ships half a batch. It is
///   renamed to its final name when closed: when a record of a later hour
///   arrives, when it holds ``Configuration/maxBatchBytes``, or on
///   ``close()``. A name already taken gets `.1`, `.2`, … before `.jsonl.gz`,
///   so a restarted sender never overwrites a batch.
/// - A record of an earlier hour (a late answer) goes into the open batch:
///   names are for people, the pipeline reads the times in the records.
/// - ``flush()`` makes everything recorded so far decodable on disk. A
///   batch left hidden by a crash is renamed on the next start; the pipeline
///   keeps what it holds up to the break and counts one `truncated_gzip`.
///
/// Safe to call from several threads (a lock serialises the writes).
/// `@unchecked Sendable`: the open batch and its counts change only under `lock` (the kit has no Mutex before iOS 18).
public final class APNsResponseRecorder: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var directory: URL
        /// `production` or `sandbox` written into every record; nil writes
        /// nothing (the contract's default, production).
        public var environment: String?
        /// Uncompressed bytes after which a batch is closed and a new one begun.
        public var maxBatchBytes: Int
        /// How ``APNsResponseRecorder/record(_:activityID:)`` logs a direct
        /// APNs exchange: the derived `apns` record (the default) or the raw
        /// `exchange`.
        public var apnsLines: APNsLineKind
        /// Whether `exchange` lines carry credentials as ``PushExchange/redacted``
        /// (the default): the `authorization` and `proxy-authorization`
        /// request headers and a `usersig` URL query parameter. Sender logs
        /// are uploaded and kept; the credentials are nothing the pipeline reads.
        public var redactsCredentials: Bool

        public init(
            directory: URL, environment: String? = nil, maxBatchBytes: Int = 64 * 1024 * 1024,
            apnsLines: APNsLineKind = .apns, redactsCredentials: Bool = true
        ) {
            self.directory = directory
            self.environment = environment
            self.maxBatchBytes = maxBatchBytes
            self.apnsLines = apnsLines
            self.redactsCredentials = redactsCredentials
        }
    }

    /// The line a direct APNs exchange becomes.
    public enum APNsLineKind: Sendable, Equatable {
        /// The `apns` record derived here (``APNsLogRecord``).
        case apns
        /// The exchange as it happened (``PushExchange``), derived by the pipeline.
        case exchange
    }

    public enum Failure: Error, CustomStringConvertible {
        case record(APNsLogRecord.Failure)
        case exchange(PushExchange.Failure)
        case file(String)
        public var description: String {
            switch self {
            case .record(let failure): failure.description
            case .exchange(let failure): failure.description
            case .file(let message): message
            }
        }
    }

    public let configuration: Configuration
    private let lock = NSLock()
    private var batch: (file: GzipBatchFile, hour: Int64, finalName: String, directory: String)?
    private var closed: [URL] = []

    /// Final paths of the batches closed so far by this recorder.
    public var closedBatches: [URL] {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        recoverLeftovers()
    }

    /// Builds the exchange's record and appends it, or with
    /// ``Configuration/apnsLines`` set to ``APNsLineKind/exchange`` appends
    /// the exchange itself (its URL on the production or, with the
    /// configured environment `sandbox`, the sandbox host). Either way it
    /// returns the record (the pipeline derives the same one from the
    /// exchange, except that an exchange without an `apns-id` header gets
    /// `""` where this record has a new UUID). Throws when the exchange
    /// cannot make a valid record (no `aps.timestamp`, no token) or the
    /// batch cannot be written.
    @discardableResult
    public func record(_ exchange: APNsExchange, activityID: String? = nil) throws(Failure) -> APNsLogRecord {
        let record: APNsLogRecord
        do {
            record = try APNsLogRecord(
                exchange: exchange, activityID: activityID, environment: configuration.environment)
        } catch {
            throw .record(error)
        }
        switch configuration.apnsLines {
        case .apns:
            try append(record)
        case .exchange:
            try self.record(PushExchange(exchange, activityID: activityID, environment: configuration.environment))
        }
        return record
    }

    /// Appends an `exchange` line for `exchange` (with the configured
    /// environment when it has none, credentials redacted unless configured
    /// otherwise). Throws when the pipeline could derive no `apns` record
    /// from it (``PushExchange/validate()``) or the batch cannot be written.
    public func record(_ exchange: PushExchange) throws(Failure) {
        var exchange = configuration.redactsCredentials ? exchange.redactingCredentials() : exchange
        if exchange.environment == nil { exchange.environment = configuration.environment }
        let line: [UInt8]
        do { line = try exchange.jsonLine() } catch { throw .exchange(error) }
        try append(line: line, sentAt: exchange.sentAt)
    }

    /// Appends a record built elsewhere.
    public func append(_ record: APNsLogRecord) throws(Failure) {
        try append(line: record.jsonLine(), sentAt: record.sentAt)
    }

    /// Appends one line to the batch of `sentAt`'s hour: the one writer of
    /// every kind of line.
    private func append(line: [UInt8], sentAt: Date) throws(Failure) {
        let hour = BeaconTime.floorDiv(BeaconTime.milliseconds(sentAt), Milliseconds.hour)
        lock.lock()
        defer { lock.unlock() }
        do {
            if let open = batch, hour > open.hour || open.file.inputBytes + line.count > configuration.maxBatchBytes {
                try closeBatch()
            }
            if batch == nil { try openBatch(hour: hour) }
            try batch?.file.write(line)
        } catch {
            throw .file(error.description)
        }
    }

    /// Makes every record so far decodable on disk (a zlib sync flush).
    public func flush() throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        do { try batch?.file.flush() } catch { throw .file(error.description) }
    }

    /// Closes the open batch (renaming it to its final name).
    public func close() throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        do { try closeBatch() } catch { throw .file(error.description) }
    }

    private func openBatch(hour: Int64) throws(GzipBatchFile.Failure) {
        let ms = hour * Milliseconds.hour
        let day = BeaconTime.dayText(BeaconTime.dayNumber(milliseconds: ms))
        let hourOfDay = hour - BeaconTime.floorDiv(hour, 24) * 24
        let directory = configuration.directory.path + "/" + day
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let finalName = "apns-" + (hourOfDay < 10 ? "0" : "") + "\(hourOfDay)"
        var attempt = 0
        while true {
            let hidden = directory + "/." + finalName + (attempt == 0 ? "" : ".\(attempt)") + ".jsonl.gz.open"
            do {
                batch = (try GzipBatchFile(path: hidden), hour, finalName, directory)
                return
            } catch {
                // Another recorder (or a crashed one) holds this name: try the next.
                guard case .cannotCreate(_, let code) = error, code == EEXIST, attempt < 1000 else { throw error }
                attempt += 1
            }
        }
    }

    private func closeBatch() throws(GzipBatchFile.Failure) {
        guard let open = batch else { return }
        batch = nil
        try open.file.finish()
        if let target = APNsResponseRecorder.freeName(directory: open.directory, stem: open.finalName),
            rename(open.file.path, target) == 0
        {
            closed.append(URL(fileURLWithPath: target))
        }
    }

    /// `<stem>.jsonl.gz`, or `<stem>.<n>.jsonl.gz` with the first free `n`.
    private static func freeName(directory: String, stem: String) -> String? {
        for n in 0...100_000 {
            let path = directory + "/" + stem + (n == 0 ? "" : ".\(n)") + ".jsonl.gz"
            if access(path, F_OK) != 0 { return path }
        }
        return nil
    }

    /// Renames hidden `.apns-<HH>….jsonl.gz.open` batches a crashed run left.
    private func recoverLeftovers() {
        let fm = FileManager.default
        guard let days = try? fm.contentsOfDirectory(atPath: configuration.directory.path) else { return }
        for day in days where BeaconTime.dayNumber(text: day) != nil {
            let directory = configuration.directory.path + "/" + day
            for name in (try? fm.contentsOfDirectory(atPath: directory)) ?? []
            where name.hasPrefix(".apns-") && name.hasSuffix(".jsonl.gz.open") {
                let stem = String(name.dropFirst().prefix(while: { $0 != "." }))
                if let target = APNsResponseRecorder.freeName(directory: directory, stem: stem) {
                    _ = rename(directory + "/" + name, target)
                }
            }
        }
    }

    deinit {
        try? closeBatch()
    }
}

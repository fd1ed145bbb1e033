import ArrivalBeacons
import Foundation

/// Records every APNs exchange as an `apns` line in hourly gzip batches:
/// `<directory>/<YYYY-MM-DD>/apns-<HH>.jsonl.gz` (UTC), the sender layout
/// the pipeline ingests.
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
public final class APNsResponseRecorder: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var directory: URL
        /// `production` or `sandbox` written into every record; nil writes
        /// nothing (the contract's default, production).
        public var environment: String?
        /// Uncompressed bytes after which a batch is closed and a new one begun.
        public var maxBatchBytes: Int

        public init(directory: URL, environment: String? = nil, maxBatchBytes: Int = 64 * 1024 * 1024) {
            self.directory = directory
            self.environment = environment
            self.maxBatchBytes = maxBatchBytes
        }
    }

    public enum Failure: Error, CustomStringConvertible {
        case record(APNsLogRecord.Failure)
        case file(String)
        public var description: String {
            switch self {
            case .record(let failure): failure.description
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

    /// Builds the exchange's record and appends it. Throws when the exchange
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
        try append(record)
        return record
    }

    /// Appends a record built elsewhere.
    public func append(_ record: APNsLogRecord) throws(Failure) {
        let line = record.jsonLine()
        let hour = BeaconTime.floorDiv(BeaconTime.milliseconds(record.sentAt), 3_600_000)
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
        let ms = hour * 3_600_000
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

public import Foundation

/// Runs in the app: finds the beacon files no process will write again,
/// bundles them into one gzip batch for upload, and deletes them only when
/// told the upload succeeded.
///
/// A file is **closed** when
/// 1. it was rotated (`widget-<pid>.<n>.jsonl`), or
/// 2. its day directory is before today (UTC, minus ``previousDayGrace`` so
///    a write that started just before midnight has finished), or
/// 3. its process is gone: the pid in its name is not this process and
///    ``isProcessAlive`` says no such process exists. The default asks
///    `kill(pid, 0)`; a pid that exists but belongs to someone else (reused,
///    or not ours to signal) counts as alive, so a file is at worst collected
///    a day late, never while it is being written.
///
/// Batches are deterministic: the same closed files give the same bytes, so
/// a batch sent twice is skipped whole by the pipeline (same content), and a
/// record sent again inside a different batch is counted as a duplicate that
/// changes no metric. Files that are not beacon files (other names, hidden
/// files) are left alone.
public struct BeaconCollector: Sendable {
    public var container: URL
    /// This process's pid: its own live files are never collected.
    public var processID: Int32
    /// A batch stops taking files once it holds this many bytes (it always
    /// takes at least one file).
    public var maxBatchBytes: Int
    public var previousDayGrace: TimeInterval
    public var now: @Sendable () -> Date
    public var isProcessAlive: @Sendable (Int32) -> Bool

    public init(
        container: URL,
        processID: Int32 = getpid(),
        maxBatchBytes: Int = 2 * 1024 * 1024,
        previousDayGrace: TimeInterval = 60,
        now: @escaping @Sendable () -> Date = { Date() },
        isProcessAlive: @escaping @Sendable (Int32) -> Bool = BeaconCollector.processExists
    ) {
        self.container = container
        self.processID = processID
        self.maxBatchBytes = maxBatchBytes
        self.previousDayGrace = previousDayGrace
        self.now = now
        self.isProcessAlive = isProcessAlive
    }

    /// `kill(pid, 0)`: true when the process exists (also when it is not
    /// ours to signal), and for pids that cannot be a process of ours (≤ 0).
    public static func processExists(_ pid: Int32) -> Bool {
        guard pid > 0 else { return true }
        if kill(pid, 0) == 0 { return true }
        return errno != ESRCH
    }

    private var root: URL { container.appendingPathComponent(BeaconWriter.directoryName, isDirectory: true) }

    private var today: Int64 {
        BeaconTime.dayNumber(milliseconds: BeaconTime.milliseconds(now().addingTimeInterval(-previousDayGrace)))
    }

    /// The closed files, as `<day>/<name>` relative to the beacon directory, sorted.
    public func closedFiles() -> [String] {
        let fm = FileManager.default
        guard let days = try? fm.contentsOfDirectory(atPath: root.path) else { return [] }
        let today = self.today
        var alive: [Int32: Bool] = [:]
        var result: [String] = []
        for dayName in days.sorted() where !dayName.hasPrefix(".") {
            guard let day = BeaconTime.dayNumber(text: dayName),
                let names = try? fm.contentsOfDirectory(atPath: root.path + "/" + dayName)
            else { continue }
            for name in names.sorted() where !name.hasPrefix(".") {
                guard let parsed = BeaconFileName(name) else { continue }
                var isRegular = false
                var info = stat()
                if lstat(root.path + "/" + dayName + "/" + name, &info) == 0 {
                    isRegular = (info.st_mode & S_IFMT) == S_IFREG
                }
                guard isRegular else { continue }
                let closed: Bool
                if parsed.rotation != nil || day < today {
                    closed = true
                } else if parsed.processID == processID {
                    closed = false
                } else {
                    let isAlive = alive[parsed.processID] ?? isProcessAlive(parsed.processID)
                    alive[parsed.processID] = isAlive
                    closed = !isAlive
                }
                if closed { result.append(dayName + "/" + name) }
            }
        }
        return result
    }

    /// Bundles closed files into one gzip batch; nil when none is closed.
    /// Each file's bytes are copied as they are; one that ends in a torn line
    /// gets a `\n` after it, so the torn line stays one malformed line and
    /// never swallows the next file's first record.
    public func makeBatch() -> BeaconBatch? {
        var input: [UInt8] = []
        var files: [BeaconBatch.File] = []
        var unreadable: [String] = []
        for relative in closedFiles() {
            if !files.isEmpty && input.count >= maxBatchBytes { break }
            guard let data = FileManager.default.contents(atPath: root.path + "/" + relative) else {
                unreadable.append(relative)
                continue
            }
            input.append(contentsOf: data)
            let torn = !data.isEmpty && data.last != UInt8(ascii: "\n")
            if torn { input.append(UInt8(ascii: "\n")) }
            files.append(BeaconBatch.File(relativePath: relative, bytes: data.count, endedTorn: torn))
        }
        guard !files.isEmpty else { return nil }
        let lines = input.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        // zlib fails only when memory runs out; the files stay for the next call.
        guard let gzip = try? GzipWriter.gzip(input) else { return nil }
        return BeaconBatch(gzip: Data(gzip), files: files, lines: lines, unreadable: unreadable)
    }

    /// Call after the server confirmed it stored `batch`: deletes its files
    /// (each only if it still has the size it had in the batch, so bytes
    /// that arrived since are never lost) and the empty directories of past
    /// days. Returns the number of files deleted.
    @discardableResult
    public func confirmUpload(of batch: BeaconBatch) -> Int {
        var deleted = 0
        for file in batch.files {
            let path = root.path + "/" + file.relativePath
            var info = stat()
            guard lstat(path, &info) == 0, Int(info.st_size) == file.bytes else { continue }
            if unlink(path) == 0 { deleted += 1 }
        }
        let today = self.today
        if let days = try? FileManager.default.contentsOfDirectory(atPath: root.path) {
            for dayName in days {
                guard let day = BeaconTime.dayNumber(text: dayName), day < today else { continue }
                _ = rmdir(root.path + "/" + dayName)  // fails, harmlessly, unless empty
            }
        }
        return deleted
    }
}

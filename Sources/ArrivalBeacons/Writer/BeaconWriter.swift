public import Foundation

/// Appends `render` and `callback` records as JSON lines to this process's
/// file for the day: `<container>/LiveActivityBeacons/<YYYY-MM-DD>/widget-<pid>.jsonl`
/// (or `app-<pid>.jsonl`), the layout the pipeline ingests.
///
/// Made for widget extensions, which are short of memory and time and can be
/// killed at any instant:
/// - **Never blocks, never throws.** `write` hands the record to a private
///   serial queue and returns. When the queue is behind by
///   ``Configuration/maxPending`` records, or the beacon directory is full, or
///   the file cannot be opened or written, the record is dropped and counted
///   in ``statistics``; nothing reaches the caller.
/// - **Whole lines.** Each record is one `write(2)` of the complete line on a
///   file opened with `O_APPEND`, so the kernel places it at the end of the
///   file in one piece: writers in several processes never interleave inside
///   a line, and a process killed mid-stream leaves at most its last line
///   torn. A file that ends in such a torn line (a previous process with the
///   same pid was killed) gets a `\n` before the first new record, so the
///   torn fragment stays a line of its own. A process that opens the file
///   while another is in the middle of its `write(2)` may see the line half
///   copied and add that `\n` too: the result is a blank line, which the
///   pipeline skips, never a record lost or merged.
/// - **Bounded.** A file larger than ``Configuration/maxFileBytes`` is
///   rotated (renamed to `widget-<pid>.<n>.jsonl`, closed for good), and
///   nothing is written while the whole `LiveActivityBeacons` directory holds
///   more than ``Configuration/maxDirectoryBytes`` (the app's
///   ``BeaconCollector`` makes room by uploading).
///
/// Create one writer per process and role and keep it (``shared``): two
/// writers of one process append to the same file, and one rotating it away
/// would leave the other writing to a file the collector considers closed.
/// `@unchecked Sendable`: `pending` and `stats` change only under `lock`, the open file only on the serial `queue`.
public final class BeaconWriter: @unchecked Sendable {
    /// Where the writer writes and as whom, and its limits. The initializer
    /// takes what every writer needs; the limits, the process id and the
    /// clock keep the defaults written on them unless set:
    ///
    ///     var configuration = BeaconWriter.Configuration(container: container, role: .widget)
    ///     configuration.maxFileBytes = 64 * 1024
    ///     let writer = BeaconWriter(configuration)
    public struct Configuration: Sendable {
        /// The shared container: on iOS the App Group container URL.
        public var container: URL
        public var role: BeaconProcessRole
        /// Device fields added to every record that does not set its own.
        public var device: DeviceInfo
        /// The number in the file name; must be unique among live processes
        /// writing to the container. Default: the process id, which is.
        public var processID: Int32 = getpid()
        /// A file is rotated rather than grow past this. Default: 256 KiB.
        public var maxFileBytes = 256 * 1024
        /// Cap on all beacon files of all days together. Each process checks
        /// it against a measurement at most ``directoryRemeasureInterval`` old,
        /// so several processes together can overshoot it by what they wrote
        /// in that interval. Default: 4 MiB.
        public var maxDirectoryBytes = 4 * 1024 * 1024
        /// Seconds before a full directory is measured again (files may have
        /// been uploaded and deleted meanwhile). Default: 2.
        public var directoryRemeasureInterval: TimeInterval = 2
        /// Records waiting for the queue beyond this are dropped. Default: 512.
        public var maxPending = 512
        /// The clock that picks the day directory (the records carry their
        /// own times). Default: the system clock.
        public var now: @Sendable () -> Date = { Date() }
        /// The user's "More Frequent Updates" switch, read for every record
        /// that does not set its own, on the writer's queue when the record
        /// is written: its `frequent_pushes`. Default: ``FrequentPushes/system``
        /// (`ActivityAuthorizationInfo().frequentPushesEnabled` on iOS 16.2+,
        /// nil elsewhere, which writes no field).
        public var frequentPushes: FrequentPushes.Provider = FrequentPushes.system

        public init(container: URL, role: BeaconProcessRole, device: DeviceInfo = DeviceInfo()) {
            self.container = container
            self.role = role
            self.device = device
        }
    }

    /// What happened to the records handed to the writer.
    public struct Statistics: Sendable, Equatable {
        /// Records written whole.
        public var written = 0
        /// Dropped because ``Configuration/maxPending`` records were waiting.
        public var droppedBacklog = 0
        /// Dropped because the beacon directory was over its cap.
        public var droppedDirectoryFull = 0
        /// Dropped because a file could not be opened or written (a short
        /// write counts here too: its torn bytes are followed by a `\n`).
        public var failedWrites = 0
        /// Files rotated away because they reached ``Configuration/maxFileBytes``.
        public var rotations = 0
        public init() {}
        public var dropped: Int { droppedBacklog + droppedDirectoryFull + failedWrites }
    }

    public let configuration: Configuration
    /// The directory every day directory lives in: `<container>/LiveActivityBeacons`.
    public let root: URL
    let queue: DispatchQueue
    private let lock = NSLock()
    // Guarded by `lock`.
    private var pending = 0
    private var stats = Statistics()
    // Owned by `queue`.
    private var file = OpenFile.closed
    private var directoryBytes: Int?
    private var lastMeasure: Date = .distantPast

    private enum OpenFile {
        case closed
        case open(fd: Int32, day: Int64, path: String, size: Int, needsNewline: Bool)
    }

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.root = configuration.container.appendingPathComponent(BeaconWriter.directoryName, isDirectory: true)
        self.queue = DispatchQueue(label: "arrival.beacons.\(configuration.role.rawValue)", qos: .utility)
    }

    /// The name of the beacon directory inside the container.
    public static let directoryName = "LiveActivityBeacons"

    deinit {
        if case .open(let fd, _, _, _, _) = file { close(fd) }
    }

    // MARK: Writing

    /// Records that the widget showed `seq` of `activityID` now. `channelID`
    /// is the broadcast channel the activity follows, if any (an empty or nil
    /// id writes no `channel_id`).
    public func render(
        activityID: String, seq: Int, surface: String? = nil, channelID: String? = nil, at date: Date = Date()
    ) {
        write(
            RenderBeacon(
                activityID: activityID, seq: seq, renderedAt: date, surface: surface, channel: ChannelID(channelID)))
    }

    /// Records that the activity follows the broadcast channel `channelID`
    /// (a `channel_subscription` callback): call it when the app starts an
    /// activity with `pushType: .channel(channelID)`, or sees one that a
    /// push-to-start carrying `input-push-channel` started. Returns false,
    /// writing nothing, when `channelID` is empty: the contract has no
    /// subscription without a channel.
    @discardableResult
    public func reportChannelSubscription(activityID: String, channelID: String, at date: Date = Date()) -> Bool {
        guard let channel = ChannelID(channelID) else { return false }
        write(CallbackReport(.channelSubscription(activityID: activityID, channel: channel), receivedAt: date))
        return true
    }

    /// Queues `beacon`; its device fields fall back to the configuration's,
    /// and its `frequent_pushes` to what the configuration's provider reads
    /// (the provider is not asked when the beacon sets its own).
    public func write(_ beacon: RenderBeacon) {
        enqueue { [configuration] in
            beacon.jsonLine(
                defaults: configuration.device,
                frequentPushes: beacon.frequentPushes == nil ? configuration.frequentPushes() : nil)
        }
    }

    /// Queues `report`, its device fields and `frequent_pushes` filled in as a beacon's are.
    public func write(_ report: CallbackReport) {
        enqueue { [configuration] in
            report.jsonLine(
                defaults: configuration.device,
                frequentPushes: report.frequentPushes == nil ? configuration.frequentPushes() : nil)
        }
    }

    /// Waits until every record handed over so far is written or dropped.
    /// For tests, benchmarks and an app about to exit; a widget never needs it.
    public func flush() {
        queue.sync {}
    }

    /// Closes the current file and renames it as rotated, so the collector
    /// of this process can upload it now (for an app that uploads its own
    /// callbacks before being suspended).
    public func rotateNow() {
        queue.sync { rotateCurrentFile() }
    }

    public var statistics: Statistics {
        lock.lock()
        defer { lock.unlock() }
        return stats
    }

    private func count(_ change: (inout Statistics) -> Void) {
        lock.lock()
        change(&stats)
        lock.unlock()
    }

    private func enqueue(_ encode: @escaping @Sendable () -> [UInt8]) {
        lock.lock()
        guard pending < configuration.maxPending else {
            stats.droppedBacklog += 1
            lock.unlock()
            return
        }
        pending += 1
        lock.unlock()
        queue.async { [self] in
            append(encode())
            lock.lock()
            pending -= 1
            lock.unlock()
        }
    }

    // MARK: On the queue

    private func append(_ line: [UInt8]) {
        let now = configuration.now()
        let day = BeaconTime.dayNumber(milliseconds: BeaconTime.milliseconds(now))
        if case .open(let fd, let openDay, _, _, _) = file, openDay != day {
            close(fd)
            file = .closed
        }
        if case .closed = file, let opened = openFile(day: day) { file = opened }
        if case .open(_, _, _, let size, _) = file, size > 0, size + line.count > configuration.maxFileBytes {
            rotateCurrentFile()
            if let opened = openFile(day: day) { file = opened }
        }
        guard case .open(let fd, _, let path, let size, let needsNewline) = file else {
            count { $0.failedWrites += 1 }
            return
        }
        guard roomInDirectory(for: line.count, now: now) else {
            count { $0.droppedDirectoryFull += 1 }
            return
        }
        var bytes = line
        if needsNewline { bytes.insert(UInt8(ascii: "\n"), at: 0) }
        let written = BeaconWriter.writeAll(fd, bytes)
        directoryBytes = (directoryBytes ?? 0) + max(written, 0)
        if written == bytes.count {
            file = .open(fd: fd, day: day, path: path, size: size + written, needsNewline: false)
            count { $0.written += 1 }
        } else {
            // Disk full or an I/O error: whatever reached the file is a torn
            // line; the next record starts on a line of its own.
            file = .open(
                fd: fd, day: day, path: path, size: size + max(written, 0), needsNewline: written > 0 || needsNewline)
            count { $0.failedWrites += 1 }
        }
    }

    /// One `write(2)` of the whole buffer, repeated only when a signal
    /// interrupted it before anything was written. Returns the bytes written,
    /// or -1.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { buffer in
            while true {
                let result = Foundation.write(fd, buffer.baseAddress, buffer.count)
                if result < 0 && errno == EINTR { continue }
                return result
            }
        }
    }

    private func dayDirectory(_ day: Int64) -> String {
        root.path + "/" + BeaconTime.dayText(day)
    }

    /// Opens (creating it and its directories if needed) this process's file
    /// for `day`; nil if it cannot.
    private func openFile(day: Int64) -> OpenFile? {
        let directory = dayDirectory(day)
        let path = directory + "/" + BeaconFileName(role: configuration.role, processID: configuration.processID).text
        let flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC
        var fd = open(path, flags, 0o644)
        if fd < 0 && errno == ENOENT {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            fd = open(path, flags, 0o644)
        }
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            return nil
        }
        let size = Int(info.st_size)
        return .open(
            fd: fd, day: day, path: path, size: size, needsNewline: BeaconWriter.endsTorn(path: path, size: size))
    }

    /// Whether a non-empty file's last byte is not `\n` (a process was killed mid-line).
    private static func endsTorn(path: String, size: Int) -> Bool {
        guard size > 0 else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var last: UInt8 = 0
        let read = pread(fd, &last, 1, off_t(size - 1))
        return read == 1 && last != UInt8(ascii: "\n")
    }

    /// Closes the current file and renames it `<role>-<pid>.<n>.jsonl` with
    /// the first free `n`.
    private func rotateCurrentFile() {
        guard case .open(let fd, _, let path, let size, _) = file else { return }
        close(fd)
        file = .closed
        guard size > 0 else { return }
        let directory = (path as NSString).deletingLastPathComponent
        for n in 1...100_000 {
            let target =
                directory + "/"
                + BeaconFileName(role: configuration.role, processID: configuration.processID, rotation: n).text
            if access(target, F_OK) == 0 { continue }
            if rename(path, target) == 0 { count { $0.rotations += 1 } }
            return
        }
    }

    /// Whether `bytes` more fit under the directory cap, re-measuring the
    /// directory when the estimate says no and the last measurement is old.
    private func roomInDirectory(for bytes: Int, now: Date) -> Bool {
        let cap = configuration.maxDirectoryBytes
        if let known = directoryBytes, known + bytes <= cap { return true }
        if directoryBytes == nil || now.timeIntervalSince(lastMeasure) >= configuration.directoryRemeasureInterval
            || now < lastMeasure
        {
            directoryBytes = measureDirectory()
            lastMeasure = now
        }
        return (directoryBytes ?? 0) + bytes <= cap
    }

    /// The bytes in every regular file under the beacon directory.
    private func measureDirectory() -> Int {
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey], options: []
            )
        else { return 0 }
        var total = 0
        for case let url as URL in enumerator {
            guard let values = try? url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey]),
                values.isRegularFile == true
            else { continue }
            total += values.fileSize ?? 0
        }
        return total
    }
}

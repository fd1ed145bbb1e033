package import ArrivalModel
package import ArrivalStore
import Foundation

/// When a store is analysed in partitions, and how large they are.
package struct PartitionPolicy: Sendable {
    /// Requests per partition: two partitions are analysed at once, so a
    /// report's memory is bounded by the partition's size, whatever the
    /// store's (Benchmarks/report-scale/README.md measures it).
    package var rowsPerPartition: Int
    /// Stores of up to this many requests are analysed at once, which is
    /// faster and, this small, needs about as much memory as partitions.
    package var analysedWholeUpTo: Int

    /// Partitions of `rowsPerPartition` requests for any store larger than one.
    package init(rowsPerPartition: Int) {
        self.rowsPerPartition = max(1, rowsPerPartition)
        analysedWholeUpTo = self.rowsPerPartition
    }

    /// 150,000 requests a partition, stores up to 1,000,000 requests at
    /// once. `ARRIVAL_PARTITION_ROWS=N` sets both to N (tests and benchmarks
    /// compare partitioned reports with whole ones).
    package static let standard: PartitionPolicy = {
        if let text = ProcessInfo.processInfo.environment["ARRIVAL_PARTITION_ROWS"], let rows = Int(text), rows > 0 {
            return PartitionPolicy(rowsPerPartition: rows)
        }
        var policy = PartitionPolicy(rowsPerPartition: 150_000)
        policy.analysedWholeUpTo = 1_000_000
        return policy
    }()

    /// How many partitions a store of `requests` rows is analysed in (1: all
    /// at once, no files). Past ``AnalysisPartitions/maximumCount`` partitions grow instead.
    func count(requests: Int) -> Int {
        guard requests > analysedWholeUpTo else { return 1 }
        return min((requests - 1) / rowsPerPartition + 1, AnalysisPartitions.maximumCount)
    }
}

/// The analysis of a store too large to hold in memory at once, one
/// partition of its activities at a time.
///
/// Every outcome rule concerns one activity's own rows, once push tokens are
/// resolved to their owners. So:
/// 1. token owners are resolved in SQL into a temporary table
///    (``StoreSnapshot/resolveTokenOwners()``);
/// 2. one pass over each table tallies the requests (sums, by window, day
///    and hour) and writes each row an activity names, in a compact form,
///    to the file of its partition (a hash of the activity id's bytes);
/// 3. each partition is read back, in row order, into a
///    ``DeliveryAnalysis`` of its own: the same rules on the same rows in
///    the same order as one analysis of everything.
///
/// Memory is bounded by a partition (``PartitionPolicy``), not by the
/// store; the time is one pass over the tables plus one over the files.
struct AnalysisPartitions {
    /// The most partitions whose files can be open at once (those of one
    /// table are): the limit on open files, raised to its hard limit (up to
    /// 65,536), less a margin. 20,000 here, 150,000 requests each: 3 billion.
    static let maximumCount: Int = {
        var limit = rlimit()
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 256 }
        let wanted = rlim_t(1 << 16)
        if limit.rlim_cur < min(limit.rlim_max, wanted) {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, wanted)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return max(16, Int(min(limit.rlim_cur, wanted)) - 256)
    }()

    let count: Int
    /// The request tallies of the pass over all requests.
    private(set) var requests = DeliveryAnalysis.RequestTally()
    private(set) var requestsByDay: [Int64: DeliveryAnalysis.RequestTally] = [:]
    private(set) var requestsByHour: [Int64: DeliveryAnalysis.RequestTally] = [:]
    /// In-window requests without an activity: each a cluster of one (``ActivitySamples``).
    private(set) var unattributedClusters = (accepted: ClusterSums(), oversize: ClusterSums())
    private(set) var apps = Interner()
    /// The store's broadcasts, read once and expanded inside each partition over its activities.
    private(set) var broadcasts = Broadcasts()
    /// The dead tokens, with the window's requests after death counted per token.
    private(set) var deadTokens = DeadTokenTally()
    /// Request rows with a seq written to each partition: at most its updates.
    private var updateRows: [Int]
    private let tallyByDayAndHour: Bool
    private let samplingRequests: Bool
    private let files: PartitionFiles
    private let lookup: RowLookup
    private let tokenLookup: RowLookup
    private let callbackTokenLookup: RowLookup
    /// The snapshot's connection is for one thread at a time: partitions
    /// analysed on two threads reach it only through ``withConnection(_:)``.
    private let connectionLock = NSLock()

    /// The three sections of a partition's file, one per table, in the order written.
    enum Section: Int, CaseIterable { case requests, renders, callbacks }
    private typealias Table = Section

    /// Spills the store's rows into `count` partitions (step 1 and 2 above).
    init(
        snapshot: any StoreSnapshot, window: ReportWindow?, count: Int, tallyByDayAndHour: Bool, samplingRequests: Bool,
        listingDeadTokens: Bool = false
    ) throws {
        self.count = count
        self.updateRows = Array(repeating: 0, count: count)
        self.tallyByDayAndHour = tallyByDayAndHour
        self.samplingRequests = samplingRequests
        self.lookup = try snapshot.apnsIDLookup()
        self.tokenLookup = try snapshot.pushTokenLookup()
        self.callbackTokenLookup = try snapshot.callbackTokenLookup()
        files = try PartitionFiles(count: count)
        do {
            try spill(snapshot: snapshot, window: window, listingDeadTokens: listingDeadTokens)
        } catch {
            files.close()
            throw error
        }
    }

    /// Runs `body` holding the snapshot's connection alone.
    func withConnection<R>(_ body: () throws -> R) rethrows -> R {
        connectionLock.lock()
        defer { connectionLock.unlock() }
        return try body()
    }

    /// Runs `body` on every partition's analysis and hands each result to
    /// `combine` (one call at a time, in no set order: sums). Two partitions
    /// are analysed at once, on two threads (they are independent;
    /// ``PartitionPolicy`` sizes them for two in memory); `body` must reach
    /// SQLite only through ``withConnection(_:)``.
    func forEach<T>(_ body: (Int, DeliveryAnalysis) throws -> T, combine: (T) -> Void) throws {
        let state = PartitionQueue(count: count)
        withoutActuallyEscaping(body) { body in
            withoutActuallyEscaping(combine) { combine in
                // The closures run on two threads at once: `body` touches only its
                // partition and SQLite under the lock, `combine` runs under the lock.
                let shared = Unchecked((body: body, combine: combine, partitions: self))
                DispatchQueue.concurrentPerform(iterations: min(2, count)) { _ in
                    while let partition = state.next() {
                        do {
                            let analysis = try shared.value.partitions.analysis(partition)
                            let result = try shared.value.body(partition, analysis)
                            state.withLock { shared.value.combine(result) }
                        } catch {
                            state.fail(error)
                        }
                    }
                }
            }
        }
        try state.check()
    }

    /// Closes the partitions' files (already unlinked: the space is freed).
    func close() {
        files.close()
    }

    private static func partition(of bytes: UnsafeRawBufferPointer, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    private mutating func spill(snapshot: any StoreSnapshot, window: ReportWindow?, listingDeadTokens: Bool) throws {
        try snapshot.resolveTokenOwners()
        broadcasts = try Broadcasts(snapshot: snapshot, apps: &apps)
        let count = self.count
        // Every partition's file of a table is open at once: 32 MiB of buffers in all.
        let bufferBytes = max(4 << 10, min(64 << 10, (32 << 20) / count))

        var writers = (0..<count).map { SpillWriter(files, $0, buffer: bufferBytes) }
        var tallies = RequestTallies(window: window, byDayAndHour: tallyByDayAndHour)
        deadTokens = try DeadTokenTally(
            snapshot: snapshot, from: window?.from, to: window?.to, listing: listingDeadTokens)
        let checkDeaths = !deadTokens.isEmpty
        var lastTopic = LastText()
        try snapshot.forEachRequest(resolvingTokens: true, broadcasts: !broadcasts.isEmpty) { row in
            let status = row.status
            let reason = row.reason
            let seq = row.seq
            if row.isBroadcast {
                // Counted once here; each partition expands it over its own activities.
                _ = tallies.add(
                    sentAt: row.sentAt, status: status, reason: reason, payloadBytes: row.payloadBytes,
                    attributed: true, hasSeq: seq != nil, toDeadToken: false, broadcast: true)
                return
            }
            try row.withActivityBytes { activity in
                let sentAt = row.sentAt
                let inWindow = tallies.add(
                    sentAt: sentAt, status: status, reason: reason, payloadBytes: row.payloadBytes,
                    attributed: activity != nil, hasSeq: seq != nil,
                    toDeadToken: checkDeaths && row.withPushTokenBytes { deadTokens.note($0, sentAt: sentAt) })
                if inWindow && samplingRequests && activity == nil {
                    unattributedClusters.accepted.add(status == 200 ? 1 : 0, of: 1)
                    unattributedClusters.oversize.add(isOversizeFailure(status, reason) ? 1 : 0, of: 1)
                }
                guard let activity, seq != nil || (inWindow && samplingRequests) else { return }
                let oversize = isOversizeFailure(status, reason)
                let event: UInt8 =
                    switch row.event {
                    case "end": 2
                    case "start": 1
                    default: 0
                    }
                let app = row.topic(through: &lastTopic) { DeliveryAnalysis.app(ofTopic: $0, in: &apps) } ?? 0
                var flags: UInt8 = 0
                if status == 200 { flags |= 1 }
                if seq != nil { flags |= 2 }
                if inWindow { flags |= 4 }
                if oversize { flags |= 8 }
                let priority = row.priority
                if priority != nil { flags |= 16 }
                let partition = Self.partition(of: activity, count: count)
                if seq != nil { updateRows[partition] += 1 }
                writers[partition].beginRecord()
                writers[partition].bytes(activity)
                writers[partition].byte(flags)
                writers[partition].byte(event)
                writers[partition].byte(UInt8(truncatingIfNeeded: row.providerIndex))
                writers[partition].int(Int64(app))
                writers[partition].int(seq ?? 0)
                writers[partition].int(row.sentAt)
                writers[partition].int(row.apsTimestamp)
                writers[partition].int(priority ?? 0)
                writers[partition].int(row.rowID)
                try writers[partition].endRecord()
            }
        }
        tallies.finish()
        (requests, requestsByDay, requestsByHour) = (tallies.window, tallies.byDay, tallies.byHour)
        try files.endSection(.requests, writers: &writers)

        try spillEvidence(.renders, bufferBytes: bufferBytes, snapshot.forEachRender) { row, writer in
            writer.int(row.seq)
            writer.int(row.renderedAt)
            writer.int(row.rowID)
        }
        try spillEvidence(.callbacks, bufferBytes: bufferBytes, snapshot.forEachCallback) { row, writer in
            let seq = row.seq
            let kind = DeliveryAnalysis.CallbackKind(row.callback, state: row.state)
            writer.byte(kind.rawValue)
            writer.byte(seq == nil ? 0 : 1)
            writer.int(seq ?? 0)
            writer.int(row.receivedAt)
            writer.int(row.rowID)
        }
    }

    /// Spills the rows of a table of device evidence (renders, callbacks)
    /// that name an activity: the activity, the table's own `fields`, the
    /// OS and app versions, the "More Frequent Updates" switch, whether the
    /// row names a channel, then (when the store has broadcasts) the channel.
    private func spillEvidence<Row: DeviceEvidenceRow>(
        _ table: Table, bufferBytes: Int, _ scan: ((Row) throws -> Void) throws -> Void,
        fields: (Row, inout SpillWriter) -> Void
    ) throws {
        let count = self.count
        // The channel is spilled only when a broadcast could need it.
        let withChannels = !broadcasts.isEmpty
        var writers = (0..<count).map { SpillWriter(files, $0, buffer: bufferBytes) }
        try withoutActuallyEscaping(fields) { fields in
            try scan { row in
                try row.withText(0) { activity in
                    guard let activity else { return }
                    let partition = Self.partition(of: activity, count: count)
                    writers[partition].beginRecord()
                    writers[partition].bytes(activity)
                    fields(row, &writers[partition])
                    row.withText(1) { writers[partition].bytes($0) }
                    row.withText(2) { writers[partition].bytes($0) }
                    row.withFrequentPushesBytes { writers[partition].bytes($0) }
                    writers[partition].byte(row.hasChannel ? 1 : 0)
                    if withChannels { row.withChannelBytes { writers[partition].bytes($0) } }
                    try writers[partition].endRecord()
                }
            }
        }
        try files.endSection(table, writers: &writers)
    }

    /// The analysis of partition `partition` (step 3): its rows read back in
    /// row order, table by table, as the analysis of everything reads them.
    func analysis(_ partition: Int) throws -> DeliveryAnalysis {
        var analysis = DeliveryAnalysis(partitionNumberingAppsAs: apps, broadcasts: broadcasts)
        // With broadcasts, renders and callbacks name activities of their own:
        // a subscriber may have no direct request.
        let withBroadcasts = !broadcasts.isEmpty
        var channels = ChannelLookup()
        analysis.reserve(updates: updateRows[partition])
        let lookup = self.lookup
        let apnsID = { (row: Int64) throws -> String in try self.withConnection { try lookup.text(ofRow: row) } }
        let tokenLookup = self.tokenLookup
        let pushToken = { (row: Int64) throws -> String in
            try self.withConnection { try tokenLookup.text(ofRow: row) }
        }
        let callbackLookup = self.callbackTokenLookup
        let callbackToken = { (row: Int64) throws -> String in
            try self.withConnection { try callbackLookup.text(ofRow: row) }
        }
        // Rows of one activity often follow each other: its number is found by
        // comparing bytes with the last row's before making a String.
        var lastName: [UInt8] = []
        var lastActivity: Int32?
        func activity(_ reader: borrowing SpillReader, _ name: Range<Int>, interning: Bool) -> Int32? {
            if let lastActivity, reader.bytes(name, equal: lastName) { return lastActivity }
            let text = reader.string(name)
            let id = interning ? analysis.intern(activity: text) : analysis.activityNames.id(of: text)
            lastName = reader.copy(name)
            lastActivity = id
            return id
        }

        var reader = SpillReader(files, partition, .requests)
        while try reader.nextRecord() {
            let name = try reader.text() ?? 0..<0
            let flags = try reader.byte()
            let event = try reader.byte()
            let provider = try reader.byte()
            let app = Int32(truncatingIfNeeded: try reader.int())
            let seq = try reader.int()
            let sentAt = try reader.int()
            let apsTimestamp = try reader.int()
            let priority = try reader.int()
            let rowID = try reader.int()
            let accepted = flags & 1 != 0
            if samplingRequests && flags & 4 != 0 {
                analysis.noteCluster(
                    reader.string(name),
                    DeliveryAnalysis.RequestCluster(
                        total: 1, accepted: accepted ? 1 : 0, oversizeFailures: flags & 8 != 0 ? 1 : 0))
            }
            guard flags & 2 != 0, let activity = activity(reader, name, interning: true) else { continue }
            if tallyByDayAndHour { analysis.noteRequestRow(rowID, activity: activity) }
            try analysis.consider(
                DeliveryAnalysis.Update(
                    activity: activity, seq: seq, accepted: accepted, at: sentAt, apsTimestamp: apsTimestamp,
                    isEnd: event == 2, isStart: event == 1, app: app, priority: flags & 16 != 0 ? priority : nil,
                    provider: provider, pickRow: rowID),
                apnsID: apnsID, pushToken: pushToken)
        }
        lastActivity = nil
        reader = SpillReader(files, partition, .renders)
        while try reader.nextRecord() {
            let name = try reader.text() ?? 0..<0
            let seq = try reader.int()
            let renderedAt = try reader.int()
            let rowID = try reader.int()
            let evidence = try EvidenceFields(&reader, withChannel: withBroadcasts)
            guard let activity = activity(reader, name, interning: withBroadcasts) else { continue }
            if let channel = evidence.channel,
                let number = reader.withBytes(channel, { channels.channel($0, in: broadcasts) })
            {
                analysis.noteSubscription(activity: activity, channel: number)
            }
            if tallyByDayAndHour { analysis.noteRenderRow(rowID, activity: activity) }
            analysis.considerRender(
                activity: activity, seq: seq, at: renderedAt, os: { evidence.os.map { reader.string($0) } },
                appVersion: { evidence.appVersion.map { reader.string($0) } },
                frequentPushes: { evidence.frequentPushes.map { reader.string($0) } }, subscribed: evidence.subscribed)
        }
        lastActivity = nil
        reader = SpillReader(files, partition, .callbacks)
        while try reader.nextRecord() {
            let name = try reader.text() ?? 0..<0
            let kind = DeliveryAnalysis.CallbackKind(rawValue: try reader.byte()) ?? .other
            let hasSeq = try reader.byte() != 0
            let seq = try reader.int()
            let receivedAt = try reader.int()
            let rowID = try reader.int()
            let evidence = try EvidenceFields(&reader, withChannel: withBroadcasts)
            guard let activity = activity(reader, name, interning: withBroadcasts) else { continue }
            if let channel = evidence.channel,
                let number = reader.withBytes(channel, { channels.channel($0, in: broadcasts) })
            {
                analysis.noteSubscription(activity: activity, channel: number)
            }
            analysis.considerCallback(
                activity: activity, kind: kind, seq: hasSeq ? seq : nil, at: receivedAt, row: rowID,
                os: { evidence.os.map { reader.string($0) } },
                appVersion: { evidence.appVersion.map { reader.string($0) } },
                frequentPushes: { evidence.frequentPushes.map { reader.string($0) } }, subscribed: evidence.subscribed)
        }
        try analysis.finish(
            apnsID: apnsID, pushToken: pushToken, callbackToken: callbackToken,
            prefetch: { requests, callbacks in
                try self.withConnection {
                    try tokenLookup.prefetch(requests)
                    try callbackLookup.prefetch(callbacks)
                }
            })
        return analysis
    }
}

/// The device fields a spilled render or callback ends with (``AnalysisPartitions``' `spillEvidence`),
/// as places in the reader's record.
private struct EvidenceFields {
    var os: Range<Int>?
    var appVersion: Range<Int>?
    var frequentPushes: Range<Int>?
    var subscribed: Bool
    var channel: Range<Int>?

    init(_ reader: inout SpillReader, withChannel: Bool) throws {
        os = try reader.text()
        appVersion = try reader.text()
        frequentPushes = try reader.text()
        subscribed = try reader.byte() != 0
        channel = withChannel ? try reader.text() : nil
    }
}

/// A value shared by the threads of ``AnalysisPartitions/forEach(_:combine:)``,
/// which keep to its rules (see there).
private struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The partitions still to analyse, shared by the threads of
/// ``AnalysisPartitions/forEach(_:combine:)``, and the first error.
private final class PartitionQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var upcoming = 0
    private let count: Int
    private var error: (any Error)?

    init(count: Int) { self.count = count }

    /// The next partition, or nil when all are taken or one failed.
    func next() -> Int? {
        lock.withLock {
            guard error == nil, upcoming < count else { return nil }
            defer { upcoming += 1 }
            return upcoming
        }
    }

    func withLock(_ body: () -> Void) { lock.withLock(body) }

    func fail(_ failure: any Error) { lock.withLock { if error == nil { error = failure } } }

    func check() throws { if let error = lock.withLock({ error }) { throw error } }
}

/// One temporary file per partition, in `TMPDIR`, unlinked as soon as it
/// is made: what a report writes there is freed when it ends, also when it
/// is interrupted or killed. Each file holds a section per table, written
/// one after another by the passes over the tables.
final class PartitionFiles: @unchecked Sendable {
    private var descriptors: [Int32] = []
    private let directory: String
    /// Per partition, where each section ends (sections written so far).
    private var ends: [[Int]]

    init(count: Int) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "arrival-analysis-\(getpid())-\(UUID().uuidString)"
            ).path
        ends = Array(repeating: [], count: count)
        guard mkdir(directory, 0o700) == 0 else {
            throw SpillError(
                path: directory,
                reason: "cannot be made (\(String(cString: strerror(errno)))); set TMPDIR to a writable directory")
        }
        defer { rmdir(directory) }
        for partition in 0..<count {
            let path = name(partition)
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                close()
                throw SpillError(path: path, reason: "cannot be made (\(reason))")
            }
            unlink(path)
            descriptors.append(fd)
        }
    }

    deinit { close() }

    /// The name partition `partition`'s file had, for messages.
    func name(_ partition: Int) -> String { directory + "/\(partition).bin" }

    func close() {
        for fd in descriptors { closeDescriptor(fd) }
        descriptors = []
    }

    func append(_ bytes: UnsafeRawBufferPointer, to partition: Int) throws {
        var done = 0
        while done < bytes.count {
            let count = write(descriptors[partition], bytes.baseAddress! + done, bytes.count - done)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw SpillError(path: name(partition), reason: String(cString: strerror(errno)))
            }
            done += count
        }
    }

    func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int, of partition: Int) throws {
        var done = 0
        while done < bytes.count {
            let count = pread(
                descriptors[partition], bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                throw SpillError(
                    path: name(partition), reason: count == 0 ? "ends early" : String(cString: strerror(errno)))
            }
            done += count
        }
    }

    /// Ends the section `table` of every partition: flushes its writers and notes where it ends.
    fileprivate func endSection(_ table: AnalysisPartitions.Section, writers: inout [SpillWriter]) throws {
        for partition in writers.indices {
            try writers[partition].flush()
            precondition(ends[partition].count == table.rawValue, "sections are written in order")
            ends[partition].append((ends[partition].last ?? 0) + writers[partition].written)
        }
    }

    /// The bytes of section `index` of partition `partition`'s file.
    func section(_ index: Int, of partition: Int) -> Range<Int> {
        let start = index == 0 ? 0 : ends[partition][index - 1]
        return start..<ends[partition][index]
    }
}

/// `close(2)`, which ``PartitionFiles/close()`` hides inside the class.
private func closeDescriptor(_ fd: Int32) {
    close(fd)
}

/// Why a partition's file could not be written or read back.
struct SpillError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "the analysis' temporary file '\(path)': \(reason)" }
}

/// Appends records of varint numbers and length-prefixed texts to a file,
/// through a buffer. A record is framed by
/// its length, so that a reader can hold it whole.
private struct SpillWriter {
    private let files: PartitionFiles
    private let partition: Int
    private var buffer: [UInt8] = []
    private let flushAt: Int
    private var recordStart = 0
    /// Bytes written to the file so far.
    private(set) var written = 0

    init(_ files: PartitionFiles, _ partition: Int, buffer bytes: Int) {
        self.files = files
        self.partition = partition
        flushAt = bytes
        buffer.reserveCapacity(bytes + 1024)
    }

    mutating func beginRecord() {
        recordStart = buffer.count
        buffer.append(contentsOf: [0, 0, 0, 0])
    }

    mutating func endRecord() throws {
        let length = UInt32(buffer.count - recordStart - 4).littleEndian
        withUnsafeBytes(of: length) { bytes in
            for (offset, byte) in bytes.enumerated() { buffer[recordStart + offset] = byte }
        }
        if buffer.count >= flushAt { try flush() }
    }

    mutating func byte(_ value: UInt8) { buffer.append(value) }

    /// A number as a zigzag varint: seqs and lengths take a byte, times six.
    mutating func int(_ value: Int64) {
        var rest = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        while rest >= 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        buffer.append(UInt8(rest))
    }

    /// A text as its length (-1: none) and bytes.
    mutating func bytes(_ text: UnsafeRawBufferPointer?) {
        guard let text else { return int(-1) }
        int(Int64(text.count))
        buffer.append(contentsOf: text)
    }

    mutating func flush() throws {
        try buffer.withUnsafeBytes { try files.append($0, to: partition) }
        written += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Reads back what a ``SpillWriter`` wrote, a record at a time: the
/// record's bytes stay in place until the next ``nextRecord()``, so its
/// texts are ranges, made Strings only when needed.
private struct SpillReader {
    private let files: PartitionFiles
    private let partition: Int
    /// The bytes of the file not yet read.
    private var unread: Range<Int>
    private var buffer: [UInt8] = []
    private var position = 0
    private var recordEnd = 0

    /// Reads the section `table` of partition `partition`'s file.
    init(_ files: PartitionFiles, _ partition: Int, _ table: AnalysisPartitions.Section) {
        self.files = files
        self.partition = partition
        unread = files.section(table.rawValue, of: partition)
    }

    private var path: String { files.name(partition) }

    /// Makes `count` bytes available at `position`; false at the end of the section.
    private mutating func ensure(_ count: Int) throws -> Bool {
        while buffer.count - position < count {
            if unread.isEmpty { return false }
            buffer.removeSubrange(0..<position)
            recordEnd -= position
            position = 0
            let chunk = min(unread.count, max(1 << 20, count))
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: chunk))
            try buffer.withUnsafeMutableBytes { bytes in
                try files.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: bytes[start..<start + chunk]), at: unread.lowerBound,
                    of: partition)
            }
            unread = unread.lowerBound + chunk..<unread.upperBound
        }
        return true
    }

    /// Moves to the next record, read whole; false at the end of the file.
    mutating func nextRecord() throws -> Bool {
        position = max(position, recordEnd)
        guard try ensure(4) else {
            if buffer.count > position { throw SpillError(path: path, reason: "ends inside a record") }
            return false
        }
        var length: UInt32 = 0
        for offset in 0..<4 { length |= UInt32(buffer[position + offset]) << (8 * offset) }
        position += 4
        guard try ensure(Int(length)) else { throw SpillError(path: path, reason: "ends inside a record") }
        recordEnd = position + Int(length)
        return true
    }

    private mutating func take(_ count: Int) throws -> Int {
        guard position + count <= recordEnd else { throw SpillError(path: path, reason: "a record is too short") }
        defer { position += count }
        return position
    }

    mutating func byte() throws -> UInt8 { buffer[try take(1)] }

    mutating func int() throws -> Int64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = buffer[try take(1)]
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
            guard shift < 64 else { throw SpillError(path: path, reason: "a number is longer than 10 bytes") }
        }
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// The next text, as a range of the record's bytes; nil for none.
    mutating func text() throws -> Range<Int>? {
        let count = try int()
        guard count >= 0 else { return nil }
        let at = try take(Int(count))
        return at..<at + Int(count)
    }

    func string(_ range: Range<Int>) -> String {
        buffer.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool {
        range.count == other.count && buffer[range].elementsEqual(other)
    }

    func copy(_ range: Range<Int>) -> [UInt8] { Array(buffer[range]) }

    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

}

/// Analyses of two stores side by side, partition by partition: an activity
/// falls in the same partition on both sides, so the updates of the two can
/// be matched one partition at a time (`diff --records`).
package enum PartitionedAnalyses {
    /// Calls `body` with the analyses of each partition of `a` and `b` (one
    /// pair when both are small enough to analyse at once).
    package static func forEachPair(
        _ a: any StoreReader, _ windowA: ReportWindow?, _ b: any StoreReader, _ windowB: ReportWindow?,
        partitioning: PartitionPolicy = .standard,
        _ body: (DeliveryAnalysis, DeliveryAnalysis) throws -> Void
    ) throws {
        try a.read { snapshotA in
            try b.read { snapshotB in
                let count = max(
                    partitioning.count(requests: try snapshotA.analysisRowEstimate()),
                    partitioning.count(requests: try snapshotB.analysisRowEstimate()))
                guard count > 1 else {
                    return try body(
                        try DeliveryAnalysis(snapshot: snapshotA, window: windowA),
                        try DeliveryAnalysis(snapshot: snapshotB, window: windowB))
                }
                let partitionsA = try AnalysisPartitions(
                    snapshot: snapshotA, window: windowA, count: count, tallyByDayAndHour: false,
                    samplingRequests: false)
                defer { partitionsA.close() }
                let partitionsB = try AnalysisPartitions(
                    snapshot: snapshotB, window: windowB, count: count, tallyByDayAndHour: false,
                    samplingRequests: false)
                defer { partitionsB.close() }
                for partition in 0..<count {
                    try body(try partitionsA.analysis(partition), try partitionsB.analysis(partition))
                }
            }
        }
    }
}

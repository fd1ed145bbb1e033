import ArrivalModel
import ArrivalStore
import Foundation

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
    /// OS and app versions, the "More Frequent Updates" switch, the device, whether the
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
                    row.withDeviceBytes { writers[partition].bytes($0) }
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
                frequentPushes: { evidence.frequentPushes.map { reader.string($0) } },
                device: { evidence.device.map { reader.string($0) } }, subscribed: evidence.subscribed)
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
                frequentPushes: { evidence.frequentPushes.map { reader.string($0) } },
                device: { evidence.device.map { reader.string($0) } }, subscribed: evidence.subscribed)
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
    var device: Range<Int>?
    var subscribed: Bool
    var channel: Range<Int>?

    init(_ reader: inout SpillReader, withChannel: Bool) throws {
        os = try reader.text()
        appVersion = try reader.text()
        frequentPushes = try reader.text()
        device = try reader.text()
        subscribed = try reader.byte() != 0
        channel = withChannel ? try reader.text() : nil
    }
}

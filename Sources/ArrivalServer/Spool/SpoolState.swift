import ArrivalModel
import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything about a ``Spool`` that changes while it runs, in one value
/// behind the spool's one lock: what is queued (by sequence, by role, by
/// content hash), what is arriving, the room reserved, the sequences taken,
/// the records each segment still holds, the open segment, the checkpoint
/// and the disk's state. Its methods are the spool's bookkeeping; the
/// spool's own methods do the I/O around them.
struct SpoolState {
    typealias Entry = Spool.Entry
    typealias Failure = Spool.Failure

    /// Where the segments are (``SpoolFiles/segmentPath(_:in:)``).
    let segmentsPath: String
    let maxBytes: Int
    let segmentBytes: Int

    private(set) var entries: [UInt64: Entry] = [:]
    /// Queued sequences in arrival order, one queue per role that uploads:
    /// the worker takes runs from each in turn (``next(_:maxBytes:role:)``).
    private var orders: [Role: [UInt64]] = [.device: [], .sender: []]
    private var queuedBytes = 0
    /// Uploads and bytes queued, per role.
    private var queuedByRole: [Role: (uploads: Int, bytes: Int)] = [:]
    /// How many queued uploads have each content hash.
    private var queuedByHash: [String: Int] = [:]
    /// …of them, those a sender token sent.
    private var queuedBySenderHash: [String: Int] = [:]
    /// Uploads written and synced, whose store question is not answered
    /// yet (not queued yet), per content hash, and those of a sender token:
    /// an upload of the same bytes meanwhile is their duplicate.
    private var arrivingByHash: [String: Int] = [:]
    private var arrivingBySenderHash: [String: Int] = [:]
    private var reservedBytes = 0
    var nextSequence: UInt64 = 1
    private var nextPart: UInt64 = 1
    /// Sequences taken by uploads being written or synced, not yet queued.
    private var inFlight: Set<UInt64> = []
    /// Records in each segment not yet ingested (written, queued or in flight).
    var pending: [UInt64: Int] = [:]
    /// The segment small uploads are appended to.
    private var active: SegmentFile?
    /// The sequence up to which everything is ingested, as the checkpoint file says.
    var lastCheckpoint: UInt64 = 0
    /// Free bytes on the spool's file system when a write last failed for
    /// want of room; nil while writes succeed (``Spool/acceptsUploads``).
    var noSpaceFreeBytes: Int?
    /// Whether the spool let go of its lock file (``Spool/releaseLock()``).
    var lockReleased = false
    /// Uploads set aside: the store refused them alone, attempt after
    /// attempt (``Spool/setAside(_:reason:)``). Out of the queue, but their
    /// bytes stay (their segments are kept) and the checkpoint stays before
    /// them, so the next start reads them again and tries each once more.
    private(set) var setAside: [UInt64: SetAside] = [:]
    /// Their bytes, still on disk: they count toward ``maxBytes`` as queued ones do.
    private var setAsideBytes = 0
    /// What the `rejected` file said at start: uploads set aside by an
    /// earlier run of the collector, by sequence (tried once more, then set
    /// aside again at their first failure).
    var setAsideBefore: [UInt64: SetAside] = [:]

    init(segmentsPath: String, maxBytes: Int, segmentBytes: Int) {
        self.segmentsPath = segmentsPath
        self.maxBytes = maxBytes
        self.segmentBytes = segmentBytes
    }

    // MARK: - Queue

    mutating func add(_ entry: Entry) {
        queuedByHash[entry.sha256, default: 0] += 1
        if entry.role.mayUploadSenderRecords { queuedBySenderHash[entry.sha256, default: 0] += 1 }
        entries[entry.sequence] = entry
        let role = Self.queueRole(entry.role)
        var order = orders.removeValue(forKey: role) ?? []
        // Sequences are taken in increasing order: an upload almost always goes last.
        if let last = order.last, last > entry.sequence {
            order.insert(entry.sequence, at: order.firstIndex { $0 > entry.sequence } ?? order.count)
        } else {
            order.append(entry.sequence)
        }
        orders[role] = order
        queuedBytes += entry.byteCount
        queuedByRole[role, default: (0, 0)].uploads += 1
        queuedByRole[role, default: (0, 0)].bytes += entry.byteCount
    }

    /// Takes an ingested upload out of the queue and its segment's count.
    mutating func remove(_ entry: Entry) {
        guard entries.removeValue(forKey: entry.sequence) != nil else { return }
        // The worker removes in arrival order: the entry is almost always the first.
        let role = Self.queueRole(entry.role)
        if orders[role]?.first == entry.sequence {
            orders[role]?.removeFirst()
        } else if let index = orders[role]?.firstIndex(of: entry.sequence) {
            orders[role]?.remove(at: index)
        }
        queuedBytes -= entry.byteCount
        queuedByRole[role, default: (0, 0)].uploads -= 1
        queuedByRole[role, default: (0, 0)].bytes -= entry.byteCount
        Self.decrement(&queuedByHash, entry.sha256)
        if entry.role.mayUploadSenderRecords { Self.decrement(&queuedBySenderHash, entry.sha256) }
        release(segment: entry.segment)
    }

    /// The oldest queued uploads in arrival order (of one role's uploads,
    /// or of all): at most `limit`, and no more than `maxBytes` of them
    /// together (but always the first).
    func next(_ limit: Int, maxBytes: Int, role: Role?, excluding held: Set<UInt64> = []) -> [Entry] {
        var taken: [Entry] = []
        var bytes = 0
        let queued =
            role.map { Array((orders[$0] ?? []).prefix(limit + held.count)) }
            ?? Array(orders.values.joined().sorted().prefix(limit + held.count))
        for sequence in queued where !held.contains(sequence) {
            guard taken.count < limit, let entry = entries[sequence] else { continue }
            if !taken.isEmpty, bytes + entry.byteCount > maxBytes { break }
            bytes += entry.byteCount
            taken.append(entry)
        }
        return taken
    }

    /// The sequence up to which every upload is ingested: before the oldest
    /// one still queued, arriving or set aside.
    var ingestedThrough: UInt64 {
        (orders.values.compactMap(\.first)
            + [inFlight.min() ?? nextSequence, setAside.keys.min() ?? nextSequence, nextSequence]).min()! - 1
    }

    // MARK: - Set aside

    /// Takes a queued upload out of the queue and sets it aside, its bytes
    /// kept; false when it is not queued.
    mutating func setAside(_ entry: Entry, reason: String, at time: Int64, attempts: Int) -> Bool {
        guard let queued = entries[entry.sequence] else { return false }
        let role = Self.queueRole(queued.role)
        guard let index = orders[role]?.firstIndex(of: queued.sequence) else { return false }
        orders[role]?.remove(at: index)
        entries[queued.sequence] = nil
        queuedBytes -= queued.byteCount
        queuedByRole[role, default: (0, 0)].uploads -= 1
        queuedByRole[role, default: (0, 0)].bytes -= queued.byteCount
        Self.decrement(&queuedByHash, queued.sha256)
        if queued.role.mayUploadSenderRecords { Self.decrement(&queuedBySenderHash, queued.sha256) }
        setAside[queued.sequence] = SetAside(entry: queued, reason: reason, at: time, attempts: attempts)
        setAsideBytes += queued.byteCount
        return true
    }

    /// The set-aside upload with these bytes, if any (the latest).
    func setAsideEntry(sha256: String) -> SetAside? {
        setAside.values.filter { $0.entry.sha256 == sha256 }.max { $0.entry.sequence < $1.entry.sequence }
    }

    /// Every upload set aside, oldest first.
    var setAsideEntries: [SetAside] { setAside.values.sorted { $0.entry.sequence < $1.entry.sequence } }

    /// The queued upload with these bytes, if any.
    func queuedEntry(sha256: String) -> Entry? {
        guard queuedByHash[sha256] != nil else { return nil }
        return entries.values.filter { $0.sha256 == sha256 }.min { $0.sequence < $1.sequence }
    }

    var depth: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?) {
        let oldest = orders.values.compactMap(\.first).min()
        return (entries.count, queuedBytes, oldest.flatMap { entries[$0]?.receivedAt })
    }

    var depthByRole: [Role: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?)] {
        var depth: [Role: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?)] = [:]
        for (role, order) in orders {
            let queued = queuedByRole[role] ?? (0, 0)
            depth[role] = (queued.uploads, queued.bytes, order.first.flatMap { entries[$0]?.receivedAt })
        }
        return depth
    }

    func hasQueued(_ role: Role) -> Bool { !(orders[Self.queueRole(role)]?.isEmpty ?? true) }

    /// The queue an upload of `role` waits in: a read token never uploads, its (impossible) upload would be a device's.
    private static func queueRole(_ role: Role) -> Role { role.mayUploadSenderRecords ? .sender : .device }

    // MARK: - Arriving

    /// An upload written and synced, not yet queued: whether bytes queued
    /// (or arriving) by a token allowed at least what this one is make it a
    /// duplicate (a device token's copy is not one for a sender: its apns
    /// lines were refused). It counts as arriving until ``queueArrived(_:)``.
    mutating func arrive(_ entry: Entry) -> Bool {
        let sender = entry.role.mayUploadSenderRecords
        let seen =
            sender
            ? (queuedBySenderHash[entry.sha256] ?? 0) + (arrivingBySenderHash[entry.sha256] ?? 0) > 0
            : (queuedByHash[entry.sha256] ?? 0) + (arrivingByHash[entry.sha256] ?? 0) > 0
        arrivingByHash[entry.sha256, default: 0] += 1
        if sender { arrivingBySenderHash[entry.sha256, default: 0] += 1 }
        return seen
    }

    /// The arriving upload is queued; writes succeed again.
    mutating func queueArrived(_ entry: Entry) {
        Self.decrement(&arrivingByHash, entry.sha256)
        if entry.role.mayUploadSenderRecords { Self.decrement(&arrivingBySenderHash, entry.sha256) }
        inFlight.remove(entry.sequence)
        add(entry)
        noSpaceFreeBytes = nil
    }

    /// An upload written but not acknowledged (its sync failed) leaves the accounts.
    mutating func abandon(_ entry: Entry) {
        inFlight.remove(entry.sequence)
        release(segment: entry.segment)
    }

    // MARK: - Room

    /// Refuses an upload whose declared length does not fit beside what is
    /// queued and arriving (reserving nothing). An empty spool takes any
    /// upload the size limit allows.
    func checkRoom(_ bytes: Int) throws(Failure) {
        let held = queuedBytes + setAsideBytes + reservedBytes
        guard held + bytes <= maxBytes || held == 0 else {
            throw .full(retryAfterSeconds: 30)
        }
    }

    /// Reserves room for bytes that arrived.
    mutating func reserveMore(_ bytes: Int) throws(Failure) {
        guard queuedBytes + setAsideBytes + reservedBytes + bytes <= maxBytes else {
            throw .full(retryAfterSeconds: 30)
        }
        reservedBytes += bytes
    }

    mutating func release(_ bytes: Int) { reservedBytes -= bytes }

    // MARK: - Segments

    /// Makes a large upload's file a segment of its own, under the sequence it takes.
    mutating func queue(_ part: Spill) throws(Failure) -> (UInt64, SegmentFile) {
        let sequence = takeSequence()
        let path = SpoolFiles.segmentPath(sequence, in: segmentsPath)
        guard rename(part.path, path) == 0 else {
            inFlight.remove(sequence)
            throw .writing("cannot queue the upload")
        }
        pending[sequence] = 1
        return (sequence, SegmentFile(fd: part.takeDescriptor(), id: sequence, path: path))
    }

    /// Appends a small upload to the open segment (opening one when there
    /// is none or it is full): its sequence is taken and it is written in
    /// one step, so a segment's records are in sequence order. Returns the
    /// segment and whether it is new.
    mutating func append(_ entry: inout Entry, body: ByteBuffer) throws(Failure) -> (SegmentFile, Bool) {
        let record = RecordHeader.size(nameBytes: entry.name.utf8.count) + body.readableBytes
        let file: SegmentFile
        var opened = false
        if let active, active.size + record <= segmentBytes {
            file = active
        } else {
            retireActive()
            let id = nextSequence
            let path = SpoolFiles.segmentPath(id, in: segmentsPath)
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .writing("cannot create a spool segment") }
            file = SegmentFile(fd: fd, id: id, path: path)
            active = file
            pending[id] = 0
            opened = true
        }
        entry.sequence = takeSequence()
        var bytes = RecordHeader.encode(entry, reserving: body.readableBytes)
        bytes.writeImmutableBuffer(body)
        let offset = file.size
        guard bytes.withUnsafeReadableBytes({ SpoolFiles.writeAll(file.fd, $0, at: offset) }) else {
            // What was written of the record ends the segment's reading: none may follow it.
            let failure = Failure.writing("cannot write the upload to the spool")
            inFlight.remove(entry.sequence)
            retireActive()
            throw failure
        }
        file.size += bytes.readableBytes
        pending[file.id, default: 0] += 1
        entry.segment = file.id
        entry.offset = offset + bytes.readableBytes - body.readableBytes
        return (file, opened)
    }

    /// After a failed sync the kernel may have dropped the segment's unwritten pages while later
    /// syncs succeed: no record may follow this one in that segment.
    mutating func retire(_ file: SegmentFile) {
        if active?.id == file.id { retireActive() }
    }

    /// One record of `segment` is done with: the segment is deleted once none is left and it is not open.
    private mutating func release(segment: UInt64) {
        pending[segment, default: 1] -= 1
        if pending[segment] == 0, segment != active?.id {
            pending[segment] = nil
            unlink(SpoolFiles.segmentPath(segment, in: segmentsPath))
        }
    }

    /// The open segment takes no more records; it is deleted now if all of its records are ingested.
    private mutating func retireActive() {
        guard let file = active else { return }
        active = nil
        if pending[file.id] == 0 {
            pending[file.id] = nil
            unlink(file.path)
        }
    }

    private mutating func takeSequence() -> UInt64 {
        defer { nextSequence += 1 }
        inFlight.insert(nextSequence)
        return nextSequence
    }

    mutating func takePart() -> UInt64 {
        defer { nextPart += 1 }
        return nextPart
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        counts[key, default: 1] -= 1
        if counts[key] == 0 { counts[key] = nil }
    }
}

/// An upload the store refused alone, attempt after attempt, and set aside
/// with its bytes kept (Documentation/Collector.md, "An upload set aside").
struct SetAside: Sendable, Equatable, Codable {
    var entry: Spool.Entry
    /// The store's reason, as its last attempt failed.
    var reason: String
    /// When it was set aside, in milliseconds since the Unix epoch.
    var at: Int64
    /// How many times it was tried alone.
    var attempts: Int
}

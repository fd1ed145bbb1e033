import ArrivalModel
import CDispatch
import Crypto
import Foundation
import Hummingbird

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Uploads received and not yet ingested, in files that survive a crash.
///
/// Uploads are appended, each as one record (a header naming its content
/// hash, name, role and sequence, then its bytes), to segment files in
/// `segments/`, named by the sequence of their first record. A small upload
/// is held in memory while it arrives and appended to the open segment with
/// one write; one larger than ``inlineBytes`` is written to `incoming/` as
/// it arrives and becomes a segment of its own. Appending costs no file
/// creation: creating and renaming files per upload would bound the
/// collector under load.
///
/// Records are made durable together (group commit): one `fdatasync` of
/// each segment written to, and of the directory when a segment was added,
/// covers every upload that finished arriving while the previous round ran,
/// and only after it returned is any of them acknowledged.
///
/// On start, every record whose header checks out and whose bytes still
/// have the hash its header names is queued again; a record a crash cut
/// short was never acknowledged and ends its segment's reading, and
/// `incoming/` is emptied. The ingest worker takes uploads in sequence
/// order; a segment is deleted once every record in it is ingested, and the
/// `checkpoint` file names the sequence up to which everything is, so a
/// restart does not read ingested records again (a checkpoint a crash lost
/// only makes the next start ingest those bytes again, which stores nothing
/// twice).
final class Spool: @unchecked Sendable {
    struct Entry: Sendable, Equatable {
        var sequence: UInt64
        var sha256: String
        var name: String
        var role: Role
        var byteCount: Int
        /// Milliseconds since the Unix epoch.
        var receivedAt: Int64
        /// The segment holding the upload, and where its bytes start in it.
        var segment: UInt64
        var offset: Int
    }

    enum Failure: Error, Equatable {
        case empty
        case tooLarge(limit: Int)
        case full(retryAfterSeconds: Int)
        /// The spool's file system has no room (ENOSPC, EDQUOT): back-pressure, not a fault.
        case noSpace(retryAfterSeconds: Int)
        /// The client stopped sending before the body's end (it hung up, or
        /// sent fewer bytes than its Content-Length): nothing was acknowledged.
        case aborted(String)
        /// A limit of the connection's passed (``ConnectionDeadlines``).
        case timedOut(String)
        /// Another process holds the spool's lock.
        case inUse(String)
        case io(String)

        /// The failure for the `errno` of a failed write or sync: a full disk is back-pressure.
        static func writing(_ what: String) -> Failure {
            if errno == ENOSPC || errno == EDQUOT { return .noSpace(retryAfterSeconds: Spool.noSpaceRetrySeconds) }
            return .io("\(what): \(Spool.errorText())")
        }
    }

    /// What `Retry-After` says when the spool's disk is full.
    static let noSpaceRetrySeconds = 10

    /// A segment is closed to new records once it holds this many bytes.
    let segmentBytes: Int
    /// Uploads up to this size are held in memory until they are complete:
    /// with many clients at once, memory stays within this times the
    /// requests in flight.
    let inlineBytes: Int

    let root: URL
    let maxBytes: Int
    /// What opening the spool found and removed, for the log.
    private(set) var recoveryNotes: [String] = []

    private let incomingPath: String
    private let segmentsPath: String
    private let checkpointFile: Int32
    /// The spool's lock file, held (`flock`) for the life of the process:
    /// one collector per spool. The kernel lets go of it when the process dies.
    private let lockFile: Int32
    /// Free bytes on the spool's file system when a write last failed for
    /// want of room; nil while writes succeed. Uploads and `/readyz` are
    /// answered 503 until room returns (``acceptsUploads``).
    private var noSpaceFreeBytes: Int?

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
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
    private var nextSequence: UInt64 = 1
    private var nextPart: UInt64 = 1
    /// Sequences taken by uploads being written or synced, not yet queued.
    private var inFlight: Set<UInt64> = []
    /// Records in each segment not yet ingested (written, queued or in flight).
    private var pending: [UInt64: Int] = [:]
    /// The segment small uploads are appended to.
    private var active: SegmentFile?
    private var lastCheckpoint: UInt64 = 0
    private let syncer: GroupSync

    /// Signals the ingest worker that an upload was queued.
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    /// Opens (creating) the spool at `directory` and recovers what a crash left.
    init(directory: String, maxBytes: Int, segmentBytes: Int = 64 << 20, inlineBytes: Int = 256 << 10)
        throws(Failure)
    {
        root = URL(fileURLWithPath: directory, isDirectory: true)
        incomingPath = root.appendingPathComponent("incoming", isDirectory: true).path
        segmentsPath = root.appendingPathComponent("segments", isDirectory: true).path
        self.maxBytes = maxBytes
        self.segmentBytes = segmentBytes
        self.inlineBytes = inlineBytes
        (arrivals, arrived) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let files = FileManager.default
        do {
            try files.createDirectory(atPath: root.path, withIntermediateDirectories: true)
        } catch {
            throw .io("cannot open the spool '\(directory)': \(error.localizedDescription)")
        }
        // The lock first: nothing of the spool is touched (incoming/ emptied, segments
        // read) while another collector may be using it.
        let lockFD = try Self.lock(root.appendingPathComponent("lock").path, directory: directory)
        lockFile = lockFD
        // A spool that fails to open lets go of its lock (deinit does not run then).
        var opened = false
        defer { if !opened { close(lockFD) } }
        do {
            try files.createDirectory(atPath: incomingPath, withIntermediateDirectories: true)
            try files.createDirectory(atPath: segmentsPath, withIntermediateDirectories: true)
        } catch {
            throw .io("cannot open the spool '\(directory)': \(error.localizedDescription)")
        }
        let earlier = root.appendingPathComponent("queued").path
        if let left = try? files.contentsOfDirectory(atPath: earlier), !left.isEmpty {
            throw .io(
                "the spool '\(directory)' holds \(left.count) files in queued/, written by a development build "
                    + "of the collector before segments; let that build drain them first")
        }
        let directoryFD = open(segmentsPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw .io("cannot open the spool's segments: \(Self.errorText())") }
        syncer = GroupSync(directoryFD: directoryFD)
        let checkpointPath = root.appendingPathComponent("checkpoint").path
        checkpointFile = open(checkpointPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard checkpointFile >= 0 else { throw .io("cannot open the spool's checkpoint: \(Self.errorText())") }

        for name in (try? files.contentsOfDirectory(atPath: incomingPath)) ?? [] {
            unlink(incomingPath + "/" + name)  // never acknowledged
        }
        lastCheckpoint = Self.readCheckpoint(checkpointFile)
        var highest = lastCheckpoint
        let names: [String]
        do {
            names = try files.contentsOfDirectory(atPath: segmentsPath).sorted()
        } catch {
            throw .io("cannot read the spool's segments: \(error.localizedDescription)")
        }
        for name in names {
            let path = segmentsPath + "/" + name
            guard name.hasSuffix(".seg"), let id = UInt64(name.dropLast(4)) else {
                recoveryNotes.append("\(path): not a segment, left alone")
                continue
            }
            let scan = Self.scan(path: path, segment: id, after: lastCheckpoint)
            recoveryNotes += scan.notes
            highest = max(highest, scan.highestSequence)
            if scan.entries.isEmpty {
                unlink(path)
                continue
            }
            pending[id] = scan.entries.count
            for entry in scan.entries { add(entry) }
        }
        nextSequence = highest + 1
        if !entries.isEmpty { arrived.yield() }
        opened = true
    }

    deinit {
        close(checkpointFile)
        releaseLock()
    }

    private var lockReleased = false

    /// Lets go of the spool's lock, as the process's end does: another
    /// collector may then open the spool. This one takes no upload after it.
    func releaseLock() {
        let release = lock.withLock {
            defer { lockReleased = true }
            return !lockReleased
        }
        guard release else { return }
        flock(lockFile, LOCK_UN)
        close(lockFile)
    }

    /// Takes the spool's lock, or names the process that holds it. The lock
    /// file holds the holder's process id, for that message only: the lock
    /// itself is the kernel's (`flock`), so a crashed collector's is gone.
    private static func lock(_ path: String, directory: String) throws(Failure) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot open the spool's lock file '\(path)': \(errorText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 64, 0) }
            close(fd)
            guard reason == EWOULDBLOCK || reason == EAGAIN else {
                throw .io("cannot lock the spool '\(directory)': \(String(cString: strerror(reason)))")
            }
            let holder = count > 0 ? String(decoding: bytes[..<count], as: UTF8.self).trimmingASCIIWhitespace : ""
            throw .inUse(
                "the spool '\(directory)' is in use by another collector"
                    + (holder.isEmpty ? "" : " (process \(holder))"))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { writeAll(fd, $0, at: 0) }
        return fd
    }

    // MARK: - Receiving

    /// Receives one upload: its bytes, hashed on the way, made durable in
    /// the spool. `declaredLength` (the request's Content-Length) lets an
    /// upload over the limit, or one the spool has no room for, be refused
    /// before its body is read. Returns the entry and what was known of its
    /// bytes *before* it was queued: in the spool already (`.queued`), or
    /// stored (`.stored`, as `storedBefore` answers, asked before the upload
    /// is queued, so the worker cannot have ingested this very upload by
    /// then), or neither (`.new`). Of several uploads of the same bytes at
    /// once, the first to be durable is the new one and the others its
    /// duplicates.
    func receive<Body: AsyncSequence>(
        _ body: Body, declaredLength: Int?, name: String?, role: Role, maxUploadBytes: Int,
        storedBefore: @Sendable (_ sha256: String) async -> Bool = { _ in false }
    ) async throws(Failure) -> (entry: Entry, seen: Seen) where Body.Element == ByteBuffer {
        try admit(declaredLength: declaredLength, maxUploadBytes: maxUploadBytes)
        var reserved = 0
        defer { release(reserved) }
        // A record's header has room for the name, or for the hash that names an unnamed upload.
        let headerBytes = RecordHeader.size(nameBytes: name?.utf8.count ?? 64)
        var hasher = SHA256()
        var count = 0
        var inline = ByteBuffer()
        var spill: Spill?
        defer { spill?.discard() }
        do {
            for try await buffer in body {
                count += buffer.readableBytes
                if count > maxUploadBytes { throw Failure.tooLarge(limit: maxUploadBytes) }
                if count > reserved {
                    try reserveMore(count - reserved)
                    reserved = count
                }
                buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                if spill == nil, count > inlineBytes {
                    spill = try Spill(path: "\(incomingPath)/\(takePart()).part", headerBytes: headerBytes)
                    try spill?.write(inline)
                    inline = ByteBuffer()
                }
                if let spill {
                    try spill.write(buffer)
                } else {
                    var buffer = buffer
                    inline.writeBuffer(&buffer)
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch let deadline as DeadlineExceeded {
            throw .timedOut(deadline.message)
        } catch {
            throw .aborted("the client stopped sending after \(count) bytes (\(error))")
        }
        // A body cut short can look ended: the server closing the connection's input on
        // shutdown ends it without an error. Only a body of its declared length counts.
        if Task.isCancelled { throw .aborted("the collector stopped before the upload's end") }
        if let declaredLength, count != declaredLength {
            throw .aborted("the body ended after \(count) of the \(declaredLength) bytes its Content-Length declared")
        }
        guard count > 0 else { throw .empty }
        let sha256 = Self.hex(hasher.finalize())
        let receivedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let name = name ?? sha256
        // Its sequence and place are set where it is written.
        var entry = Entry(
            sequence: 0, sha256: sha256, name: name, role: role, byteCount: count, receivedAt: receivedAt, segment: 0,
            offset: 0)
        let file: SegmentFile
        let newFile: Bool
        if let part = spill {
            // A large upload becomes a segment of its own: its header, then the bytes already written.
            (entry.sequence, file) = try queue(part)
            spill = nil
            entry.segment = file.id
            entry.offset = headerBytes
            newFile = true
            guard RecordHeader.encode(entry).withUnsafeReadableBytes({ Self.writeAll(file.fd, $0, at: 0) }) else {
                let failure = Failure.writing("cannot write the upload to the spool")
                abandon(entry)
                noteWriteFailure(failure)
                throw failure
            }
        } else {
            do {
                (file, newFile) = try append(&entry, body: inline)
            } catch {
                noteWriteFailure(error)
                throw error
            }
        }
        // Durable together with every upload that finished meanwhile.
        if let failure = await syncer.sync(file, directory: newFile) {
            // After a failed sync the kernel may have dropped the segment's unwritten pages
            // while later syncs succeed: no record may follow this one in that segment.
            lock.withLock { if active?.id == file.id { retireActive() } }
            abandon(entry)
            noteWriteFailure(failure)
            throw failure
        }
        let sender = role.mayUploadSenderRecords
        let alreadyQueued = lock.withLock {
            // Bytes queued (or arriving) by a token allowed at least what this one is are a
            // duplicate; a device token's copy is not one for a sender (its apns lines were refused).
            let seen =
                sender
                ? (queuedBySenderHash[entry.sha256] ?? 0) + (arrivingBySenderHash[entry.sha256] ?? 0) > 0
                : (queuedByHash[entry.sha256] ?? 0) + (arrivingByHash[entry.sha256] ?? 0) > 0
            arrivingByHash[entry.sha256, default: 0] += 1
            if sender { arrivingBySenderHash[entry.sha256, default: 0] += 1 }
            return seen
        }
        // Asked before the upload is queued: what the store held before it, never this upload ingested.
        let stored = alreadyQueued ? false : await storedBefore(entry.sha256)
        lock.withLock {
            Self.decrement(&arrivingByHash, entry.sha256)
            if sender { Self.decrement(&arrivingBySenderHash, entry.sha256) }
            inFlight.remove(entry.sequence)
            add(entry)
            noSpaceFreeBytes = nil
        }
        arrived.yield()
        return (entry, alreadyQueued ? .queued : stored ? .stored : .new)
    }

    /// What was known of an upload's bytes before it was queued (``receive(_:declaredLength:name:role:maxUploadBytes:storedBefore:)``).
    enum Seen: Sendable, Equatable {
        case new
        /// In the spool already (queued or arriving), sent by a token allowed at least what this one is.
        case queued
        /// Stored already, as `storedBefore` answered.
        case stored

        var isDuplicate: Bool { self != .new }
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        counts[key, default: 1] -= 1
        if counts[key] == 0 { counts[key] = nil }
    }

    /// Refuses, before its body is read, an upload whose declared length is
    /// over the limit or does not fit beside what is queued and arriving.
    /// Room is reserved as bytes arrive, never for what a client only
    /// declares: a Content-Length costs nothing to send, and a public token
    /// must not be able to book the spool with uploads that never come.
    func admit(declaredLength: Int?, maxUploadBytes: Int) throws(Failure) {
        if let declaredLength, declaredLength > maxUploadBytes { throw .tooLarge(limit: maxUploadBytes) }
        if let declaredLength, declaredLength > 0 { try checkRoom(declaredLength) }
    }

    /// Makes a large upload's file a segment of its own, under the sequence it takes.
    private func queue(_ part: Spill) throws(Failure) -> (UInt64, SegmentFile) {
        lock.lock()
        defer { lock.unlock() }
        let sequence = takeSequence()
        let path = segmentPath(sequence)
        guard rename(part.path, path) == 0 else {
            inFlight.remove(sequence)
            throw .writing("cannot queue the upload")
        }
        pending[sequence] = 1
        return (sequence, SegmentFile(fd: part.takeDescriptor(), id: sequence, path: path))
    }

    /// Appends a small upload to the open segment (opening one when there
    /// is none or it is full): its sequence is taken and it is written in
    /// one step, so a segment's records are in sequence order.
    private func append(_ entry: inout Entry, body: ByteBuffer) throws(Failure) -> (SegmentFile, Bool) {
        lock.lock()
        defer { lock.unlock() }
        let record = RecordHeader.size(nameBytes: entry.name.utf8.count) + body.readableBytes
        var opened = false
        if active == nil || active!.size + record > segmentBytes {
            retireActive()
            let id = nextSequence
            let path = segmentPath(id)
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .writing("cannot create a spool segment") }
            active = SegmentFile(fd: fd, id: id, path: path)
            pending[id] = 0
            opened = true
        }
        let file = active!
        entry.sequence = takeSequence()
        var bytes = RecordHeader.encode(entry, reserving: body.readableBytes)
        bytes.writeImmutableBuffer(body)
        let offset = file.size
        guard bytes.withUnsafeReadableBytes({ Self.writeAll(file.fd, $0, at: offset) }) else {
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

    // MARK: - The worker's side

    /// The oldest queued uploads in arrival order (of one role's uploads,
    /// or of all): at most `limit`, and no more than `maxBytes` of them
    /// together (but always the first).
    func next(_ limit: Int, maxBytes: Int = .max, role: Role? = nil) -> [Entry] {
        lock.withLock {
            var taken: [Entry] = []
            var bytes = 0
            let queued: [UInt64]
            if let role {
                queued = Array((orders[role] ?? []).prefix(limit))
            } else {
                queued = Array(orders.values.joined().sorted().prefix(limit))
            }
            for sequence in queued {
                guard let entry = entries[sequence] else { continue }
                if !taken.isEmpty, bytes + entry.byteCount > maxBytes { break }
                bytes += entry.byteCount
                taken.append(entry)
            }
            return taken
        }
    }

    /// Where an upload's bytes are: a segment file and a range of it.
    func location(of entry: Entry) -> (path: String, range: Range<Int>) {
        (segmentPath(entry.segment), entry.offset..<(entry.offset + entry.byteCount))
    }

    /// Takes an upload whose ingest committed out of the spool; its segment
    /// is deleted when none of its records is left. Not synced: if a crash
    /// undoes it, the next start ingests these bytes again under the same
    /// name, which stores nothing.
    func remove(_ entry: Entry) {
        lock.withLock {
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
            queuedByHash[entry.sha256, default: 1] -= 1
            if queuedByHash[entry.sha256] == 0 { queuedByHash[entry.sha256] = nil }
            if entry.role.mayUploadSenderRecords {
                queuedBySenderHash[entry.sha256, default: 1] -= 1
                if queuedBySenderHash[entry.sha256] == 0 { queuedBySenderHash[entry.sha256] = nil }
            }
            release(segment: entry.segment)
        }
    }

    /// Records that every upload up to the oldest one still queued or
    /// arriving is ingested (the worker calls it after its removals). Not
    /// synced, for the reason ``remove(_:)`` gives.
    func checkpoint() {
        let sequence: UInt64 = lock.withLock {
            let oldest = (orders.values.map(\.first) + [inFlight.min(), nextSequence]).compactMap { $0 }.min()!
            return oldest - 1
        }
        guard sequence > lastCheckpoint else { return }
        lastCheckpoint = sequence
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: sequence.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        bytes.replaceSubrange(8..<16, with: Self.check(bytes[0..<8]))
        _ = bytes.withUnsafeBytes { Self.writeAll(checkpointFile, $0, at: 0) }
    }

    // MARK: - State

    /// The queued upload with these bytes, if any.
    func queuedEntry(sha256: String) -> Entry? {
        lock.withLock {
            guard queuedByHash[sha256] != nil else { return nil }
            return entries.values.filter { $0.sha256 == sha256 }.min { $0.sequence < $1.sequence }
        }
    }

    /// Uploads and bytes queued, and when the oldest of them arrived.
    var depth: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?) {
        lock.withLock {
            let oldest = orders.values.compactMap(\.first).min()
            return (entries.count, queuedBytes, oldest.flatMap { entries[$0]?.receivedAt })
        }
    }

    /// Uploads and bytes queued per role (device and sender), and when the
    /// oldest of each arrived.
    var depthByRole: [Role: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?)] {
        lock.withLock {
            var depth: [Role: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?)] = [:]
            for (role, order) in orders {
                let queued = queuedByRole[role] ?? (0, 0)
                depth[role] = (queued.uploads, queued.bytes, order.first.flatMap { entries[$0]?.receivedAt })
            }
            return depth
        }
    }

    /// Whether uploads of `role` wait.
    func hasQueued(_ role: Role) -> Bool {
        lock.withLock { !(orders[Self.queueRole(role)]?.isEmpty ?? true) }
    }

    /// The queue an upload of `role` waits in: a read token never uploads, its (impossible) upload would be a device's.
    private static func queueRole(_ role: Role) -> Role { role.mayUploadSenderRecords ? .sender : .device }

    // MARK: - Internals

    /// Called with `lock` held.
    private func add(_ entry: Entry) {
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

    /// An upload written but not acknowledged (its sync failed): it leaves the
    /// spool's accounts. Its bytes may still be found by the next start, which
    /// then ingests them; the client, told to retry, sends them again, and
    /// bytes ingested twice are stored once.
    private func abandon(_ entry: Entry) {
        lock.withLock {
            inFlight.remove(entry.sequence)
            release(segment: entry.segment)
        }
    }

    /// Called with `lock` held: one record of `segment` is done with.
    private func release(segment: UInt64) {
        pending[segment, default: 1] -= 1
        if pending[segment] == 0, segment != active?.id {
            pending[segment] = nil
            unlink(segmentPath(segment))
        }
    }

    /// Called with `lock` held: the open segment takes no more records; it is
    /// deleted now if all of its records are ingested.
    private func retireActive() {
        guard let file = active else { return }
        active = nil
        if pending[file.id] == 0 {
            pending[file.id] = nil
            unlink(file.path)
        }
    }

    /// Called with `lock` held.
    private func takeSequence() -> UInt64 {
        defer { nextSequence += 1 }
        inFlight.insert(nextSequence)
        return nextSequence
    }

    private func takePart() -> UInt64 {
        lock.withLock {
            defer { nextPart += 1 }
            return nextPart
        }
    }

    private func segmentPath(_ id: UInt64) -> String {
        let digits = String(id)
        return segmentsPath + "/" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".seg"
    }

    /// Refuses, before its body is read, an upload whose declared length
    /// does not fit beside what is queued and arriving (reserving nothing).
    private func checkRoom(_ bytes: Int) throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        // An empty spool takes any upload the size limit allows.
        guard queuedBytes + reservedBytes + bytes <= maxBytes || (queuedBytes == 0 && reservedBytes == 0) else {
            throw .full(retryAfterSeconds: 30)
        }
    }

    /// Reserves room for bytes that arrived.
    private func reserveMore(_ bytes: Int) throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        guard queuedBytes + reservedBytes + bytes <= maxBytes else { throw .full(retryAfterSeconds: 30) }
        reservedBytes += bytes
    }

    // MARK: - A full disk

    /// Whether the spool's file system has room for an upload: false from a
    /// write that failed for want of room until free space has grown by
    /// 1 MiB (or ``inlineBytes``, if smaller) or an upload is stored; also
    /// false below 64 KiB free.
    var acceptsUploads: Bool {
        guard let free = freeBytes() else { return true }
        return lock.withLock {
            if let before = noSpaceFreeBytes {
                guard free >= before + min(1 << 20, inlineBytes) else { return false }
                noSpaceFreeBytes = nil
            }
            return free >= 64 << 10
        }
    }

    /// Bytes an unprivileged process may still write on the spool's file system.
    func freeBytes() -> Int? {
        var info = statvfs()
        guard statvfs(root.path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    private func noteWriteFailure(_ error: Failure) {
        guard case .noSpace = error else { return }
        let free = freeBytes() ?? 0
        lock.withLock { noSpaceFreeBytes = free }
    }

    private func release(_ bytes: Int) {
        lock.withLock { reservedBytes -= bytes }
    }

    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        LowercaseHex.string(bytes)
    }

    /// The first 8 bytes of the SHA-256 of `bytes`: what tells a header or
    /// the checkpoint written in full from one cut short or damaged.
    static func check<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        Array(SHA256.hash(data: Array(bytes)).prefix(8))
    }

    static func errorText() -> String { String(cString: strerror(errno)) }

    /// Writes all of `bytes` at `offset`; false (with `errno`) when it cannot.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        var done = 0
        while done < bytes.count {
            let written = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += written
        }
        return true
    }

    private static func readCheckpoint(_ fd: Int32) -> UInt64 {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
        guard count == 16, Array(bytes[8..<16]) == check(bytes[0..<8]) else { return 0 }
        return bytes[0..<8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Reads a segment's records: those after `checkpoint` whose bytes have
    /// their hash are queued; reading stops at a header that does not check
    /// out (a record cut short by a crash, never acknowledged).
    static func scan(path: String, segment: UInt64, after checkpoint: UInt64) -> (
        entries: [Entry], highestSequence: UInt64, notes: [String]
    ) {
        var entries: [Entry] = []
        var notes: [String] = []
        var highest: UInt64 = 0
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return ([], 0, ["\(path): cannot be read (\(errorText())), left alone"]) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return ([], 0, ["\(path): cannot be examined, left alone"]) }
        let size = Int(info.st_size)
        var offset = 0
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { chunk.deallocate() }
        while offset < size {
            guard var header = RecordHeader.read(fd, at: offset, fileSize: size) else {
                notes.append(
                    "\(path): \(size - offset) bytes from byte \(offset) are not a whole record "
                        + "(an upload a crash cut short, never acknowledged); dropped")
                break
            }
            let start = offset + RecordHeader.size(nameBytes: header.name.utf8.count)
            offset = start + header.byteCount
            highest = max(highest, header.sequence)
            if header.sequence <= checkpoint { continue }
            var hasher = SHA256()
            var done = 0
            while done < header.byteCount {
                let count = pread(fd, chunk.baseAddress, min(chunk.count, header.byteCount - done), off_t(start + done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: chunk[..<count]))
                done += count
            }
            guard done == header.byteCount, hex(hasher.finalize()) == header.sha256 else {
                notes.append(
                    "\(path): upload \(header.sequence) ('\(header.name)') does not have the bytes it was "
                        + "received with (written in part when the collector stopped, never acknowledged); dropped")
                continue
            }
            header.segment = segment
            header.offset = start
            entries.append(header)
        }
        return (entries, highest, notes)
    }
}

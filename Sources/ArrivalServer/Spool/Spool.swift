import ArrivalModel
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

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
///
/// Its parts: this file opens the spool and recovers it; receiving is in
/// Spool+Receive.swift, the worker's side in Spool+Worker.swift; everything
/// that changes is one ``SpoolState`` behind one lock (``state``); the
/// files themselves are ``SpoolFiles``, ``SegmentFile``, ``Spill``,
/// ``RecordHeader`` and ``GroupSync``.
final class Spool: Sendable {
    struct Entry: Sendable, Equatable, Codable {
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
            return .io("\(what): \(SpoolFiles.errorText())")
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
    let recoveryNotes: [String]

    let incomingPath: String
    let segmentsPath: String
    let checkpointFile: Int32
    /// The spool's lock file, held (`flock`) for the life of the process:
    /// one collector per spool. The kernel lets go of it when the process dies.
    private let lockFile: Int32
    /// Everything that changes, behind one lock.
    let state: NIOLockedValueBox<SpoolState>
    let syncer: GroupSync

    /// Signals the ingest worker that an upload was queued.
    let arrivals: AsyncStream<Void>
    let arrived: AsyncStream<Void>.Continuation

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
        let lockFD = try SpoolFiles.lock(root.appendingPathComponent("lock").path, directory: directory)
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
        guard directoryFD >= 0 else { throw .io("cannot open the spool's segments: \(SpoolFiles.errorText())") }
        syncer = GroupSync(directoryFD: directoryFD)
        let checkpointPath = root.appendingPathComponent("checkpoint").path
        checkpointFile = open(checkpointPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard checkpointFile >= 0 else {
            throw .io("cannot open the spool's checkpoint: \(SpoolFiles.errorText())")
        }
        var recovered = SpoolState(segmentsPath: segmentsPath, maxBytes: maxBytes, segmentBytes: segmentBytes)
        recoveryNotes = try Self.recover(
            incomingPath: incomingPath, segmentsPath: segmentsPath, checkpointFile: checkpointFile, into: &recovered)
        // What an earlier run set aside and the recovery queued again: tried once more.
        for item in Self.readSetAside(root.appendingPathComponent("rejected.json").path)
        where recovered.entries[item.entry.sequence] != nil {
            recovered.setAsideBefore[item.entry.sequence] = item
        }
        state = NIOLockedValueBox(recovered)
        if !recovered.entries.isEmpty { arrived.yield() }
        opened = true
    }

    /// What a crash left: `incoming/` emptied (never acknowledged), every
    /// segment read past the checkpoint and its whole records queued again,
    /// empty segments deleted. Returns what was found, for the log.
    private static func recover(
        incomingPath: String, segmentsPath: String, checkpointFile: Int32, into state: inout SpoolState
    ) throws(Failure) -> [String] {
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: incomingPath)) ?? [] {
            unlink(incomingPath + "/" + name)  // never acknowledged
        }
        state.lastCheckpoint = SpoolFiles.readCheckpoint(checkpointFile)
        var highest = state.lastCheckpoint
        let names: [String]
        do {
            names = try files.contentsOfDirectory(atPath: segmentsPath).sorted()
        } catch {
            throw .io("cannot read the spool's segments: \(error.localizedDescription)")
        }
        var notes: [String] = []
        for name in names {
            let path = segmentsPath + "/" + name
            guard name.hasSuffix(".seg"), let id = UInt64(name.dropLast(4)) else {
                notes.append("\(path): not a segment, left alone")
                continue
            }
            let scan = SpoolFiles.scan(path: path, segment: id, after: state.lastCheckpoint)
            notes += scan.notes
            highest = max(highest, scan.highestSequence)
            if scan.entries.isEmpty {
                unlink(path)
                continue
            }
            state.pending[id] = scan.entries.count
            for entry in scan.entries { state.add(entry) }
        }
        state.nextSequence = highest + 1
        return notes
    }

    deinit {
        close(checkpointFile)
        releaseLock()
    }

    /// Lets go of the spool's lock, as the process's end does: another
    /// collector may then open the spool. This one takes no upload after it.
    func releaseLock() {
        let release = state.withLockedValue { state in
            defer { state.lockReleased = true }
            return !state.lockReleased
        }
        guard release else { return }
        flock(lockFile, LOCK_UN)
        close(lockFile)
    }
}

import ArrivalModel
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The ingest worker's side of the spool: the oldest uploads, where their
/// bytes are, their removal once ingested, the checkpoint; and what the
/// collector's metrics and readiness ask.
extension Spool {
    /// The oldest queued uploads in arrival order (of one role's uploads,
    /// or of all): at most `limit`, and no more than `maxBytes` of them
    /// together (but always the first).
    func next(_ limit: Int, maxBytes: Int = .max, role: Role? = nil, excluding held: Set<UInt64> = []) -> [Entry] {
        state.withLockedValue { $0.next(limit, maxBytes: maxBytes, role: role, excluding: held) }
    }

    /// Whether the upload is still queued (not ingested, not set aside).
    func isQueued(_ entry: Entry) -> Bool {
        state.withLockedValue { $0.entries[entry.sequence] != nil }
    }

    /// Where an upload's bytes are: a segment file and a range of it.
    func location(of entry: Entry) -> (path: String, range: Range<Int>) {
        (SpoolFiles.segmentPath(entry.segment, in: segmentsPath), entry.offset..<(entry.offset + entry.byteCount))
    }

    /// Takes an upload whose ingest committed out of the spool; its segment
    /// is deleted when none of its records is left. Not synced: if a crash
    /// undoes it, the next start ingests these bytes again under the same
    /// name, which stores nothing.
    func remove(_ entry: Entry) {
        state.withLockedValue { $0.remove(entry) }
    }

    /// Records that every upload up to the oldest one still queued or
    /// arriving is ingested (the worker calls it after its removals). Not
    /// synced, for the reason ``remove(_:)`` gives.
    func checkpoint() {
        let sequence: UInt64? = state.withLockedValue { state in
            let sequence = state.ingestedThrough
            guard sequence > state.lastCheckpoint else { return nil }
            state.lastCheckpoint = sequence
            return sequence
        }
        if let sequence { SpoolFiles.writeCheckpoint(sequence, to: checkpointFile) }
    }

    // MARK: - State

    /// The queued upload with these bytes, if any.
    func queuedEntry(sha256: String) -> Entry? {
        state.withLockedValue { $0.queuedEntry(sha256: sha256) }
    }

    /// Uploads and bytes queued, and when the oldest of them arrived.
    var depth: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?) {
        state.withLockedValue { $0.depth }
    }

    /// Uploads and bytes queued per role (device and sender), and when the
    /// oldest of each arrived.
    var depthByRole: [Role: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?)] {
        state.withLockedValue { $0.depthByRole }
    }

    /// Whether uploads of `role` wait.
    func hasQueued(_ role: Role) -> Bool {
        state.withLockedValue { $0.hasQueued(role) }
    }

    // MARK: - A full disk

    /// Whether the spool's file system has room for an upload: false from a
    /// write that failed for want of room until free space has grown by
    /// 1 MiB (or ``inlineBytes``, if smaller) or an upload is stored; also
    /// false below 64 KiB free.
    var acceptsUploads: Bool {
        guard let free = freeBytes() else { return true }
        let inlineBytes = inlineBytes
        return state.withLockedValue { state in
            if let before = state.noSpaceFreeBytes {
                guard free >= before + min(1 << 20, inlineBytes) else { return false }
                state.noSpaceFreeBytes = nil
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
}

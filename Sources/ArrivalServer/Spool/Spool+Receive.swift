import ArrivalModel
import Crypto
import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// Receiving an upload: its bytes hashed and reserved for as they arrive,
/// held in memory or spilled to `incoming/`, written to a segment, made
/// durable with the others of the round, and queued.
extension Spool {
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
        // A record's header has room for the name, or for the hash that names an unnamed upload.
        var taken = Taken(headerBytes: RecordHeader.size(nameBytes: name?.utf8.count ?? 64))
        defer {
            taken.spill?.discard()
            state.withLockedValue { [reserved = taken.reserved] in $0.release(reserved) }
        }
        try await take(body, into: &taken, maxUploadBytes: maxUploadBytes)
        // A body cut short can look ended: the server closing the connection's input on
        // shutdown ends it without an error. Only a body of its declared length counts.
        if Task.isCancelled { throw .aborted("the collector stopped before the upload's end") }
        if let declaredLength, taken.count != declaredLength {
            throw .aborted(
                "the body ended after \(taken.count) of the \(declaredLength) bytes its Content-Length declared")
        }
        guard taken.count > 0 else { throw .empty }
        let sha256 = SpoolFiles.hex(taken.hasher.finalize())
        // Its sequence and place are set where it is written.
        var entry = Entry(
            sequence: 0, sha256: sha256, name: name ?? sha256, role: role, byteCount: taken.count,
            receivedAt: Int64(Date().timeIntervalSince1970 * 1000), segment: 0, offset: 0)
        let (file, newFile) = try write(&entry, &taken)
        // Durable together with every upload that finished meanwhile.
        if let failure = await syncer.sync(file, directory: newFile) {
            // After a failed sync the kernel may have dropped the segment's unwritten pages
            // while later syncs succeed: no record may follow this one in that segment.
            state.withLockedValue { $0.retire(file) }
            abandon(entry)
            noteWriteFailure(failure)
            throw failure
        }
        let alreadyQueued = state.withLockedValue { $0.arrive(entry) }
        // Asked before the upload is queued: what the store held before it, never this upload ingested.
        let stored = alreadyQueued ? false : await storedBefore(entry.sha256)
        state.withLockedValue { $0.queueArrived(entry) }
        arrived.yield()
        return (entry, alreadyQueued ? .queued : stored ? .stored : .new)
    }

    /// An upload's bytes as they arrive: counted, hashed, reserved for, held
    /// in memory up to ``inlineBytes`` and spilled to `incoming/` past it.
    private struct Taken {
        let headerBytes: Int
        var count = 0
        var reserved = 0
        var hasher = SHA256()
        var inline = ByteBuffer()
        var spill: Spill?
    }

    /// Reads the body to its end into `taken`.
    private func take<Body: AsyncSequence>(
        _ body: Body, into taken: inout Taken, maxUploadBytes: Int
    ) async throws(Failure) where Body.Element == ByteBuffer {
        do {
            for try await buffer in body {
                taken.count += buffer.readableBytes
                if taken.count > maxUploadBytes { throw Failure.tooLarge(limit: maxUploadBytes) }
                if taken.count > taken.reserved {
                    let more = taken.count - taken.reserved
                    try locked { (state) throws(Failure) in try state.reserveMore(more) }
                    taken.reserved = taken.count
                }
                buffer.withUnsafeReadableBytes { taken.hasher.update(bufferPointer: $0) }
                if taken.spill == nil, taken.count > inlineBytes {
                    let part = state.withLockedValue { $0.takePart() }
                    taken.spill = try Spill(path: "\(incomingPath)/\(part).part", headerBytes: taken.headerBytes)
                    try taken.spill?.write(taken.inline)
                    taken.inline = ByteBuffer()
                }
                if let spill = taken.spill {
                    try spill.write(buffer)
                } else {
                    var buffer = buffer
                    taken.inline.writeBuffer(&buffer)
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch let deadline as DeadlineExceeded {
            throw .timedOut(deadline.message)
        } catch {
            throw .aborted("the client stopped sending after \(taken.count) bytes (\(error))")
        }
    }

    /// Writes the upload: a large one's spill becomes a segment of its own
    /// (its header, then the bytes already written), a small one is appended
    /// to the open segment. Returns the segment, and whether it is new.
    private func write(_ entry: inout Entry, _ taken: inout Taken) throws(Failure) -> (SegmentFile, Bool) {
        guard let part = taken.spill else {
            do {
                return try locked { [inline = taken.inline] (state) throws(Failure) in
                    try state.append(&entry, body: inline)
                }
            } catch {
                noteWriteFailure(error)
                throw error
            }
        }
        let (sequence, file) = try locked { (state) throws(Failure) in try state.queue(part) }
        taken.spill = nil
        entry.sequence = sequence
        entry.segment = file.id
        entry.offset = taken.headerBytes
        guard RecordHeader.encode(entry).withUnsafeReadableBytes({ SpoolFiles.writeAll(file.fd, $0, at: 0) }) else {
            let failure = Failure.writing("cannot write the upload to the spool")
            abandon(entry)
            noteWriteFailure(failure)
            throw failure
        }
        return (file, true)
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

    /// Refuses, before its body is read, an upload whose declared length is
    /// over the limit or does not fit beside what is queued and arriving.
    /// Room is reserved as bytes arrive, never for what a client only
    /// declares: a Content-Length costs nothing to send, and a public token
    /// must not be able to book the spool with uploads that never come.
    func admit(declaredLength: Int?, maxUploadBytes: Int) throws(Failure) {
        if let declaredLength, declaredLength > maxUploadBytes { throw .tooLarge(limit: maxUploadBytes) }
        if let declaredLength, declaredLength > 0 {
            try locked { (state) throws(Failure) in try state.checkRoom(declaredLength) }
        }
    }

    /// An upload written but not acknowledged (its sync failed): it leaves the
    /// spool's accounts. Its bytes may still be found by the next start, which
    /// then ingests them; the client, told to retry, sends them again, and
    /// bytes ingested twice are stored once.
    private func abandon(_ entry: Entry) {
        state.withLockedValue { $0.abandon(entry) }
    }

    /// `body` on the state, under the lock, with its typed error kept.
    private func locked<T>(_ body: (inout SpoolState) throws(Failure) -> T) throws(Failure) -> T {
        let result = state.withLockedValue { state in Result { () throws(Failure) -> T in try body(&state) } }
        return try result.get()
    }

    private func noteWriteFailure(_ error: Failure) {
        guard case .noSpace = error else { return }
        let free = freeBytes() ?? 0
        state.withLockedValue { $0.noSpaceFreeBytes = free }
    }
}

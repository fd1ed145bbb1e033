import ArrivalModel
// `stat` and its fields, as Glibc re-exports them through Dispatch on Linux.
import CDispatch
import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The spool's files, read and written without its state: segment paths,
/// whole writes, the checks that tell a record or the checkpoint written in
/// full, the lock file, and the reading of a segment on start.
enum SpoolFiles {
    static func segmentPath(_ id: UInt64, in segmentsPath: String) -> String {
        let digits = String(id)
        return segmentsPath + "/" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".seg"
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

    /// The sequence the checkpoint file names (0 when it names none whole).
    static func readCheckpoint(_ fd: Int32) -> UInt64 {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) }
        guard count == 16, Array(bytes[8..<16]) == check(bytes[0..<8]) else { return 0 }
        return bytes[0..<8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Writes the sequence with its check. Not synced (``Spool/checkpoint()``).
    static func writeCheckpoint(_ sequence: UInt64, to fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: sequence.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        bytes.replaceSubrange(8..<16, with: check(bytes[0..<8]))
        _ = bytes.withUnsafeBytes { writeAll(fd, $0, at: 0) }
    }

    /// Whether another process holds the lock of an existing spool, said as
    /// ``lock(_:directory:)`` says it; touches nothing (no directory or lock
    /// file is made), so a collector can ask before it makes anything.
    static func checkNotLocked(_ path: String, directory: String) throws(Spool.Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }  // no lock file: no collector has this spool
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0 else {
            flock(fd, LOCK_UN)
            return
        }
        guard errno == EWOULDBLOCK || errno == EAGAIN else { return }  // the real lock will say why
        throw .inUse(inUseMessage(directory: directory, holderOf: fd))
    }

    private static func inUseMessage(directory: String, holderOf fd: Int32) -> String {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 64, 0) }
        let holder = count > 0 ? String(decoding: bytes[..<count], as: UTF8.self).trimmingASCIIWhitespace : ""
        return "the spool '\(directory)' is in use by another collector"
            + (holder.isEmpty ? "" : " (process \(holder))")
    }

    /// Takes the spool's lock, or names the process that holds it. The lock
    /// file holds the holder's process id, for that message only: the lock
    /// itself is the kernel's (`flock`), so a crashed collector's is gone.
    static func lock(_ path: String, directory: String) throws(Spool.Failure) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot open the spool's lock file '\(path)': \(errorText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            defer { close(fd) }
            guard reason == EWOULDBLOCK || reason == EAGAIN else {
                throw .io("cannot lock the spool '\(directory)': \(String(cString: strerror(reason)))")
            }
            throw .inUse(inUseMessage(directory: directory, holderOf: fd))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { writeAll(fd, $0, at: 0) }
        return fd
    }

    /// Reads a segment's records: those after `checkpoint` whose bytes have
    /// their hash are queued; reading stops at a header that does not check
    /// out (a record cut short by a crash, never acknowledged).
    static func scan(path: String, segment: UInt64, after checkpoint: UInt64) -> (
        entries: [Spool.Entry], highestSequence: UInt64, notes: [String]
    ) {
        var entries: [Spool.Entry] = []
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

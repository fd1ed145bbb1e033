import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A large upload's bytes, written to `incoming/` as they arrive after room
/// for the record header, to become a segment of their own.
final class Spill {
    let path: String
    private var fd: Int32
    private var offset: Int

    init(path: String, headerBytes: Int) throws(Spool.Failure) {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        offset = headerBytes
        guard fd >= 0 else { throw .io("cannot create a file in the spool: \(SpoolFiles.errorText())") }
    }

    func write(_ buffer: ByteBuffer) throws(Spool.Failure) {
        guard buffer.withUnsafeReadableBytes({ SpoolFiles.writeAll(fd, $0, at: offset) }) else {
            throw .io("cannot write the upload to the spool: \(SpoolFiles.errorText())")
        }
        offset += buffer.readableBytes
    }

    /// Hands the open file over (to its ``SegmentFile``).
    func takeDescriptor() -> Int32 {
        defer { fd = -1 }
        return fd
    }

    /// Removes the file when it was not handed over.
    func discard() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(path)
    }
}

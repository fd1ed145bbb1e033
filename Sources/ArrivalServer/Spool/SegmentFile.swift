import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open segment file; closed when the last holder (the spool, or a sync
/// round still to flush it) lets it go.
// @unchecked: `size`, its one mutable field, changes only inside the spool's lock (SpoolState.append).
final class SegmentFile: @unchecked Sendable {
    let fd: Int32
    let id: UInt64
    let path: String
    /// Bytes written; changed only under the spool's lock.
    var size = 0

    init(fd: Int32, id: UInt64, path: String) {
        self.fd = fd
        self.id = id
        self.path = path
    }

    deinit {
        close(fd)
    }
}

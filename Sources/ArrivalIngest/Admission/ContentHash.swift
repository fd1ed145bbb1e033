import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The passes that only hash a file's bytes, for admission: "are these
/// bytes stored?" (the whole file) and "does this file begin with a stored
/// version of itself?" (its first bytes up to each version's size). A file
/// that is decoded is hashed in the same pass instead (``PrefixHasher`` fed
/// by the reader).
package enum ContentHash {
    /// Hashes a file's bytes from the start, up to `limit` bytes (all of
    /// them by default), and the first N bytes on the way for each N of
    /// `checkpoints` (a file shorter than N has none). With `range`, only
    /// those bytes of the file count.
    static func hash(of path: String, range: Range<Int>? = nil, upTo limit: Int = .max, checkpoints: [Int] = [])
        throws(InputError) -> PrefixHasher
    {
        var hasher = PrefixHasher(checkpoints: checkpoints)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        if let range, lseek(fd, off_t(range.lowerBound), SEEK_SET) < 0 {
            throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
        let limit = min(limit, range?.count ?? .max)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while hasher.byteCount < limit {
            let count = read(fd, buffer.baseAddress, min(buffer.count, limit - hasher.byteCount))
            if count < 0 {
                if errno == EINTR { continue }
                throw .readFailed(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        return hasher
    }

    /// The SHA-256 (lower-case hex) of a file's bytes as stored on disk, and its size.
    package static func sha256(of path: String, range: Range<Int>? = nil) throws(InputError) -> (String, Int) {
        let hasher = try hash(of: path, range: range)
        return (hasher.finalize(), hasher.byteCount)
    }

    /// The size of a regular file, or nil (it is read and fails there, with its reason).
    static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }
}

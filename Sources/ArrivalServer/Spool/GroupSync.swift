import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Group commit: flushes the segments written to, and the segments'
/// directory when one was added, for every caller waiting at the time. A
/// caller that arrives while a round runs waits for the next one, which then
/// covers all who came meanwhile: under load one round acknowledges many
/// uploads.
// @unchecked: every mutable field is read and written only while `lock` is held.
final class GroupSync: @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [CheckedContinuation<Spool.Failure?, Never>] = []
    private var files: [UInt64: SegmentFile] = [:]
    private var directoryChanged = false
    private var running = false
    private let directoryFD: Int32
    private let queue = DispatchQueue(label: "arrival.spool.sync")

    init(directoryFD: Int32) {
        self.directoryFD = directoryFD
    }

    deinit {
        close(directoryFD)
    }

    /// Returns once everything written to `file` before the call (and the
    /// directory entry of a new file, with `directory`) is on disk (nil), or
    /// the failure.
    func sync(_ file: SegmentFile, directory: Bool) async -> Spool.Failure? {
        await withCheckedContinuation { continuation in
            let start = lock.withLock {
                waiting.append(continuation)
                files[file.id] = file
                if directory { directoryChanged = true }
                if running { return false }
                running = true
                return true
            }
            if start { queue.async { self.loop() } }
        }
    }

    private func loop() {
        while true {
            let (batch, files, directory) = lock.withLock {
                let taken = (waiting, self.files, directoryChanged)
                waiting = []
                self.files = [:]
                directoryChanged = false
                if taken.0.isEmpty { running = false }
                return taken
            }
            if batch.isEmpty { return }
            var failure: Spool.Failure?
            for file in files.values where Self.flush(file.fd) != 0 {
                failure = .writing("cannot sync the spool")
            }
            if directory, failure == nil, fsync(directoryFD) != 0 {
                failure = .writing("cannot sync the spool's directory")
            }
            for continuation in batch { continuation.resume(returning: failure) }
        }
    }

    private static func flush(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
            // fsync on Darwin leaves the data in the drive's cache; F_FULLFSYNC does not.
            fcntl(fd, F_FULLFSYNC)
        #else
            fdatasync(fd)
        #endif
    }
}

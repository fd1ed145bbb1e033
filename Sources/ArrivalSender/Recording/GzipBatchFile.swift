import ArrivalBeacons
import Foundation

/// A gzip file being written (``GzipWriter`` on the system zlib). Only whole
/// deflate output reaches the file, and ``flush()`` makes everything given
/// so far decodable (a sync flush), so a crash loses at most what came after
/// the last flush.
final class GzipBatchFile {
    enum Failure: Error, CustomStringConvertible {
        case cannotCreate(String, errno: Int32)
        case cannotWrite(String, errno: Int32)
        case zlib(Int32)
        var description: String {
            switch self {
            case .cannotCreate(let path, let code): "cannot create '\(path)': \(String(cString: strerror(code)))"
            case .cannotWrite(let path, let code): "cannot write '\(path)': \(String(cString: strerror(code)))"
            case .zlib(let code): "zlib failed with code \(code)"
            }
        }
    }

    let path: String
    private let fd: Int32
    private var writer: GzipWriter!
    private var finished = false
    var inputBytes: Int { writer.inputBytes }

    init(path: String) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotCreate(path, errno: errno) }
        self.fd = fd
        self.path = path
        writer = GzipWriter { [fd, path] bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Foundation.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw Failure.cannotWrite(path, errno: errno) }
                offset += n
            }
        }
    }

    func write(_ bytes: [UInt8]) throws(Failure) {
        try run { try writer.write(bytes) }
    }

    func flush() throws(Failure) {
        try run { try writer.flush() }
    }

    /// Ends the gzip member and closes the file.
    func finish() throws(Failure) {
        guard !finished else { return }
        finished = true
        defer { close(fd) }
        try run { try writer.finishMember() }
    }

    private func run(_ body: () throws -> Void) throws(Failure) {
        do {
            try body()
        } catch let error as Failure {
            throw error
        } catch GzipWriter.Failure.zlib(let code) {
            throw .zlib(code)
        } catch {
            throw .zlib(-1)
        }
    }

    deinit {
        if !finished { close(fd) }
    }
}

import CZlib
import Foundation

/// A gzip file being written with the system zlib. Only whole deflate
/// output reaches the file, and ``flush()`` makes everything given so far
/// decodable (a sync flush), so a crash loses at most what came after the
/// last flush.
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
    private var stream = z_stream()
    private var finished = false
    private var out = [UInt8](repeating: 0, count: 1 << 16)
    private(set) var inputBytes = 0

    init(path: String) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotCreate(path, errno: errno) }
        guard czlib_deflate_init2(&stream, 6, 15 + 16) == Z_OK else {
            close(fd)
            throw .zlib(Z_STREAM_ERROR)
        }
        self.fd = fd
        self.path = path
    }

    func write(_ bytes: [UInt8]) throws(Failure) {
        inputBytes += bytes.count
        var failure: Failure?
        bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            do throws(Failure) { try pump(flush: Z_NO_FLUSH) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    func flush() throws(Failure) {
        stream.next_in = nil
        stream.avail_in = 0
        try pump(flush: Z_SYNC_FLUSH)
    }

    /// Ends the gzip member and closes the file.
    func finish() throws(Failure) {
        guard !finished else { return }
        finished = true
        stream.next_in = nil
        stream.avail_in = 0
        defer {
            deflateEnd(&stream)
            close(fd)
        }
        try pump(flush: Z_FINISH)
    }

    private func pump(flush: Int32) throws(Failure) {
        let capacity = out.count
        var failure: Failure?
        out.withUnsafeMutableBufferPointer { buffer in
            repeat {
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(capacity)
                let rc = deflate(&stream, flush)
                guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else {
                    failure = .zlib(rc)
                    return
                }
                let produced = capacity - Int(stream.avail_out)
                var offset = 0
                while offset < produced {
                    let n = Foundation.write(fd, buffer.baseAddress.map { $0 + offset }, produced - offset)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else {
                        failure = .cannotWrite(path, errno: errno)
                        return
                    }
                    offset += n
                }
                if flush == Z_FINISH && rc == Z_STREAM_END { break }
            } while stream.avail_out == 0 || flush == Z_FINISH
        }
        if let failure { throw failure }
    }

    deinit {
        if !finished {
            deflateEnd(&stream)
            close(fd)
        }
    }
}

import ArrivalModel
import CZlib
import Foundation

/// Writes a gzip file with the system zlib, one member or several
/// (``finishMember()`` closes one and the next write starts another, as
/// concatenated batches look).
public final class GzipFileWriter {
    public enum Failure: Error, CustomStringConvertible {
        case cannotCreate(String)
        case zlib(Int32)
        public var description: String {
            switch self {
            case .cannotCreate(let path): "cannot create '\(path)'"
            case .zlib(let code): "zlib failed with code \(code)"
            }
        }
    }

    private let handle: FileHandle
    private var stream = z_stream()
    private var memberOpen = false
    private let level: Int32
    private var out = [UInt8](repeating: 0, count: 1 << 16)

    public init(path: String, level: Int32 = 6) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path)
        else { throw Failure.cannotCreate(path) }
        self.handle = handle
        self.level = level
    }

    public func write(_ bytes: [UInt8]) throws {
        if !memberOpen {
            guard czlib_deflate_init2(&stream, level, 15 + 16) == Z_OK else { throw Failure.zlib(Z_STREAM_ERROR) }
            memberOpen = true
        }
        try bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = UInt32(input.count)
            try pump(flush: Z_NO_FLUSH)
        }
    }

    public func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    /// Ends the current member (if one is open).
    public func finishMember() throws {
        guard memberOpen else { return }
        stream.next_in = nil
        stream.avail_in = 0
        try pump(flush: Z_FINISH)
        deflateEnd(&stream)
        stream = z_stream()
        memberOpen = false
    }

    public func close() throws {
        try finishMember()
        try handle.close()
    }

    private func pump(flush: Int32) throws {
        let capacity = out.count
        try out.withUnsafeMutableBufferPointer { buffer in
            repeat {
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(capacity)
                let rc = deflate(&stream, flush)
                guard rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR else { throw Failure.zlib(rc) }
                let produced = capacity - Int(stream.avail_out)
                if produced > 0 { handle.write(Data(buffer: UnsafeBufferPointer(rebasing: buffer[0..<produced]))) }
                if flush == Z_FINISH && rc == Z_STREAM_END { break }
            } while stream.avail_out == 0 || (flush == Z_FINISH)
        }
    }

    deinit {
        if memberOpen { deflateEnd(&stream) }
    }
}

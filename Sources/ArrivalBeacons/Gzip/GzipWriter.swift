import CZlib
import Foundation

/// The project's one gzip writer, on the system zlib (which ships with every
/// Apple SDK and Linux distribution): the kit's batches, the sender's hourly
/// files and the simulator's uploads are all written through it.
///
/// Compressed bytes go to a `sink` as zlib produces them. A writer can end a
/// member and start another (``finishMember()``: concatenated batches, which
/// every reader of the pipeline accepts) and can make everything written so
/// far decodable without ending the member (``flush()``: a sync flush, so a
/// crash loses at most what came after it). The header has no name and
/// modification time 0: the same input always gives the same bytes.
public final class GzipWriter {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// zlib returned this error code.
        case zlib(Int32)
        /// The file to write could not be created.
        case cannotCreate(String)
        public var description: String {
            switch self {
            case .zlib(let code): "zlib failed with code \(code)"
            case .cannotCreate(let path): "cannot create '\(path)'"
            }
        }
    }

    /// Receives compressed bytes; an error it throws ends the write that caused it.
    public typealias Sink = (UnsafeRawBufferPointer) throws -> Void

    private let sink: Sink
    private var closeSink: (() throws -> Void)?
    private let level: Int32
    private var stream = z_stream()
    private var memberOpen = false
    private var out = [UInt8](repeating: 0, count: 1 << 16)
    /// Uncompressed bytes written so far, over every member.
    public private(set) var inputBytes = 0

    /// - Parameter level: zlib's compression level, 1 (fastest) to 9 (smallest); 6 is zlib's default.
    public init(level: Int32 = 6, sink: @escaping Sink) {
        self.level = level
        self.sink = sink
    }

    /// A writer to a new file at `path` (an existing file is replaced);
    /// ``close()`` ends the member and the file.
    public convenience init(creatingFileAt path: String, level: Int32 = 6) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw Failure.cannotCreate(path) }
        self.init(level: level) { try handle.write(contentsOf: Data($0)) }
        closeSink = { try handle.close() }
    }

    deinit {
        if memberOpen { deflateEnd(&stream) }
    }

    /// Ends the open member and closes what the writer writes to (the file of
    /// ``init(creatingFileAt:level:)``).
    public func close() throws {
        try finishMember()
        try closeSink?()
        closeSink = nil
    }

    /// Compresses `bytes`, opening a member if none is open.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if !memberOpen {
            guard czlib_deflate_init2(&stream, level, 15 + 16) == Z_OK else { throw Failure.zlib(Z_STREAM_ERROR) }
            memberOpen = true
        }
        inputBytes += bytes.count
        stream.next_in = UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress)
        stream.avail_in = UInt32(bytes.count)
        try pump(flush: Z_NO_FLUSH)
    }

    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    public func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Makes everything written so far decodable (a sync flush); the member stays open.
    public func flush() throws {
        guard memberOpen else { return }
        stream.next_in = nil
        stream.avail_in = 0
        try pump(flush: Z_SYNC_FLUSH)
    }

    /// Ends the open member, if any; the next write starts another.
    public func finishMember() throws {
        guard memberOpen else { return }
        stream.next_in = nil
        stream.avail_in = 0
        defer {
            deflateEnd(&stream)
            stream = z_stream()
            memberOpen = false
        }
        try pump(flush: Z_FINISH)
    }

    /// One gzip member holding `input`.
    public static func gzip(_ input: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 + 64)
        let writer = GzipWriter(level: level) { output.append(contentsOf: $0) }
        // An empty input still makes a member: a valid, empty gzip file.
        if input.isEmpty { try writer.write([UInt8]()) } else { try writer.write(input) }
        try writer.finishMember()
        return output
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
                if produced > 0 {
                    try sink(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[0..<produced])))
                }
                if flush == Z_FINISH && rc == Z_STREAM_END { break }
            } while stream.avail_out == 0 || flush == Z_FINISH
        }
    }
}

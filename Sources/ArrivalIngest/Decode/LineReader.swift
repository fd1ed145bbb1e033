import ArrivalHandOff
import ArrivalModel
import ArrivalStore
import CISAL
import CZlib
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line handed out by ``LineReader``: its 1-based number in the file and
/// its bytes without the line terminator (`\n` or `\r\n`), or `nil` bytes when
/// the line was longer than the limit and was skipped without being held.
package struct LineSlice {
    package var number: Int
    package var bytes: UnsafeBufferPointer<UInt8>?

    package init(number: Int, bytes: UnsafeBufferPointer<UInt8>?) {
        self.number = number
        self.bytes = bytes
    }
}

/// What reading a whole file found, besides its lines.
package struct ReadSummary: Sendable, Equatable {
    package var lines = 0
    package var bytesOnDisk = 0
    package var gzip = false
    /// The gzip stream broke off (cut short or corrupt); the lines before the
    /// break were handed out (Documentation/InputRecords.md).
    package var truncatedGzip = false
    /// Why the file's bytes cannot be trusted to be one version of the file:
    /// it was written, truncated or replaced while it was read (its size or
    /// modification time moved). Nil when it held still.
    package var changedWhileRead: String?
    /// The file passed one of the reader's limits (``LineReader/Limits``):
    /// the lines before it were handed out, the rest was not decoded (its
    /// bytes were still read, for the file's hash). Says which limit, for
    /// the malformed line `too_large` that stands for the rest.
    package var pastLimit: String?
}

/// Streams the lines of a plain or gzip file (gzip recognised by its magic
/// bytes, any number of members) with memory bounded by the chunk size plus
/// the longest line kept (``maxLineBytes``), however large the file.
package struct LineReader: Sendable {
    package static let defaultChunkSize = 1 << 18
    package static let defaultMaxLineBytes = 1 << 20

    package var chunkSize: Int
    package var maxLineBytes: Int
    /// How much of one file is decoded at most.
    package var limits = Limits()

    /// How much of one file is decoded, at most: past either limit the
    /// lines before it are kept and the rest of the file is not decoded
    /// (``ReadSummary/pastLimit``). What keeps one upload (a gzip bomb, a
    /// million records in a millisecond) from holding the collector's
    /// ingest for long; none for `arrival ingest` unless asked.
    package struct Limits: Sendable, Equatable {
        /// Bytes decoded: the inflated bytes of a gzip file, the file's own bytes otherwise.
        package var inflatedBytes: Int = .max
        /// Lines, blank ones included.
        package var lines: Int = .max

        package init(inflatedBytes: Int = .max, lines: Int = .max) {
            precondition(inflatedBytes >= 0 && lines >= 0)
            self.inflatedBytes = inflatedBytes
            self.lines = lines
        }

        package static let none = Limits()
    }

    package init(chunkSize: Int = LineReader.defaultChunkSize, maxLineBytes: Int = LineReader.defaultMaxLineBytes) {
        precondition(chunkSize >= 16 && maxLineBytes >= 1)
        self.chunkSize = chunkSize
        self.maxLineBytes = maxLineBytes
    }

    /// How a ``scan(path:range:raw:afterFirstChunk:body:)`` ended.
    package enum Ending: Equatable {
        /// Read to its end, or to one of ``limits`` (``ReadSummary/pastLimit``).
        case read(ReadSummary)
        /// `afterFirstChunk` or the line body said to stop: the rest was not read.
        case stopped
        /// ISA-L handed out bytes of a damaged gzip stream that zlib, the
        /// reading the contract holds to, does not: everything handed out of
        /// the file is void; scan it again with ``fastInflate`` off.
        case readAgainWithZlib
    }

    /// Reads `path` and calls `body` for every line, in order, until it
    /// returns false.
    ///
    /// `raw` sees every byte of the file as read from disk, in order and
    /// exactly once, before any inflating (ingest hashes them): the bytes
    /// decoded are the bytes it saw, even when the file changes meanwhile.
    /// After a gzip stream breaks off, the rest of the file is still read for
    /// `raw`.
    ///
    /// With `range`, only those bytes of the file are read, as if they were a
    /// file of their own (an upload in one of the collector's spool
    /// segments); the rest of the file may grow meanwhile, but the range must
    /// be there in full.
    ///
    /// `afterFirstChunk` is called once the first chunk was read and given
    /// to `raw`, before any line is decoded, with whether that chunk is the
    /// whole file; false stops there (ingest stops a file whose bytes it has
    /// seen before).
    package func scan(
        path: String, range: Range<Int>? = nil, raw: (UnsafeRawBufferPointer) -> Void = { _ in },
        afterFirstChunk: (_ wholeFile: Bool) -> Bool = { _ in true },
        body: (LineSlice) -> Bool
    ) throws(InputError) -> Ending {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        if let range, lseek(fd, off_t(range.lowerBound), SEEK_SET) < 0 {
            throw .readFailed(path: path, reason: String(cString: strerror(errno)))
        }
        let opened = range == nil ? FileState(fd) : nil
        var lines = LimitedSplitter(splitter: LineSplitter(maxLineBytes: maxLineBytes), limits: limits)
        var summary = ReadSummary()
        let input = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { input.deallocate() }
        func next() throws -> Int {
            let limit = range.map { min(chunkSize, $0.count - summary.bytesOnDisk) } ?? chunkSize
            let count = limit > 0 ? try Self.readChunk(fd: fd, into: input, limit: limit, path: path) : 0
            summary.bytesOnDisk += count
            raw(UnsafeRawBufferPointer(start: input, count: count))
            return count
        }
        do {
            let first = try next()
            // A read of less than a chunk met the end of the file (``readChunk``).
            guard afterFirstChunk(range.map { summary.bytesOnDisk == $0.count } ?? (first < chunkSize)) else {
                return .stopped
            }
            do {
                summary.gzip = first >= 2 && input[0] == 0x1f && input[1] == 0x8b
                lines.gzip = summary.gzip
                summary.truncatedGzip = try split(
                    first: first, input: input, path: path,
                    source: FileBytes(fd: fd, start: range?.lowerBound ?? 0, count: range?.count),
                    size: range?.count ?? opened?.size ?? 0, into: &lines, next: next, body)
                summary.lines = lines.lineNumber
            } catch LimitedSplitter.Unwind.pastLimit(let lines, let problem) {
                // What is past the limit is not decoded, but it is part of the file's bytes.
                summary.truncatedGzip = false
                summary.pastLimit = problem
                summary.lines = lines
                while try next() > 0 {}
            }
        } catch LimitedSplitter.Unwind.stopped {
            return .stopped
        } catch is ReadAgainWithZlib {
            return .readAgainWithZlib
        } catch let error as InputError {
            throw error
        } catch {
            throw .readFailed(path: path, reason: "\(error)")
        }
        try Self.checkWhole(&summary, path: path, range: range, opened: opened, fd: fd)
        return .read(summary)
    }

    /// ``scan(path:range:raw:afterFirstChunk:body:)`` for a caller whose work on
    /// a line may fail: the first error `afterFirstChunk` or `body` throws
    /// ends the read and is thrown again; a stream ISA-L and zlib read
    /// differently throws ``ReadAgainWithZlib``.
    package func read(
        path: String, range: Range<Int>? = nil, raw: (UnsafeRawBufferPointer) -> Void = { _ in },
        afterFirstChunk: (_ wholeFile: Bool) throws -> Void = { _ in },
        _ body: (LineSlice) throws -> Void
    ) throws -> ReadSummary {
        var failure: (any Error)?
        func attempt(_ work: () throws -> Void) -> Bool {
            do { try work() } catch {
                failure = error
                return false
            }
            return true
        }
        let ending = try scan(
            path: path, range: range, raw: raw,
            afterFirstChunk: { wholeFile in attempt { try afterFirstChunk(wholeFile) } },
            body: { line in attempt { try body(line) } })
        if let failure { throw failure }
        switch ending {
        case .read(let summary): return summary
        case .readAgainWithZlib: throw ReadAgainWithZlib(path: path)
        case .stopped: preconditionFailure("only a callback that failed stops the read, and its error was thrown")
        }
    }

    /// Splits the file's bytes into `lines`, a gzip stream (`lines.gzip`)
    /// inflated first; returns whether that stream broke off.
    private func split(
        first: Int, input: UnsafeMutablePointer<UInt8>, path: String, source: FileBytes, size: Int,
        into lines: inout LimitedSplitter, next: () throws -> Int, _ body: (LineSlice) -> Bool
    ) throws -> Bool {
        var truncated = false
        if lines.gzip {
            truncated = try inflateFile(
                input: input, firstCount: first, path: path, source: source, size: size, next: next
            ) { chunk in try lines.feed(chunk, body) }
            // What follows a break is not decoded, but it is part of the file's bytes.
            while try next() > 0 {}
        } else {
            var count = first
            while count > 0 {
                try lines.feed(UnsafeBufferPointer(start: input, count: count), body)
                count = try next()
            }
        }
        try lines.finish(body)
        return truncated
    }

    /// Inflates a gzip file into `feed`, on a thread of its own when it is
    /// large enough (``pipelineMinimumBytes``); returns whether the stream
    /// broke off.
    private func inflateFile(
        input: UnsafeMutablePointer<UInt8>, firstCount: Int, path: String, source: FileBytes, size: Int,
        next: () throws -> Int, _ feed: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws -> Bool {
        if size >= pipelineMinimumBytes {
            // Inflating on a thread of its own while this one splits and decodes.
            return try inflatePipelined(
                input: input, firstCount: firstCount, path: path, source: source, next: next, feed)
        }
        let output = InflateBuffer(capacity: chunkSize)
        return try inflateAll(input: input, firstCount: firstCount, path: path, next: next, into: output) { count in
            try feed(UnsafeBufferPointer(start: output.bytes, count: count))
            return output
        }
    }

    /// After a whole read: a range must have been there in full; a file must
    /// have held still (``ReadSummary/changedWhileRead``).
    private static func checkWhole(
        _ summary: inout ReadSummary, path: String, range: Range<Int>?, opened: FileState?, fd: Int32
    ) throws(InputError) {
        guard let range else {
            summary.changedWhileRead = opened?.change(since: FileState(fd), bytesRead: summary.bytesOnDisk)
            return
        }
        if summary.bytesOnDisk != range.count {
            throw .readFailed(
                path: path,
                reason: "it ends \(range.count - summary.bytesOnDisk) bytes before the end of bytes "
                    + "\(range.lowerBound)..<\(range.upperBound)")
        }
    }

    /// Reads up to `limit` bytes, fewer only at the end of the file: at the
    /// file's position, or at `offset` without moving it.
    static func readChunk(
        fd: Int32, into buffer: UnsafeMutablePointer<UInt8>, limit: Int, at offset: Int? = nil, path: String
    ) throws -> Int {
        var filled = 0
        while filled < limit {
            let n =
                offset.map { pread(fd, buffer + filled, limit - filled, off_t($0 + filled)) }
                ?? posixRead(fd, buffer + filled, limit - filled)
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw InputError.readFailed(path: path, reason: String(cString: strerror(errno)))
            }
            filled += n
        }
        return filled
    }

    /// Gzip files at least this large (on disk) are inflated on a thread of
    /// their own, so that one large file keeps both cores busy; smaller ones
    /// (a device's beacon files) are not worth a thread each.
    package var pipelineMinimumBytes = 1 << 20

    /// Whether such a file is inflated with ISA-L (the default), about twice
    /// as fast as zlib, or with zlib like every other file. Where the two
    /// would read a damaged stream differently, ``read(path:range:raw:_:)``
    /// throws ``ReadAgainWithZlib`` and the file is read again without it.
    package var fastInflate = true

    /// Thrown when ISA-L handed out bytes of a damaged gzip stream that zlib,
    /// the reading the contract holds to, does not: everything handed out of
    /// the file is void, and it must be read again with ``fastInflate`` off.
    package struct ReadAgainWithZlib: Error, CustomStringConvertible {
        package var path: String
        package var description: String {
            "'\(path)': its gzip stream is damaged in a way ISA-L reads further than zlib; read it again with zlib"
        }
    }

    /// Inflates every gzip member on a thread of its own, handing the
    /// inflated chunks to `emit` on this one through a bounded queue
    /// (memory: a few chunks); returns whether the stream broke off. `next`
    /// (reading, and `raw`) runs on the inflating thread, never at the same
    /// time as anything else that touches what it touches, and both are done
    /// with before this returns.
    private func inflatePipelined(
        input: UnsafeMutablePointer<UInt8>, firstCount: Int, path: String, source: FileBytes,
        next: () throws -> Int, _ emit: (UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws -> Bool {
        let full = BatchChannel<InflateBuffer>(capacity: 16)
        let free = BatchChannel<InflateBuffer>(capacity: 20)
        let done = DispatchSemaphore(value: 0)
        let chunkSize = self.chunkSize
        return try withoutActuallyEscaping(next) { next in
            let work = InflateWork(next: next, input: input)
            let inflater = Thread { [self] in
                defer {
                    full.close()
                    done.signal()
                }
                struct Stopped: Error {}
                do {
                    var filling = InflateBuffer(capacity: chunkSize)
                    let next = { try work.next?() ?? 0 }
                    let fill = { (count: Int) throws -> InflateBuffer in
                        filling.count = count
                        guard full.send(filling) else { throw Stopped() }
                        filling = free.poll() ?? InflateBuffer(capacity: chunkSize)
                        return filling
                    }
                    let truncated =
                        fastInflate
                        ? try inflateAllFast(
                            input: work.input, firstCount: firstCount, path: path, source: source, next: next,
                            into: filling, fill)
                        : try inflateAll(
                            input: work.input, firstCount: firstCount, path: path, next: next, into: filling, fill)
                    work.result = .success(truncated)
                } catch {
                    work.result = .failure(error)
                }
            }
            inflater.stackSize = 1 << 20
            inflater.start()
            do {
                while let chunk = full.receive() {
                    try emit(UnsafeBufferPointer(start: chunk.bytes, count: chunk.count))
                    free.offer(chunk)
                }
            } catch {
                full.cancel()
                done.wait()
                work.next = nil
                throw error
            }
            done.wait()
            work.next = nil
            return try work.result.get()
        }
    }

    /// ``inflateAll(input:firstCount:path:next:into:_:)`` with ISA-L's
    /// inflate, faster than zlib's (README, "Dependencies, and why"), for as long as the stream is
    /// whole. Where it breaks off (cut short, corrupt, bytes after a member
    /// that are no member), what is read is zlib's reading, as for every
    /// other file: zlib inflates the member from its start again (read from
    /// `source`, not hashed again), its bytes up to what ISA-L handed out
    /// are skipped, and the rest is handed out as zlib reads it. Should zlib
    /// stop before the bytes ISA-L handed out (a damage the two inflaters
    /// read differently), it throws ``ReadAgainWithZlib``: what was handed
    /// out is void, and the caller reads the file again with zlib alone.
    private func inflateAllFast(
        input: UnsafeMutablePointer<UInt8>, firstCount: Int, path: String, source: FileBytes,
        next: () throws -> Int, into first: InflateBuffer, _ emit: (Int) throws -> InflateBuffer
    ) throws -> Bool {
        let state = UnsafeMutablePointer<inflate_state>.allocate(capacity: 1)
        defer { state.deallocate() }
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_GZIP)
        var output = first
        var available = firstCount  // bytes of the chunk in `input`
        var readBefore = 0  // bytes of the file before that chunk
        var memberStart = 0  // where the current member begins in the file
        var emittedInMember = 0
        var inMember = true
        var outputFull = false
        state.pointee.next_in = input
        state.pointee.avail_in = UInt32(available)

        func zlibFromMemberStart() throws -> Bool {
            try inflateMemberWithZlib(
                source: source, from: memberStart, skipping: emittedInMember, path: path, into: &output, emit)
        }

        while true {
            if state.pointee.avail_in == 0 && !outputFull {
                readBefore += available
                available = try next()
                if available == 0 { return inMember ? try zlibFromMemberStart() : false }
                state.pointee.next_in = input
                state.pointee.avail_in = UInt32(available)
                inMember = true
            }
            state.pointee.next_out = output.bytes
            state.pointee.avail_out = UInt32(chunkSize)
            let status = isal_inflate(state)
            let produced = chunkSize - Int(state.pointee.avail_out)
            outputFull = state.pointee.avail_out == 0
            if produced > 0 {
                emittedInMember += produced
                output = try emit(produced)
            }
            if status != ISAL_DECOMP_OK { return try zlibFromMemberStart() }
            if state.pointee.block_state == ISAL_BLOCK_FINISH && !outputFull {
                // A member ended; anything after it must be another member.
                let nextIn = state.pointee.next_in
                let availIn = state.pointee.avail_in
                memberStart = readBefore + (available - Int(availIn))
                emittedInMember = 0
                inMember = availIn > 0
                isal_inflate_reset(state)
                state.pointee.crc_flag = UInt32(ISAL_GZIP)
                state.pointee.next_in = nextIn
                state.pointee.avail_in = availIn
            }
        }
    }

    /// Where ISA-L's reading of a member broke off: zlib inflates the member
    /// again from `memberStart` (read from `source`), skips the `skip` bytes
    /// ISA-L handed out already and hands out the rest; returns whether the
    /// stream broke off, or throws ``ReadAgainWithZlib`` when zlib stops
    /// before those bytes.
    private func inflateMemberWithZlib(
        source: FileBytes, from memberStart: Int, skipping emitted: Int, path: String, into output: inout InflateBuffer,
        _ emit: (Int) throws -> InflateBuffer
    ) throws -> Bool {
        var skip = emitted
        var offset = memberStart
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { buffer.deallocate() }
        let more = { () throws -> Int in
            let count = try source.read(into: buffer, at: offset, limit: chunkSize, path: path)
            offset += count
            return count
        }
        var current = output
        defer { output = current }
        let truncated = try inflateAll(input: buffer, firstCount: try more(), path: path, next: more, into: current) {
            count in
            if skip >= count {
                skip -= count
                return current
            }
            if skip > 0 {
                (current.bytes).update(from: current.bytes + skip, count: count - skip)
            }
            let kept = count - skip
            skip = 0
            current = try emit(kept)
            return current
        }
        if skip > 0 { throw ReadAgainWithZlib(path: path) }
        return truncated
    }

    /// Inflates every gzip member into `first`, then into the buffers `emit`
    /// returns (each of `chunkSize` bytes); returns whether the stream broke
    /// off. `emit` is given the count of bytes inflated into the last buffer
    /// and returns the one to inflate into next.
    private func inflateAll(
        input: UnsafeMutablePointer<UInt8>, firstCount: Int, path: String, next: () throws -> Int,
        into first: InflateBuffer, _ emit: (Int) throws -> InflateBuffer
    ) throws -> Bool {
        var stream = z_stream()
        guard czlib_inflate_init2(&stream, 15 + 16) == Z_OK else {
            throw InputError.readFailed(path: path, reason: "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output = first

        var available = firstCount
        var inMember = true  // bytes of a member have been (or are being) consumed without its end
        var outputFull = false  // inflate may hold more output for the same input
        stream.next_in = input
        stream.avail_in = UInt32(available)
        while true {
            if stream.avail_in == 0 && !outputFull {
                available = try next()
                if available == 0 { return inMember }
                stream.next_in = input
                stream.avail_in = UInt32(available)
                if !inMember {
                    inMember = true
                }
            }
            stream.next_out = output.bytes
            stream.avail_out = UInt32(chunkSize)
            let status = inflate(&stream, Z_NO_FLUSH)
            let produced = chunkSize - Int(stream.avail_out)
            outputFull = stream.avail_out == 0
            if produced > 0 {
                output = try emit(produced)
            }
            switch status {
            case Z_STREAM_END:
                // A member ended; anything after it must be another member.
                inMember = false
                guard inflateReset(&stream) == Z_OK else { return true }
                if stream.avail_in > 0 { inMember = true }
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                // No progress possible: more input is needed.
                if stream.avail_in != 0 && produced == 0 { return true }
            default:
                return true  // Z_DATA_ERROR, Z_NEED_DICT, Z_MEM_ERROR: the stream broke off here.
            }
        }
    }
}

/// The bytes of a file (or of a range of it) read again by position, for
/// zlib to read a broken gzip member over again.
struct FileBytes: Sendable {
    var fd: Int32
    /// Where the bytes begin in the file, and how many there are (nil: to its end).
    var start: Int
    var count: Int?

    /// Reads up to `limit` bytes at `offset` (from ``start``); 0 at the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, at offset: Int, limit: Int, path: String) throws -> Int {
        let wanted = count.map { max(0, min(limit, $0 - offset)) } ?? limit
        return try LineReader.readChunk(fd: fd, into: buffer, limit: wanted, at: start + offset, path: path)
    }
}

/// A buffer of inflated bytes, handed from the inflating thread to the
/// decoding one and back.
// @unchecked: one thread owns a buffer at a time, handed over through a BatchChannel (whose lock orders the access).
final class InflateBuffer: @unchecked Sendable {
    let bytes: UnsafeMutablePointer<UInt8>
    var count = 0

    init(capacity: Int) {
        bytes = .allocate(capacity: capacity)
    }

    deinit { bytes.deallocate() }
}

/// What the inflating thread shares with the one that started it: the
/// reading closure and its buffer (only ever used by the inflating thread,
/// while the other waits for it to finish before returning), and the
/// outcome, read after the thread is done.
// @unchecked: only the inflating thread touches `next` and `input` while the other waits; `result` is read after it ends.
private final class InflateWork: @unchecked Sendable {
    /// Let go once the inflating thread is done, so it does not outlive the
    /// call that lent it.
    var next: (() throws -> Int)?
    /// The read buffer `next` fills.
    let input: UnsafeMutablePointer<UInt8>
    var result: Result<Bool, any Error> = .success(false)

    init(next: @escaping () throws -> Int, input: UnsafeMutablePointer<UInt8>) {
        self.next = next
        self.input = input
    }
}

/// What `fstat` says of an open file, to tell whether it held still while read.
struct FileState: Equatable {
    var size: Int
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    init?(_ fd: Int32) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        size = Int(info.st_size)
        #if canImport(Darwin)
            modifiedSeconds = Int(info.st_mtimespec.tv_sec)
            modifiedNanoseconds = Int(info.st_mtimespec.tv_nsec)
        #else
            modifiedSeconds = Int(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
        #endif
    }

    /// Why the file is not the one opened (nil when it held still): its size
    /// at the end is not what was read, or it was modified meanwhile.
    func change(since now: FileState?, bytesRead: Int) -> String? {
        guard let now else { return "it could not be examined after reading" }
        if now.size != bytesRead || size != bytesRead {
            return "it was \(size) bytes when opened, \(bytesRead) were read and it is \(now.size) bytes now"
        }
        if now.modifiedSeconds != modifiedSeconds || now.modifiedNanoseconds != modifiedNanoseconds {
            return "it was modified while it was read"
        }
        return nil
    }
}

/// The splitter behind a reader's limits (``LineReader/Limits``), handing
/// each line to a body that says whether to go on.
private struct LimitedSplitter {
    var splitter: LineSplitter
    let limits: LineReader.Limits
    /// Whether the bytes fed are a gzip stream's (for the limit's wording).
    var gzip = false
    private var decodedBytes = 0

    init(splitter: LineSplitter, limits: LineReader.Limits) {
        self.splitter = splitter
        self.limits = limits
    }

    var lineNumber: Int { splitter.lineNumber }

    /// Leaves the splitter and the inflaters' loops from inside them: the
    /// body said to stop, or a limit was reached. Thrown only between this
    /// splitter and ``LineReader/scan(path:range:raw:afterFirstChunk:_:)``,
    /// which turns it into its ending; its callers never see it.
    enum Unwind: Error {
        case stopped
        case pastLimit(lines: Int, problem: String)
    }

    /// Every decoded byte goes through here: past the byte limit, only the bytes within it are split.
    mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ body: (LineSlice) -> Bool) throws(Unwind) {
        let room = limits.inflatedBytes - decodedBytes
        let kept = chunk.count > room ? UnsafeBufferPointer(rebasing: chunk[..<room]) : chunk
        decodedBytes += kept.count
        let limits = self.limits
        do {
            try splitter.feed(kept) { slice in try Self.line(slice, limits: limits, body) }
        } catch let unwind as Unwind {
            throw unwind
        } catch {
            preconditionFailure("only Unwind is thrown through the splitter")
        }
        guard chunk.count > room else { return }
        throw .pastLimit(
            lines: splitter.lineNumber,
            problem: "the file \(gzip ? "inflates to" : "has") more than \(limits.inflatedBytes) bytes, "
                + "this ingest's limit; the lines after line \(splitter.lineNumber) were not read")
    }

    mutating func finish(_ body: (LineSlice) -> Bool) throws(Unwind) {
        let limits = self.limits
        do {
            try splitter.finish { slice in try Self.line(slice, limits: limits, body) }
        } catch let unwind as Unwind {
            throw unwind
        } catch {
            preconditionFailure("only Unwind is thrown through the splitter")
        }
    }

    /// Every line goes through here: past the line limit, the splitter is stopped.
    private static func line(_ slice: LineSlice, limits: LineReader.Limits, _ body: (LineSlice) -> Bool) throws(Unwind)
    {
        guard slice.number <= limits.lines else {
            throw .pastLimit(
                lines: limits.lines,
                problem: "the file has more than \(limits.lines) lines, this ingest's limit; "
                    + "the lines after line \(limits.lines) were not read")
        }
        guard body(slice) else { throw .stopped }
    }
}

/// Cuts a byte stream into lines, keeping at most `maxLineBytes` of a line.
struct LineSplitter {
    let maxLineBytes: Int
    private(set) var lineNumber = 0
    private var carry: [UInt8] = []
    private var overflowing = false

    init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ body: (LineSlice) throws -> Void) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        var start = 0
        let end = chunk.count
        while start < end {
            let remaining = end - start
            guard let hit = memchr(base + start, 0x0A, remaining) else {
                // No newline: keep the tail for the next chunk (bounded).
                append(UnsafeBufferPointer(start: base + start, count: remaining))
                return
            }
            let newline = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if carry.isEmpty && !overflowing {
                try emit(UnsafeBufferPointer(start: base + start, count: newline - start), terminated: true, body)
            } else {
                append(UnsafeBufferPointer(start: base + start, count: newline - start))
                try emitCarry(terminated: true, body)
            }
            start = newline + 1
        }
    }

    mutating func finish(_ body: (LineSlice) throws -> Void) throws {
        if !carry.isEmpty || overflowing {
            try emitCarry(terminated: false, body)
        }
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if overflowing { return }
        // One byte of slack for the `\r` of a CRLF line end.
        if carry.count + bytes.count > maxLineBytes + 1 {
            overflowing = true
            carry = []
            return
        }
        carry.append(contentsOf: bytes)
    }

    private mutating func emitCarry(terminated: Bool, _ body: (LineSlice) throws -> Void) throws {
        if overflowing {
            lineNumber += 1
            overflowing = false
            carry.removeAll(keepingCapacity: false)
            try body(LineSlice(number: lineNumber, bytes: nil))
            return
        }
        try carry.withUnsafeBufferPointer { try emit($0, terminated: terminated, body) }
        carry.removeAll(keepingCapacity: carry.capacity <= 1 << 16)
    }

    /// `terminated`: the line ended with `\n`, so a `\r` before it is part of
    /// the line end; an unterminated last line keeps its `\r`.
    private mutating func emit(_ raw: UnsafeBufferPointer<UInt8>, terminated: Bool, _ body: (LineSlice) throws -> Void)
        throws
    {
        lineNumber += 1
        var count = raw.count
        if terminated, count > 0, raw[count - 1] == 0x0D { count -= 1 }
        if count > maxLineBytes {
            try body(LineSlice(number: lineNumber, bytes: nil))
            return
        }
        try body(LineSlice(number: lineNumber, bytes: UnsafeBufferPointer(start: raw.baseAddress, count: count)))
    }
}

@inline(__always)
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}

import ArrivalHandOff
import ArrivalStore
import Foundation

/// The files of one ingest, in the order they are read: a list made up
/// front, or a walk still going on on another thread (``FileListing``).
enum FileSource: Sendable {
    case list([NamedFile])
    case listing(FileListing)

    /// How many files are listed so far, and whether more may come.
    var listed: (count: Int, listing: Bool) {
        switch self {
        case .list(let files): (files.count, false)
        case .listing(let listing): listing.progress
        }
    }

    /// Stops a walk that is still going on (the reader stopped early).
    func cancel() {
        if case .listing(let listing) = self { listing.cancel() }
    }

    func makeIterator() -> Iterator { Iterator(source: self) }

    /// The files in order, with the next ``Iterator/window`` of them asked
    /// of the kernel ahead of their reading (`POSIX_FADV_WILLNEED`): a tree
    /// of small files not in the page cache is read from disk while the files
    /// before it are decoded, instead of one file's wait at a time.
    ///
    /// The asking is done by a thread of its own (``ReadAhead``), in
    /// chunks of half a window: `posix_fadvise` allocates the page cache's
    /// pages and submits the reads before it returns, so asking on the
    /// reading thread would slow the thread that bounds the ingest of a tree
    /// of small files.
    struct Iterator {
        let source: FileSource
        /// Files asked ahead of their reading.
        static let window = 256
        /// At most this much of a file is asked ahead: the kernel reads a
        /// large file ahead as it is read.
        static let aheadBytes = 4 << 20
        private var index = 0
        private var chunk: [String] = []
        private var chunkIndex = 0
        private var ahead: [NamedFile] = []
        private var head = 0
        private var ended = false
        private let asker: ReadAhead?

        init(source: FileSource) {
            self.source = source
            #if os(Linux)
                asker = ReadAhead()
            #else
                asker = nil
            #endif
        }

        /// The next file, waiting for the walk to find it; nil at the end.
        /// `listed` is handed the files that joined the window ahead, in
        /// order, each once, before the file returned is read (the store's
        /// registry is asked about them together: ``Admission/lookAhead(_:)``).
        mutating func next(listed: (ArraySlice<NamedFile>) -> Void = { _ in }) -> NamedFile? {
            if head >= Self.window {  // what was handed out goes, so memory stays at a window
                ahead.removeFirst(head)
                head = 0
            }
            let asked = ahead.count
            if head == ahead.count {
                guard let file = pull(waiting: true) else { return nil }
                ahead.append(file)
            }
            // Fill the window with what is listed already, never waiting for the walk: once it is
            // down to half, so that the thread that asks gets a chunk at a time, not a file.
            if ahead.count - head <= Self.window / 2 {
                while ahead.count - head <= Self.window, let file = pull(waiting: false) { ahead.append(file) }
            }
            if ahead.count > asked {
                asker?.ask(Array(ahead[asked...]))
                listed(ahead[asked...])
            }
            defer { head += 1 }
            return ahead[head]
        }

        /// The next file of the source; without `waiting`, nil when the walk has listed none yet.
        private mutating func pull(waiting: Bool) -> NamedFile? {
            guard !ended else { return nil }
            switch source {
            case .list(let files):
                guard index < files.count else {
                    ended = true
                    return nil
                }
                defer { index += 1 }
                return files[index]
            case .listing(let listing):
                while chunkIndex == chunk.count {
                    guard let next = waiting ? listing.receive() : listing.poll() else {
                        if waiting { ended = true }
                        return nil
                    }
                    (chunk, chunkIndex) = (next, 0)
                }
                defer { chunkIndex += 1 }
                return NamedFile(path: chunk[chunkIndex], name: chunk[chunkIndex])
            }
        }

        /// Asks the kernel to read the start of `file` into the page cache, without waiting for it.
        static func readAhead(_ file: NamedFile) {
            #if os(Linux)
                // Non-blocking: a FIFO put in a file's place since the walk must not hold the open.
                let fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
                guard fd >= 0 else { return }
                defer { close(fd) }
                let start = file.range?.lowerBound ?? 0
                let length = min(file.range?.count ?? Int.max, aheadBytes)
                _ = posix_fadvise(fd, off_t(start), off_t(length), POSIX_FADV_WILLNEED)
            #endif
        }
    }
}

/// The thread that asks the kernel for the files of a ``FileSource/Iterator``
/// ahead of their reading, in the order it is handed them; it ends with its
/// iterator. A chunk it has no room for is not asked ahead (it only makes
/// reading faster; the files are read all the same).
final class ReadAhead: Sendable {
    private let chunks = BatchChannel<[NamedFile]>(capacity: 8)

    /// `ended` is called on the thread as it ends (tests).
    init(ended: (@Sendable () -> Void)? = nil) {
        let chunks = self.chunks
        let thread = Thread {
            while let chunk = chunks.receive() {
                for file in chunk { FileSource.Iterator.readAhead(file) }
            }
            ended?()
        }
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Hands `files` to the thread; never waits.
    func ask(_ files: [NamedFile]) { chunks.offer(files) }

    deinit {
        // What was not asked yet is of no use any more; then the thread's receive ends.
        chunks.cancel()
        chunks.close()
    }
}

/// A walk of the paths an ingest was given, on a thread of its own: its
/// files handed on in chunks as they are found, and at its end what it
/// skipped and could not read. The queue is bounded, so a tree of millions
/// of files is not held in memory ahead of the reader.
// @unchecked: `count` and `walked` change only under `lock`; `chunks` is a Sendable channel.
final class FileListing: @unchecked Sendable {
    static let chunkSize = 256
    private let chunks = BatchChannel<[String]>(capacity: 64)
    private let lock = NSLock()
    private var count = 0
    private var walked: InputWalker?

    /// Hands a chunk of files on, waiting while the queue is full; false
    /// once the reader cancelled: stop walking.
    func send(_ chunk: [String]) -> Bool {
        lock.withLock { count += chunk.count }
        return chunks.send(chunk)
    }

    /// The end of the walk, with what it skipped and could not read.
    func finish(_ walker: InputWalker) {
        lock.withLock { walked = walker }
        chunks.close()
    }

    /// The next chunk, or nil once the walk ended and every chunk was taken.
    func receive() -> [String]? { chunks.receive() }

    /// The next chunk if one is listed already; never waits.
    func poll() -> [String]? { chunks.poll() }

    func cancel() { chunks.cancel() }

    /// Files listed so far, and whether the walk goes on.
    var progress: (count: Int, listing: Bool) { lock.withLock { (count, walked == nil) } }

    /// What the walk skipped and could not read, once it ended.
    func result() -> InputWalker? { lock.withLock { walked } }
}

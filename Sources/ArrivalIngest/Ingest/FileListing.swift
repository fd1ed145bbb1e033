import ArrivalStore
import Foundation

/// The files of one ingest, in the order they are read: a list made up
/// front, or a walk still going on on another thread (``FileListing``).
enum FileSource: Sendable {
    case list([Ingestor.NamedFile])
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

    struct Iterator {
        let source: FileSource
        private var index = 0
        private var chunk: [String] = []

        init(source: FileSource) {
            self.source = source
        }

        /// The next file, waiting for the walk to find it; nil at the end.
        mutating func next() -> Ingestor.NamedFile? {
            switch source {
            case .list(let files):
                guard index < files.count else { return nil }
                defer { index += 1 }
                return files[index]
            case .listing(let listing):
                while index == chunk.count {
                    guard let next = listing.receive() else { return nil }
                    (chunk, index) = (next, 0)
                }
                defer { index += 1 }
                return Ingestor.NamedFile(path: chunk[index], name: chunk[index])
            }
        }
    }
}

/// A walk of the paths an ingest was given, on a thread of its own: its
/// files handed on in chunks as they are found, and at its end what it
/// skipped and could not read. The queue is bounded, so a tree of millions
/// of files is not held in memory ahead of the reader.
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

    func cancel() { chunks.cancel() }

    /// Files listed so far, and whether the walk goes on.
    var progress: (count: Int, listing: Bool) { lock.withLock { (count, walked == nil) } }

    /// What the walk skipped and could not read, once it ended.
    func result() -> InputWalker? { lock.withLock { walked } }
}

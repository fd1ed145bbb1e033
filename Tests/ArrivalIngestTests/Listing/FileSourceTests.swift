import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest

/// The files of an ingest come in order, with the next ones asked of the
/// kernel ahead of their reading (``FileSource/Iterator``): the order is the
/// source's, and asking ahead never waits for a walk that has not listed more.
@Suite("File source")
struct FileSourceTests {
    @Test("A list comes out in its order, whatever files exist, past many windows")
    func listInOrder() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [NamedFile] = []
        for index in 0..<1_000 {
            let path = directory.appendingPathComponent("f\(index).jsonl").path
            // Every third file does not exist: asking ahead for it is no error.
            if index % 3 != 0 { try "{}\n".write(toFile: path, atomically: true, encoding: .utf8) }
            files.append(NamedFile(path: path, name: "n\(index)", range: index % 5 == 0 ? 1..<2 : nil))
        }
        var iterator = FileSource.list(files).makeIterator()
        var names: [String] = []
        while let file = iterator.next() { names.append(file.name) }
        #expect(names == files.map(\.name))
        #expect(iterator.next() == nil)
    }

    @Test("Reading ahead takes only what the walk has listed: the first file is not held back for more")
    func neverWaitsForTheWalk() {
        let listing = FileListing()
        let firstTaken = DispatchSemaphore(value: 0)
        let waited = Flag()
        let walk = Thread {
            _ = listing.send((0..<FileListing.chunkSize).map { "/nonexistent/a\($0)" })
            // The rest of the walk comes only once the reader has taken every file listed so far.
            if firstTaken.wait(timeout: .now() + 10) == .timedOut { waited.set() }
            _ = listing.send((0..<10).map { "/nonexistent/b\($0)" })
            listing.finish(InputWalker.walk(paths: []) { _ in true })
        }
        walk.start()
        var iterator = FileSource.listing(listing).makeIterator()
        var names: [String] = []
        for _ in 0..<FileListing.chunkSize { names.append(iterator.next()?.name ?? "") }
        firstTaken.signal()
        while let file = iterator.next() { names.append(file.name) }
        #expect(!waited.value)
        #expect(
            names == (0..<FileListing.chunkSize).map { "/nonexistent/a\($0)" } + (0..<10).map { "/nonexistent/b\($0)" })
    }
}

extension FileSourceTests {
    @Test("The read-ahead thread ends with its owner, whether it was handed files (some missing) or not")
    func readAheadThreadEnds() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.jsonl").path
        try "{}\n".write(toFile: path, atomically: true, encoding: .utf8)
        for chunks in [0, 1, 50] {
            let ended = DispatchSemaphore(value: 0)
            var asker: ReadAhead? = ReadAhead(ended: { ended.signal() })
            for chunk in 0..<chunks {
                // Files that exist, do not, and a part of one: none is an error.
                asker?.ask([
                    NamedFile(path: path, name: "a"),
                    NamedFile(path: "/nonexistent/\(chunk)", name: "b"),
                    NamedFile(path: path, name: "c", range: 1..<2),
                ])
            }
            asker = nil
            #expect(ended.wait(timeout: .now() + 10) == .success, "chunks: \(chunks)")
        }
    }
}

/// A flag one thread sets and another reads.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    func set() { lock.withLock { isSet = true } }
    var value: Bool { lock.withLock { isSet } }
}

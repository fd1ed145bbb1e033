import ArrivalAnalysis
package import ArrivalIngest
package import ArrivalModel
import ArrivalStore
package import Foundation

// Helpers every test target shares, once: temporary folders, the real
// pipeline as a fixture builder (ingest and report, decode a file's lines),
// dates and a clock a test moves.

/// A fresh directory under the system temporary directory, removed by the caller.
package func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("arrival-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Ingests `paths` into a new store in a temporary directory with the real
/// pipeline and returns the report of `window`, with the ingest summary.
package func ingestAndReport(_ paths: [String], window: ReportWindow? = nil) throws -> (Report, IngestSummary) {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try SQLiteStore(path: directory.appendingPathComponent("test.sqlite").path)
    let summary = try IngestPipeline(store: store).ingest(paths: paths)
    return (try ReportBuilder(store: store).build(window: window), summary)
}

/// Every line of a plain or gzip file, decoded by the pipeline's own reader and decoder.
package func decodeLines(path: String) throws -> [RecordDecoder.Outcome] {
    var decoder = RecordDecoder()
    var outcomes: [RecordDecoder.Outcome] = []
    _ = try LineReader().read(path: path) { line in
        guard let bytes = line.bytes else {
            outcomes.append(.malformed(.lineTooLong))
            return
        }
        outcomes.append(decoder.decode(bytes))
    }
    return outcomes
}

extension RecordDecoder.Outcome {
    /// The render record of a decoded line, if it is one.
    package var render: RenderRecord? {
        if case .record(.render(let record)) = self { return record }
        return nil
    }
}

/// The lines of a text file (without their `\n`).
package func lines(ofFile path: String) throws -> [String] {
    let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    var result = text.components(separatedBy: "\n")
    if result.last == "" { result.removeLast() }
    return result
}

/// Milliseconds since the epoch as a `Date`.
package func date(ms: Int64) -> Date {
    Date(timeIntervalSince1970: Double(ms) / 1000)
}

/// A clock the test moves by hand.
package final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    package init(_ date: Date) { current = date }

    package var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    package func advance(by seconds: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        lock.unlock()
    }
}

import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalStore
@_exported import ArrivalTestSupport
import Foundation
import Testing

/// A file or folder of the test bundle's fixtures.
func fixture(_ relative: String) -> String {
    guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
        fatalError("Fixtures folder missing from the test bundle")
    }
    return url.appendingPathComponent(relative).path
}

func fixtureData(_ relative: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: fixture(relative)))
}

/// Ingests `paths` with the real pipeline into a new store; returns the summary and the report.
func ingest(_ paths: [String]) throws -> (IngestSummary, Report) {
    let (report, summary) = try ingestAndReport(paths)
    return (summary, report)
}

/// Every line of a plain or gzip file, decoded by the pipeline's own reader and decoder.
func decodeLines(path: String) throws -> [RecordDecoder.Outcome] {
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
    var render: RenderRecord? {
        if case .record(.render(let record)) = self { return record }
        return nil
    }
}

/// The lines of a text file (without their `\n`).
func lines(ofFile path: String) throws -> [String] {
    let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    var result = text.components(separatedBy: "\n")
    if result.last == "" { result.removeLast() }
    return result
}

/// Milliseconds since the epoch as a `Date`.
func date(ms: Int64) -> Date {
    Date(timeIntervalSince1970: Double(ms) / 1000)
}

/// A clock the test moves by hand.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ date: Date) { current = date }

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(by seconds: TimeInterval) {
        lock.lock()
        current = current.addingTimeInterval(seconds)
        lock.unlock()
    }
}

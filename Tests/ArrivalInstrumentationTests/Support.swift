import ArrivalModel
import ArrivalStore
import ArrivalIngest
import ArrivalAnalysis
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

/// A fresh directory, removed by the caller.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("arrival-kit-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Where SwiftPM put the built executables (next to the test bundle).
func builtProduct(_ name: String) throws -> URL {
    var candidates: [URL] = [Bundle.main.bundleURL.deletingLastPathComponent()]
    if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    for directory in candidates {
        var url = directory
        for _ in 0..<4 {
            let candidate = url.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            url = url.deletingLastPathComponent()
        }
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
}

/// Runs a built executable to its end; returns its exit status and output.
@discardableResult
func run(_ product: String, _ arguments: [String], stdin: Data? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = try builtProduct(product)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = Pipe()
    if stdin != nil { process.standardInput = input }
    try process.run()
    if let stdin {
        input.fileHandleForWriting.write(stdin)
        try input.fileHandleForWriting.close()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// Ingests `paths` with the real pipeline into a new store; returns the summary and the report.
func ingest(_ paths: [String]) throws -> (IngestSummary, Report) {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try Store(path: directory.appendingPathComponent("kit.sqlite").path)
    let summary = try Ingestor(store: store).ingest(paths: paths)
    return (summary, try ReportBuilder(store: store).build(window: nil))
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

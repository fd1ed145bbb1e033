import ArrivalAnalysis
package import ArrivalIngest
package import ArrivalModel
import ArrivalStore
package import Foundation

// Helpers every test target shares. Fixtures stay with each test target
// (their bundles differ); everything else is here, once.

/// The package's root folder (for SampleData/, Dashboards/ and golden files).
package let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

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
    let store = try Store(path: directory.appendingPathComponent("test.sqlite").path)
    let summary = try IngestPipeline(store: store).ingest(paths: paths)
    return (try ReportBuilder(store: store).build(window: window), summary)
}

/// Where SwiftPM put the built executables (next to the test bundle).
package func builtProduct(_ name: String) throws -> URL {
    var candidates: [URL] = [Bundle.main.bundleURL.deletingLastPathComponent()]
    if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
    candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    guard let found = findExecutable(named: name, near: candidates) else {
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
    }
    return found
}

/// The first regular, executable file called `name` in each of
/// `directories` or up to three folders above it, nearest first. Never a
/// directory: a checkout is often called like the product it builds
/// (`git clone …/arrival.git` makes `arrival/`), and a directory's search
/// permission reads as "executable".
package func findExecutable(named name: String, near directories: [URL]) -> URL? {
    for directory in directories {
        var url = directory.standardizedFileURL
        for _ in 0..<4 {
            let candidate = url.appendingPathComponent(name)
            var info = stat()
            if stat(candidate.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
                access(candidate.path, X_OK) == 0
            {
                return candidate
            }
            url = url.deletingLastPathComponent()
        }
    }
    return nil
}

/// Runs a built executable to its end; returns its exit status and output.
@discardableResult
package func run(_ product: String, _ arguments: [String], stdin: Data? = nil) throws -> (
    status: Int32, stdout: String, stderr: String
) {
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
    return (
        process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self)
    )
}

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
    let store = try SQLiteStore(path: directory.appendingPathComponent("test.sqlite").path)
    let summary = try IngestPipeline(store: store).ingest(paths: paths)
    return (try ReportBuilder(store: store).build(window: window), summary)
}

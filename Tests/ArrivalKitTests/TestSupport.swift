import Foundation
import Testing
import ArrivalModel
import ArrivalStore
import ArrivalIngest
import ArrivalAnalysis
import ArrivalRendering
import ArrivalCompare
import ArrivalSimulation

/// The test bundle's fixture folder.
func fixture(_ relative: String) -> String {
    guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
        fatalError("Fixtures folder missing from the test bundle")
    }
    return url.appendingPathComponent(relative).path
}

/// A fresh directory under the system temporary directory, removed by the caller.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("arrival-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Ingests `paths` into a new store in a temporary directory and returns the
/// report of `window`, with the ingest summary.
func ingestAndReport(_ paths: [String], window: ReportWindow? = nil) throws -> (Report, IngestSummary) {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try Store(path: directory.appendingPathComponent("test.sqlite").path)
    let summary = try Ingestor(store: store).ingest(paths: paths)
    return (try ReportBuilder(store: store).build(window: window), summary)
}

/// Builds an `UpdateCounts` in one expression.
func counts(
    sent: Int, accepted: Int, rendered: Int = 0, ended: Int = 0, expired: Int = 0, stale: Int = 0,
    superseded: Int = 0, lost: Int = 0
) -> UpdateCounts {
    var c = UpdateCounts()
    c.sent = sent
    c.accepted = accepted
    c.rendered = rendered
    c.ended = ended
    c.expired = expired
    c.staleTimestamp = stale
    c.superseded = superseded
    c.lost = lost
    return c
}

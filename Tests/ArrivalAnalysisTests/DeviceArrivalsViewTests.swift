import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis
@testable import ArrivalStore

/// Contract 3.2 (issue 53): the view `device_arrivals` (for dashboards) and the analysis (for the
/// report's `outliers`) count each device's deliverable and rendered updates alike.
@Suite("device_arrivals view and the outliers analysis agree")
struct DeviceArrivalsViewTests {
    @Test("Every device has the same updates, deliverable and rendered from both; the tested ones are the report's")
    func sameCounts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = SimulationConfig(activities: 800, seed: 3)
        config.outliers = 3
        config.lifecycle = true
        let fleet = directory.appendingPathComponent("fleet")
        _ = try FleetSimulator(config: config).run(outputDirectory: fleet.path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fleet.path] + samplePaths)
        var fromView: [String: [Int]] = [:]
        try store.connection.prepare("SELECT device_id, updates, deliverable, rendered FROM device_arrivals")
            .forEachRow { row in
                fromView[row.string(0) ?? "(null)"] = [Int(row.int(1)), Int(row.int(2)), Int(row.int(3))]
            }
        let analysis = try store.read { try DeliveryAnalysis(snapshot: $0, window: nil) }
        var fromAnalysis: [String: [Int]] = [:]
        for u in analysis.updates {
            guard let device = analysis.activities[Int(u.activity)].device?.value else { continue }
            var counts = fromAnalysis[device] ?? [0, 0, 0]
            counts[0] += 1
            if let outcome = u.outcome, outcome.isDeliverable { counts[1] += 1 }
            if u.outcome == .rendered { counts[2] += 1 }
            fromAnalysis[device] = counts
        }
        #expect(fromView.count > 50)
        #expect(fromView == fromAnalysis)
        let report = try ReportBuilder(store: store).build(window: nil)
        let outliers = try #require(report.outliers)
        #expect(outliers.devicesTested == fromView.values.filter { $0[1] >= Outliers.minimumDeliverable }.count)
        #expect(outliers.devices.count >= 3)
        for device in outliers.devices {
            let counts = fromView[device.deviceID.text]
            #expect(counts == [device.updates.sent, device.updates.deliverable, device.updates.rendered])
        }
    }
}

import ArrivalAnalysis
import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation

/// Simulated days for the diff and gate tests, written once per test run:
/// a baseline fleet, the same fleet with each injected regression, and
/// another seed of the same fleet (noise only).
enum SimulatedBatches {
    static let activities = 400

    static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("arrival-tests-batches-\(getpid())")
        try? FileManager.default.removeItem(at: url)
        return url
    }()

    static let baseline = simulate("baseline", seed: 11)
    static let noise = simulate("noise", seed: 21)
    static let staleTimestamps = simulate("stale", seed: 11, inject: .staleTimestamps)
    static let largePayloads = simulate("large", seed: 11, inject: .largePayloads)
    static let lostCallbacks = simulate("callbacks", seed: 11, inject: .lostCallbacks)

    private static func simulate(_ name: String, seed: UInt64, inject: SimulationFaults.Injection? = nil) -> String {
        var config = SimulationConfig(activities: activities, seed: seed)
        if let inject { config.faults.inject(inject) }
        let path = root.appendingPathComponent(name).path
        do {
            _ = try FleetSimulator(config: config).run(outputDirectory: path, replacingExisting: true)
        } catch {
            fatalError("simulating \(name) failed: \(error)")
        }
        return path
    }
}

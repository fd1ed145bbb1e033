import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

@Suite("Fleet simulator")
struct FleetSimulatorTests {
    /// Every file under `root` with its bytes, by relative path.
    func tree(_ root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for path in InputWalker(paths: [root.path]).files {
            files[String(path.dropFirst(root.path.count))] = FileManager.default.contents(atPath: path)
        }
        return files
    }

    @Test("The same seed writes the same bytes; another seed writes others")
    func deterministic() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let a = directory.appendingPathComponent("a")
        let b = directory.appendingPathComponent("b")
        let c = directory.appendingPathComponent("c")
        _ = try FleetSimulator(config: SimulationConfig(activities: 40, seed: 7)).run(outputDirectory: a.path)
        _ = try FleetSimulator(config: SimulationConfig(activities: 40, seed: 7)).run(outputDirectory: b.path)
        _ = try FleetSimulator(config: SimulationConfig(activities: 40, seed: 8)).run(outputDirectory: c.path)
        let treeA = try tree(a)
        #expect(!treeA.isEmpty)
        #expect(treeA == (try tree(b)))
        #expect(treeA != (try tree(c)))
    }

    @Test("A simulated day exercises every outcome and the bad-input cases")
    func phenomena() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try FleetSimulator(config: SimulationConfig(activities: 300, seed: 3)).run(outputDirectory: directory.path)
        let (report, summary) = try ingestAndReport([directory.path])
        let u = report.updates
        #expect(
            u.rendered > 0 && u.ended > 0 && u.expired > 0 && u.staleTimestamp > 0 && u.superseded > 0 && u.lost > 0)
        #expect(report.dataQuality.unattributed > 0 && report.dataQuality.apnsWithoutSeq > 0)
        #expect(report.dataQuality.duplicateRecords > 0 && report.dataQuality.filesSkippedAsDuplicate >= 1)
        #expect(report.dataQuality.malformedByCause["truncated_gzip"] == 1)
        #expect(report.requests.oversizeFailures > 0 && report.requests.oversizeRisk > 0)
        let loss = try #require(report.callbacks.callbackLossRate)
        #expect(loss > 0.03 && loss < 0.4)
        #expect(summary.records[.apns, default: 0] > 1000)
    }

    @Test("An earlier run is not overwritten unless asked")
    func refusesToMix() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try FleetSimulator(config: SimulationConfig(activities: 5)).run(outputDirectory: directory.path)
        #expect(throws: SimulationError.self) {
            _ = try FleetSimulator(config: SimulationConfig(activities: 5)).run(outputDirectory: directory.path)
        }
        _ = try FleetSimulator(config: SimulationConfig(activities: 5)).run(
            outputDirectory: directory.path, replacingExisting: true)
    }

    @Test("Only an earlier run in the way is cured by --force")
    func simulateForce() {
        #expect(Diagnostic(SimulationError.outputNotEmpty("/out/sender")).hint.contains("--force"))
        for error in [
            SimulationError.cannotCreate("/x"), .cannotRead("/x"), .invalidDay("x"), .invalidActivityCount(-1),
        ] {
            #expect(!Diagnostic(error).hint.contains("--force"), "\(error)")
        }
    }
}

import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

/// A `--providers` fleet end to end: what the sender kit writes, ingest derives.
@Suite("Ingest of a fleet sending through providers")
struct ProviderFleetIngestTests {
    @Test("Every exchange the simulator wrote is derived; the report has all three providers and their answers")
    func providerFleet() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fleet = directory.appendingPathComponent("fleet")
        var config = SimulationConfig(activities: 300, seed: 101)
        config.providers = true
        let simulated = try FleetSimulator(config: config).run(outputDirectory: fleet.path)
        #expect(simulated.exchangeRecords.values.reduce(0, +) > 0)
        let (report, summary) = try ingestAndReport([fleet.path])
        #expect(summary.malformedByCause[.invalidExchange] == nil)
        let providers = report.breakdowns["provider"] ?? [:]
        for provider in PushProvider.allCases {
            #expect((providers[ExactString(provider.rawValue)]?.sent ?? 0) > 0, "\(provider)")
        }
        let reasons = Set(report.requests.byReason.keys.map(\.text))
        #expect(reasons.contains { $0.hasPrefix("FCM:") })
        #expect(reasons.contains { $0.hasPrefix("Tencent:") })
        #expect(reasons.contains("FCM:THIRD_PARTY_AUTH_ERROR"))
    }
}

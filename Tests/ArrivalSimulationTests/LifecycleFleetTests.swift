import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

/// `arrival simulate --lifecycle`: the device's side of an activity's life
/// (contract 3.0), drawn from a stream of its own.
@Suite("Fleet simulator with --lifecycle")
struct LifecycleFleetTests {
    static func fleet(seed: UInt64, lifecycle: Bool = true) -> SimulationConfig {
        var config = SimulationConfig(activities: 600, seed: seed)
        config.lifecycle = lifecycle
        return config
    }

    @Test("Every lifecycle phenomenon happens, the same for the same seed, and none without the flag")
    func phenomena() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var runs: [[String: Data]] = []
        var summaries: [SimulationSummary] = []
        for (name, config) in [
            ("a", Self.fleet(seed: 31)), ("b", Self.fleet(seed: 31)), ("c", Self.fleet(seed: 31, lifecycle: false)),
        ] {
            let out = directory.appendingPathComponent(name)
            var summary = try FleetSimulator(config: config).run(outputDirectory: out.path)
            summary.outputDirectory = ""
            summaries.append(summary)
            runs.append(ProviderFleetTests().tree(out))
        }
        #expect(runs[0] == runs[1] && summaries[0] == summaries[1])
        #expect(runs[0] != runs[2])
        let lifecycle = [
            "dismissals_learned_late", "ended_by_app_midway", "tokens_rotated", "senders_never_switch_token",
            "pushes_to_rotated_token", "widget_stops_drawing", "content_states_not_drawn", "senders_ignoring_410",
            "starts_accepted_never_appeared", "starts_without_update_token",
        ]
        for phenomenon in lifecycle {
            #expect((summaries[0].phenomena[phenomenon] ?? 0) > 0, "\(phenomenon) happens with --lifecycle")
            #expect(summaries[2].phenomena[phenomenon] == nil, "\(phenomenon) does not happen without it")
        }
        // More dismissals than the plain fleet's 5%.
        #expect((summaries[0].phenomena["user_dismissals"] ?? 0) > (summaries[2].phenomena["user_dismissals"] ?? 0))
    }
}

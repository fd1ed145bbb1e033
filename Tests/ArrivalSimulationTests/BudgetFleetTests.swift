import ArrivalBeacons
import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

/// `arrival simulate --budget`: Apple's budget of priority-10 pushes as the
/// simulator models it (contract 3.1), drawn from streams of its own.
@Suite("Fleet simulator with --budget")
struct BudgetFleetTests {
    static func fleet(
        activities: Int = 300, seed: UInt64, budget: Bool = true, channels: Bool = false, lifecycle: Bool = false,
        providers: Bool = false
    ) -> SimulationConfig {
        var config = SimulationConfig(activities: activities, seed: seed)
        config.budget = budget
        config.channels = channels
        config.lifecycle = lifecycle
        config.providers = providers
        return config
    }

    /// Every line of the device files that parses, with the path of its file.
    static func deviceLines(_ root: URL) throws -> [(path: String, object: [String: Any])] {
        var lines: [(path: String, object: [String: Any])] = []
        for path in InputWalker(paths: [root.appendingPathComponent("devices").path]).files.sorted() {
            _ = try LineReader().read(path: path) { line in
                guard let bytes = line.bytes,
                    let object = try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]
                else { return }
                lines.append((path, object))
            }
        }
        return lines
    }

    /// The oldest build of each app, whose kit predates `frequent_pushes`.
    static let oldestBuilds: Set<String> = ["4.1.0", "2.7.3", "7.0.1", "3.0.2", "5.4.0"]

    @Test("The same seed writes the same budget fleet; without the flag not one frequent_pushes is written")
    func deterministic() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var trees: [[String: Data]] = []
        var summaries: [SimulationSummary] = []
        let everything = Self.fleet(seed: 21, channels: true, lifecycle: true, providers: true)
        for (name, config) in [
            ("a", Self.fleet(seed: 21)), ("b", Self.fleet(seed: 21)), ("c", Self.fleet(seed: 21, budget: false)),
            ("d", Self.fleet(seed: 22)), ("e", everything), ("f", everything),
            ("g", Self.fleet(seed: 21, budget: false, channels: true, lifecycle: true, providers: true)),
        ] {
            let out = directory.appendingPathComponent(name)
            var summary = try FleetSimulator(config: config).run(outputDirectory: out.path)
            summary.outputDirectory = ""
            summaries.append(summary)
            trees.append(ProviderFleetTests().tree(out))
        }
        #expect(!trees[0].isEmpty)
        #expect(trees[0] == trees[1] && summaries[0] == summaries[1])
        #expect(trees[0] != trees[2] && trees[0] != trees[3])
        #expect(trees[4] == trees[5] && summaries[4] == summaries[5])
        #expect(trees[4] != trees[6])
        for phenomenon in ["chatty_senders", "frequent_pushes_off_installs", "pushes_dropped_over_budget"] {
            #expect((summaries[0].phenomena[phenomenon] ?? 0) > 0, "\(phenomenon) happens with --budget")
            #expect((summaries[4].phenomena[phenomenon] ?? 0) > 0, "\(phenomenon) happens with every flag")
            #expect(summaries[2].phenomena[phenomenon] == nil, "\(phenomenon) does not happen without it")
            #expect(summaries[6].phenomena[phenomenon] == nil, "\(phenomenon) does not happen without it")
        }
        // The budget changes what the devices show, not who they are.
        #expect(summaries[0].devices == summaries[2].devices && summaries[4].devices == summaries[6].devices)
        for name in ["c", "g"] {
            let lines = try Self.deviceLines(directory.appendingPathComponent(name))
            #expect(lines.count > 1000)
            #expect(!lines.contains { $0.object["frequent_pushes"] != nil }, "no frequent_pushes in fleet \(name)")
        }
    }

    @Test(
        "Renders and callbacks carry the install's switch as the kit writes it, except from each app's oldest build")
    func switchOnRecords() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try FleetSimulator(config: Self.fleet(seed: 23, channels: true)).run(outputDirectory: directory.path)
        let lines = try Self.deviceLines(directory)
        var switches: [String: Set<String>] = [:]  // by install: devices/<device>/group.<app>/
        var kinds: Set<String> = []
        var handBuilt = 0
        for (path, object) in lines {
            guard let kind = object["kind"] as? String, kind == "render" || kind == "callback",
                let version = object["app_version"] as? String
            else { continue }
            let value = object["frequent_pushes"] as? String
            if Self.oldestBuilds.contains(version) {
                #expect(value == nil, "a \(version) build writes no frequent_pushes")
                continue
            }
            guard let value else {
                Issue.record("a \(version) \(kind) without frequent_pushes: \(object)")
                continue
            }
            #expect(value == "enabled" || value == "disabled")
            kinds.insert(kind + " " + value)
            // Lines the kit would not write byte for byte (six fraction digits, no "v") carry it too.
            if object["v"] == nil || version.hasPrefix("7.") { handBuilt += 1 }
            let install = path.components(separatedBy: "/LiveActivityBeacons/")[0]
            switches[install, default: []].insert(value)
        }
        #expect(kinds == ["render enabled", "render disabled", "callback enabled", "callback disabled"])
        #expect(handBuilt > 0)
        #expect(switches.values.allSatisfy { $0.count == 1 }, "one switch per install")
        let off = switches.values.filter { $0 == ["disabled"] }.count
        #expect(off > 0 && off < switches.count / 2)
    }

    @Test(
        "The report shows the budget: arrival falls with the priority-10 load of the hour, and more with the switch off"
    )
    func throttlingEvidence() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let budget = directory.appendingPathComponent("budget")
        let plain = directory.appendingPathComponent("plain")
        _ = try FleetSimulator(config: Self.fleet(activities: 500, seed: 7)).run(outputDirectory: budget.path)
        _ = try FleetSimulator(config: Self.fleet(activities: 500, seed: 7, budget: false))
            .run(outputDirectory: plain.path)
        let (report, _) = try ingestAndReport([budget.path])
        let (plainReport, _) = try ingestAndReport([plain.path])

        func rate(_ report: Report, _ dimension: String, _ key: String) throws -> Double {
            let counts = try #require(report.breakdowns[dimension]?[ExactString(key)], "\(dimension).\(key)")
            return try #require(counts.arrivalRate)
        }
        let calm = try rate(report, "priority_10_last_hour", "0-4")
        let busy = try rate(report, "priority_10_last_hour", "15-29")
        let chatty = try rate(report, "priority_10_last_hour", "30-59")
        let chattier = try rate(report, "priority_10_last_hour", "60-119")
        #expect(calm > 0.85)
        #expect(busy < calm && chatty < busy - 0.1 && chattier < calm - 0.2)
        // Over-budget updates are accepted and never shown; a later one that shows makes them superseded.
        let load = try #require(report.breakdowns["priority_10_last_hour"]?[ExactString("30-59")])
        #expect(load.superseded > load.lost)
        let enabled = try rate(report, "frequent_pushes", "enabled")
        let disabled = try rate(report, "frequent_pushes", "disabled")
        #expect(disabled < enabled - 0.05)
        #expect(report.breakdowns["frequent_pushes"]?[ExactString("unknown")] != nil, "the oldest builds")
        // Without the budget: no chatty senders, so no such load, and no switch on any record.
        #expect(plainReport.breakdowns["priority_10_last_hour"]?[ExactString("30-59")] == nil)
        #expect(plainReport.breakdowns["frequent_pushes"]?.keys.map(\.text) == ["unknown"])
        #expect(abs(try rate(plainReport, "priority_10_last_hour", "0-4") - calm) < 0.05)
    }

    @Test("The device's budget: 10 carried and 40 an hour with the switch on, 4 and 10 with it off")
    func budgetModel() {
        #expect(BudgetModel.switchOn.refillMs == 90_000 && BudgetModel.switchOff.refillMs == 360_000)
        // At one instant, the carried ones only.
        var on = PushBudget(switch: .enabled, fullAt: 0)
        #expect((0..<12).map { _ in on.spend(atMs: 1_000) } == Array(repeating: true, count: 10) + [false, false])
        #expect(!on.spend(atMs: 90_000) && on.spend(atMs: 91_000) && !on.spend(atMs: 91_001))
        // A long pause refills no more than the carried ones.
        #expect((0..<11).filter { _ in on.spend(atMs: 36_000_000) }.count == 10)

        // One update a minute: switch on, 28 shown before it runs dry, then two in three, 40 an hour.
        var minutely = PushBudget(switch: .enabled, fullAt: 0)
        let shown = (0..<88).map { minutely.spend(atMs: Int64($0) * 60_000) }
        #expect(shown.prefix(28).allSatisfy { $0 } && !shown[28])
        #expect(shown[28...].filter { $0 }.count == 40)
        // Switch off: 4, then one every 6 minutes, 10 an hour.
        var off = PushBudget(switch: .disabled, fullAt: 0)
        let shownOff = (0..<64).map { off.spend(atMs: Int64($0) * 60_000) }
        #expect(shownOff.prefix(4).allSatisfy { $0 } && !shownOff[4])
        #expect(shownOff[4...].filter { $0 }.count == 10)
    }
}

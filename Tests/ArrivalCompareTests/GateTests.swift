import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalCompare

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("Gate")
struct GateTests {
    func evaluate(baseline: String?, current: String, config: GateConfig? = nil) throws -> GateEvaluation {
        let baselineSide = try baseline.map { try ComparisonSide.load($0, window: nil) }
        let currentSide = try ComparisonSide.load(current, window: nil)
        let rules = config ?? GateConfig(rules: GateConfig.defaultRules(withBaseline: baseline != nil))
        return GateEvaluation(config: rules, current: currentSide, baseline: baselineSide)
    }

    func failed(_ evaluation: GateEvaluation) -> [String] {
        evaluation.results.filter { $0.verdict == .fail }.map(\.rule.metric.id)
    }

    @Test("Every default rule names a real metric")
    func defaultsAreReal() {
        for rule in GateConfig.defaultRules(withBaseline: true) + GateConfig.defaultRules(withBaseline: false) {
            #expect(Metric.named(rule.metric.id) == rule.metric)
            #expect(rule.metric.id != Metric.all[0].id)
        }
    }

    @Test(
        "Each injected regression fails exactly its own rule",
        arguments: [
            ("stale", "updates.stale_share"),
            ("large", "requests.oversize_share"),
            ("callbacks", "callbacks.callback_loss_rate"),
        ])
    func injectedRegressions(batch: String, rule: String) throws {
        let path =
            switch batch {
            case "stale": SimulatedBatches.staleTimestamps
            case "large": SimulatedBatches.largePayloads
            default: SimulatedBatches.lostCallbacks
            }
        let evaluation = try evaluate(baseline: SimulatedBatches.baseline, current: path)
        #expect(failed(evaluation) == [rule])
        #expect(!evaluation.passed)
    }

    @Test("A batch that differs only by noise passes the default rules")
    func noisePasses() throws {
        let evaluation = try evaluate(baseline: SimulatedBatches.baseline, current: SimulatedBatches.noise)
        #expect(evaluation.passed)
        #expect(evaluation.results.count == 5)
        #expect(evaluation.warnings == 0)
    }

    @Test("Without a baseline: oversize failures = 0 and arrival rate ≥ 95%")
    func absoluteDefaults() throws {
        let evaluation = try evaluate(baseline: nil, current: SimulatedBatches.baseline)
        #expect(
            evaluation.results.map(\.rule.description) == [
                "requests.oversize_failures ≤ 0", "updates.arrival_rate ≥ 95%",
            ])
        // The simulated fleet plants 413s and loses updates: both fail.
        #expect(failed(evaluation) == ["requests.oversize_failures", "updates.arrival_rate"])
    }

    @Test("Below the minimum sample a failing rule warns instead")
    func minimumSample() throws {
        let config = GateConfig(rules: [try GateRule.parse("updates.arrival_rate >= 0.99")], minSample: 1_000_000)
        let evaluation = try evaluate(baseline: nil, current: SimulatedBatches.baseline, config: config)
        #expect(evaluation.results.map(\.verdict) == [.warn])
        #expect(evaluation.passed)
        let enforced = GateConfig(
            rules: [try GateRule.parse("updates.arrival_rate >= 0.99 min_sample=10")], minSample: 1_000_000)
        #expect(
            try evaluate(baseline: nil, current: SimulatedBatches.baseline, config: enforced).results.map(\.verdict)
                == [.fail])
    }

    @Test("A big drop that is not significant passes; without the significance demand it fails")
    func significanceDemand() throws {
        // Hand-made: 9 of 10 rendered → 8 of 10 is a 10-point drop on ten updates.
        var before = Report(window: nil)
        var after = Report(window: nil)
        before.updates = counts(sent: 10, accepted: 10, rendered: 9, lost: 1)
        after.updates = counts(sent: 10, accepted: 10, rendered: 8, lost: 2)
        let lenient = GateConfig(rules: [try GateRule.parse("updates.arrival_rate drop <= 1")], minSample: 0)
        let strict = GateConfig(
            rules: [try GateRule.parse("updates.arrival_rate drop <= 1 significant=false")], minSample: 0)
        let a = GateEvaluation(
            config: lenient, current: after, currentSamples: nil, currentPath: "after", baseline: before,
            baselineSamples: nil, baselinePath: "before")
        let b = GateEvaluation(
            config: strict, current: after, currentSamples: nil, currentPath: "after", baseline: before,
            baselineSamples: nil, baselinePath: "before")
        #expect(a.results.map(\.verdict) == [.pass])
        #expect(a.results[0].detail.contains("within noise"))
        #expect(b.results.map(\.verdict) == [.fail])
    }

    @Test("Config file rules, flags winning, defaults only without either")
    func configResolution() throws {
        let yaml = """
            confidence: 0.99
            min_sample: 50
            rules:
              - metric: updates.arrival_rate
                at_least: 0.9
              - metric: requests.oversize_failures
                at_most: 0
            """
        let fromFile = try GateConfig.resolve(
            configText: yaml, configPath: "gate.yml", ruleFlags: [], confidence: nil, minSample: nil, withBaseline: true
        )
        #expect(fromFile.confidence == 0.99 && fromFile.minSample == 50)
        #expect(fromFile.rules.map(\.description) == ["updates.arrival_rate ≥ 90%", "requests.oversize_failures ≤ 0"])
        let withFlags = try GateConfig.resolve(
            configText: yaml, configPath: "gate.yml",
            ruleFlags: ["updates.arrival_rate >= 97%", "callbacks.callback_loss_rate <= 0.2"],
            confidence: 0.95, minSample: 10, withBaseline: true)
        #expect(
            withFlags.rules.map(\.description) == [
                "updates.arrival_rate ≥ 97%", "requests.oversize_failures ≤ 0", "callbacks.callback_loss_rate ≤ 20%",
            ])
        #expect(withFlags.confidence == 0.95 && withFlags.minSample == 10)
        let onlyFlags = try GateConfig.resolve(
            configText: nil, configPath: nil, ruleFlags: ["lost <= 3"], confidence: nil, minSample: nil,
            withBaseline: true)
        #expect(onlyFlags.rules.map(\.metric.id) == ["updates.lost"])
        let defaults = try GateConfig.resolve(
            configText: nil, configPath: nil, ruleFlags: [], confidence: nil, minSample: nil, withBaseline: true)
        #expect(defaults.rules == GateConfig.defaultRules(withBaseline: true))
    }

    @Test("The sample gate.yml in the repository parses")
    func sampleConfig() throws {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("gate.yml"), encoding: .utf8)
        let config = try GateConfig.parse(yaml: text, path: "gate.yml")
        #expect(config.rules.count >= 5)
    }

    @Test(
        "Config mistakes name the line and the fix",
        arguments: [
            ("rules:\n  - metric: updates.arival_rate\n    at_least: 0.9\n", "gate.yml:2", "unknown metric"),
            ("rules:\n  - metric: updates.arrival_rate\n    at_leats: 0.9\n", "gate.yml:3", "unknown rule key"),
            ("rules:\n  - metric: updates.arrival_rate\n    at_least: 95\n", "gate.yml:2", "fraction"),
            ("rule:\n  - metric: updates.arrival_rate\n", "gate.yml:1", "unknown key"),
            ("rules: [\n", "gate.yml", "not valid YAML"),
        ])
    func configErrors(yaml: String, location: String, message: String) {
        do {
            _ = try GateConfig.parse(yaml: yaml, path: "gate.yml")
            Issue.record("accepted a bad config")
        } catch {
            #expect(error.description.hasPrefix(location), "\(error.description)")
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test("Rule flags parse, and bad ones say how to write them")
    func ruleFlags() throws {
        #expect(
            try GateRule.parse("updates.arrival_rate drop <= 0.5pt min_sample=1000")
                == GateRule(
                    metric: try #require(Metric.named("updates.arrival_rate")), check: .maxDrop(0.5), minSample: 1000))
        #expect(try GateRule.parse("arrival_rate >= 95%").check == .atLeast(0.95))
        #expect(throws: GateConfigError.self) { try GateRule.parse("updates.arrival_rate > 0.9") }
        #expect(throws: GateConfigError.self) { try GateRule.parse("nonsense >= 1") }
        #expect(throws: GateConfigError.self) { try GateRule.parse("updates.lost >= 5%") }
    }

    @Test(
        "A floor or ceiling on a rate outside 0–1 is refused, from a flag or a file, with the fraction to write",
        arguments: [
            ("updates.arrival_rate >= 90", "at_least: 90", "write 0.9 for 90%"),
            ("updates.arrival_rate >= -3", "at_least: -3", "write 0.9 for 90%"),
            ("callbacks.callback_loss_rate <= 20", "at_most: 20", "write 0.2 for 20%"),
        ])
    func rateOutOfRange(flag: String, yamlCheck: String, example: String) {
        do {
            _ = try GateRule.parse(flag)
            Issue.record("accepted \(flag)")
        } catch {
            #expect(error.hint == "rates are fractions: \(example).", "\(error)")
            #expect(error.diagnostic.category == .usage)
        }
        let metric = flag.split(separator: " ")[0]
        do {
            _ = try GateConfig.parse(yaml: "rules:\n  - metric: \(metric)\n    \(yamlCheck)\n", path: "gate.yml")
            Issue.record("accepted \(yamlCheck)")
        } catch {
            #expect(error.hint == "rates are fractions: \(example).", "\(error)")
            #expect(error.location == Diagnostic.Location(path: "gate.yml", line: 2))
        }
        // In range, and counts and drops of any size, stay rules.
        #expect(throws: Never.self) { try GateRule.parse("updates.arrival_rate >= 0.9") }
        #expect(throws: Never.self) { try GateRule.parse("updates.arrival_rate >= 90%") }
        #expect(throws: Never.self) { try GateRule.parse("requests.oversize_failures <= 20") }
        #expect(throws: Never.self) { try GateRule.parse("updates.arrival_rate drop <= 5") }
    }

    @Test("Regression rules without a baseline are refused unless skipping them is asked for")
    func regressionWithoutBaseline() throws {
        let withRegressions = try GateConfig.resolve(
            configText: nil, configPath: nil,
            ruleFlags: ["updates.arrival_rate drop <= 1", "updates.arrival_rate >= 0.9"],
            confidence: nil, minSample: nil, withBaseline: false)
        do {
            try withRegressions.checkBaseline(given: false, allowMissing: false)
            Issue.record("regression rules passed without a baseline")
        } catch {
            #expect(
                error.message.contains(
                    "1 rule compares against a baseline (updates.arrival_rate drop ≤ 1 pt (significant))"))
            #expect(error.hint.contains("--allow-no-baseline"))
            #expect(error.diagnostic.category == .usage)
        }
        #expect(throws: Never.self) { try withRegressions.checkBaseline(given: true, allowMissing: false) }
        #expect(throws: Never.self) { try withRegressions.checkBaseline(given: false, allowMissing: true) }
        let floorsOnly = GateConfig(rules: GateConfig.defaultRules(withBaseline: false))
        #expect(throws: Never.self) { try floorsOnly.checkBaseline(given: false, allowMissing: false) }
    }

    #if canImport(FoundationXML)
        @Test("The JUnit XML has the structure the JUnit schema requires")
        func junitStructure() throws {
            let evaluation = try evaluate(
                baseline: SimulatedBatches.baseline, current: SimulatedBatches.staleTimestamps,
                config: GateConfig(
                    rules: GateConfig.defaultRules(withBaseline: true) + [
                        try GateRule.parse("updates.arrival_rate >= 0.99 min_sample=100000000")
                    ]))
            let xml = evaluation.junitXML(timestamp: "2026-11-22T10:00:00", hostname: "ci<&>\"host")
            let document = try XMLDocument(xmlString: xml)
            let root = try #require(document.rootElement())
            #expect(root.name == "testsuites")
            let suites = root.elements(forName: "testsuite")
            #expect(suites.count == 1)
            let suite = try #require(suites.first)
            for attribute in [
                "name", "tests", "failures", "errors", "skipped", "time", "timestamp", "hostname", "id", "package",
            ] {
                #expect(suite.attribute(forName: attribute) != nil, "testsuite lacks \(attribute)")
            }
            #expect(suite.attribute(forName: "hostname")?.stringValue == "ci<&>\"host")
            #expect(
                suite.attribute(forName: "timestamp")?.stringValue?.range(
                    of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"#, options: .regularExpression) != nil)
            #expect(suite.elements(forName: "properties").count == 1)
            #expect(
                suite.elements(forName: "system-out").count == 1 && suite.elements(forName: "system-err").count == 1)
            let cases = suite.elements(forName: "testcase")
            #expect(cases.count == 6)
            #expect(suite.attribute(forName: "tests")?.stringValue == "6")
            for testcase in cases {
                #expect(
                    testcase.attribute(forName: "name") != nil && testcase.attribute(forName: "classname") != nil
                        && testcase.attribute(forName: "time") != nil)
            }
            let failures = cases.flatMap { $0.elements(forName: "failure") }
            #expect(failures.count == 1)
            #expect(suite.attribute(forName: "failures")?.stringValue == "1")
            #expect(
                failures.first?.attribute(forName: "type") != nil
                    && failures.first?.attribute(forName: "message") != nil)
            #expect(cases.flatMap { $0.elements(forName: "skipped") }.count == 1)
            #expect(suite.attribute(forName: "skipped")?.stringValue == "1")
        }
    #endif

    @Test("GitHub annotations escape their data and the summary is a table")
    func githubOutput() throws {
        let evaluation = try evaluate(baseline: SimulatedBatches.baseline, current: SimulatedBatches.largePayloads)
        let annotations = evaluation.githubAnnotations().split(separator: "\n")
        #expect(annotations.count == 1)
        #expect(
            annotations.first?.hasPrefix(
                "::error title=arrival gate%3A requests.oversize_share rise ≤ 1 pt (significant)::") == true)
        #expect(!(annotations.first?.dropFirst(2).contains("\n") ?? true))
        #expect(GateEvaluation.dataEscaped("50%\nnext") == "50%25%0Anext")
        #expect(evaluation.markdownSummary().contains("| ❌ fail | `requests.oversize_share` |"))
    }
}

import ArrivalModel
import Yams

/// The rules `arrival gate` applies, and how strictly.
///
/// Resolved in one place: flags, then the config file, then the defaults.
/// A rule flag replaces the config's rule on the same metric and check;
/// with neither a config nor rule flags, ``defaultRules(withBaseline:)``
/// applies.
package struct GateConfig: Sendable, Equatable {
    package var rules: [GateRule]
    /// Confidence of the significance tests.
    package var confidence: Double
    /// The minimum sample of rules that name none.
    package var minSample: Int

    package static let defaultConfidence = 0.95
    package static let defaultMinSample = 100

    package init(rules: [GateRule], confidence: Double = defaultConfidence, minSample: Int = defaultMinSample) {
        self.rules = rules
        self.confidence = confidence
        self.minSample = minSample
    }

    /// With a baseline: arrival rate and effective arrival rate may not
    /// drop, and the stale-timestamp share of accepted updates, the oversize
    /// share of requests and callback loss may not rise, by more than one
    /// percentage point where the change is also significant. Without one:
    /// no oversize failures and an arrival rate of at least 95%.
    package static func defaultRules(withBaseline: Bool) -> [GateRule] {
        func rule(_ id: String, _ check: GateRule.Check) -> GateRule {
            // The ids are the catalogue's own; a typo here is caught by the tests.
            GateRule(metric: Metric.named(id) ?? Metric.all[0], check: check)
        }
        if withBaseline {
            return [
                rule("updates.arrival_rate", .maxDrop(1)),
                rule("updates.effective_arrival_rate", .maxDrop(1)),
                rule("updates.stale_share", .maxRise(1)),
                rule("requests.oversize_share", .maxRise(1)),
                rule("callbacks.callback_loss_rate", .maxRise(1)),
            ]
        }
        return [
            rule("requests.oversize_failures", .atMost(0)),
            rule("updates.arrival_rate", .atLeast(0.95)),
        ]
    }

    /// Flags over the config file over the defaults.
    package static func resolve(
        configText: String?, configPath: String?, ruleFlags: [String], confidence: Double?, minSample: Int?,
        withBaseline: Bool
    ) throws(GateConfigError) -> GateConfig {
        var config: GateConfig
        if let configText {
            config = try parse(yaml: configText, path: configPath ?? "gate.yml")
        } else if ruleFlags.isEmpty {
            config = GateConfig(rules: defaultRules(withBaseline: withBaseline))
        } else {
            config = GateConfig(rules: [])
        }
        for flag in ruleFlags {
            let rule = try GateRule.parse(flag)
            if let index = config.rules.firstIndex(where: { $0.key == rule.key }) {
                config.rules[index] = rule
            } else {
                config.rules.append(rule)
            }
        }
        if let confidence { config.confidence = confidence }
        if let minSample { config.minSample = minSample }
        return config
    }

    /// Refuses regression rules (max_drop, max_rise) when no baseline was
    /// given: they would pass without being checked. `allowMissing` (the
    /// `--allow-no-baseline` flag) skips them instead; they are then listed
    /// as not checked.
    package func checkBaseline(given: Bool, allowMissing: Bool) throws(GateConfigError) {
        guard !given, !allowMissing else { return }
        let regressions = rules.filter(\.check.needsBaseline)
        guard !regressions.isEmpty else { return }
        let shown =
            regressions.prefix(3).map(\.description).joined(separator: "; ")
            + (regressions.count > 3 ? "; …" : "")
        throw GateConfigError(
            "\(regressions.count) rule\(regressions.count == 1 ? "" : "s") compare\(regressions.count == 1 ? "s" : "") against a baseline (\(shown)), but no --baseline was given, so \(regressions.count == 1 ? "it" : "they") cannot be checked",
            hint:
                "pass --baseline with the batch, store or report JSON to compare with, or add --allow-no-baseline to check only the floors and ceilings."
        )
    }

    /// Reads a `gate.yml`:
    ///
    /// ```yaml
    /// confidence: 0.95
    /// min_sample: 100
    /// rules:
    ///   - metric: updates.arrival_rate
    ///     at_least: 0.95
    ///   - metric: updates.arrival_rate
    ///     max_drop: 0.5        # percentage points against the baseline
    ///     significant: true
    ///     min_sample: 1000
    /// ```
    package static func parse(yaml text: String, path: String) throws(GateConfigError) -> GateConfig {
        func fail(_ node: Node?, _ why: String, hint: String = "see the sample gate.yml in the arrival repository.")
            -> GateConfigError
        {
            GateConfigError(why, hint: hint, location: Diagnostic.Location(path: path, line: node?.mark.map(\.line)))
        }
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else { throw fail(nil, "the file is empty") }
            root = node
        } catch let error as GateConfigError {
            throw error
        } catch {
            throw GateConfigError(
                "not valid YAML: \(error)", hint: "see the sample gate.yml in the arrival repository.",
                location: Diagnostic.Location(path: path))
        }
        guard let top = root.mapping else { throw fail(root, "expected a mapping with 'rules:'") }
        var config = GateConfig(rules: [])
        var sawRules = false
        for (keyNode, value) in top {
            guard let key = keyNode.string else { throw fail(keyNode, "keys must be names") }
            switch key {
            case "confidence":
                guard let confidence = value.float, confidence > 0.5, confidence < 1 else {
                    throw fail(value, "confidence must be a number between 0.5 and 1, e.g. 0.95")
                }
                config.confidence = confidence
            case "min_sample":
                guard let n = value.int, n >= 0 else { throw fail(value, "min_sample must be a whole number ≥ 0") }
                config.minSample = n
            case "rules":
                guard let list = value.sequence else { throw fail(value, "'rules' must be a list") }
                sawRules = true
                for item in list {
                    config.rules.append(try parseRule(item, path: path))
                }
            default:
                throw fail(keyNode, "unknown key '\(key)' (confidence, min_sample, rules)")
            }
        }
        guard sawRules else { throw fail(root, "no 'rules:' list") }
        var seen: Set<String> = []
        for rule in config.rules where !seen.insert(rule.key).inserted {
            throw fail(root, "two rules check \(rule.key); keep one")
        }
        return config
    }

    private static func parseRule(_ item: Node, path: String) throws(GateConfigError) -> GateRule {
        func fail(_ node: Node?, _ why: String) -> GateConfigError {
            GateConfigError(
                why, hint: "see the sample gate.yml in the arrival repository.",
                location: Diagnostic.Location(path: path, line: node?.mark.map(\.line)))
        }
        guard let fields = item.mapping else { throw fail(item, "each rule is a mapping with 'metric:' and one check") }
        var metric: Metric?
        var check: GateRule.Check?
        var significant = true
        var minSample: Int?
        for (keyNode, value) in fields {
            guard let key = keyNode.string else { throw fail(keyNode, "keys must be names") }
            switch key {
            case "metric":
                guard let name = value.string, let found = Metric.named(name) else {
                    throw fail(
                        value,
                        "unknown metric '\(value.string ?? "")'; metrics are named as in the report JSON, e.g. updates.arrival_rate"
                    )
                }
                metric = found
            case "at_least", "at_most", "max_drop", "max_rise":
                guard check == nil else { throw fail(keyNode, "a rule has one check; split it into two rules") }
                guard let number = value.float ?? value.int.map(Double.init), number.isFinite else {
                    throw fail(value, "'\(key)' must be a number")
                }
                switch key {
                case "at_least": check = .atLeast(number)
                case "at_most": check = .atMost(number)
                case "max_drop": check = .maxDrop(number)
                default: check = .maxRise(number)
                }
            case "significant":
                guard let flag = value.bool else { throw fail(value, "'significant' must be true or false") }
                significant = flag
            case "min_sample":
                guard let n = value.int, n >= 0 else { throw fail(value, "min_sample must be a whole number ≥ 0") }
                minSample = n
            default:
                throw fail(
                    keyNode,
                    "unknown rule key '\(key)' (metric, at_least, at_most, max_drop, max_rise, significant, min_sample)"
                )
            }
        }
        guard let metric else { throw fail(item, "the rule names no 'metric'") }
        guard let check else {
            throw fail(item, "the rule on \(metric.id) has no check (at_least, at_most, max_drop or max_rise)")
        }
        if let (why, hint) = GateRule.rangeProblem(metric: metric, check: check) {
            throw GateConfigError(
                why, hint: hint, location: Diagnostic.Location(path: path, line: item.mark.map(\.line)))
        }
        return GateRule(metric: metric, check: check, significant: significant, minSample: minSample)
    }
}

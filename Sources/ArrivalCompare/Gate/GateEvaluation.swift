package import ArrivalModel
import ArrivalRendering

/// What `arrival gate` decided, rule by rule.
package struct GateEvaluation: Sendable {
    package enum Verdict: String, Sendable {
        case pass, fail, warn
    }

    package struct Result: Sendable {
        package var rule: GateRule
        package var verdict: Verdict
        /// What the rule asks, e.g. `≥ 95%` or `drop ≤ 1 pt`.
        package var expected: String
        /// What was measured, e.g. `93.10% (2,431 of 2,611)`.
        package var actual: String
        /// Why the verdict, in one sentence.
        package var detail: String
    }

    package var current: String
    package var baseline: String?
    package var confidence: Double
    package var results: [Result]

    package var failures: Int { results.filter { $0.verdict == .fail }.count }
    package var warnings: Int { results.filter { $0.verdict == .warn }.count }
    package var passed: Bool { failures == 0 }

    /// Applies `config` to the current side and, for regression rules, the
    /// baseline.
    package init(config: GateConfig, current: ComparisonSide, baseline: ComparisonSide?) {
        self.init(
            config: config, current: current.report, currentSamples: current.samples, currentPath: current.path,
            baseline: baseline?.report, baselineSamples: baseline?.samples, baselinePath: baseline?.path)
    }

    package init(
        config: GateConfig, current: Report, currentSamples: ActivitySamples?, currentPath: String,
        baseline: Report?, baselineSamples: ActivitySamples?, baselinePath: String?
    ) {
        self.current = currentPath
        self.baseline = baselinePath
        confidence = config.confidence
        results = config.rules.map { rule in
            Self.evaluate(
                rule, config: config, current: current, currentSamples: currentSamples,
                baseline: baseline, baselineSamples: baselineSamples)
        }
    }

    static func evaluate(
        _ rule: GateRule, config: GateConfig, current: Report, currentSamples: ActivitySamples?,
        baseline: Report?, baselineSamples: ActivitySamples?
    ) -> Result {
        let metric = rule.metric
        let minimum = rule.minSample ?? config.minSample
        let sample = metric.sampleSize(in: current)
        let value = metric.value(in: current)
        let threshold = rule.check.threshold
        var result = Result(rule: rule, verdict: .pass, expected: "", actual: measured(metric, current), detail: "")
        // A figure a side's report does not have at all fails the rule, saying so: a gate that
        // cannot measure what it was asked to must not pass in silence.
        if let absent = absentFigure(metric, rule: rule, current: current, baseline: baseline)
            ?? absentEntry(metric, rule: rule, current: current, baseline: baseline)
        {
            result.verdict = .fail
            result.expected = rule.check.name
            result.actual = "absent"
            result.detail = absent
            return result
        }

        switch rule.check {
        case .atLeast, .atMost:
            result.expected = (rule.check.name == "at_least" ? "≥ " : "≤ ") + GateRule.format(threshold, metric)
            guard let value else {
                result.verdict = .warn
                result.detail = "no data: \(metric.id) is undefined on the current side (nothing to measure it on)."
                return result
            }
            let holds: Bool
            if case .atLeast = rule.check { holds = value >= threshold } else { holds = value <= threshold }
            if holds {
                result.detail = "holds."
            } else if sample < minimum {
                result.verdict = .warn
                result.detail = "would fail, but rests on \(sample) (fewer than min_sample \(minimum)); not enforced."
            } else {
                result.verdict = .fail
                result.detail = "\(metric.id) is \(ReportDiff.value(value, metric)), outside \(result.expected)."
            }
            return result

        case .maxDrop, .maxRise:
            let unit = metric.kind == .rate ? " pt" : metric.kind == .milliseconds ? " ms" : ""
            let isDrop = rule.check.name == "max_drop"
            result.expected =
                (isDrop ? "drop ≤ " : "rise ≤ ") + GateRule.number(threshold) + unit
                + (rule.significant && metric.kind == .rate
                    ? ", significant at \(ReportFormat.percent(config.confidence, digits: 0))" : "")
            guard let baseline else {
                result.verdict = .warn
                result.detail = "not checked: a regression rule needs --baseline."
                return result
            }
            result.actual = measured(metric, baseline) + " → " + measured(metric, current)
            guard let value, let before = metric.value(in: baseline) else {
                result.verdict = .warn
                result.detail =
                    "no data: \(metric.id) is undefined on \(value == nil ? "the current side" : "the baseline")."
                return result
            }
            let scale = metric.kind == .rate ? 100.0 : 1.0
            let move = (isDrop ? before - value : value - before) * scale
            let moveText = GateRule.number((move * 100).rounded() / 100) + unit
            guard move > threshold else {
                result.detail =
                    move > 0
                    ? "\(isDrop ? "dropped" : "rose") \(moveText), within the limit."
                    : "did not \(isDrop ? "drop" : "rise")."
                return result
            }
            if rule.significant, metric.kind == .rate,
                let fractionA = metric.fraction(in: baseline), let fractionB = metric.fraction(in: current),
                let test = Significance.test(
                    a: fractionA, b: fractionB, clustersA: baselineSamples?[metric],
                    clustersB: currentSamples?[metric], confidence: config.confidence)
            {
                if !test.isSignificant {
                    result.detail =
                        "\(isDrop ? "dropped" : "rose") \(moveText), but within noise (p\(ReportDiff.formatP(test.pValue)), \(test.method.rawValue))."
                    return result
                }
                result.detail =
                    "\(isDrop ? "dropped" : "rose") \(moveText), significant (p\(ReportDiff.formatP(test.pValue)), \(test.method.rawValue))."
            } else {
                result.detail = "\(isDrop ? "dropped" : "rose") \(moveText)."
            }
            let baselineSample = metric.sampleSize(in: baseline)
            if min(sample, baselineSample) < minimum {
                result.verdict = .warn
                result.detail +=
                    " Would fail, but rests on \(min(sample, baselineSample)) (fewer than min_sample \(minimum)); not enforced."
            } else {
                result.verdict = .fail
                result.detail += " Limit \(GateRule.number(threshold))\(unit)."
            }
            return result
        }
    }

    /// Why a rule cannot be judged when a side's report is of a schema before its figure.
    static func absentFigure(_ metric: Metric, rule: GateRule, current: Report, baseline: Report?) -> String? {
        for (side, report) in [("the current side", current), ("the baseline", baseline)] {
            guard let report, !metric.isPresent(in: report) else { continue }
            if side == "the baseline", !rule.check.needsBaseline { continue }
            return "\(metric.id) is not in \(side)'s report: it is a figure of report schema \(metric.since) "
                + "(contract 3.0), and \(side) is a report of schema \(report.schema). Compare reports of "
                + "schema \(metric.since), or drop the rule."
        }
        return nil
    }

    /// Why a rule on a breakdown entry cannot be judged, when a side's report
    /// has no such entry: a mistyped key (`breakdowns.channel.<typo>.…`)
    /// must fail, not pass with a warning. The entries the report has are
    /// named. Nil when the entry is there (or the figure is no breakdown's).
    static func absentEntry(_ metric: Metric, rule: GateRule, current: Report, baseline: Report?) -> String? {
        guard let (dimension, key) = metric.breakdownEntry else { return nil }
        for (side, report) in [("the current side", current), ("the baseline", baseline)] {
            guard let report, side == "the current side" || rule.check.needsBaseline else { continue }
            let entries = report.breakdowns[dimension] ?? [:]
            guard entries[ExactString(key)] == nil else { continue }
            let known = entries.keys.map(\.text).sorted()
            return "breakdowns.\(dimension) has no entry '\(key)' in \(side)'s report "
                + (known.isEmpty
                    ? "(it has none): "
                    : "(its entries: \(known.prefix(12).joined(separator: ", "))\(known.count > 12 ? ", …" : "")): ")
                + "a mistyped key, or nothing there in this window. Fix the key, or drop the rule."
        }
        return nil
    }

    /// `93.10% (2431 of 2611)` for a rate, the value for the rest.
    static func measured(_ metric: Metric, _ report: Report) -> String {
        guard let value = metric.value(in: report) else { return ReportFormat.none }
        if let fraction = metric.fraction(in: report) {
            return "\(ReportFormat.percent(value, digits: 2)) (\(fraction.numerator) of \(fraction.denominator))"
        }
        return ReportDiff.value(value, metric)
    }
}

package import ArrivalModel

/// One rule of `arrival gate`: a floor or ceiling on the current side, or a
/// limit on how far a metric may move against the baseline.
package struct GateRule: Sendable, Equatable, CustomStringConvertible {
    package enum Check: Sendable, Equatable {
        /// The current value is at least this (a rate as a fraction: 0.95).
        case atLeast(Double)
        /// The current value is at most this.
        case atMost(Double)
        /// The value may not fall by more than this against the baseline;
        /// for rates in percentage points (1 = one point), else in the
        /// metric's own unit.
        case maxDrop(Double)
        /// The value may not rise by more than this against the baseline.
        case maxRise(Double)

        var name: String {
            switch self {
            case .atLeast: "at_least"
            case .atMost: "at_most"
            case .maxDrop: "max_drop"
            case .maxRise: "max_rise"
            }
        }

        var threshold: Double {
            switch self {
            case .atLeast(let x), .atMost(let x), .maxDrop(let x), .maxRise(let x): x
            }
        }

        package var needsBaseline: Bool {
            switch self {
            case .atLeast, .atMost: false
            case .maxDrop, .maxRise: true
            }
        }
    }

    package var metric: Metric
    package var check: Check
    /// For a regression rule on a rate: fail only when the change is also
    /// significant at the gate's confidence.
    package var significant: Bool
    /// Below this sample (see ``Metric/sampleSize(in:)``; both sides for a
    /// regression) a failing rule warns instead.
    package var minSample: Int?

    package init(metric: Metric, check: Check, significant: Bool = true, minSample: Int? = nil) {
        self.metric = metric
        self.check = check
        self.significant = significant
        self.minSample = minSample
    }

    /// A flag's rule replaces the config's rule with the same key.
    package var key: String { metric.id + " " + check.name }

    /// `updates.arrival_rate ≥ 95%`, `updates.arrival_rate drop ≤ 1 pt`.
    package var description: String {
        let unit = metric.kind == .rate ? " pt" : metric.kind == .milliseconds ? " ms" : ""
        switch check {
        case .atLeast(let x): return "\(metric.id) ≥ \(Self.format(x, metric))"
        case .atMost(let x): return "\(metric.id) ≤ \(Self.format(x, metric))"
        case .maxDrop(let x):
            return "\(metric.id) drop ≤ \(Self.number(x))\(unit)"
                + (significant && metric.kind == .rate ? " (significant)" : "")
        case .maxRise(let x):
            return "\(metric.id) rise ≤ \(Self.number(x))\(unit)"
                + (significant && metric.kind == .rate ? " (significant)" : "")
        }
    }

    static func format(_ value: Double, _ metric: Metric) -> String {
        switch metric.kind {
        case .rate: return number(value * 100) + "%"
        case .count: return number(value)
        case .milliseconds: return number(value) + " ms"
        }
    }

    /// Shortest text of a threshold: `1`, `0.5`, `95`.
    static func number(_ value: Double) -> String {
        let rounded = (value * 1e9).rounded() / 1e9
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
        return "\(rounded)"
    }

    /// Parses a rule flag: `METRIC >= X`, `METRIC <= X`, `METRIC drop <= X`,
    /// `METRIC rise <= X`, optionally followed by `min_sample=N` and
    /// `significant=false`. Rates take `0.95` or `95%`; drops and rises of
    /// rates are in points (`1` or `1pt`).
    package static func parse(_ text: String) throws(GateConfigError) -> GateRule {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        func fail(
            _ why: String,
            hint: String = "write e.g. 'updates.arrival_rate >= 0.95' or 'updates.arrival_rate drop <= 1'."
        ) -> GateConfigError {
            GateConfigError("--rule '\(text)': \(why)", hint: hint)
        }
        guard let name = words.first else { throw fail("empty rule") }
        guard let metric = Metric.named(name) else {
            throw fail("unknown metric '\(name)' (see 'arrival gate --help' for the list)")
        }
        var rest = Array(words.dropFirst())
        var direction: String?
        if let first = rest.first, first == "drop" || first == "rise" {
            direction = first
            rest.removeFirst()
        }
        guard rest.count >= 2 else { throw fail("expected an operator and a value") }
        let op = rest[0]
        guard let value = parseValue(rest[1], metric: metric, isChange: direction != nil) else {
            throw fail("'\(rest[1])' is not a number")
        }
        let check: Check
        switch (direction, op) {
        case (nil, ">="): check = .atLeast(value)
        case (nil, "<="): check = .atMost(value)
        case ("drop", "<="): check = .maxDrop(value)
        case ("rise", "<="): check = .maxRise(value)
        default: throw fail("operator '\(op)' is not one of >=, <= (drop and rise take <=)")
        }
        if let (why, hint) = rangeProblem(metric: metric, check: check) { throw fail(why, hint: hint) }
        var rule = GateRule(metric: metric, check: check)
        for option in rest.dropFirst(2) {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw fail("'\(option)' is not name=value") }
            switch parts[0] {
            case "min_sample":
                guard let n = Int(parts[1]), n >= 0 else { throw fail("min_sample must be a whole number") }
                rule.minSample = n
            case "significant":
                guard let flag = Bool(parts[1]) else { throw fail("significant must be true or false") }
                rule.significant = flag
            default:
                throw fail("unknown option '\(parts[0])' (min_sample, significant)")
            }
        }
        return rule
    }

    /// Why a floor or ceiling can never be met as written, with what to write
    /// instead: a rate is a fraction, so `>= 90` or `>= -3` is a mistake,
    /// not a rule.
    static func rangeProblem(metric: Metric, check: Check) -> (why: String, hint: String)? {
        guard metric.kind == .rate else { return nil }
        switch check {
        case .atLeast(let x), .atMost(let x):
            guard x < 0 || x > 1 else { return nil }
            let example = x > 1 && x <= 100 ? "write \(number(x / 100)) for \(number(x))%" : "write 0.9 for 90%"
            return (
                "\(metric.id) is a fraction between 0 and 1, so \(check.name) \(number(x)) is out of range",
                "rates are fractions: \(example)."
            )
        case .maxDrop, .maxRise:
            return nil
        }
    }

    /// `0.95`, `95%` (rates), `1pt` (changes of rates, in points).
    static func parseValue(_ text: String, metric: Metric, isChange: Bool) -> Double? {
        var body = Substring(text)
        if body.hasSuffix("pt") {
            guard isChange, metric.kind == .rate else { return nil }
            body = body.dropLast(2)
        }
        if body.hasSuffix("%") {
            guard !isChange, metric.kind == .rate, let percent = Double(body.dropLast()) else { return nil }
            return percent / 100
        }
        guard let value = Double(body), value.isFinite else { return nil }
        return value
    }
}

/// A rule set or rule flag that cannot be used, with where and why.
package struct GateConfigError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    package var message: String
    /// What to write instead.
    package var hint: String
    /// The rule file and line, for a rule from a file.
    package var location: Diagnostic.Location?

    package init(_ message: String, hint: String, location: Diagnostic.Location? = nil) {
        self.message = message
        self.hint = hint
        self.location = location
    }

    /// `gate.yml:14: why. What to do.`
    package var description: String {
        (location.map { "\($0): " } ?? "") + message + ". " + hint.prefix(1).uppercased() + hint.dropFirst()
    }
}

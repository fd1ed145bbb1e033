import ArgumentParser
import ArrivalCompare
import ArrivalModel
import Foundation

struct Gate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fail a CI build when Live Activity delivery got worse.",
        discussion: """
            --current and --baseline take anything 'arrival diff' does: a batch file, a directory of \
            batches, an arrival store or a report JSON. Rules come from --rule flags, then --config, \
            then the defaults. Default rules with a baseline: updates.arrival_rate and \
            updates.effective_arrival_rate may not drop, and updates.stale_share, \
            requests.oversize_share and callbacks.callback_loss_rate may not rise, by more than 1 \
            percentage point where the change is also significant. Without a baseline: \
            requests.oversize_failures <= 0 and updates.arrival_rate >= 0.95.
            Rates are fractions: 'updates.arrival_rate >= 0.9' (or 90%), never 90; a floor or ceiling on a \
            rate outside 0–1 is refused. Regression rules (drop/rise, max_drop/max_rise in a config) need \
            --baseline: without one the gate refuses to run, unless --allow-no-baseline says to skip them \
            (they are then listed as not checked), e.g. on a pipeline's first run.
            Metrics: \(Metric.all.map(\.id).joined(separator: ", ")); and one entry of a breakdown, \
            breakdowns.<app|priority|provider|os_version|app_version|channel>.<key>.<figure>, e.g. \
            'breakdowns.channel.match-7.arrival_rate >= 0.9' (figures: \(Metric.breakdownFigures.joined(separator: ", "))).
            Exit codes: 0 every rule passed (warnings allowed), 1 a rule failed, 2 the gate could not run or \
            report: bad usage or rules, an unreadable side, a --junit or step summary that cannot be written.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(help: "The batch, store or report JSON to judge.")
    var current: String

    @Option(help: "The batch, store or report JSON to compare against (enables regression rules).")
    var baseline: String?

    @Option(help: "A YAML rule file (see gate.yml in the repository).")
    var config: String?

    @Option(
        name: .customLong("rule"),
        help: ArgumentHelp(
            "A rule, repeatable; replaces the config's rule on the same metric and check.",
            discussion:
                "'updates.arrival_rate >= 0.95', 'requests.oversize_failures <= 0', 'updates.arrival_rate drop <= 0.5 min_sample=1000', 'callbacks.callback_loss_rate rise <= 1 significant=false'."
        ))
    var rules: [String] = []

    @Option(
        help:
            "Minimum sample for rules that name none (default \(GateConfig.defaultMinSample)); below it a failing rule warns."
    )
    var minSample: Int?

    @Option(help: "Confidence of the significance tests (default \(GateConfig.defaultConfidence)).")
    var confidence: Double?

    @OptionGroup var window: WindowOptions

    @Option(help: "Output format on standard output: text or json.")
    var format: Format = .text

    @Option(help: "Also write JUnit XML (one test case per rule) to this file.")
    var junit: String?

    @Flag(help: "Print GitHub Actions annotations, and append a markdown summary to $GITHUB_STEP_SUMMARY when set.")
    var github = false

    @OptionGroup var color: ColorOptions

    @Flag(help: "Without --baseline, skip the regression rules (drop/rise) instead of refusing to run.")
    var allowNoBaseline = false

    func validate() throws {
        _ = try window.resolved()
        if let confidence, !(confidence > 0.5 && confidence < 1) {
            throw ValidationError("--confidence must be between 0.5 and 1, e.g. 0.95.")
        }
        if let minSample, minSample < 0 { throw ValidationError("--min-sample must be 0 or more.") }
    }

    func run() throws {
        var configText: String?
        if let config {
            do {
                configText = try String(contentsOfFile: config, encoding: .utf8)
            } catch {
                throw Diagnostic(
                    .input, "cannot read the gate config '\(config)': \(error.localizedDescription)",
                    hint: "check the path, or drop --config to use the default rules.",
                    location: Diagnostic.Location(path: config))
            }
        }
        let resolved = try GateConfig.resolve(
            configText: configText, configPath: config, ruleFlags: rules, confidence: confidence,
            minSample: minSample, withBaseline: baseline != nil)
        guard !resolved.rules.isEmpty else {
            throw Diagnostic(
                .usage, "no rules to apply: the config lists none",
                hint: "add rules, or drop --config to use the defaults.")
        }
        try resolved.checkBaseline(given: baseline != nil, allowMissing: allowNoBaseline)
        let window = try self.window.resolved()
        let baselineSide: ComparisonSide?
        let currentSide: ComparisonSide
        if let baseline {
            (baselineSide, currentSide) = try loadSides(baseline, current, window: window)
        } else {
            (baselineSide, currentSide) = (nil, try loadSide(current, window: window))
        }
        let evaluation = GateEvaluation(config: resolved, current: currentSide, baseline: baselineSide)

        switch format {
        case .text: print(evaluation.text(color: color.enabled), terminator: "")
        case .json: print(evaluation.jsonText(), terminator: "")
        }
        if let junit {
            // UTC without a zone suffix, as the JUnit schema's timestamp wants.
            let seconds = Int64(Date().timeIntervalSince1970)
            let stamp = String(RFC3339.format(milliseconds: seconds * 1000).dropLast())
            try write(evaluation.junitXML(timestamp: stamp, hostname: ProcessInfo.processInfo.hostName), to: junit)
        }
        if github {
            FileHandle.standardOutput.write(Data(evaluation.githubAnnotations().utf8))
            if let summaryPath = ProcessInfo.processInfo.environment["GITHUB_STEP_SUMMARY"], !summaryPath.isEmpty {
                try append(evaluation.markdownSummary(), to: summaryPath)
            }
        }
        if !evaluation.passed { throw ExitCode(1) }
    }

    private func append(_ text: String, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw Diagnostic(
                .io, "cannot append to GITHUB_STEP_SUMMARY '\(path)'", hint: "check it names a writable file.",
                location: Diagnostic.Location(path: path))
        }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
    }
}

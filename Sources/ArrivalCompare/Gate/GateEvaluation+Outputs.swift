import ArrivalModel
package import ArrivalRendering
import Foundation

extension GateEvaluation {
    // MARK: - Text

    /// The human summary: one line per rule (verdict, rule, expected,
    /// actual), why, and the overall verdict last.
    package func text(color: Bool) -> String {
        var out: [String] = []
        out.append("arrival gate: current \(current)" + (baseline.map { ", baseline \($0)" } ?? ", no baseline"))
        var table = TextTable(
            ["verdict", "rule", "expected", "actual", "why"], alignments: [.left, .left, .left, .left, .left])
        for result in results {
            let tint: ANSIColor? = result.verdict == .fail ? .red : result.verdict == .warn ? .yellow : .green
            table.add([
                .init(text: result.verdict.rawValue.uppercased(), color: tint),
                .init(text: result.rule.metric.id, color: nil),
                .init(text: result.expected, color: nil),
                .init(text: result.actual, color: nil),
                .init(text: result.detail, color: nil),
            ])
        }
        out.append(table.render(color: color))
        let summary =
            "\(ReportFormat.counted(results.count, "rule")): \(results.count - failures - warnings) passed, \(failures) failed, \(warnings) warned"
        if passed {
            out.append((color ? ANSIColor.green.wrap("PASS") : "PASS") + "  " + summary)
        } else {
            out.append((color ? ANSIColor.red.wrap("FAIL") : "FAIL") + "  " + summary)
        }
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: - JSON

    package func jsonText() -> String { JSONWriter.document(self) }

    // MARK: - JUnit

    /// JUnit XML, one test case per rule: a failed rule is a `<failure>`, a
    /// rule that warned (too small a sample, no data, no baseline) is
    /// `<skipped>`. Carries every attribute and element the common JUnit
    /// schema requires, so Jenkins, GitLab, Buildkite and GitHub reporters
    /// all read it. `timestamp` is the caller's (UTC, no zone, as the
    /// schema wants).
    package func junitXML(timestamp: String, hostname: String) -> String {
        let tests = results.count
        let skipped = warnings
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml +=
            "<testsuites name=\"arrival gate\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"0\">\n"
        xml +=
            "  <testsuite name=\"arrival gate\" package=\"arrival\" id=\"0\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"0\" timestamp=\"\(Self.xmlEscaped(timestamp))\" hostname=\"\(Self.xmlEscaped(hostname))\">\n"
        xml += "    <properties>\n"
        xml += "      <property name=\"current\" value=\"\(Self.xmlEscaped(current))\"/>\n"
        if let baseline { xml += "      <property name=\"baseline\" value=\"\(Self.xmlEscaped(baseline))\"/>\n" }
        xml += "      <property name=\"confidence\" value=\"\(confidence)\"/>\n"
        xml += "    </properties>\n"
        for result in results {
            let name = Self.xmlEscaped(result.rule.description)
            xml +=
                "    <testcase name=\"\(name)\" classname=\"arrival.gate.\(Self.xmlEscaped(result.rule.metric.id))\" time=\"0\">\n"
            let message = Self.xmlEscaped("expected \(result.expected), actual \(result.actual): \(result.detail)")
            switch result.verdict {
            case .fail:
                xml += "      <failure message=\"\(message)\" type=\"GateRuleFailed\">\(message)</failure>\n"
            case .warn:
                xml += "      <skipped message=\"\(message)\"/>\n"
            case .pass:
                xml += "      <system-out>\(message)</system-out>\n"
            }
            xml += "    </testcase>\n"
        }
        xml += "    <system-out></system-out>\n"
        xml += "    <system-err></system-err>\n"
        xml += "  </testsuite>\n"
        xml += "</testsuites>\n"
        return xml
    }

    static func xmlEscaped(_ text: String) -> String { xmlEscapes.escaped(text) }

    /// Markup characters as entities, line breaks and tabs as character
    /// references (attribute values keep them); what XML 1.0 cannot carry
    /// at all (the other controls, U+FFFE, U+FFFF) as U+FFFD.
    private static let xmlEscapes = ScalarEscapes(
        [
            "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;", "\n": "&#10;", "\t": "&#9;",
            "\r": "&#13;", "\u{FFFE}": "\u{FFFD}", "\u{FFFF}": "\u{FFFD}",
        ],
        otherControl: { _ in "\u{FFFD}" })

    // MARK: - GitHub Actions

    /// Workflow commands: an `::error` per failed rule and a `::warning`
    /// per rule that warned, which GitHub shows on the run and the PR.
    package func githubAnnotations() -> String {
        var lines: [String] = []
        for result in results where result.verdict != .pass {
            let command = result.verdict == .fail ? "error" : "warning"
            let title = Self.propertyEscaped("arrival gate: \(result.rule.description)")
            let message = Self.dataEscaped("expected \(result.expected), actual \(result.actual). \(result.detail)")
            lines.append("::\(command) title=\(title)::\(message)")
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    /// The markdown job summary for `$GITHUB_STEP_SUMMARY`.
    package func markdownSummary() -> String {
        var out: [String] = []
        out.append("### arrival gate: \(passed ? "✅ passed" : "❌ failed")")
        out.append("")
        out.append(
            "Current `\(Markdown.escaped(current))`"
                + (baseline.map { ", baseline `\(Markdown.escaped($0))`" } ?? ", no baseline") + ".")
        out.append("")
        out.append("| verdict | rule | expected | actual | why |")
        out.append("|---|---|---|---|---|")
        for result in results {
            let mark = result.verdict == .fail ? "❌ fail" : result.verdict == .warn ? "⚠️ warn" : "✅ pass"
            out.append(
                "| \(mark) | `\(result.rule.metric.id)` | \(Markdown.escaped(result.expected)) | \(Markdown.escaped(result.actual)) | \(Markdown.escaped(result.detail)) |"
            )
        }
        return out.joined(separator: "\n") + "\n"
    }

    static func dataEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    static func propertyEscaped(_ text: String) -> String {
        dataEscaped(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }
}

extension GateEvaluation: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "schema": "arrival.gate/1", "current": current, "baseline": baseline, "confidence": confidence,
            "passed": passed, "failures": failures, "warnings": warnings, "rules": results,
        ]
    }
}

extension GateEvaluation.Result: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "rule": rule.description, "metric": rule.metric.id, "check": rule.check.name,
            "threshold": rule.check.threshold, "verdict": verdict.rawValue, "expected": expected, "actual": actual,
            "detail": detail,
        ]
    }
}

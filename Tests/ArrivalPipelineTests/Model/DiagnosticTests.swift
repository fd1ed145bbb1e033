import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import Foundation
import Testing

@testable import ArrivalCompare
@testable import ArrivalRendering
@testable import ArrivalStore

@Suite("Diagnostic")
struct DiagnosticTests {
    @Test("Printed as error, then where (when the message does not say it), then what to do")
    func printed() {
        let withLine = Diagnostic(
            .input, "malformed line (invalid_json)", hint: "fix the line.",
            location: Diagnostic.Location(path: "a.jsonl", line: 12))
        #expect(withLine.description == "error: malformed line (invalid_json)\n  --> a.jsonl:12\nhint: fix the line.")
        #expect(withLine.warningDescription.hasPrefix("warning: malformed line"))
        let field = Diagnostic(
            .usage, "bad rule", hint: "see gate.yml.",
            location: Diagnostic.Location(path: "gate.yml", line: 3, field: "at_least"))
        #expect(field.description.contains("  --> gate.yml:3, field at_least\n"))
        let named = Diagnostic(
            .store, "no store at 'x.sqlite'", hint: "run ingest.", location: Diagnostic.Location(path: "x.sqlite"))
        #expect(named.description == "error: no store at 'x.sqlite'\nhint: run ingest.")
    }

    struct Unknown: Error {}

    @Test("An error nobody described is an input/output problem, never bad usage")
    func fallback() {
        let diagnostic = Diagnostic(Unknown())
        #expect(diagnostic.category == .io)
        #expect(!diagnostic.hint.isEmpty)
    }

    @Test("A Foundation file error names the file and says what to check")
    func foundation() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/x.json"
        do {
            _ = try Data(contentsOf: URL(fileURLWithPath: missing))
            Issue.record("read a missing file")
        } catch {
            let diagnostic = Diagnostic(error)
            #expect(diagnostic.category == .io)
            #expect(diagnostic.location?.path == missing)
            #expect(diagnostic.hint.contains("does not exist"))
        }
    }

    @Test(
        "Each stage's errors carry their category: store, input, usage or io",
        arguments: [
            (DatabaseError(code: 1, message: "boom", context: "running x") as any Error, Diagnostic.Category.store),
            (InputError.cannotOpen(path: "/x", reason: "No such file or directory"), .input),
            (IngestError.malformedLine(path: "/x", line: 3, cause: .invalidJSON, problem: nil), .input),
            (ComparisonError.notFound("/x"), .input),
            (ComparisonError.windowOnReportJSON("/x.json"), .usage),
            (ReportDecodingError(description: "no \"schema\" field"), .input),
            (GateConfigError("--rule 'x': unknown metric 'x'", hint: "write e.g. …"), .usage),
            (SimulationError.invalidDay("2026-13-01"), .usage),
            (SimulationError.cannotCreate("/proc/x"), .io),
            (DashboardTemplates.Missing(name: "report"), .io),
        ])
    func categories(error: any Error, category: Diagnostic.Category) {
        let diagnostic = Diagnostic(error)
        #expect(diagnostic.category == category, "\(error)")
        #expect(!diagnostic.message.isEmpty && !diagnostic.hint.isEmpty)
    }

    @Test("A malformed line under --strict points at its file and line")
    func malformedLocation() {
        let diagnostic = Diagnostic(
            IngestError.malformedLine(path: "/u/a.jsonl", line: 7, cause: .invalidJSON, problem: "expected a value"))
        #expect(diagnostic.location == Diagnostic.Location(path: "/u/a.jsonl", line: 7))
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

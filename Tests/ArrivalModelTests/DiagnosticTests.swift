import ArrivalModel
import Foundation
import Testing

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
}

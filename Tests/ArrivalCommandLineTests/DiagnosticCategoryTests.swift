import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import Testing

@testable import ArrivalCompare
@testable import ArrivalRendering
@testable import ArrivalStore

/// Every stage's errors as the command line prints them and exits with
/// (`Diagnostic(error)`: its category decides the exit code, ExitCodeTests).
@Suite("Diagnostic categories of every stage")
struct DiagnosticCategoryTests {
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
}

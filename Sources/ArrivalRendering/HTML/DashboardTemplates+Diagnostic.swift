import ArrivalModel

// The templates are compiled into arrival, so either failure is a broken build,
// not a mistake of the user's: the hint says how to get a good one.

extension DashboardTemplates.Missing: DiagnosticConvertible {
    var diagnostic: Diagnostic {
        Diagnostic(
            .io, description,
            hint:
                "this arrival was built without its templates; rebuild it (swift build), or use --format json or markdown."
        )
    }
}

extension DashboardTemplates.Invalid: DiagnosticConvertible {
    var diagnostic: Diagnostic {
        Diagnostic(
            .io, description,
            hint:
                "fix Dashboards/templates/\(name).mustache, re-embed it (RECORD_TEMPLATES=1 swift test --filter DashboardTemplateTests) and rebuild; or use --format json or markdown.",
            location: Diagnostic.Location(path: "Dashboards/templates/\(name).mustache", line: line))
    }
}

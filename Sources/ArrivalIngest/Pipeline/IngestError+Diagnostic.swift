package import ArrivalModel

extension InputError: DiagnosticConvertible {
    package var diagnostic: Diagnostic {
        switch self {
        case .cannotOpen(let path, let reason):
            Diagnostic(
                .input, "cannot open '\(path)': \(reason)", hint: "check the path exists and is readable.",
                path: path)
        case .readFailed(let path, let reason):
            Diagnostic(
                .input, "reading '\(path)' failed: \(reason)",
                hint: "nothing from this file was stored; run the ingest again.",
                path: path)
        }
    }
}

extension IngestError: DiagnosticConvertible {
    package var diagnostic: Diagnostic {
        switch self {
        case .malformedLine(let path, let line, let cause, let problem):
            Diagnostic(
                .input,
                "\(path):\(line): malformed line (\(cause.rawValue)\(problem.map { ": " + $0 } ?? "")); the file was not stored",
                hint: "fix or remove the line, or run without --strict to count it and keep the rest.",
                location: Diagnostic.Location(path: path, line: line))
        }
    }
}

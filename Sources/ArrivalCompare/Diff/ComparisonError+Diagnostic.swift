package import ArrivalModel

extension ComparisonError: DiagnosticConvertible {
    /// A side of `diff` or `gate` that cannot be read is bad input: the
    /// command line exits 2 on it (a CI step tells "could not run" from
    /// "got worse").
    package var diagnostic: Diagnostic {
        switch self {
        case .notFound(let path):
            Diagnostic(
                .input, "'\(path)' does not exist",
                hint:
                    "give a batch file (.jsonl or .jsonl.gz), a directory of batches, an arrival store (.sqlite) or a report JSON.",
                path: path)
        case .unreadable(let path, let reason):
            Diagnostic(
                .input, "cannot read '\(path)': \(reason)",
                hint: "give a readable batch, directory of batches, arrival store or report JSON.",
                path: path)
        case .notAReport(let path, let reason):
            Diagnostic(
                .input, "'\(path)' looks like a report JSON but is not one: \(reason)",
                hint: "make it with 'arrival report --format json', or pass the batches it came from.",
                path: path)
        case .noRecords(let path, let detail):
            Diagnostic(
                .input, "'\(path)' holds no valid apns record (\(detail))",
                hint: "is it the right file? A corrupt or empty batch cannot be compared.",
                path: path)
        case .windowOnReportJSON(let path):
            Diagnostic(
                .usage, "'\(path)' is a report JSON, which already covers a fixed window",
                hint: "drop --day/--from/--to, or pass the store or batches instead.",
                path: path)
        case .noDetail(let path):
            Diagnostic(
                .usage, "'\(path)' is a report JSON, which has no records",
                hint: "--records needs batches or a store on both sides.", path: path)
        }
    }
}

extension ReportDecodingError: DiagnosticConvertible {
    package var diagnostic: Diagnostic {
        Diagnostic(.input, "not a report JSON: \(description)", hint: "make it with 'arrival report --format json'.")
    }
}

extension GateConfigError: DiagnosticConvertible {
    /// A rule or rule file that cannot be used is bad usage.
    package var diagnostic: Diagnostic {
        Diagnostic(.usage, message, hint: hint, location: location)
    }
}

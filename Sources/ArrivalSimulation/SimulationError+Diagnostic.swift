package import ArrivalBeacons
public import ArrivalModel

extension SimulationError: DiagnosticConvertible {
    package var diagnostic: Diagnostic {
        switch self {
        case .invalidDay(let day):
            Diagnostic(
                .usage, "invalid day '\(day)': expected a calendar date",
                hint: "write the day as YYYY-MM-DD, e.g. 2026-11-21.")
        case .invalidActivityCount(let count):
            Diagnostic(.usage, "invalid activity count \(count)", hint: "simulate 0 or more activities.")
        case .outputNotEmpty(let path):
            // The only failure that replacing the earlier run (--force) cures.
            Diagnostic(
                .io, "'\(path)' already exists (output of an earlier run?)",
                hint: "pass --force to replace the earlier run, remove it, or choose another --out.",
                path: path)
        case .cannotCreate(let path):
            Diagnostic(
                .io, "cannot create '\(path)'",
                hint: "check that --out is a directory (or can be created as one) and is writable.",
                path: path)
        case .cannotRead(let path):
            Diagnostic(
                .io, "cannot read '\(path)'", hint: "check that the file exists and is readable.",
                path: path)
        }
    }
}

// The simulator writes its batches with the pipeline's one gzip writer.
extension GzipWriter.Failure: DiagnosticConvertible {
    package var diagnostic: Diagnostic {
        switch self {
        case .cannotCreate(let path):
            Diagnostic(
                .io, "cannot create '\(path)'", hint: "check that its directory exists and is writable.",
                path: path)
        case .zlib(let code):
            Diagnostic(
                .io, "zlib failed with code \(code) while compressing",
                hint: "check the disk has space, then run again.")
        }
    }
}

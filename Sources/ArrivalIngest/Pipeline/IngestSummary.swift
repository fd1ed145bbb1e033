package import ArrivalModel
import ArrivalStore

/// What an ingest run did, for the person who ran it.
package struct IngestSummary: Sendable, Equatable {
    package struct Location: Sendable, Equatable, CustomStringConvertible {
        package var path: String
        package var line: Int
        package var cause: MalformedCause
        /// The field at fault and why, when one field is (see ``RecordDecoder/lastProblem``).
        package var problem: String?
        package var description: String { "\(path):\(line): \(cause.rawValue)" + (problem.map { " (\($0))" } ?? "") }
    }

    /// A path the run could not read, and why.
    package struct Unreadable: Sendable, Equatable, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "\(path): \(reason)" }
    }

    /// A file the store refused (``StoreWriter/refusal(of:)``), and the store's reason.
    package struct Refused: Sendable, Equatable, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "\(path): \(reason)" }
    }

    /// Files whose records were read and stored in this run.
    package var filesRead = 0
    /// Files read in place of an earlier version of themselves (same path,
    /// the earlier bytes are the start of the new ones: a log that grew, a
    /// file restored after it was cut), which was removed with its records.
    package var filesReplaced = 0
    /// Files whose bytes this store had already ingested from the same path (no-op).
    package var filesAlreadyIngested = 0
    /// Files whose bytes were already ingested under another path (counted in the report).
    package var filesSkippedAsDuplicate = 0
    /// Entries met in a directory walk that are not regular files.
    package var skippedEntries: [InputWalker.Skipped] = []
    /// Paths that could not be read (a file or directory that cannot be
    /// opened, a read that failed, a file that changed while it was read):
    /// nothing of them was stored, and the run went on without them.
    package var unreadable: [Unreadable] = []
    /// Files the store refused (a trigger, a constraint of the operator's):
    /// nothing of them was stored, every other file of the run was.
    package var refused: [Refused] = []
    /// Files read in this run that hold no byte at all (often an upload cut
    /// before its first byte, or a `.gz` that was never written): stored as
    /// files without lines, and named in the summary so they are not missed.
    package var emptyFiles: [String] = []
    /// Files not finished because the run was asked to stop
    /// (``IngestPipeline/Options/stop``): nothing of them was stored; the
    /// one being read when the stop came, then every one not begun, in order.
    package var interrupted: [String] = []
    package var bytesRead = 0
    package var lines = 0
    package var records: [RecordKind: Int] = [:]
    package var duplicateRecords = 0
    package var malformedByCause: [MalformedCause: Int] = [:]
    /// The first few malformed lines of each cause.
    package var firstMalformed: [Location] = []

    package init() {}

    package var malformedLines: Int { malformedByCause.values.reduce(0, +) }
    package var newRecords: Int { records.values.reduce(0, +) }

    static let locationsPerCause = 3

    mutating func noteMalformed(path: String, line: Int, cause: MalformedCause, problem: String? = nil) {
        let seen = malformedByCause[cause, default: 0]
        malformedByCause[cause] = seen + 1
        if seen < Self.locationsPerCause {
            firstMalformed.append(Location(path: path, line: line, cause: cause, problem: problem))
        }
    }
}

/// Where an ingest is, for a progress line on a terminal.
package struct IngestProgress: Sendable {
    package var filesDone: Int
    /// The files listed so far: all of them once `listing` is false.
    package var filesTotal: Int
    /// Whether the paths are still being walked (more files may come).
    package var listing: Bool
    package var records: Int
    package var currentPath: String
    package var elapsedSeconds: Double
}

/// Problems that stop an ingest.
package enum IngestError: Error, CustomStringConvertible {
    /// `--strict` was given and a line is malformed.
    case malformedLine(path: String, line: Int, cause: MalformedCause, problem: String?)

    package var description: String {
        switch self {
        case .malformedLine(let path, let line, let cause, let problem):
            "\(path):\(line): malformed line (\(cause.rawValue)\(problem.map { ": " + $0 } ?? "")). The file was not stored; fix or remove the line, or run without --strict to count it and keep the rest."
        }
    }
}

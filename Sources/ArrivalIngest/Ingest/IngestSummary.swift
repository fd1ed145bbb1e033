public import ArrivalModel
import ArrivalStore

/// What an ingest run did, for the person who ran it.
public struct IngestSummary: Sendable, Equatable {
    public struct Location: Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var line: Int
        public var cause: MalformedCause
        /// The field at fault and why, when one field is (see ``RecordDecoder/lastProblem``).
        public var problem: String?
        public var description: String { "\(path):\(line): \(cause.rawValue)" + (problem.map { " (\($0))" } ?? "") }
    }

    /// A path the run could not read, and why.
    public struct Unreadable: Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Files whose records were read and stored in this run.
    public var filesRead = 0
    /// Files read in place of an earlier version of themselves (same path,
    /// the earlier bytes are the start of the new ones: a log that grew, a
    /// file restored after it was cut), which was removed with its records.
    public var filesReplaced = 0
    /// Files whose bytes this store had already ingested from the same path (no-op).
    public var filesAlreadyIngested = 0
    /// Files whose bytes were already ingested under another path (counted in the report).
    public var filesSkippedAsDuplicate = 0
    /// Entries met in a directory walk that are not regular files.
    public var skippedEntries: [InputWalker.Skipped] = []
    /// Paths that could not be read (a file or directory that cannot be
    /// opened, a read that failed, a file that changed while it was read):
    /// nothing of them was stored, and the run went on without them.
    public var unreadable: [Unreadable] = []
    /// Files read in this run that hold no byte at all (often an upload cut
    /// before its first byte, or a `.gz` that was never written): stored as
    /// files without lines, and named in the summary so they are not missed.
    public var emptyFiles: [String] = []
    public var bytesRead = 0
    public var lines = 0
    public var records: [RecordKind: Int] = [:]
    public var duplicateRecords = 0
    public var malformedByCause: [MalformedCause: Int] = [:]
    /// The first few malformed lines of each cause.
    public var firstMalformed: [Location] = []

    public init() {}

    public var malformedLines: Int { malformedByCause.values.reduce(0, +) }
    public var newRecords: Int { records.values.reduce(0, +) }

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
public struct IngestProgress: Sendable {
    public var filesDone: Int
    /// The files listed so far: all of them once `listing` is false.
    public var filesTotal: Int
    /// Whether the paths are still being walked (more files may come).
    public var listing: Bool
    public var records: Int
    public var currentPath: String
    public var elapsedSeconds: Double
}

/// Problems that stop an ingest.
public enum IngestError: Error, CustomStringConvertible {
    /// `--strict` was given and a line is malformed.
    case malformedLine(path: String, line: Int, cause: MalformedCause, problem: String?)

    public var description: String {
        switch self {
        case .malformedLine(let path, let line, let cause, let problem):
            "\(path):\(line): malformed line (\(cause.rawValue)\(problem.map { ": " + $0 } ?? "")). The file was not stored; fix or remove the line, or run without --strict to count it and keep the rest."
        }
    }
}

/// One problem that stops a command, told the same way whichever stage met
/// it: what went wrong, where, and what to do about it.
///
/// Every error the command line can meet converts to one
/// (``DiagnosticConvertible``, or ``init(_:)`` for any other error); the
/// command line prints it and picks the exit code from its ``category``
/// alone.
public struct Diagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of thing went wrong; it decides the exit code.
    public enum Category: String, Sendable, CaseIterable {
        /// The command line, a rule or a config the user wrote cannot be used.
        case usage
        /// An input (a batch, a report JSON, a payload) cannot be read or used.
        case input
        /// The SQLite store cannot be opened, is not an arrival store, or cannot be written.
        case store
        /// A file or directory cannot be created, written or read for another reason.
        case io
    }

    /// Where the problem is: a file, and when known its line and field.
    public struct Location: Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var line: Int?
        public var field: String?

        public init(path: String, line: Int? = nil, field: String? = nil) {
            self.path = path
            self.line = line
            self.field = field
        }

        /// `gate.yml:14, field at_least`.
        public var description: String {
            path + (line.map { ":\($0)" } ?? "") + (field.map { ", field \($0)" } ?? "")
        }
    }

    public var category: Category
    /// What went wrong, without the leading "error:".
    public var message: String
    /// What to do about it.
    public var hint: String
    public var location: Location?

    public init(_ category: Category, _ message: String, hint: String, location: Location? = nil) {
        self.category = category
        self.message = message
        self.hint = hint
        self.location = location
    }

    /// A diagnostic about the file at `path`.
    package init(_ category: Category, _ message: String, hint: String, path: String) {
        self.init(category, message, hint: hint, location: Location(path: path))
    }

    /// The diagnostic of any error: its own when it has one, otherwise its
    /// description as an input/output problem (never bad usage: an error
    /// nobody described is no proof the user typed something wrong).
    public init(_ error: any Error) {
        if let convertible = error as? any DiagnosticConvertible {
            self = convertible.diagnostic
        } else if let foundation = Self.foundationFileError(error) {
            self = foundation
        } else {
            self.init(
                .io, String(describing: error),
                hint:
                    "check the files and directories the command names exist and are readable (or writable, for outputs)."
            )
        }
    }

    /// ```
    /// error: malformed line (invalid_json); the file was not stored
    ///   --> uploads/a.jsonl:12
    /// hint: fix or remove the line, or run without --strict to count it and keep the rest.
    /// ```
    public var description: String { text(level: "error") }

    /// The diagnostic as a warning that does not stop the run.
    public var warningDescription: String { text(level: "warning") }

    private func text(level: String) -> String {
        var text = level + ": " + message
        // The location only where it says more than the message does.
        if let location, location.line != nil || location.field != nil || !message.contains(location.path) {
            text += "\n  --> \(location)"
        }
        if !hint.isEmpty { text += "\nhint: " + hint }
        return text
    }
}

/// An error that can tell itself as a ``Diagnostic``.
public protocol DiagnosticConvertible: Error {
    var diagnostic: Diagnostic { get }
}

extension Diagnostic: DiagnosticConvertible {
    public var diagnostic: Diagnostic { self }
}

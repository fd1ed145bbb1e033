import ArgumentParser
import ArrivalModel
import ArrivalStore
import ArrivalStores
import Foundation

@main
struct Arrival: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "arrival",
        abstract: "Tells whether your Live Activity pushes actually arrive.",
        discussion: """
            Ingest APNs response records, widget render beacons and ActivityKit callback reports into a \
            SQLite store, then report arrival rates, stale-timestamp drops, oversize failures and callback loss.
            Exit codes: 0 success, 1 the run failed, 2 bad usage. diff, gate and check-payload say more in \
            their --help: their 1 is a verdict, and 2 means they could not judge.
            """,
        version: ArrivalVersion.current,
        subcommands: [
            Demo.self, Ingest.self, Files.self, ReportCommand.self, DeadTokens.self, Lost.self, Activity.self,
            Diff.self,
            Gate.self,
            CheckPayload.self, Simulate.self, Serve.self, Prune.self, Apple.self,
        ]
    )

    /// Parses and runs; every failure is printed as a ``Diagnostic`` and
    /// exits with the code ``ExitStatus`` gives it.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            // ArgumentParser's own: --help and --version exit 0; its message
            // starts with "Error:" and ends with the usage.
            if exitCode(for: error) == .success { exit(withError: error) }
            let message = unknownCommand(CommandLine.arguments.dropFirst().first) ?? fullMessage(for: error)
            FileHandle.standardError.write(Data((message + "\n").utf8))
            Foundation.exit(ExitStatus.usage)
        }
        do {
            try command.run()
        } catch let verdict as ExitCode {
            // A verdict the command printed itself (a failed gate rule, a payload with errors).
            Foundation.exit(verdict.rawValue)
        } catch  where exitCode(for: error) == .success {
            // `--help` parses into ArgumentParser's help command, whose run() "fails" with the help text.
            exit(withError: error)
        } catch {
            let diagnostic = Diagnostic(cli: error, command: type(of: command))
            FileHandle.standardError.write(Data((diagnostic.description + "\n").utf8))
            Foundation.exit(ExitStatus.code(for: diagnostic, in: type(of: command)))
        }
    }
}

extension Arrival {
    /// What a first word that is no command says (`arrival reprot`): the
    /// command it most likely meant, when one is a letter or two away.
    static func unknownCommand(_ word: String?) -> String? {
        guard let word, !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName }
        guard !names.contains(word) else { return nil }
        let near = names.map { (name: $0, distance: editDistance(word, $0)) }.min { $0.distance < $1.distance }
        let guess = near.flatMap { $0.distance <= max(1, min(2, word.count / 3)) ? $0.name : nil }
        return Diagnostic(
            .usage, "'\(word)' is not an arrival command" + (guess.map { "; did you mean '\($0)'?" } ?? ""),
            hint: "the commands: \(names.joined(separator: ", ")); arrival --help says what each does."
        ).description
    }

    /// Levenshtein distance: letters inserted, removed or changed (a swap of two is two).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased())
        let b = Array(b.lowercased())
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}

/// The exit codes, decided here and nowhere else: 0 success, 1 the run
/// failed, 2 bad usage. `gate` and `check-payload` keep 1 for their verdict
/// (a rule failed, the payload has an error), so anything that stops them
/// from judging exits 2; `diff` exits 2 when a side cannot be read (Documentation/CommandLine.md,
/// "Exit codes"): a CI step tells "got worse" from "could not run".
enum ExitStatus {
    static let failure: Int32 = 1
    static let usage: Int32 = 2

    static func code(for diagnostic: Diagnostic, in command: any ParsableCommand.Type) -> Int32 {
        if diagnostic.category == .usage { return usage }
        switch command {
        case is Gate.Type, is CheckPayload.Type: return usage
        case is Diff.Type: return diagnostic.category == .io ? failure : usage
        default: return failure
        }
    }
}

extension Diagnostic {
    /// Any error a command threw: its own diagnostic, a check of
    /// ArgumentParser's made in `run()` as bad usage, anything else by
    /// ``Diagnostic/init(_:)`` (never bad usage).
    init(cli error: any Error, command: any ParsableCommand.Type) {
        if let validation = error as? ValidationError {
            self.init(.usage, validation.message, hint: "see 'arrival \(command._commandName) --help'.")
        } else {
            self.init(error)
        }
    }
}

/// `--no-color`, and whether colours are wanted: never with the flag, with
/// `NO_COLOR` set or `TERM=dumb`, or when standard output is no terminal.
struct ColorOptions: ParsableArguments {
    @Flag(help: "No ANSI colours, even on a terminal.")
    var noColor = false

    var enabled: Bool {
        !noColor && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }
}

/// Options every command that opens a store shares.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .customLong("db"),
        help: ArgumentHelp(
            "The store: a SQLite file, or a postgres:// URL (default: $ARRIVAL_DB when set, else arrival.sqlite).",
            valueName: "path-or-url"))
    var given: String?

    /// The store's path or URL: `--db`, else `ARRIVAL_DB`, else `arrival.sqlite`.
    /// (Not shown as the option's default: `--help` must never print what
    /// the environment holds, a database URL with its password.)
    var db: String {
        if let given { return given }
        if let environment = ProcessInfo.processInfo.environment["ARRIVAL_DB"], !environment.isEmpty {
            return environment
        }
        return "arrival.sqlite"
    }

    /// Where the store's name came from, for messages.
    private var source: String { given == nil ? "ARRIVAL_DB" : "--db" }

    func validate() throws {
        _ = try parsed()
    }

    /// The store named (`validate()` has turned away a name that is none).
    var location: StoreLocation {
        // Parsed when validated: a name that reaches here is a store's.
        (try? parsed()) ?? .sqlite(path: db)
    }

    /// The store as messages name it: a path, or a URL without its password.
    var label: String { location.label }

    /// The store's reader role: the SQLite file read-only, or the PostgreSQL
    /// store read in place (`StoreLocation.openReader()`).
    func reading() throws -> any StoreReader {
        try location.openReader()
    }

    /// `db` read as a store's location, with the command line's words for a name that is none.
    private func parsed() throws -> StoreLocation {
        do throws(StoreLocation.ParseError) {
            return try StoreLocation(parsing: db)
        } catch .empty {
            throw ValidationError("--db names no store: give a SQLite file's path or a postgres:// URL.")
        } catch .unreadableURL(let error) {
            // Said without the URL, which may hold a password.
            throw ValidationError("\(source) names a PostgreSQL store by a URL that cannot be read: \(error)")
        }
    }
}

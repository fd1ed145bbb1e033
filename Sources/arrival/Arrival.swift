import ArrivalModel
import ArrivalStore
import ArrivalIngest
import ArrivalAnalysis
import ArrivalRendering
import ArrivalCompare
import ArrivalSimulation
import ArgumentParser
import Foundation

@main
struct Arrival: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "arrival",
        abstract: "Tells whether your Live Activity pushes actually arrive.",
        discussion: """
            Ingest APNs response records, widget render beacons and ActivityKit callback reports into a \
            SQLite store, then report arrival rates, stale-timestamp drops, oversize failures and callback loss.
            Exit codes: 0 success, 1 the run failed, 2 bad usage.
            """,
        subcommands: [Demo.self, Ingest.self, Files.self, ReportCommand.self, Diff.self, Gate.self, CheckPayload.self, Simulate.self]
    )

    /// Parses, runs, and maps failures to the documented exit codes:
    /// 1 when the run failed, 2 for bad usage.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let error as ExitCode {
            Foundation.exit(error.rawValue)
        } catch let error as UnreadableInput {
            printError(error.description)
            Foundation.exit(2)
        } catch let error as CommandFailure {
            printError(error.description)
            Foundation.exit(1)
        } catch let error as DatabaseError {
            printError("\(error). Check that the --db file is an arrival store and is writable.")
            Foundation.exit(1)
        } catch let error as InputError {
            printError(error.description)
            Foundation.exit(1)
        } catch let error as IngestError {
            printError(error.description)
            Foundation.exit(1)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            // ArgumentParser's message already starts with "Error:" and ends with usage.
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

/// A run that failed, with a message that says what to do.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
}

/// Input that cannot be read or used (a missing or corrupt side of a diff
/// or gate, a bad rule file): bad usage, exit 2.
struct UnreadableInput: Error, CustomStringConvertible {
    var description: String
}

/// Options every command that opens a store shares.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The SQLite store.")
    var db: String = "arrival.sqlite"
}

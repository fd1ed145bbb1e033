import ArgumentParser
import ArrivalAnalysis
import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSender
import ArrivalSimulation
import ArrivalStore
import Foundation

struct CheckPayload: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-payload",
        abstract:
            "Check one Live Activity push (an APNs payload, an FCM or Tencent Cloud Chat body) before sending it.",
        discussion: """
            Reports a payload over 4096 bytes (error) or over 3584 (warning), text that is not JSON (with the \
            line and column of the first syntax error), a missing or bad aps.event, aps.timestamp (missing, in \
            milliseconds, more than 8 hours ahead) or aps.content-state, an aps.stale-date or aps.dismissal-date \
            that is not an integer of Unix seconds (error), a stale-date before aps.timestamp (error: the update \
            shows as outdated at once) or a dismissal-date before it (warning: right only to dismiss an ended \
            activity at once), and, with --topic, a topic without the .push-type.liveactivity suffix. Each finding \
            is printed with its level.
            --provider fcm checks an FCM HTTP v1 messages:send body instead: a message.apns object with a \
            non-empty live_activity_token, apns-push-type: liveactivity among message.apns.headers (names in any \
            case, string values), the topic of --topic or else of the apns-topic header, and message.apns.payload \
            by every rule above (its size without whitespace between tokens). --provider tencent_chat checks a \
            Tencent Cloud Chat body: OfflinePushInfo.ApnsInfo.LiveActivity with LaId (a string of 1 to 64 bytes), \
            Event update or end, a ContentState object with an integer seq (a warning without), and DismissalDate \
            only with end, as an integer of Unix seconds.
            Exit codes: 0 no errors (warnings allowed), 1 at least one error, 2 bad usage or a file that cannot \
            be read (missing, a directory, not readable).
            """
    )

    @Option(help: "The apns-topic the payload will be sent to (checked for the .push-type.liveactivity suffix).")
    var topic: String?

    @Option(
        help: ArgumentHelp(
            "Who the body is sent to: \(PushProvider.allCases.map(\.rawValue).joined(separator: ", ")).",
            discussion:
                "apns: the body is the APNs payload. fcm: an FCM HTTP v1 messages:send body. tencent_chat: a Tencent Cloud Chat push body."
        ),
        transform: { text in
            guard let provider = PushProvider(rawValue: text) else {
                throw ValidationError(
                    "'\(text)' is no provider; use \(PushProvider.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            return provider
        })
    var provider: PushProvider = .apns

    @Argument(help: "The payload file, or - for standard input.")
    var file: String

    func validate() throws {
        if provider == .tencentChat && topic != nil {
            throw ValidationError(
                "--topic does not apply to --provider tencent_chat: Tencent Cloud Chat sets the topic itself. Leave --topic out."
            )
        }
    }

    func run() throws {
        let payload: Data
        if file == "-" {
            payload = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            payload = try Self.read(file)
        }
        let findings = PayloadCheck.check(body: payload, provider: provider, topic: topic)
        for finding in findings { print(finding.description) }
        let errors = findings.filter { $0.level == .error }.count
        let warnings = findings.count - errors
        print(
            "\(file == "-" ? "<stdin>" : file): \(payload.count) bytes, \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
        )
        if errors > 0 { throw ExitCode(1) }
    }

    /// The payload file's bytes, or why they cannot be had, told apart: a
    /// missing file, a directory, a file this user may not read.
    private static func read(_ file: String) throws -> Data {
        var isDirectory: ObjCBool = false
        let location = Diagnostic.Location(path: file)
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw Diagnostic(
                .input, "cannot read '\(file)': no such file",
                hint: "check the path, or pass - to read standard input.", location: location)
        }
        if isDirectory.boolValue {
            throw Diagnostic(
                .input, "cannot read '\(file)': it is a directory",
                hint: "name the payload file itself (one JSON object), or pass - to read standard input.",
                location: location)
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw Diagnostic(
                .input, "cannot read '\(file)': permission denied or not a regular file",
                hint: "check the file is readable, or pass - to read standard input.", location: location)
        }
        return data
    }
}

import ArgumentParser
import ArrivalModel
import ArrivalSender
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
            --broadcast checks an iOS 18 broadcast to a channel instead: the payload by the rules above with the \
            broadcast limit of 5120 bytes (error; warning over 4608) and no start event (a broadcast cannot start \
            an activity), a non-empty apns-channel-id header, apns-push-type: liveactivity, an apns-topic (when \
            given) ending with .push-type.liveactivity and naming the URL's app, and a URL (when given) to \
            api-broadcast.push.apple.com or api-broadcast.sandbox.push.apple.com with the path \
            /4/broadcasts/apps/<bundle id>, never a device token. The headers come from --header, --channel-id \
            and --topic; the file may also be a logged exchange line or a request object ({"url", "headers", \
            "body"}), whose URL, headers and body are checked.
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

    @Flag(help: "Check an iOS 18 broadcast to a channel (5120-byte limit, apns-channel-id, no device token).")
    var broadcast = false

    @Option(name: .customLong("channel-id"), help: "With --broadcast: the apns-channel-id header.")
    var channelID: String?

    @Option(help: "With --broadcast: the request URL (or its :path).")
    var url: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "With --broadcast: a request header, 'name: value' (repeatable).", valueName: "name: value"))
    var headers: [String] = []

    @Argument(help: "The payload file, or - for standard input.")
    var file: String

    func validate() throws {
        if !broadcast && (channelID != nil || url != nil || !headers.isEmpty) {
            throw ValidationError("--channel-id, --url and --header check a broadcast's request; add --broadcast.")
        }
        if broadcast && provider != .apns {
            throw ValidationError(
                "--broadcast is APNs's own (api-broadcast.push.apple.com); leave out --provider \(provider.rawValue).")
        }
        for header in headers where Self.splitHeader(header) == nil {
            throw ValidationError("--header '\(header)' is not 'name: value'.")
        }
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
        var checked = payload
        let findings: [PayloadCheck.Finding]
        if broadcast {
            let request = broadcastRequest(payload)
            checked = request.payload
            findings = PayloadCheck.check(broadcast: request)
        } else {
            findings = PayloadCheck.check(body: payload, provider: provider, topic: topic)
        }
        for finding in findings { print(finding.description) }
        let errors = findings.filter { $0.level == .error }.count
        let warnings = findings.count - errors
        print(
            "\(file == "-" ? "<stdin>" : file): \(checked.count) bytes, \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")"
        )
        if errors > 0 { throw ExitCode(1) }
    }

    /// The broadcast request to check: the file's own request when it is a
    /// logged exchange or a request object, else the file as the payload;
    /// then the headers of the command line (--header, --channel-id,
    /// --topic), which win over the file's, and --url.
    private func broadcastRequest(_ file: Data) -> PayloadCheck.BroadcastRequest {
        var request = PayloadCheck.BroadcastRequest(logged: file) ?? PayloadCheck.BroadcastRequest(payload: file)
        func set(_ name: String, _ value: String) {
            for key in request.headers.keys where key.lowercased() == name.lowercased() {
                request.headers[key] = nil
            }
            request.headers[name] = value
        }
        for header in headers {
            if let (name, value) = Self.splitHeader(header) { set(name, value) }
        }
        if let channelID { set("apns-channel-id", channelID) }
        if let topic { set("apns-topic", topic) }
        if let url { request.url = url }
        return request
    }

    /// `name: value` (spaces around the value trimmed), or nil without a colon or a name.
    static func splitHeader(_ text: String) -> (String, String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        return (name, text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces))
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

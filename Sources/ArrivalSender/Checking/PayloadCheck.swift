import ArrivalModel
public import Foundation

/// Checks one Live Activity push before it is sent, for the mistakes that
/// end in a 413, a silent drop on the device or `DeviceTokenNotForTopic`.
public enum PayloadCheck {
    /// APNs rejects larger payloads with 413 `PayloadTooLarge`.
    public static let maxPayloadBytes = Contract.maxPayloadBytes
    /// Within 512 bytes of the limit: the next longer string in the content state fails.
    public static let nearLimitBytes = Contract.oversizeRiskBytes
    /// The device drops an update whose timestamp is this far in the future or more
    /// (an activity lives at most 8 hours).
    public static let maxFutureSeconds: Int64 = Contract.activityLifetimeMS / 1000
    /// A Unix time in seconds stays below this until the year 5138; larger values are milliseconds.
    static let millisecondsThreshold: Int64 = 100_000_000_000
    public static let topicSuffix = Contract.liveActivityTopicSuffix

    public enum Level: String, Sendable, Comparable {
        case warning
        case error
        public static func < (a: Level, b: Level) -> Bool { a == .warning && b == .error }
    }

    public enum Code: String, Sendable, CaseIterable {
        case payloadTooLarge = "payload_too_large"
        case payloadNearLimit = "payload_near_limit"
        case notJSON = "not_json"
        case missingAps = "missing_aps"
        case missingEvent = "missing_event"
        case invalidEvent = "invalid_event"
        case missingTimestamp = "missing_timestamp"
        case timestampNotInteger = "timestamp_not_integer"
        case timestampInMilliseconds = "timestamp_in_milliseconds"
        case timestampInFuture = "timestamp_in_future"
        case missingContentState = "missing_content_state"
        case missingStartAttributes = "missing_start_attributes"
        case missingSeq = "missing_seq"
        case topicWithoutSuffix = "topic_without_suffix"
        case staleDateNotInteger = "stale_date_not_integer"
        case staleDateInMilliseconds = "stale_date_in_milliseconds"
        case staleDateInPast = "stale_date_in_past"
        case dismissalDateNotInteger = "dismissal_date_not_integer"
        case dismissalDateInMilliseconds = "dismissal_date_in_milliseconds"
        case dismissalDateInPast = "dismissal_date_in_past"
        /// FCM: the body has no `message.apns` object.
        case missingFCMApns = "missing_fcm_apns"
        /// FCM: `message.apns.live_activity_token` is missing, not a string or empty.
        case missingLiveActivityToken = "missing_live_activity_token"
        /// FCM: `message.apns.headers` has no `apns-push-type: liveactivity`.
        case pushTypeNotLiveActivity = "push_type_not_liveactivity"
        /// FCM: a value in `message.apns.headers` is not a string.
        case headerNotString = "header_not_string"
        /// FCM: `message.apns.payload` is missing or not an object.
        case missingFCMPayload = "missing_fcm_payload"
        /// Tencent Cloud Chat: no `OfflinePushInfo.ApnsInfo.LiveActivity` object.
        case missingLiveActivity = "missing_live_activity"
        /// Tencent Cloud Chat: `LaId` is not a string of 1 to 64 bytes.
        case invalidLaID = "invalid_la_id"
        /// Tencent Cloud Chat: `DismissalDate` with an `Event` other than `end`.
        case dismissalDateWithoutEnd = "dismissal_date_without_end"
        /// `aps.input-push-channel` is not a non-empty string, or is on a push that is not a start.
        case invalidInputPushChannel = "invalid_input_push_channel"
        /// Broadcast: no non-empty `apns-channel-id` header.
        case missingChannelID = "missing_channel_id"
        /// Broadcast: the URL names a device token (`/3/device/<token>`).
        case deviceTokenOnBroadcast = "device_token_on_broadcast"
        /// Broadcast: the URL's path is not `/4/broadcasts/apps/<bundle id>`, or its host is no broadcast host.
        case notBroadcastURL = "not_broadcast_url"
        /// Broadcast: `apns-topic` names another app than the URL's bundle id.
        case topicNotBundle = "topic_not_bundle"
        /// Broadcast: `aps.event` is `start`; a broadcast cannot start an activity.
        case broadcastStart = "broadcast_start"
    }

    public struct Finding: Sendable, Equatable, CustomStringConvertible {
        public var level: Level
        public var code: Code
        /// What is wrong and what to do about it.
        public var message: String
        public var description: String { "\(level.rawValue): \(code.rawValue): \(message)" }
    }

    /// What one check has found so far, in the order found: every check
    /// (the APNs payload, each provider's body) adds to one of these.
    struct Findings {
        private(set) var list: [Finding] = []

        mutating func add(_ level: Level, _ code: Code, _ message: String) {
            list.append(Finding(level: level, code: code, message: message))
        }

        mutating func append(_ finding: Finding) { list.append(finding) }
    }

    /// The findings for `payload` (the JSON body) sent to `topic` (the
    /// `apns-topic` header, if known), judged at `now`. Empty when it is fine.
    public static func check(payload: Data, topic: String? = nil, now: Date = Date()) -> [Finding] {
        var findings = Findings()
        checkPayload(
            payload, topic: topic, now: now, limit: maxPayloadBytes, nearLimit: nearLimitBytes, into: &findings)
        return findings.list
    }

    /// The payload rules with a size `limit` (4,096 bytes for a push to a
    /// device, 5,120 for a broadcast) and its `nearLimit` warning line.
    static func checkPayload(
        _ payload: Data, topic: String?, now: Date, limit maxPayloadBytes: Int, nearLimit nearLimitBytes: Int,
        into findings: inout Findings
    ) {
        let size = payload.count
        if size > maxPayloadBytes {
            findings.add(
                .error, .payloadTooLarge,
                "payload is \(size) bytes, over the \(maxPayloadBytes)-byte limit: APNs answers 413 PayloadTooLarge. Shrink content-state (shorter strings, fewer fields) by \(size - maxPayloadBytes) bytes or more."
            )
        } else if size > nearLimitBytes {
            findings.add(
                .warning, .payloadNearLimit,
                "payload is \(size) bytes, within \(maxPayloadBytes - size) bytes of the \(maxPayloadBytes)-byte limit: a slightly longer content-state will be rejected with 413. Keep it under \(nearLimitBytes) bytes."
            )
        }
        if let topic, !topic.hasSuffix(topicSuffix) {
            findings.add(
                .error, .topicWithoutSuffix,
                "topic '\(topic)' does not end with '\(topicSuffix)': Live Activity pushes to the plain bundle id fail with DeviceTokenNotForTopic. Use '\(topic)\(topicSuffix)'."
            )
        }
        guard
            let json = object(
                payload, named: "payload", rejection: "APNs rejects it with 400.",
                notObjectHint: " Send one object with an \"aps\" member.", into: &findings)
        else { return }
        guard let aps = json["aps"], aps.isObject else {
            findings.add(
                .error, .missingAps,
                "payload has no \"aps\" object; every Live Activity push needs aps.event, aps.timestamp and aps.content-state."
            )
            return
        }
        let event = aps["event"]?.stringValue
        if aps["event"] == nil || aps["event"] == .null {
            findings.add(.error, .missingEvent, "aps.event is missing; set it to \"update\", \"start\" or \"end\".")
        } else if let event, !["start", "update", "end"].contains(event) {
            findings.add(
                .error, .invalidEvent, "aps.event is \"\(event)\"; it must be \"start\", \"update\" or \"end\".")
        } else if event == nil {
            findings.add(
                .error, .invalidEvent, "aps.event is not a string; it must be \"start\", \"update\" or \"end\".")
        }
        switch aps["timestamp"] {
        case nil, .null?:
            findings.add(
                .error, .missingTimestamp,
                "aps.timestamp is missing; set it to the current Unix time in seconds. The device ignores an update whose timestamp is not newer than the one it shows."
            )
        case .int(let seconds)?:
            let nowSeconds = Int64((now.timeIntervalSince1970).rounded(.down))
            if seconds >= millisecondsThreshold {
                findings.add(
                    .error, .timestampInMilliseconds,
                    "aps.timestamp \(seconds) looks like milliseconds; APNs expects seconds (\(seconds / 1000)). Every later update in seconds would look older and be dropped."
                )
            } else if seconds > nowSeconds + maxFutureSeconds {
                let hours = Double(seconds - nowSeconds) / 3600
                findings.add(
                    .error, .timestampInFuture,
                    "aps.timestamp \(seconds) is \(String(format: "%.1f", hours)) hours ahead of now (\(nowSeconds)); the device will drop every following update until its time passes. Use the current time."
                )
            }
        case _?:
            findings.add(
                .error, .timestampNotInteger,
                "aps.timestamp must be an integer of Unix seconds, not \(describe(aps["timestamp"])).")
        }
        // The dates are judged against the push's own time when it has a
        // usable one (what the device compares them with), else against now.
        var reference = Int64((now.timeIntervalSince1970).rounded(.down))
        if case .int(let seconds)? = aps["timestamp"], seconds > 0, seconds < millisecondsThreshold {
            reference = seconds
        }
        checkDate(
            aps["stale-date"], field: "stale-date", reference: reference, into: &findings,
            codes: (.staleDateNotInteger, .staleDateInMilliseconds, .staleDateInPast), pastLevel: .error,
            past:
                "the activity is shown as stale (outdated) the moment the update arrives. Set it to a Unix time in seconds after aps.timestamp, or leave it out."
        )
        checkDate(
            aps["dismissal-date"], field: "dismissal-date", reference: reference, into: &findings,
            codes: (.dismissalDateNotInteger, .dismissalDateInMilliseconds, .dismissalDateInPast), pastLevel: .warning,
            past:
                "the activity is removed from the Lock Screen as soon as it ends. That is right only if you mean to dismiss it at once; otherwise set a Unix time in seconds after aps.timestamp."
        )
        checkContentState(aps["content-state"], at: "aps.content-state", sendAs: "JSON", into: &findings)
        if event == "start" {
            if aps["attributes-type"]?.stringValue == nil || aps["attributes"]?.isObject != true {
                findings.add(
                    .error, .missingStartAttributes,
                    "a start push needs aps.attributes-type (your ActivityAttributes type name) and aps.attributes.")
            }
        }
        checkInputPushChannel(aps["input-push-channel"], event: event, into: &findings)
    }

    /// `aps.input-push-channel` of a push-to-start: the broadcast channel the
    /// started activity follows, a non-empty string (a warning on any other
    /// event, where the device ignores it).
    private static func checkInputPushChannel(_ value: JSONValue?, event: String?, into findings: inout Findings) {
        switch value {
        case nil, .null?:
            return
        case .string(let channel)? where !channel.isEmpty:
            if event != "start" {
                findings.add(
                    .warning, .invalidInputPushChannel,
                    "aps.input-push-channel only means something on a start push (the channel the new activity follows); on this push the device ignores it."
                )
            }
        case _?:
            findings.add(
                .error, .invalidInputPushChannel,
                "aps.input-push-channel must be the non-empty channel id (a string) the started activity follows, not \(describe(value))."
            )
        }
    }

    /// `body` as a JSON object; nil when it is not one, after adding the one
    /// `not_json` finding that says why (with the line and column of a
    /// syntax error). `subject` names the body in the message, `rejection`
    /// says what the receiver does with it.
    static func object(
        _ body: Data, named subject: String, rejection: String, notObjectHint: String = "",
        into findings: inout Findings
    ) -> JSONValue? {
        let bytes = Array(body)
        if let syntax = StrictJSON.firstError(in: bytes) {
            let place =
                syntax.atEnd
                ? "the text ends too early, at line \(syntax.line), column \(syntax.column)"
                : "syntax error at line \(syntax.line), column \(syntax.column)"
            findings.add(
                .error, .notJSON,
                "\(subject) is not JSON by RFC 8259: \(place) (look for a trailing comma, single quotes, NaN or a cut-off end); \(rejection)"
            )
            return nil
        }
        guard let json = JSONValue.parse(bytes), json.isObject else {
            findings.add(
                .error, .notJSON, "\(subject) is JSON but not an object; \(rejection)" + notObjectHint)
            return nil
        }
        return json
    }

    /// A content state (`aps.content-state`, Tencent Cloud Chat's
    /// `ContentState`) at `path`: a JSON object, with an integer `seq` for
    /// arrival to match its renders and callbacks by (a warning without).
    /// `sendAs` is what the message asks the sender to send it as.
    static func checkContentState(
        _ state: JSONValue?, at path: String, sendAs: String, into findings: inout Findings
    ) {
        if state == nil || state == .null {
            findings.add(
                .error, .missingContentState,
                "\(path) is missing; the widget has nothing to show. Send the full ContentState as \(sendAs).")
        } else if state?.isObject != true {
            findings.add(.error, .missingContentState, "\(path) must be a JSON object matching your ContentState.")
        } else if state?["seq"]?.intValue == nil {
            findings.add(
                .warning, .missingSeq,
                "\(path) has no integer \"seq\"; arrival cannot match this update to its render beacons and content_update callbacks."
            )
        }
    }

    /// `aps.stale-date` and `aps.dismissal-date` are Unix times in seconds:
    /// anything else is ignored or misread by the device. A date before the
    /// push's own time is an error for a stale date (the update shows as
    /// outdated at once) and a warning for a dismissal date (Apple's way to
    /// dismiss an ended activity at once, but more often a unit mistake).
    private static func checkDate(
        _ value: JSONValue?, field: String, reference: Int64, into findings: inout Findings,
        codes: (notInteger: Code, milliseconds: Code, past: Code), pastLevel: Level, past: String
    ) {
        switch value {
        case nil, .null?:
            return
        case .int(let seconds)?:
            if seconds >= millisecondsThreshold {
                findings.add(
                    .error, codes.milliseconds,
                    "aps.\(field) \(seconds) looks like milliseconds; APNs expects Unix seconds (\(seconds / 1000)).")
            } else if seconds < reference {
                let ago = reference - seconds
                let span =
                    ago >= 86_400 ? "\(ago / 86_400) days" : ago >= 3600 ? "\(ago / 3600) hours" : "\(ago) seconds"
                findings.add(
                    pastLevel, codes.past,
                    "aps.\(field) \(seconds) is \(span) before aps.timestamp (\(reference)): \(past)")
            }
        case _?:
            findings.add(
                .error, codes.notInteger,
                "aps.\(field) must be an integer of Unix seconds, not \(describe(value)); the device ignores it.")
        }
    }

    static func describe(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: "the string \"\(text)\""
        case .number(let number)?: "the number \(number)"
        case .bool(let flag)?: "\(flag)"
        case .array?: "an array"
        case .object?: "an object"
        default: "that value"
        }
    }
}

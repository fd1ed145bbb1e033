public import ArrivalModel
public import Foundation

extension PayloadCheck {
    /// The findings for a request `body` sent through `provider`, judged at
    /// `now`:
    /// - ``PushProvider/apns``: the body is the APNs payload
    ///   (``check(payload:topic:now:)``).
    /// - ``PushProvider/fcm``: an FCM HTTP v1 `messages:send` body. It needs a
    ///   `message.apns` object with a non-empty `live_activity_token`, and
    ///   `apns-push-type: liveactivity` among `message.apns.headers` (names
    ///   compared without regard to case); `message.apns.payload` is checked
    ///   as an APNs payload, its size taken without the whitespace between
    ///   tokens (FCM re-encodes it). The topic checked is `topic`, else the
    ///   `apns-topic` header.
    /// - ``PushProvider/tencentChat``: a Tencent Cloud Chat push. Its
    ///   `OfflinePushInfo.ApnsInfo.LiveActivity` needs `LaId` (a string of 1
    ///   to 64 bytes), `Event` `update` or `end`, a `ContentState` object
    ///   (with an integer `seq`, or a warning) and a `DismissalDate` only
    ///   with `end` (an integer of Unix seconds). The provider sets the topic
    ///   and `aps.timestamp` itself; `topic` is not used.
    public static func check(body: Data, provider: PushProvider, topic: String? = nil, now: Date = Date()) -> [Finding]
    {
        let (name, rejection): (String, String)
        switch provider {
        case .apns: return check(payload: body, topic: topic, now: now)
        case .fcm: (name, rejection) = ("FCM", "FCM rejects it with 400 INVALID_ARGUMENT.")
        case .tencentChat: (name, rejection) = ("Tencent Cloud Chat", "Tencent Cloud Chat rejects it.")
        }
        var findings = Findings()
        guard let json = object(body, named: "the \(name) request body", rejection: rejection, into: &findings) else {
            return findings.list
        }
        if provider == .fcm {
            checkFCM(json, body: body, topic: topic, now: now, into: &findings)
        } else {
            checkTencentChat(json, now: now, into: &findings)
        }
        return findings.list
    }

    /// The FCM rules on `json`, the parsed `body`.
    private static func checkFCM(
        _ json: JSONValue, body: Data, topic: String?, now: Date, into findings: inout Findings
    ) {
        guard let apns = json["message"]?["apns"], apns.isObject else {
            findings.add(
                .error, .missingFCMApns,
                "the body has no message.apns object; a Live Activity push through FCM sends {\"message\":{\"apns\":{\"live_activity_token\":…,\"headers\":{\"apns-push-type\":\"liveactivity\"},\"payload\":{\"aps\":{…}}}}}."
            )
            return
        }
        switch apns["live_activity_token"] {
        case .string(let token)? where !token.isEmpty:
            break
        case .string?:
            findings.add(
                .error, .missingLiveActivityToken,
                "message.apns.live_activity_token is empty; set it to the activity's push token (hex), or to the push-to-start token for a start."
            )
        case nil, .null?:
            findings.add(
                .error, .missingLiveActivityToken,
                "message.apns.live_activity_token is missing: without it FCM sends an ordinary notification to the app, not a Live Activity update. Set it to the activity's push token (hex), or to the push-to-start token for a start."
            )
        case _?:
            findings.add(
                .error, .missingLiveActivityToken,
                "message.apns.live_activity_token must be a string (the push token in hex), not \(describe(apns["live_activity_token"]))."
            )
        }
        var topicHeader: String?
        switch apns["headers"] {
        case nil, .null?:
            findings.add(
                .error, .pushTypeNotLiveActivity,
                "message.apns.headers is missing; add {\"apns-push-type\": \"liveactivity\"} (and apns-priority) so that APNs takes it for a Live Activity push."
            )
        case .object(let headers)?:
            for header in headers where header.value.stringValue == nil {
                findings.add(
                    .error, .headerNotString,
                    "message.apns.headers \"\(header.key)\" is \(describe(header.value)); FCM takes only string values (write \"10\", not 10) and rejects the message with 400."
                )
            }
            let pushType = headers.first { $0.key.lowercased() == "apns-push-type" }
            topicHeader = headers.first { $0.key.lowercased() == "apns-topic" }?.value.stringValue
            if let pushType {
                if let value = pushType.value.stringValue, value != "liveactivity" {
                    findings.add(
                        .error, .pushTypeNotLiveActivity,
                        "message.apns.headers \"\(pushType.key)\" is \"\(value)\"; a Live Activity push needs \"liveactivity\"."
                    )
                }
            } else {
                findings.add(
                    .error, .pushTypeNotLiveActivity,
                    "message.apns.headers has no apns-push-type; add \"apns-push-type\": \"liveactivity\" so that APNs takes it for a Live Activity push."
                )
            }
        case _?:
            findings.add(
                .error, .pushTypeNotLiveActivity,
                "message.apns.headers must be an object of strings with \"apns-push-type\": \"liveactivity\", not \(describe(apns["headers"]))."
            )
        }
        if let topic = topic ?? topicHeader, !topic.hasSuffix(topicSuffix) {
            findings.add(
                .error, .topicWithoutSuffix,
                "topic '\(topic)' does not end with '\(topicSuffix)': Live Activity pushes to the plain bundle id fail with DeviceTokenNotForTopic. Use '\(topic)\(topicSuffix)'."
            )
        }
        let bytes = Array(body)
        guard apns["payload"]?.isObject == true,
            let range = StrictJSON.range(of: ["message", "apns", "payload"], in: bytes)
        else {
            findings.add(
                .error, .missingFCMPayload,
                "message.apns.payload is missing or not an object; the Live Activity's {\"aps\":{\"event\":…,\"timestamp\":…,\"content-state\":{…}}} goes there."
            )
            return
        }
        let payload = Data(StrictJSON.compact(bytes[range]))
        for var finding in check(payload: payload, topic: nil, now: now) {
            finding.message = "message.apns.payload: " + finding.message
            findings.append(finding)
        }
    }

    /// The Tencent Cloud Chat rules on `json`, the parsed body.
    private static func checkTencentChat(_ json: JSONValue, now: Date, into findings: inout Findings) {
        var path = ""
        var value: JSONValue? = json
        for name in ["OfflinePushInfo", "ApnsInfo", "LiveActivity"] {
            let parent = path.isEmpty ? "the body" : path
            path += path.isEmpty ? name : "." + name
            value = value?[name]
            guard value?.isObject == true else {
                findings.add(
                    .error, .missingLiveActivity,
                    "\(parent) has no \(name) object; without OfflinePushInfo.ApnsInfo.LiveActivity Tencent Cloud Chat sends an ordinary notification, not a Live Activity update."
                )
                return
            }
        }
        guard let activity = value else { return }
        switch activity["LaId"] {
        case .string(let id)? where (1...64).contains(id.utf8.count):
            break
        case .string(let id)? where id.isEmpty:
            findings.add(.error, .invalidLaID, "\(path).LaId is empty; set it to the activity's id (1 to 64 bytes).")
        case .string(let id)?:
            findings.add(
                .error, .invalidLaID,
                "\(path).LaId is \(id.utf8.count) bytes; Tencent Cloud Chat takes at most 64. Use a shorter activity id."
            )
        case nil, .null?:
            findings.add(
                .error, .invalidLaID,
                "\(path).LaId is missing; set it to the activity's id (1 to 64 bytes), the one its updates and renders are matched by."
            )
        case _?:
            findings.add(
                .error, .invalidLaID,
                "\(path).LaId must be a string of 1 to 64 bytes, not \(describe(activity["LaId"])).")
        }
        let event = activity["Event"]?.stringValue
        switch activity["Event"] {
        case nil, .null?:
            findings.add(.error, .missingEvent, "\(path).Event is missing; set it to \"update\" or \"end\".")
        case .string(let text)? where text != "update" && text != "end":
            findings.add(
                .error, .invalidEvent,
                "\(path).Event is \"\(text)\"; Tencent Cloud Chat takes \"update\" or \"end\" (it cannot start an activity)."
            )
        case .string?:
            break
        case _?:
            findings.add(.error, .invalidEvent, "\(path).Event is not a string; it must be \"update\" or \"end\".")
        }
        checkContentState(
            activity["ContentState"], at: path + ".ContentState", sendAs: "a JSON object", into: &findings)
        let dismissal = activity["DismissalDate"]
        if let dismissal, dismissal != .null {
            if event != "end" {
                findings.add(
                    .error, .dismissalDateWithoutEnd,
                    "\(path).DismissalDate is set on an Event that is not \"end\"; it says when an ended activity leaves the Lock Screen. Send it with the end push only."
                )
            }
            switch dismissal {
            case .int(let seconds):
                let nowSeconds = Int64((now.timeIntervalSince1970).rounded(.down))
                if seconds >= millisecondsThreshold {
                    findings.add(
                        .error, .dismissalDateInMilliseconds,
                        "\(path).DismissalDate \(seconds) looks like milliseconds; it is Unix seconds (\(seconds / 1000))."
                    )
                } else if seconds < nowSeconds {
                    findings.add(
                        .warning, .dismissalDateInPast,
                        "\(path).DismissalDate \(seconds) is before now (\(nowSeconds)): the activity is removed from the Lock Screen as soon as it ends. That is right only if you mean to dismiss it at once."
                    )
                }
            default:
                findings.add(
                    .error, .dismissalDateNotInteger,
                    "\(path).DismissalDate must be an integer of Unix seconds, not \(describe(dismissal)).")
            }
        }
    }
}

import ArrivalBeacons
import ArrivalModel
import ArrivalSender

/// Who an activity's sender talks to, and how it logs its requests.
enum SenderChannel: Sendable, Equatable {
    /// APNs directly, logged as computed `apns` records (every sender without `--providers`).
    case apnsRecord
    /// APNs directly, each HTTP/2 exchange logged raw.
    case apnsExchange
    /// Firebase Cloud Messaging HTTP v1 `messages:send`.
    case fcm
    /// Tencent Cloud Chat push.
    case tencentChat

    /// How often each channel is drawn with `--providers`: three activities
    /// in four are logged as exchanges.
    static let shares: [(SenderChannel, Int)] = [
        (.apnsRecord, 25), (.apnsExchange, 25), (.fcm, 30), (.tencentChat, 20),
    ]

    var provider: PushProvider {
        switch self {
        case .apnsRecord, .apnsExchange: .apns
        case .fcm: .fcm
        case .tencentChat: .tencentChat
        }
    }

    /// The phenomenon counted per activity.
    var phenomenon: String {
        switch self {
        case .apnsRecord: "senders_apns_records"
        case .apnsExchange: "senders_apns_exchanges"
        case .fcm: "senders_fcm_exchanges"
        case .tencentChat: "senders_tencent_chat_exchanges"
        }
    }
}

/// One sender's habits in writing its requests, fixed per activity.
struct ExchangeStyle: Sendable {
    /// 0: `apns-priority`, `apns-topic`, … as HTTP/2 writes them; 1: mixed
    /// (`APNs-Priority`, `apns-topic`, `APNs-Push-Type`); 2: canonicalised
    /// by an HTTP/1 client library (`Apns-Priority`, `Apns-Topic`, `Apns-Id`).
    var headerCase = 0
    /// The sender sets its own `apns-id` (APNs then answers with the same).
    var setsAPNsID = false
    /// The URL names the port (`api.push.apple.com:443`).
    var namesPort = false
    /// A sandbox device's host is `api.development.push.apple.com` rather
    /// than `api.sandbox.push.apple.com`.
    var developmentHost = false
    /// FCM: the sender sets `apns-topic` (else FCM fills it in, and the
    /// record's app is `unknown`).
    var setsFCMTopic = true
    /// Tencent Cloud Chat answers with a `MsgKey` (single chat) rather than
    /// a `TaskId` (batch push).
    var tencentMsgKey = false

    init() {}

    init(rng: inout SplitMix64) {
        headerCase = rng.weighted([(0, 5), (1, 3), (2, 2)])
        setsAPNsID = rng.chance(0.4)
        namesPort = rng.chance(0.2)
        developmentHost = rng.chance(0.5)
        setsFCMTopic = rng.chance(0.8)
        tencentMsgKey = rng.chance(0.5)
    }

    func name(_ lowercased: String) -> String {
        switch headerCase {
        case 1:
            switch lowercased {
            case "apns-priority": "APNs-Priority"
            case "apns-push-type": "APNs-Push-Type"
            default: lowercased
            }
        case 2:
            lowercased.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
        default: lowercased
        }
    }
}

/// One request as it goes on the wire, and its answer.
private struct WireExchange {
    var url: String
    var headers: [String: String]
    var body: String
    var response: (status: Int, headers: [String: String], body: String?)? = nil
    var error: String? = nil
    var perceived: Perceived
}

extension FleetRun {
    /// The 20 minutes (09:00-09:20 UTC) in which the APNs key uploaded to
    /// Firebase had expired: every FCM request fails with 401
    /// `THIRD_PARTY_AUTH_ERROR` until someone replaced it.
    var fcmAuthOutage: Range<Int64> {
        (dayStartMs + 9 * Milliseconds.hour)..<(dayStartMs + 9 * Milliseconds.hour + 20 * Milliseconds.minute)
    }

    /// Logs `attempt` as one `exchange` line, the HTTP request sent through
    /// `context.channel` and its answer, written by the kit's encoder, and
    /// says what the sender makes of the answer. What the device then sees
    /// follows the contract's derivation (section 2.6): a 200 from FCM or
    /// Tencent Cloud Chat is accepted, and Tencent's own `aps.timestamp` is
    /// the request's second (``AcceptedPush``).
    func logExchange(
        _ plan: PushPlan, token: String, context: SenderContext, _ attempt: inout SendAttempt,
        _ rng: inout SplitMix64
    ) throws -> Perceived {
        let (answer, payload, sendMs) = (attempt.answer, attempt.payloadBytes, attempt.sendMs)
        var wire: WireExchange
        switch context.channel {
        case .apnsRecord, .apnsExchange:
            wire = apnsExchange(plan, payloadBytes: payload, token: token, context: context, answer, &rng)
        case .fcm:
            wire = fcmExchange(
                plan, payloadBytes: payload, sendMs: sendMs, token: token, context: context, answer, &rng)
        case .tencentChat:
            wire = tencentExchange(
                plan, payloadBytes: payload, sendMs: sendMs, token: token, context: context, answer, &rng)
        }
        if answer == .timeout {
            wire.response = nil
            wire.error = transportError(&attempt.latency, &rng)
        }
        let provider = context.channel.provider
        var line = BeaconLine(capacity: 900 + wire.body.utf8.count)
        line.exchange(
            provider: provider, sentAt: sendMs, url: wire.url, requestHeaders: wire.headers,
            requestBody: wire.body, response: wire.response, error: wire.error,
            latencyMS: attempt.latency.map { Int($0) },
            activityID: provider != .tencentChat && (plan.event == .start || context.logsActivityID)
                ? context.activityID : nil,
            environment: context.environment)
        try log(&line, attempt, &rng)
        exchangeLines[provider, default: 0] += 1
        return wire.perceived
    }

    // MARK: APNs

    private func apnsExchange(
        _ plan: PushPlan, payloadBytes: Int, token: String, context: SenderContext, _ answer: ProviderAnswer,
        _ rng: inout SplitMix64
    ) -> WireExchange {
        let style = context.style
        var headers = ["authorization": "bearer " + PushExchange.redacted]
        headers[style.name("apns-topic")] = context.topic
        if !context.omitsPushType { headers[style.name("apns-push-type")] = "liveactivity" }
        if !context.omitsPriority { headers[style.name("apns-priority")] = "\(plan.priority)" }
        let apnsID = rng.uuid()
        if style.setsAPNsID { headers[style.name("apns-id")] = apnsID }
        let host =
            context.environment == "sandbox"
            ? (style.developmentHost ? "api.development.push.apple.com" : PushExchange.apnsSandboxHost)
            : PushExchange.apnsProductionHost
        let url = "https://" + host + (style.namesPort ? ":443" : "") + "/3/device/" + token
        let body = FleetRun.payloadText(plan, bytes: payloadBytes, topic: context.topic)
        let answered = [style.headerCase == 2 ? "Apns-Id" : "apns-id": apnsID]
        func reason(_ status: Int, _ reason: String, _ perceived: Perceived) -> WireExchange {
            WireExchange(
                url: url, headers: headers, body: body, response: (status, answered, #"{"reason":"\#(reason)"}"#),
                perceived: perceived)
        }
        switch answer {
        case .ok:
            return WireExchange(
                url: url, headers: headers, body: body, response: (200, answered, ""), perceived: .accepted)
        case .badToken: return reason(400, "BadDeviceToken", .badToken)
        case .unregistered:
            return WireExchange(
                url: url, headers: headers, body: body,
                response: (410, answered, #"{"reason":"Unregistered","timestamp":\#(context.unregisteredAtMs)}"#),
                perceived: .unregistered)
        case .tooLarge: return reason(413, "PayloadTooLarge", .tooLarge)
        case .throttled: return reason(429, "TooManyRequests", .retry)
        case .unavailable, .authError: return reason(503, "ServiceUnavailable", .retry)
        case .serverError:
            return WireExchange(
                url: url, headers: headers, body: body, response: (500, answered, ""), perceived: .retry)
        case .timeout:
            return WireExchange(url: url, headers: headers, body: body, perceived: .retry)
        }
    }

    // MARK: FCM

    private static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    private static let apnsErrorType = "type.googleapis.com/google.firebase.fcm.v1.ApnsError"

    /// An FCM v1 error body: `error.code`, `message` and `status`, and the
    /// `details` given (FcmError, ApnsError objects), if any.
    private static func fcmError(_ code: Int, _ status: String, _ message: String, details: [String]) -> String {
        let list = details.isEmpty ? "" : #","details":[\#(details.joined(separator: ","))]"#
        return #"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)"\#(list)}}"#
    }

    private static func fcmErrorCode(_ code: String) -> String {
        #"{"@type":"\#(fcmErrorType)","errorCode":"\#(code)"}"#
    }

    private static func relayedAPNsError(_ status: Int, _ reason: String) -> String {
        #"{"@type":"\#(apnsErrorType)","statusCode":\#(status),"reason":"\#(reason)"}"#
    }

    private func fcmExchange(
        _ plan: PushPlan, payloadBytes: Int, sendMs: Int64, token: String, context: SenderContext,
        _ answer: ProviderAnswer, _ rng: inout SplitMix64
    ) -> WireExchange {
        let style = context.style
        let project = "example-" + context.topic.split(separator: ".").dropFirst(2).prefix(1).joined()
        let url = "https://fcm.googleapis.com/v1/projects/\(project)/messages:send"
        let headers = [
            "Authorization": "Bearer " + PushExchange.redacted, "Content-Type": "application/json; charset=UTF-8",
        ]
        var apnsHeaders = #""\#(style.name("apns-push-type"))":"liveactivity""#
        if !context.omitsPriority { apnsHeaders += #","\#(style.name("apns-priority"))":"\#(plan.priority)""# }
        if style.setsFCMTopic { apnsHeaders += #","\#(style.name("apns-topic"))":"\#(context.topic)""# }
        let payload = FleetRun.payloadText(plan, bytes: payloadBytes, topic: context.topic)
        let registration = String(token.prefix(22)) + ":APA91b" + String(token.suffix(24))
        let body =
            #"{"message":{"token":"\#(registration)","apns":{"live_activity_token":"\#(token)","headers":{\#(apnsHeaders)},"payload":\#(payload)}}}"#
        let json = ["Content-Type": "application/json; charset=UTF-8"]
        // Half of FCM's refusals relay APNs's own answer in an ApnsError detail.
        let relays = rng.chance(0.5)
        /// A refusal: HTTP `code`, and an FCM error body with the same code.
        func refused(
            _ code: Int, _ status: String, _ message: String, details: [String], _ perceived: Perceived
        ) -> WireExchange {
            WireExchange(
                url: url, headers: headers, body: body,
                response: (code, json, FleetRun.fcmError(code, status, message, details: details)),
                perceived: perceived)
        }
        switch answer {
        case .ok:
            let name = "projects/\(project)/messages/0:\(sendMs)\(rng.int(100...999))%\(rng.hex(bytes: 8))"
            return WireExchange(
                url: url, headers: headers, body: body, response: (200, json, #"{"name":"\#(name)"}"#),
                perceived: .accepted)
        case .badToken:
            let details =
                [FleetRun.fcmErrorCode("INVALID_ARGUMENT")]
                + (relays ? [FleetRun.relayedAPNsError(400, "BadDeviceToken")] : [])
            return refused(
                400, "INVALID_ARGUMENT", "Request contains an invalid argument.", details: details, .badToken)
        case .unregistered:
            // An ApnsError may come before the FcmError: the first ApnsError wins wherever it is.
            let details =
                relays
                ? [FleetRun.relayedAPNsError(410, "Unregistered"), FleetRun.fcmErrorCode("UNREGISTERED")]
                : [FleetRun.fcmErrorCode("UNREGISTERED")]
            return refused(404, "NOT_FOUND", "Requested entity was not found.", details: details, .unregistered)
        case .tooLarge:
            let details =
                [FleetRun.fcmErrorCode("INVALID_ARGUMENT")]
                + (relays ? [FleetRun.relayedAPNsError(413, "PayloadTooLarge")] : [])
            return refused(400, "INVALID_ARGUMENT", "Message is too big", details: details, .tooLarge)
        case .throttled:
            return refused(
                429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Send requests'.",
                details: [FleetRun.fcmErrorCode("QUOTA_EXCEEDED")], .retry)
        case .unavailable:
            return refused(
                503, "UNAVAILABLE", "The service is currently unavailable.",
                details: [FleetRun.fcmErrorCode("UNAVAILABLE")], .retry)
        case .authError:
            return refused(
                401, "UNAUTHENTICATED", "Auth error from APNS or Web Push Service",
                details: [FleetRun.fcmErrorCode("THIRD_PARTY_AUTH_ERROR")], .retry)
        case .serverError:
            // INTERNAL with no details: the reason can only be error.status.
            return refused(500, "INTERNAL", "Internal error encountered.", details: [], .retry)
        case .timeout:
            return WireExchange(url: url, headers: headers, body: body, perceived: .retry)
        }
    }

    // MARK: Tencent Cloud Chat

    private func tencentExchange(
        _ plan: PushPlan, payloadBytes: Int, sendMs: Int64, token: String, context: SenderContext,
        _ answer: ProviderAnswer, _ rng: inout SplitMix64
    ) -> WireExchange {
        let random = rng.int(10_000_000...99_999_999)
        let url =
            "https://console.tim.qq.com/v4/timpush/batch?sdkappid=1400000017&identifier=administrator&usersig="
            + PushExchange.redacted + "&random=\(random)&contenttype=json"
        let headers = ["Content-Type": "application/json"]
        let seconds = RFC3339.floorDivide(sendMs, 1000).quotient
        let event = plan.event == .end ? "end" : "update"
        let state = FleetRun.contentState(plan, bytes: max(60, payloadBytes - 120))
        var activity = #""LaId":"\#(context.activityID)","Event":"\#(event)","ContentState":\#(state)"#
        if plan.event == .end && plan.seq % 3 == 0 { activity += #","DismissalDate":\#(seconds + 900)"# }
        let body =
            #"{"From_Account":"administrator","To_Account":["u\#(token.prefix(12))"],"MsgRandom":\#(random),"MsgBody":[{"MsgType":"TIMCustomElem","MsgContent":{"Data":"live-activity"}}],"OfflinePushInfo":{"PushFlag":0,"Desc":"\#(FleetRun.status(plan))","ApnsInfo":{"LiveActivity":{\#(activity)}}}}"#
        let json = ["Content-Type": "application/json; charset=utf-8"]
        func answered(_ status: Int, _ text: String?, _ perceived: Perceived) -> WireExchange {
            WireExchange(url: url, headers: headers, body: body, response: (status, json, text), perceived: perceived)
        }
        let ok =
            context.style.tencentMsgKey
            ? #"{"ActionStatus":"OK","ErrorInfo":"","ErrorCode":0,"MsgTime":\#(seconds),"MsgKey":"\#(random)_\#(plan.seq)_\#(seconds)"}"#
            : #"{"ActionStatus":"OK","ErrorInfo":"","ErrorCode":0,"TaskId":"\#(rng.hex(bytes: 16))"}"#
        switch answer {
        case .ok, .authError:
            return answered(200, ok, .accepted)
        case .unregistered:
            // Tencent does not hear of APNs's 410: it takes the push, which the
            // device, its activity dismissed, never shows.
            return answered(200, ok, .accepted)
        case .tooLarge:
            // Tencent takes the push and APNs refuses it later: accepted, never delivered.
            return answered(200, ok, .lostAtProvider)
        case .badToken:
            // A business error: HTTP 200, ActionStatus FAIL and a non-zero ErrorCode.
            return answered(
                200, #"{"ActionStatus":"FAIL","ErrorInfo":"To_Account is not a registered account","ErrorCode":70107}"#,
                .badToken)
        case .throttled:
            return answered(429, "", .retry)
        case .unavailable:
            // A FAIL without an ErrorCode: the record's reason is Tencent:unknown.
            return answered(200, #"{"ActionStatus":"FAIL","ErrorInfo":"server busy, retry later"}"#, .retry)
        case .serverError:
            return answered(500, "", .retry)
        case .timeout:
            return WireExchange(url: url, headers: headers, body: body, perceived: .retry)
        }
    }

    // MARK: Payloads

    private static let statuses = ["Preparing", "On the way", "Nearby", "Arriving", "At the door"]
    /// Text to pad content states with, long enough for the largest payload.
    private static let filler: [UInt8] = {
        let sentence = Array("Your courier is 3 stops away and will call on arrival. ".utf8)
        return (0..<8192).map { sentence[$0 % sentence.count] }
    }()

    static func status(_ plan: PushPlan) -> String {
        plan.event == .end ? "Delivered" : statuses[plan.seq % statuses.count]
    }

    /// A content state carrying `seq`, about `bytes` long.
    static func contentState(_ plan: PushPlan, bytes: Int) -> String {
        let head = #"{"seq":\#(plan.seq),"status":"\#(status(plan))","detail":""#
        let tail = #""}"#
        let pad = min(max(0, bytes - head.utf8.count - tail.utf8.count), filler.count)
        return head + String(decoding: filler[0..<pad], as: UTF8.self) + tail
    }

    /// The APNs payload of `plan`, exactly `bytes` long when it can be that
    /// short (a start push carries its attributes).
    static func payloadText(_ plan: PushPlan, bytes: Int, topic: String) -> String {
        let event =
            switch plan.event {
            case .start: "start"
            case .update: "update"
            case .end: "end"
            }
        let head = #"{"aps":{"event":"\#(event)","timestamp":\#(plan.apsTimestamp),"content-state":"#
        var tail = "}}"
        if plan.event == .start {
            tail = #","attributes-type":"LiveActivityAttributes","attributes":{"topic":"\#(topic)"}}}"#
        }
        let stateBytes = bytes - head.utf8.count - tail.utf8.count
        return head + contentState(plan, bytes: stateBytes) + tail
    }
}

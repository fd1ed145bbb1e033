import ArrivalModel

/// The `apns` record an `exchange` line stands for, worked out on the
/// reference parser's tree by the rules of Documentation/InputRecords.md
/// ("exchange") and CONTRACT.md 2.6. Written from those documents, not from
/// `ExchangeDeriver`: a slow walk over `ReferenceJSON` values, whose objects
/// keep their members in order (the first header match wins).
///
/// Where the decoder names one fault of an `invalid_exchange` line (the first
/// it meets, in an order the documents leave open), this walk goes on past a
/// fault wherever the rest can still be read and keeps every path it finds
/// at fault (`request.url`, `request.headers.apns-id`, `response.status`,
/// `request.body: message.apns.live_activity_token`, …); the decoder's problem
/// must start with one of them.
struct ReferenceExchange {
    typealias Members = [(key: [UInt8], value: ReferenceJSON)]
    typealias Fault = ReferenceDecoder.Fault

    /// The paths at fault, in the order found.
    private(set) var faults: [String] = []

    private mutating func fault(_ path: String) {
        faults.append(path)
    }

    /// Checks the exchange's own fields in the order of its table (`missing_field`,
    /// `wrong_type`, `invalid_enum`, `invalid_time`), then derives the record; anything
    /// wrong inside `request`, `response` or what the provider needs is `invalid_exchange`.
    static func record(_ fields: ReferenceDecoder.Fields) throws(Fault) -> APNSRecord {
        let providers = ["apns", "fcm", "tencent_chat"]
        let provider = PushProvider(rawValue: try fields.oneOf("provider", providers, required: true)!)!
        let sentAt = try fields.time("sent_at")
        guard let request = fields.value("request") else { throw Fault(cause: .missingField, field: "request") }
        guard case .object(let requestMembers) = request else { throw Fault(cause: .wrongType, field: "request") }
        var responseMembers: Members?
        if let response = fields.value("response") {
            guard case .object(let members) = response else { throw Fault(cause: .wrongType, field: "response") }
            responseMembers = members
        }
        let error = try fields.string("error")
        let latency = try fields.int("latency_ms")
        let activityID = try fields.string("activity_id")
        let environment = try fields.string("environment")

        var walk = ReferenceExchange()
        let record = walk.derive(
            provider: provider, sentAt: sentAt, request: requestMembers, response: responseMembers, error: error,
            latency: latency, activityID: activityID, environment: environment)
        guard walk.faults.isEmpty, let record else {
            precondition(!walk.faults.isEmpty, "the reference derived no record yet found no fault")
            throw Fault(cause: .invalidExchange, field: walk.faults[0], paths: walk.faults)
        }
        return record
    }

    // MARK: - JSON helpers

    /// The first member named `key`, `nil` when absent or `null`.
    static func member(_ key: String, of members: Members) -> ReferenceJSON? {
        let key = Array(key.utf8)
        guard let found = members.first(where: { $0.key == key })?.value else { return nil }
        if case .null = found { return nil }
        return found
    }

    /// The value at `path` through nested objects; `nil` when any step is not an object or is absent.
    static func value(at path: [String], in members: Members) -> ReferenceJSON? {
        var current = ReferenceJSON.object(members)
        for key in path {
            guard case .object(let inner) = current, let next = member(key, of: inner) else { return nil }
            current = next
        }
        return current
    }

    static func object(_ value: ReferenceJSON?) -> Members? {
        if case .object(let members)? = value { return members }
        return nil
    }

    static func string(_ value: ReferenceJSON?) -> [UInt8]? {
        if case .string(let bytes)? = value { return bytes }
        return nil
    }

    /// A JSON integer literal within the signed 64-bit range.
    static func int(_ value: ReferenceJSON?) -> Int64? {
        if case .number(let literal)? = value { return ReferenceDecoder.int(literal) }
        return nil
    }

    /// The object a body's text holds, by the rules for a line (RFC 8259, an object, no
    /// repeated key, nesting at most 64); nil for anything else.
    static func bodyObject(_ text: [UInt8]) -> Members? {
        guard case .json(.object(let members), let depth, let duplicate) = ReferenceParser.parse(text),
            depth <= 64, !duplicate
        else { return nil }
        return members
    }

    static func lowercasedASCII(_ bytes: [UInt8]) -> [UInt8] {
        bytes.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
    }

    static func endsWith(_ bytes: [UInt8], _ suffix: String) -> Bool {
        let suffix = Array(suffix.utf8)
        return bytes.count >= suffix.count && Array(bytes[(bytes.count - suffix.count)...]) == suffix
    }

    // MARK: - Headers

    /// A headers object: absent or `null` is no headers; anything but an object, or a
    /// member whose value is not a string (`null` included), is a fault.
    mutating func headers(_ value: ReferenceJSON?, at path: String) -> Members {
        guard let value else { return [] }
        guard case .object(let members) = value else {
            fault(path)
            return []
        }
        for (key, value) in members {
            if case .string = value { continue }
            fault(path + "." + String(decoding: key, as: UTF8.self))
        }
        return members
    }

    /// The value of the first header whose name is `name` without regard to (ASCII) case.
    static func header(_ name: String, in headers: Members) -> [UInt8]? {
        let name = Array(name.utf8)
        return string(headers.first(where: { lowercasedASCII($0.key) == name })?.value)
    }

    /// `apns-priority` read as decimal when it is 1 to 18 ASCII digits.
    static func priority(_ headers: Members) -> Int64? {
        guard let text = header("apns-priority", in: headers), (1...18).contains(text.count),
            text.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return text.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }

    // MARK: - Payload

    static func event(_ value: ReferenceJSON?) -> String? {
        guard let bytes = string(value) else { return nil }
        return ["start", "update", "end"].first { Array($0.utf8) == bytes }
    }

    /// `aps.timestamp` (required, an int), `aps.event`, `aps.content-state.seq`.
    mutating func payload(_ aps: ReferenceJSON?, at path: String) -> (timestamp: Int64, event: String?, seq: Int64?)? {
        guard let aps = Self.object(aps), let timestamp = Self.int(Self.member("timestamp", of: aps)) else {
            fault(path + ".timestamp")
            return nil
        }
        return (
            timestamp, Self.event(Self.member("event", of: aps)),
            Self.int(Self.value(at: ["content-state", "seq"], in: aps))
        )
    }

    // MARK: - URL

    /// The host and the push token of an APNs URL `scheme://[userinfo@]host[:port]/3/device/TOKEN[?…][#…]`;
    /// the token nil when the path is anything else, the whole answer nil without `scheme://`.
    static func apnsURL(_ url: [UInt8]) -> (host: [UInt8], token: [UInt8]?)? {
        apnsURL(url, after: "/3/device/")
    }

    /// The host and what follows `prefix` in the path (a token after `/3/device/`, a bundle id after
    /// `/4/broadcasts/apps/`): non-empty, without `/`; nil when the path is anything else.
    static func apnsURL(_ url: [UInt8], after prefix: String) -> (host: [UInt8], token: [UInt8]?)? {
        // Contract 3.0: the path alone (`/3/device/TOKEN`, HTTP/2's `:path`), with no host.
        if url.first == UInt8(ascii: "/") { return ([], token(inPath: url[...], after: prefix)) }
        let separator = Array("://".utf8)
        guard let schemeEnd = (0..<max(url.count - 2, 0)).first(where: { Array(url[$0..<$0 + 3]) == separator })
        else { return nil }
        let scheme = url[..<schemeEnd]
        guard !scheme.isEmpty, !scheme.contains(where: { "/?#".utf8.contains($0) }) else { return nil }
        let rest = Array(url[(schemeEnd + 3)...])
        let authorityEnd = rest.firstIndex(where: { "/?#".utf8.contains($0) }) ?? rest.count
        let authority = rest[..<authorityEnd]
        let afterUser = authority.lastIndex(of: UInt8(ascii: "@")).map { $0 + 1 } ?? authority.startIndex
        let hostEnd = authority[afterUser...].firstIndex(of: UInt8(ascii: ":")) ?? authority.endIndex
        let host = Array(authority[afterUser..<hostEnd])
        return (host, token(inPath: rest[authorityEnd...], after: prefix))
    }

    /// The token of a path (cut at `?` or `#`) that is `prefix` then TOKEN, else nil.
    static func token(inPath afterAuthority: ArraySlice<UInt8>, after prefixText: String) -> [UInt8]? {
        let path = Array(afterAuthority.prefix(while: { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }))
        let prefix = Array(prefixText.utf8)
        guard path.count > prefix.count, Array(path[..<prefix.count]) == prefix else { return nil }
        let token = Array(path[prefix.count...])
        return token.contains(UInt8(ascii: "/")) ? nil : token
    }

    // MARK: - Derivation

    private mutating func derive(
        provider: PushProvider, sentAt: Int64, request: Members, response: Members?, error: String?,
        latency: Int64?, activityID: String?, environment: String?
    ) -> APNSRecord? {
        // request: url (a string), headers (strings), body (a string holding a JSON object).
        let url = Self.string(Self.member("url", of: request))
        if url == nil { fault("request.url") }
        let requestHeaders = headers(Self.member("headers", of: request), at: "request.headers")
        var bodyText: [UInt8]?
        var body: Members?
        switch Self.member("body", of: request) {
        case .string(let text)?:
            bodyText = text
            body = Self.bodyObject(text)
            if body == nil { fault("request.body") }
        default:
            fault("request.body")
        }
        // response: status (an int), headers (strings), body (a string, read only where a rule needs it).
        var status: Int64?
        var responseHeaders: Members = []
        var answer: Members?
        if let response {
            status = Self.int(Self.member("status", of: response))
            if status == nil { fault("response.status") }
            responseHeaders = headers(Self.member("headers", of: response), at: "response.headers")
            switch Self.member("body", of: response) {
            case nil: break
            case .string(let text)?: answer = Self.bodyObject(text)
            default: fault("response.body")
            }
        }
        func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
        let answered = response != nil

        switch provider {
        case .apns:
            var token: [UInt8]?
            var bundle: [UInt8]?
            var host: [UInt8] = []
            if let url {
                let parts = Self.apnsURL(url)
                token = parts?.token
                host = parts?.host ?? []
                if token == nil {
                    // Contract 3.0: a broadcast to `/4/broadcasts/apps/BUNDLE_ID`.
                    let broadcast = Self.apnsURL(url, after: "/4/broadcasts/apps/")
                    bundle = broadcast?.token
                    host = broadcast?.host ?? []
                }
                if token == nil && bundle == nil { fault("request.url") }
            }
            var channel: [UInt8]?
            if bundle != nil {
                channel = Self.header("apns-channel-id", in: requestHeaders)
                if channel?.isEmpty != false { fault("request.headers: apns-channel-id") }
                if activityID != nil { fault("activity_id") }
            }
            let aps = body.flatMap { payload(Self.member("aps", of: $0), at: "request.body: aps") }
            guard token != nil || bundle != nil, let aps, let bodyText, let status = answered ? status : 0,
                faults.isEmpty
            else {
                return nil
            }
            var reason: String?
            if !answered {
                reason = error
            } else if status != 200 {
                reason = text(Self.string(answer.flatMap { Self.member("reason", of: $0) }))
            }
            let hostEnvironment: String? =
                switch Self.lowercasedASCII(host) {
                case Array("api.push.apple.com".utf8), Array("api-broadcast.push.apple.com".utf8): "production"
                case Array("api.sandbox.push.apple.com".utf8), Array("api.development.push.apple.com".utf8),
                    Array("api-broadcast.sandbox.push.apple.com".utf8):
                    "sandbox"
                default: nil
                }
            let apnsID =
                bundle != nil
                ? Self.header("apns-request-id", in: responseHeaders) ?? Self.header("apns-id", in: responseHeaders)
                    ?? Self.header("apns-request-id", in: requestHeaders) ?? Self.header("apns-id", in: requestHeaders)
                    ?? []
                : Self.header("apns-id", in: responseHeaders) ?? Self.header("apns-id", in: requestHeaders) ?? []
            return APNSRecord(
                apnsID: text(apnsID)!, sentAt: sentAt, status: status, reason: reason, pushToken: text(token),
                activityID: activityID, seq: aps.seq, event: aps.event, apsTimestamp: aps.timestamp,
                payloadBytes: Int64(bodyText.count),
                topic: text(Self.header("apns-topic", in: requestHeaders) ?? bundle),
                pushType: text(Self.header("apns-push-type", in: requestHeaders)),
                priority: Self.priority(requestHeaders), environment: environment ?? hostEnvironment,
                latencyMS: latency, provider: .apns, channelID: text(channel))

        case .fcm:
            var token: [UInt8]?
            var aps: (timestamp: Int64, event: String?, seq: Int64?)?
            var apnsHeaders: Members = []
            if let body {
                if let apns = Self.object(Self.value(at: ["message", "apns"], in: body)) {
                    token = Self.string(Self.member("live_activity_token", of: apns))
                    if token?.isEmpty != false {
                        token = nil
                        fault("request.body: message.apns.live_activity_token")
                    }
                    aps = payload(
                        Self.value(at: ["payload", "aps"], in: apns), at: "request.body: message.apns.payload.aps")
                    apnsHeaders = headers(Self.member("headers", of: apns), at: "request.body: message.apns.headers")
                } else {
                    fault("request.body: message.apns")
                }
            }
            guard let token, let aps, url != nil, faults.isEmpty else { return nil }
            var apnsID: [UInt8] = []
            var recordStatus: Int64 = 0
            var reason: String?
            if !answered {
                reason = error
            } else if status == 200 {
                recordStatus = 200
                apnsID = Self.string(answer.flatMap { Self.member("name", of: $0) }) ?? []
            } else {
                let errorObject = Self.object(answer.flatMap { Self.member("error", of: $0) })
                var details: [Members] = []
                if case .array(let elements)? = errorObject.flatMap({ Self.member("details", of: $0) }) {
                    details = elements.compactMap { Self.object($0) }
                }
                func type(_ detail: Members, endsWith suffix: String) -> Bool {
                    Self.string(Self.member("@type", of: detail)).map { Self.endsWith($0, suffix) } ?? false
                }
                if let apnsError = details.first(where: {
                    type($0, endsWith: "google.firebase.fcm.v1.ApnsError")
                        && Self.int(Self.member("statusCode", of: $0)) != nil
                }) {
                    recordStatus = Self.int(Self.member("statusCode", of: apnsError))!
                    reason = text(Self.string(Self.member("reason", of: apnsError)))
                } else {
                    recordStatus = status!
                    let fcmError = details.first(where: { type($0, endsWith: "google.firebase.fcm.v1.FcmError") })
                    let code =
                        Self.string(fcmError.flatMap { Self.member("errorCode", of: $0) })
                        ?? Self.string(errorObject.flatMap { Self.member("status", of: $0) })
                    reason = code.map { "FCM:" + text($0)! }
                }
            }
            return APNSRecord(
                apnsID: text(apnsID)!, sentAt: sentAt, status: recordStatus, reason: reason, pushToken: text(token)!,
                activityID: activityID, seq: aps.seq, event: aps.event, apsTimestamp: aps.timestamp,
                payloadBytes: nil, topic: text(Self.header("apns-topic", in: apnsHeaders)),
                pushType: text(Self.header("apns-push-type", in: apnsHeaders)), priority: Self.priority(apnsHeaders),
                environment: environment, latencyMS: latency, provider: .fcm)

        case .tencentChat:
            var live: Members?
            var laID: [UInt8]?
            if let body {
                live = Self.object(Self.value(at: ["OfflinePushInfo", "ApnsInfo", "LiveActivity"], in: body))
                if let live {
                    laID = Self.string(Self.member("LaId", of: live))
                    if laID?.isEmpty != false {
                        laID = nil
                        fault("request.body: OfflinePushInfo.ApnsInfo.LiveActivity.LaId")
                    }
                } else {
                    fault("request.body: OfflinePushInfo.ApnsInfo.LiveActivity")
                }
            }
            guard let live, let laID, url != nil, faults.isEmpty else { return nil }
            var recordStatus: Int64 = 0
            var reason: String?
            if !answered {
                reason = error
            } else if status == 200 {
                let code = Self.int(answer.flatMap { Self.member("ErrorCode", of: $0) })
                let actionStatus = Self.string(answer.flatMap { Self.member("ActionStatus", of: $0) })
                if actionStatus == Array("OK".utf8) && code == 0 {
                    recordStatus = 200
                } else {
                    recordStatus = 400
                    reason = "Tencent:" + (code.map { String($0) } ?? "unknown")
                }
            } else {
                recordStatus = status!
            }
            let apnsID =
                Self.string(answer.flatMap { Self.member("MsgKey", of: $0) })
                ?? Self.string(answer.flatMap { Self.member("TaskId", of: $0) }) ?? []
            // Whole Unix seconds, rounded down (toward the past for times before 1970 too).
            let seconds = sentAt >= 0 ? sentAt / 1000 : -((-sentAt + 999) / 1000)
            return APNSRecord(
                apnsID: text(apnsID)!, sentAt: sentAt, status: recordStatus, reason: reason, pushToken: "",
                activityID: text(laID), seq: Self.int(Self.value(at: ["ContentState", "seq"], in: live)),
                event: Self.event(Self.member("Event", of: live)), apsTimestamp: seconds, payloadBytes: nil,
                topic: nil, pushType: "liveactivity", priority: nil, environment: environment, latencyMS: latency,
                provider: .tencentChat)
        }
    }
}

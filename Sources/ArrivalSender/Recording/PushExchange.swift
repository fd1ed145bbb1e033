import ArrivalBeacons
public import ArrivalModel
public import Foundation

/// One HTTP exchange with a push provider, as the sender saw it: APNs
/// directly, Firebase Cloud Messaging HTTP v1 (`messages:send`) or Tencent
/// Cloud Chat. Logged as an `exchange` line (Documentation/InputRecords.md),
/// from which the pipeline derives the `apns` record, so a sender need not
/// know how each provider's answer maps to APNs terms.
///
/// ```swift
/// let exchange = PushExchange(
///     provider: .fcm, sentAt: sentAt,
///     request: .init(url: "https://fcm.googleapis.com/v1/projects/p/messages:send",
///                    headers: ["content-type": "application/json"], body: body),
///     response: .init(status: 200, body: responseBody),
///     latency: Date().timeIntervalSince(sentAt))
/// try recorder.record(exchange)
/// ```
public struct PushExchange: Sendable, Equatable {
    public struct Request: Sendable, Equatable {
        /// The whole URL: `https://api.push.apple.com/3/device/<token>` for
        /// APNs (the token is read from its path), the provider's endpoint
        /// for the others (not read by the pipeline).
        public var url: String
        /// Request headers, names as sent (the pipeline matches them without
        /// regard to case). Written sorted by name.
        public var headers: [String: String]
        /// The body exactly as sent: UTF-8 text of a JSON object.
        public var body: Data

        public init(url: String, headers: [String: String] = [:], body: Data) {
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// What the provider answered.
    public struct Response: Sendable, Equatable {
        public var status: Int
        /// Response headers (APNs answers with `apns-id`). Written sorted by name.
        public var headers: [String: String]
        /// The body as received: APNs's `{"reason":"BadDeviceToken"}` (empty on
        /// 200), FCM's `{"name":…}` or `{"error":…}`, Tencent's
        /// `{"ActionStatus":…,"ErrorCode":…}`. Written only when it is UTF-8
        /// text: a body that is not cannot be the JSON object the pipeline
        /// reads, so leaving it out changes nothing the pipeline derives.
        public var body: Data

        public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    public var provider: PushProvider
    public var sentAt: Date
    public var request: Request
    /// nil when no answer came (timeout, connection reset): status 0.
    public var response: Response?
    /// What went wrong when there is no response (`"timeout"`, `"connection reset"`).
    public var transportError: String?
    /// Seconds from sending the request to the answer (or the failure).
    public var latency: TimeInterval?
    /// The app's own identifier of the activity, when the sender knows it
    /// (ignored for Tencent Cloud Chat, whose `LaId` is the activity id).
    public var activityID: String?
    /// `production` or `sandbox`; nil leaves it to the URL (APNs) or to the
    /// recorder's configuration.
    public var environment: String?

    public init(
        provider: PushProvider, sentAt: Date, request: Request, response: Response?, transportError: String? = nil,
        latency: TimeInterval? = nil, activityID: String? = nil, environment: String? = nil
    ) {
        self.provider = provider
        self.sentAt = sentAt
        self.request = request
        self.response = response
        self.transportError = transportError
        self.latency = latency
        self.activityID = activityID
        self.environment = environment
    }

    /// A direct APNs exchange. Its `path` becomes a URL on APNs's production
    /// host, or on the sandbox host when `environment` is `sandbox` (a path
    /// that already is a whole `https://` URL is kept as it is); a broadcast's
    /// path (`/4/broadcasts/apps/<bundle id>`) goes to the broadcast hosts,
    /// `api-broadcast.push.apple.com` and `api-broadcast.sandbox.push.apple.com`.
    public init(_ apns: APNsExchange, activityID: String? = nil, environment: String? = nil) {
        let path = apns.request.path
        let url: String
        if path.hasPrefix("https://") || path.hasPrefix("http://") {
            url = path
        } else {
            let sandbox = environment == "sandbox"
            let host =
                PushExchange.apnsBroadcastBundleID(url: path) != nil
                ? (sandbox ? PushExchange.apnsBroadcastSandboxHost : PushExchange.apnsBroadcastProductionHost)
                : (sandbox ? PushExchange.apnsSandboxHost : PushExchange.apnsProductionHost)
            url = "https://" + host + (path.hasPrefix("/") ? "" : "/") + path
        }
        self.init(
            provider: .apns, sentAt: apns.sentAt,
            request: Request(url: url, headers: apns.request.headers, body: apns.request.payload),
            response: apns.response, transportError: apns.transportError, latency: apns.latency,
            activityID: activityID, environment: environment)
    }

    package static let apnsProductionHost = "api.push.apple.com"
    package static let apnsSandboxHost = "api.sandbox.push.apple.com"
    /// The hosts that take broadcasts (iOS 18 channels).
    package static let apnsBroadcastProductionHost = "api-broadcast.push.apple.com"
    package static let apnsBroadcastSandboxHost = "api-broadcast.sandbox.push.apple.com"

    /// Why an exchange cannot be logged: the pipeline could derive no `apns`
    /// record from it and would count its line as malformed.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The request body is not UTF-8 text, so it cannot be written as it was sent.
        case requestBodyNotText
        /// The request body is not one JSON object (RFC 8259, nesting at most
        /// 64, no member named twice in an object).
        case requestBodyNotJSONObject
        /// APNs: the URL's path is neither `/3/device/<token>` nor a broadcast's `/4/broadcasts/apps/<bundle id>`.
        case noDeviceToken(url: String)
        /// APNs broadcast: no non-empty `apns-channel-id` request header.
        case noChannelID(url: String)
        /// APNs broadcast: an activity id was given; a broadcast stands for every subscriber.
        case activityIDOnBroadcast
        /// APNs and FCM: the payload's `aps.timestamp` is missing or not an integer.
        case noTimestamp
        /// FCM: `message.apns.live_activity_token` is missing or empty.
        case noLiveActivityToken
        /// FCM: `message.apns.headers` is not an object of strings.
        case invalidAPNsHeaders
        /// Tencent Cloud Chat: `OfflinePushInfo.ApnsInfo.LiveActivity.LaId` is missing or empty.
        case noLiveActivityID

        public var description: String {
            switch self {
            case .requestBodyNotText:
                "the request body is not UTF-8 text; log the body exactly as sent, which for every provider is JSON"
            case .requestBodyNotJSONObject:
                "the request body is not a JSON object (RFC 8259, nested at most 64 deep, no name twice in an object); run 'arrival check-payload' on it"
            case .noDeviceToken(let url):
                "the URL '\(url)' names no device token (expected https://<APNs host>/3/device/<token>, or https://api-broadcast.push.apple.com/4/broadcasts/apps/<bundle id> for a broadcast)"
            case .noChannelID(let url):
                "the broadcast to '\(url)' has no apns-channel-id header (a non-empty channel id); run 'arrival check-payload --broadcast' on it"
            case .activityIDOnBroadcast:
                "a broadcast stands for every activity that follows its channel, not for one: log it without an activity id"
            case .noTimestamp:
                "the payload has no integer aps.timestamp, which every apns record needs; run 'arrival check-payload' on it"
            case .noLiveActivityToken:
                "the FCM message has no message.apns.live_activity_token; it is no Live Activity push (run 'arrival check-payload --provider fcm' on it)"
            case .invalidAPNsHeaders:
                "the FCM message's message.apns.headers is not an object of string values"
            case .noLiveActivityID:
                "the Tencent Cloud Chat body has no OfflinePushInfo.ApnsInfo.LiveActivity.LaId; it is no Live Activity push (run 'arrival check-payload --provider tencent_chat' on it)"
            }
        }
    }

    /// Checks that the pipeline can derive an `apns` record from this
    /// exchange (what its provider needs, Documentation/InputRecords.md), and
    /// returns the request body as text.
    @discardableResult
    public func validate() throws(Failure) -> String {
        guard let body = PushExchange.text(request.body) else { throw .requestBodyNotText }
        guard
            let json = JSONValue.parse(
                request.body, maxDepth: PushExchange.maxNesting + 1, rejectingRepeatedKeys: true),
            json.isObject
        else { throw .requestBodyNotJSONObject }
        switch provider {
        case .apns:
            if PushExchange.apnsBroadcastBundleID(url: request.url) != nil {
                guard let channel = request.headers.header("apns-channel-id"), !channel.isEmpty else {
                    throw .noChannelID(url: request.url)
                }
                guard activityID == nil else { throw .activityIDOnBroadcast }
            } else if PushExchange.apnsDeviceToken(url: request.url) == nil {
                throw .noDeviceToken(url: request.url)
            }
            guard json["aps"]?["timestamp"]?.intValue != nil else { throw .noTimestamp }
        case .fcm:
            guard let apns = json["message"]?["apns"], apns.isObject,
                let token = apns["live_activity_token"]?.stringValue, !token.isEmpty
            else { throw .noLiveActivityToken }
            if let headers = apns["headers"], headers != .null {
                guard headers.isObject, headers.members.allSatisfy({ $0.value.stringValue != nil }) else {
                    throw .invalidAPNsHeaders
                }
            }
            guard apns["payload"]?["aps"]?["timestamp"]?.intValue != nil else { throw .noTimestamp }
        case .tencentChat:
            guard let activity = json["OfflinePushInfo"]?["ApnsInfo"]?["LiveActivity"], activity.isObject,
                let laID = activity["LaId"]?.stringValue, !laID.isEmpty
            else { throw .noLiveActivityID }
        }
        return body
    }

    /// The contract's limit on nesting in a request body.
    static let maxNesting = 64

    /// The `exchange` line (with its `\n`): the exchange as it happened,
    /// headers sorted by name. Throws when ``validate()`` does.
    public func jsonLine() throws(Failure) -> [UInt8] {
        let body = try validate()
        var line = BeaconLine(capacity: 600 + request.body.count + (response?.body.count ?? 0))
        line.exchange(
            provider: provider, sentAt: BeaconTime.milliseconds(sentAt), url: request.url,
            requestHeaders: request.headers, requestBody: body,
            response: response.map { ($0.status, $0.headers, PushExchange.text($0.body)) },
            error: transportError, latencyMS: latency.map { Int(($0 * 1000).rounded()) }, activityID: activityID,
            environment: environment)
        return line.finishLine()
    }

    /// `data` as a `String` when it is valid UTF-8, else nil.
    static func text(_ data: Data) -> String? {
        let text = String(decoding: data, as: UTF8.self)
        return text.utf8.elementsEqual(data) ? text : nil
    }

    /// The device token of an APNs URL, by the contract's rule: the path
    /// (after the host and optional port, before any `?` or `#`) is
    /// `/3/device/` and a non-empty token without `/`.
    package static func apnsDeviceToken(url: String) -> Substring? {
        lastSegment(of: url, after: "/3/device/")
    }

    /// The bundle id of a broadcast URL (contract 3.0): the path is
    /// `/4/broadcasts/apps/` and a non-empty bundle id without `/`, taken as
    /// written. A bare path (HTTP/2's `:path`) counts too.
    package static func apnsBroadcastBundleID(url: String) -> Substring? {
        lastSegment(of: url, after: "/4/broadcasts/apps/")
    }

    /// What follows `prefix` in the URL's path (after the scheme, host and
    /// optional port, before any `?` or `#`), when it is one non-empty segment.
    private static func lastSegment(of url: String, after prefix: String) -> Substring? {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        var path = rest[slash...]
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard path.hasPrefix(prefix) else { return nil }
        let segment = path.dropFirst(prefix.count)
        return segment.isEmpty || segment.contains("/") ? nil : segment
    }
}

extension PushExchange {
    /// What replaces a credential in a logged exchange.
    package static let redacted = "REDACTED"

    /// Request headers whose values are credentials: APNs's provider JWT
    /// (`authorization: bearer …`), FCM's OAuth 2 access token.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization"]

    /// URL query parameters whose values are credentials: Tencent Cloud
    /// Chat's `usersig` (a signature valid for days).
    static let credentialQueryItems: Set<String> = ["usersig"]

    /// A copy in which credentials read ``redacted``: the values of the
    /// `authorization` and `proxy-authorization` request headers and of a
    /// `usersig` URL query parameter (names compared without regard to case).
    /// Nothing the pipeline derives from is touched.
    func redactingCredentials() -> PushExchange {
        var copy = self
        for name in request.headers.keys where PushExchange.credentialHeaders.contains(name.lowercased()) {
            copy.request.headers[name] = PushExchange.redacted
        }
        copy.request.url = PushExchange.redactingQuery(request.url)
        return copy
    }

    /// `url` with the value of each credential query parameter replaced.
    static func redactingQuery(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let fragmentStart = url[question...].firstIndex(of: "#") ?? url.endIndex
        let query = url[url.index(after: question)..<fragmentStart]
        var changed = false
        let items = query.split(separator: "&", omittingEmptySubsequences: false).map { item -> Substring in
            guard let equals = item.firstIndex(of: "="),
                credentialQueryItems.contains(item[..<equals].lowercased())
            else { return item }
            changed = true
            return item[...equals] + Substring(redacted)
        }
        guard changed else { return url }
        return String(url[...question]) + items.joined(separator: "&") + url[fragmentStart...]
    }
}

import ArrivalModel
public import Foundation

extension PayloadCheck {
    /// A broadcast payload (iOS 18 channels) may be up to 5,120 bytes: APNs
    /// answers 413 `PayloadTooLarge` above it.
    public static let maxBroadcastPayloadBytes = Contract.maxBroadcastPayloadBytes
    /// Within 512 bytes of the broadcast limit (contract 3.0's `oversize_risk` for a broadcast).
    public static let broadcastNearLimitBytes = Contract.broadcastOversizeRiskBytes
    /// The hosts that take broadcasts, production and sandbox.
    public static let broadcastHosts = [
        PushExchange.apnsBroadcastProductionHost, PushExchange.apnsBroadcastSandboxHost,
    ]

    /// One broadcast request as the sender builds it: `POST
    /// /4/broadcasts/apps/<bundle id>` to a broadcast host, with the
    /// `apns-channel-id` header, and the payload.
    public struct BroadcastRequest: Sendable, Equatable {
        /// The URL (or the bare `:path`); nil when not known (not checked).
        public var url: String?
        /// Request headers; names compared without regard to case.
        public var headers: [String: String]
        public var payload: Data

        public init(url: String? = nil, headers: [String: String] = [:], payload: Data) {
            self.url = url
            self.headers = headers
            self.payload = payload
        }

        /// The request of a logged `exchange` line (`{"kind":"exchange",
        /// "request":{"url":…,"headers":{…},"body":"…"},…}`) or of a bare
        /// request object (`{"url":…,"headers":{…},"body":"…"}`); nil when
        /// `data` is neither (then it is the payload itself). Header values
        /// that are not strings are left out.
        public init?(logged data: Data) {
            guard let json = JSONValue.parse(data), json.isObject else { return nil }
            let request = json["request"]?.isObject == true ? json["request"]! : json
            guard let body = request["body"]?.stringValue, request["url"] != nil || request["headers"] != nil
            else { return nil }
            var headers: [String: String] = [:]
            for member in request["headers"]?.members ?? [] {
                if let value = member.value.stringValue, headers[member.key] == nil { headers[member.key] = value }
            }
            self.init(url: request["url"]?.stringValue, headers: headers, payload: Data(body.utf8))
        }
    }

    /// The findings for a broadcast `request`, judged at `now`:
    /// - the payload by every rule of ``check(payload:topic:now:)``, but with
    ///   the broadcast's 5,120-byte limit (a warning above 4,608);
    /// - an `apns-channel-id` header with a non-empty channel id;
    /// - `apns-push-type: liveactivity`;
    /// - an `apns-topic`, when given, ending with `.push-type.liveactivity`
    ///   and naming the URL's app;
    /// - a URL, when given, to a broadcast host and the path
    ///   `/4/broadcasts/apps/<bundle id>`; a device token in it
    ///   (`/3/device/<token>`) is an error: a broadcast goes to a channel,
    ///   never to one device;
    /// - no `aps.event` `start`: a broadcast cannot start an activity (a
    ///   push-to-start goes to each device, with `input-push-channel` for the
    ///   channel the new activity follows).
    public static func check(broadcast request: BroadcastRequest, now: Date = Date()) -> [Finding] {
        var findings = Findings()
        checkPayload(
            request.payload, topic: nil, now: now, limit: maxBroadcastPayloadBytes,
            nearLimit: broadcastNearLimitBytes, into: &findings)
        if let aps = JSONValue.parse(request.payload)?["aps"], aps["event"]?.stringValue == "start" {
            findings.add(
                .error, .broadcastStart,
                "aps.event is \"start\", and a broadcast cannot start a Live Activity. Start it with a push-to-start push to each device's push-to-start token, with aps.input-push-channel set to the channel id, so that the new activity follows the channel."
            )
        }
        var bundleID: String?
        if let url = request.url {
            if PushExchange.apnsDeviceToken(url: url) != nil {
                findings.add(
                    .error, .deviceTokenOnBroadcast,
                    "the URL '\(url)' names a device token (/3/device/<token>): that is a push to one device, not a broadcast. Send broadcasts to https://\(PushExchange.apnsBroadcastProductionHost)/4/broadcasts/apps/<bundle id>, with the channel in apns-channel-id."
                )
            } else if let bundle = PushExchange.apnsBroadcastBundleID(url: url) {
                bundleID = String(bundle)
                if let host = host(of: url), !broadcastHosts.contains(host) {
                    findings.add(
                        .error, .notBroadcastURL,
                        "the host '\(host)' does not take broadcasts; APNs takes them at \(broadcastHosts.joined(separator: " (production) and ")) (sandbox)."
                    )
                }
            } else {
                findings.add(
                    .error, .notBroadcastURL,
                    "the URL '\(url)' is no broadcast's: its path must be /4/broadcasts/apps/<bundle id> (one segment, not empty)."
                )
            }
        }
        switch request.headers.header("apns-channel-id") {
        case nil:
            findings.add(
                .error, .missingChannelID,
                "there is no apns-channel-id header: APNs cannot know which channel to broadcast to. Set it to the channel id you created with the channel management API (the one the app passes to pushType: .channel(id))."
            )
        case ""?:
            findings.add(
                .error, .missingChannelID,
                "the apns-channel-id header is empty; set it to the channel id to broadcast to.")
        default:
            break
        }
        let pushType = request.headers.header("apns-push-type")
        if pushType?.lowercased() != "liveactivity" {
            findings.add(
                .error, .pushTypeNotLiveActivity,
                pushType == nil
                    ? "there is no apns-push-type header; a broadcast updates Live Activities and needs apns-push-type: liveactivity."
                    : "apns-push-type is '\(pushType!)'; a broadcast updates Live Activities and needs apns-push-type: liveactivity."
            )
        }
        if let topic = request.headers.header("apns-topic") {
            if !topic.hasSuffix(topicSuffix) {
                findings.add(
                    .error, .topicWithoutSuffix,
                    "apns-topic '\(topic)' does not end with '\(topicSuffix)'; a Live Activity broadcast's topic is '<bundle id>\(topicSuffix)', or leave the header out."
                )
            } else if let bundleID, topic != bundleID + topicSuffix {
                findings.add(
                    .error, .topicNotBundle,
                    "apns-topic '\(topic)' names another app than the URL's bundle id '\(bundleID)'; use '\(bundleID)\(topicSuffix)'."
                )
            }
        }
        return findings.list
    }

    /// The host of a URL, lower-cased and without its port; nil for a bare path.
    private static func host(of url: String) -> String? {
        guard let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return host.lowercased()
    }
}

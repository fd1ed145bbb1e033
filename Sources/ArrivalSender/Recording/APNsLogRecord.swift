import ArrivalBeacons
public import Foundation

/// One `apns` record of the data contract: what the sender asked of APNs
/// and what APNs answered. A broadcast to a channel (iOS 18, contract 3.0)
/// is one too: it has a ``channelID`` and no push token or activity id.
public struct APNsLogRecord: Sendable, Equatable {
    public var apnsID: String
    public var sentAt: Date
    /// HTTP status; 0 when no answer came.
    public var status: Int
    /// APNs's `reason` (any string, also ones this code has never seen), or
    /// the transport error when `status` is 0.
    public var reason: String?
    /// The device's token; empty on a broadcast, whose line has no `push_token`.
    public var pushToken: String
    /// nil on a broadcast: APNs, not the sender, knows who follows the channel.
    public var activityID: String?
    /// `aps.content-state.seq` of the payload.
    public var seq: Int?
    /// `aps.event` when it is `start`, `update` or `end`.
    public var event: String?
    public var apsTimestamp: Int
    public var payloadBytes: Int
    public var topic: String?
    public var pushType: String?
    public var priority: Int?
    public var environment: String?
    public var latencyMS: Int?
    /// The broadcast channel (`apns-channel-id`) of a broadcast; nil for a push to one device.
    public var channelID: String?

    /// True for a broadcast to a channel.
    public var isBroadcast: Bool { channelID != nil }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// `aps.timestamp` is missing or not an integer: the contract requires it.
        case noTimestamp
        /// The request path names no device token (and is no broadcast's).
        case noDeviceToken(path: String)
        /// A broadcast (`/4/broadcasts/apps/<bundle id>`) without a non-empty `apns-channel-id` header.
        case noChannelID(path: String)
        /// A broadcast given an activity id: a broadcast stands for every subscriber, never for one activity.
        case activityIDOnBroadcast

        public var description: String {
            switch self {
            case .noTimestamp:
                "the payload has no integer aps.timestamp, which every apns record needs; run 'arrival check-payload' on it"
            case .noDeviceToken(let path):
                "the request path '\(path)' names no device token (expected /3/device/<token>, or /4/broadcasts/apps/<bundle id> for a broadcast)"
            case .noChannelID(let path):
                "the broadcast to '\(path)' has no apns-channel-id header; APNs needs the channel to broadcast to (run 'arrival check-payload --broadcast' on it)"
            case .activityIDOnBroadcast:
                "a broadcast stands for every activity that follows its channel, not for one: log it without an activity id"
            }
        }
    }

    /// The record of `exchange`. `activityID` is the app's own identifier of
    /// the activity, when the sender knows it (otherwise the pipeline finds
    /// it through the `push_token` callback). `apns_id` is the one APNs
    /// answered with, else the request's, else a new UUID.
    ///
    /// A broadcast (a path `/4/broadcasts/apps/<bundle id>`) becomes a
    /// record with the `apns-channel-id` header as ``channelID``, no token
    /// and no activity id (passing one throws); its topic is the
    /// `apns-topic` header, else the bundle id; its `apns_id` is the
    /// `apns-request-id` APNs answered with, else its `apns-id`, else the
    /// request's `apns-request-id`, else its `apns-id`, else a new UUID.
    public init(exchange: APNsExchange, activityID: String? = nil, environment: String? = nil) throws(Failure) {
        let request = exchange.request
        let headers = exchange.response?.headers ?? [:]
        if let bundleID = request.broadcastBundleID {
            guard let channel = request.channelID else { throw .noChannelID(path: request.path) }
            guard activityID == nil else { throw .activityIDOnBroadcast }
            try self.init(exchange: exchange, activityID: nil, environment: environment, pushToken: "")
            channelID = channel
            topic = request.headers.header("apns-topic") ?? bundleID
            apnsID =
                headers.header("apns-request-id") ?? headers.header("apns-id")
                ?? request.headers.header("apns-request-id") ?? request.headers.header("apns-id")
                ?? UUID().uuidString
            return
        }
        let token = request.deviceToken
        guard !token.isEmpty, !request.path.contains("/4/broadcasts/") else {
            throw .noDeviceToken(path: request.path)
        }
        try self.init(exchange: exchange, activityID: activityID, environment: environment, pushToken: token)
    }

    /// The fields a device push and a broadcast derive alike.
    private init(
        exchange: APNsExchange, activityID: String?, environment: String?, pushToken: String
    ) throws(Failure) {
        let request = exchange.request
        self.pushToken = pushToken
        let aps = JSONValue.parse(request.payload)?["aps"]
        guard let timestamp = aps?["timestamp"]?.intValue, let apsTimestamp = Int(exactly: timestamp) else {
            throw .noTimestamp
        }
        self.apsTimestamp = apsTimestamp
        apnsID = exchange.response?.headers.header("apns-id") ?? request.headers.header("apns-id") ?? UUID().uuidString
        sentAt = exchange.sentAt
        status = exchange.response?.status ?? 0
        reason =
            if let response = exchange.response {
                response.status == 200 ? nil : JSONValue.parse(response.body)?["reason"]?.stringValue
            } else {
                exchange.transportError
            }
        self.activityID = activityID
        seq = aps?["content-state"]?["seq"]?.intValue.flatMap { Int(exactly: $0) }
        let event = aps?["event"]?.stringValue
        self.event = ["start", "update", "end"].contains(event ?? "") ? event : nil
        payloadBytes = request.payload.count
        topic = request.headers.header("apns-topic")
        pushType = request.headers.header("apns-push-type")
        priority = request.headers.header("apns-priority").flatMap { Int($0) }
        self.environment = environment
        latencyMS = exchange.latency.map { Int(($0 * 1000).rounded()) }
    }

    /// The JSON line (with its `\n`), fields in the contract's order.
    public func jsonLine() -> [UInt8] {
        var line = BeaconLine(capacity: 400)
        line.apns(
            apnsID: apnsID, sentAt: BeaconTime.milliseconds(sentAt), status: status, reason: reason,
            pushToken: isBroadcast ? nil : pushToken, activityID: isBroadcast ? nil : activityID, seq: seq,
            event: event, apsTimestamp: apsTimestamp,
            payloadBytes: payloadBytes, topic: topic, pushType: pushType, priority: priority, environment: environment,
            latencyMS: latencyMS, channelID: channelID)
        return line.finishLine()
    }
}

import ArrivalBeacons
import Foundation

/// One `apns` record of the data contract: what the sender asked of APNs
/// and what APNs answered.
public struct APNsLogRecord: Sendable, Equatable {
    public var apnsID: String
    public var sentAt: Date
    /// HTTP status; 0 when no answer came.
    public var status: Int
    /// APNs's `reason` (any string, also ones this code has never seen), or
    /// the transport error when `status` is 0.
    public var reason: String?
    public var pushToken: String
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

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// `aps.timestamp` is missing or not an integer: the contract requires it.
        case noTimestamp
        /// The request path names no device token.
        case noDeviceToken(path: String)

        public var description: String {
            switch self {
            case .noTimestamp:
                "the payload has no integer aps.timestamp, which every apns record needs; run 'arrival check-payload' on it"
            case .noDeviceToken(let path):
                "the request path '\(path)' names no device token (expected /3/device/<token>)"
            }
        }
    }

    /// The record of `exchange`. `activityID` is the app's own identifier of
    /// the activity, when the sender knows it (otherwise the pipeline finds
    /// it through the `push_token` callback). `apns_id` is the one APNs
    /// answered with, else the request's, else a new UUID.
    public init(exchange: APNsExchange, activityID: String? = nil, environment: String? = nil) throws(Failure) {
        let request = exchange.request
        let token = request.deviceToken
        guard !token.isEmpty else { throw .noDeviceToken(path: request.path) }
        let payload = JSONValue.parse(request.payload)
        let aps = payload?["aps"]
        guard let timestamp = aps?["timestamp"]?.intValue, let apsTimestamp = Int(exactly: timestamp) else {
            throw .noTimestamp
        }
        let reason: String? =
            if let response = exchange.response {
                response.status == 200 ? nil : JSONValue.parse(response.body)?["reason"]?.stringValue
            } else {
                exchange.transportError
            }
        let event = aps?["event"]?.stringValue
        self.init(
            apnsID: exchange.response?.headers.header("apns-id") ?? request.headers.header("apns-id")
                ?? UUID().uuidString,
            sentAt: exchange.sentAt, status: exchange.response?.status ?? 0, reason: reason, pushToken: token,
            activityID: activityID, seq: aps?["content-state"]?["seq"]?.intValue.flatMap { Int(exactly: $0) },
            event: ["start", "update", "end"].contains(event ?? "") ? event : nil,
            apsTimestamp: apsTimestamp, payloadBytes: request.payload.count,
            topic: request.headers.header("apns-topic"), pushType: request.headers.header("apns-push-type"),
            priority: request.headers.header("apns-priority").flatMap { Int($0) }, environment: environment,
            latencyMS: exchange.latency.map { Int(($0 * 1000).rounded()) })
    }

    /// A record from its fields (``init(exchange:activityID:environment:)`` and the fleet simulator).
    package init(
        apnsID: String, sentAt: Date, status: Int, reason: String? = nil, pushToken: String,
        activityID: String? = nil, seq: Int? = nil, event: String? = nil, apsTimestamp: Int, payloadBytes: Int,
        topic: String? = nil, pushType: String? = nil, priority: Int? = nil, environment: String? = nil,
        latencyMS: Int? = nil
    ) {
        self.apnsID = apnsID
        self.sentAt = sentAt
        self.status = status
        self.reason = reason
        self.pushToken = pushToken
        self.activityID = activityID
        self.seq = seq
        self.event = event
        self.apsTimestamp = apsTimestamp
        self.payloadBytes = payloadBytes
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.environment = environment
        self.latencyMS = latencyMS
    }

    /// The JSON line (with its `\n`), fields in the contract's order.
    public func jsonLine() -> [UInt8] {
        var line = BeaconLine(capacity: 400)
        append(to: &line)
        return line.finishLine()
    }

    /// The record's fields in the contract's order (a writer may add fields after them).
    package func append(to line: inout BeaconLine) {
        line.int("v", 1)
        line.string("kind", "apns")
        line.string("apns_id", apnsID)
        line.time("sent_at", sentAt)
        line.int("status", status)
        line.optionalString("reason", reason)
        line.string("push_token", pushToken)
        line.optionalString("activity_id", activityID)
        if let seq { line.int("seq", seq) }
        line.optionalString("event", event)
        line.int("aps_timestamp", apsTimestamp)
        line.int("payload_bytes", payloadBytes)
        line.optionalString("topic", topic)
        line.optionalString("push_type", pushType)
        if let priority { line.int("priority", priority) }
        line.optionalString("environment", environment)
        if let latencyMS { line.int("latency_ms", latencyMS) }
    }
}

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
        pushToken = request.deviceToken
        guard !pushToken.isEmpty else { throw .noDeviceToken(path: request.path) }
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
            pushToken: pushToken, activityID: activityID, seq: seq, event: event, apsTimestamp: apsTimestamp,
            payloadBytes: payloadBytes, topic: topic, pushType: pushType, priority: priority, environment: environment,
            latencyMS: latencyMS)
        return line.finishLine()
    }
}

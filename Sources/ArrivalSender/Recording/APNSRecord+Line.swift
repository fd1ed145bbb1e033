import ArrivalBeacons
import ArrivalModel

extension APNSRecord {
    /// The record's fields in the contract's order (a writer may add fields
    /// after them): the one encoder of `apns` lines, which ``APNsLogRecord``
    /// and the fleet simulator both write through.
    package func append(to line: inout BeaconLine) {
        line.int("v", 1)
        line.string("kind", "apns")
        line.string("apns_id", apnsID)
        line.time("sent_at", milliseconds: sentAt)
        line.int("status", status)
        line.optionalString("reason", reason)
        line.string("push_token", pushToken)
        line.optionalString("activity_id", activityID)
        line.optionalInt("seq", seq)
        line.optionalString("event", event)
        line.int("aps_timestamp", apsTimestamp)
        line.optionalInt("payload_bytes", payloadBytes)
        line.optionalString("topic", topic)
        line.optionalString("push_type", pushType)
        line.optionalInt("priority", priority)
        line.optionalString("environment", environment)
        line.optionalInt("latency_ms", latencyMS)
    }
}

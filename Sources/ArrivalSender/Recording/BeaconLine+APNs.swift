import ArrivalBeacons

extension BeaconLine {
    /// An `apns` record's fields in the contract's order (a writer may add
    /// fields after them): the one encoder of `apns` lines, which
    /// ``APNsLogRecord`` and the fleet simulator both write through. The
    /// fields are parameters, not a record value, so that neither has to
    /// build (and copy its strings into) a second record for every line.
    ///
    /// A broadcast (contract 3.0) passes its `channelID` and no `pushToken`
    /// or `activityID`: the line then has `channel_id`, its table's last
    /// field, and neither of the other two.
    package mutating func apns(
        apnsID: String, sentAt: Int64, status: Int, reason: String?, pushToken: String?, activityID: String?,
        seq: Int?, event: String?, apsTimestamp: Int, payloadBytes: Int, topic: String?, pushType: String?,
        priority: Int?, environment: String?, latencyMS: Int?, channelID: String? = nil
    ) {
        int("v", 1)
        string("kind", "apns")
        string("apns_id", apnsID)
        time("sent_at", milliseconds: sentAt)
        int("status", status)
        optionalString("reason", reason)
        optionalString("push_token", pushToken)
        optionalString("activity_id", activityID)
        optionalInt("seq", seq)
        optionalString("event", event)
        int("aps_timestamp", apsTimestamp)
        int("payload_bytes", payloadBytes)
        optionalString("topic", topic)
        optionalString("push_type", pushType)
        optionalInt("priority", priority)
        optionalString("environment", environment)
        optionalInt("latency_ms", latencyMS)
        optionalString("channel_id", channelID)
    }
}

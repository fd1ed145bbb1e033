package import ArrivalModel

// Each record's de-duplication hash written out field by field, independently of
// the row batch that computes it from cells in the ingest (RowBatchTests,
// BroadcastDecodingTests).

extension APNSRecord {
    /// The de-duplication hash written out field by field, independently of
    /// the row batch that computes it from cells in the ingest.
    package var contentHash: UInt64 {
        var h = StableHash()
        h.combine(1 as UInt64)
        h.combine(apnsID)
        h.combine(sentAt)
        h.combine(status)
        h.combine(reason)
        h.combine(pushToken)
        h.combine(activityID)
        h.combine(seq)
        h.combine(event)
        h.combine(apsTimestamp)
        h.combine(payloadBytes)
        h.combine(topic)
        h.combine(pushType)
        h.combine(priority)
        h.combine(environment)
        h.combine(latencyMS)
        // The columns added later count only when set: the provider as it is, the channel after its tag.
        if let provider { h.combine(provider.rawValue as String?) }
        combineChannel(channelID, column: 16, into: &h)
        return h.finish()
    }
}

extension RenderRecord {
    /// The de-duplication hash written out field by field, independently of
    /// the row batch that computes it from cells in the ingest.
    package var contentHash: UInt64 {
        var h = StableHash()
        h.combine(2 as UInt64)
        h.combine(activityID)
        h.combine(seq)
        h.combine(renderedAt)
        h.combine(surface)
        h.combine(deviceID)
        h.combine(osVersion)
        h.combine(deviceModel)
        h.combine(appVersion)
        combineChannel(channelID, column: 8, into: &h)
        return h.finish()
    }
}

/// A record's `channel_id` into its independent hash: nothing when absent,
/// else a tag for its column, then the text.
func combineChannel(_ channel: String?, column: UInt64, into h: inout StableHash) {
    guard let channel else { return }
    h.combine(0xC4A0_0000 + column)
    h.combine(channel as String?)
}

extension CallbackRecord {
    /// The de-duplication hash written out field by field, independently of
    /// the row batch that computes it from cells in the ingest.
    package var contentHash: UInt64 {
        var h = StableHash()
        h.combine(3 as UInt64)
        h.combine(callback.rawValue)
        h.combine(activityID)
        h.combine(pushToken)
        h.combine(seq)
        h.combine(state)
        h.combine(receivedAt)
        h.combine(deviceID)
        h.combine(osVersion)
        h.combine(deviceModel)
        h.combine(appVersion)
        combineChannel(channelID, column: 10, into: &h)
        return h.finish()
    }
}

/// The id of an iOS 18 broadcast channel (`apns-channel-id`, ActivityKit's
/// `PushType.channel(_:)`): the `channel_id` of render and callback records.
///
/// The contract requires a non-empty string wherever `channel_id` appears (a
/// record with `"channel_id": ""` is malformed), so an empty id cannot be
/// made: ``init(_:)`` returns nil for it, and a record without a channel
/// simply has none.
public struct ChannelID: Sendable, Hashable, CustomStringConvertible {
    /// The id as APNs issued it (a base64 string such as `dHN/MQ==`).
    public let rawValue: String

    /// nil for an empty id.
    public init?(_ rawValue: String) {
        guard !rawValue.isEmpty else { return nil }
        self.rawValue = rawValue
    }

    /// nil for nil or an empty id.
    public init?(_ rawValue: String?) {
        guard let rawValue else { return nil }
        self.init(rawValue)
    }

    public var description: String { rawValue }
}

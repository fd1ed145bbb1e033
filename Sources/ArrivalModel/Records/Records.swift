/// One HTTP/2 request the sender made and APNs's answer (Documentation/InputRecords.md).
/// Times are milliseconds since the Unix epoch, UTC.
public struct APNSRecord: Hashable, Sendable {
    public var apnsID: String
    public var sentAt: Int64
    public var status: Int64
    public var reason: String?
    /// Nil only on a broadcast (contract 3.0), which names a channel instead.
    public var pushToken: String?
    public var activityID: String?
    public var seq: Int64?
    /// As given: `nil` when absent, which means `update`.
    public var event: String?
    public var apsTimestamp: Int64
    public var payloadBytes: Int64?
    public var topic: String?
    public var pushType: String?
    public var priority: Int64?
    public var environment: String?
    public var latencyMS: Int64?
    /// Who the sender talked to; `nil` means ``PushProvider/apns`` (setting
    /// `.apns` stores `nil`, so an explicit `"apns"` and none are one record).
    public var provider: PushProvider? {
        didSet { if provider == .apns { provider = nil } }
    }
    /// The broadcast channel (`apns-channel-id`, contract 3.0): a record
    /// with one is a broadcast, with neither a push token nor an activity.
    public var channelID: String?

    /// Whether this is a broadcast to a channel rather than a push to one token.
    public var isBroadcast: Bool { channelID != nil }

    public init(
        apnsID: String, sentAt: Int64, status: Int64, reason: String? = nil, pushToken: String?,
        activityID: String? = nil, seq: Int64? = nil, event: String? = nil, apsTimestamp: Int64,
        payloadBytes: Int64? = nil, topic: String? = nil, pushType: String? = nil, priority: Int64? = nil,
        environment: String? = nil, latencyMS: Int64? = nil, provider: PushProvider? = nil, channelID: String? = nil
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
        self.provider = provider == .apns ? nil : provider
        self.channelID = channelID
    }
}

/// The widget showed a content state (Documentation/InputRecords.md).
public struct RenderRecord: Hashable, Sendable {
    public var activityID: String
    public var seq: Int64
    public var renderedAt: Int64
    public var surface: String?
    public var deviceID: String?
    public var osVersion: String?
    public var deviceModel: String?
    public var appVersion: String?
    /// The broadcast channel the activity is subscribed to (contract 3.0).
    public var channelID: String?
    /// The user's "More Frequent Updates" switch when the record was written:
    /// `enabled`, `disabled` or another string as given (contract 3.1).
    public var frequentPushes: String?

    public init(
        activityID: String, seq: Int64, renderedAt: Int64, surface: String? = nil, deviceID: String? = nil,
        osVersion: String? = nil, deviceModel: String? = nil, appVersion: String? = nil, channelID: String? = nil,
        frequentPushes: String? = nil
    ) {
        self.activityID = activityID
        self.seq = seq
        self.renderedAt = renderedAt
        self.surface = surface
        self.deviceID = deviceID
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.appVersion = appVersion
        self.channelID = channelID
        self.frequentPushes = frequentPushes
    }
}

/// The app observed an ActivityKit callback (Documentation/InputRecords.md).
public struct CallbackRecord: Hashable, Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        case pushToken = "push_token"
        case pushToStartToken = "push_to_start_token"
        case contentUpdate = "content_update"
        case activityState = "activity_state"
        /// The activity follows a broadcast channel (contract 3.0).
        case channelSubscription = "channel_subscription"
    }

    public static let states: Set<String> = ["active", "ended", "dismissed", "stale", "pending"]

    public var callback: Kind
    public var activityID: String?
    public var pushToken: String?
    public var seq: Int64?
    public var state: String?
    public var receivedAt: Int64
    public var deviceID: String?
    public var osVersion: String?
    public var deviceModel: String?
    public var appVersion: String?
    /// The activity's broadcast channel (contract 3.0; required on `channel_subscription`).
    public var channelID: String?
    /// The user's "More Frequent Updates" switch, as on a render (contract 3.1).
    public var frequentPushes: String?

    public init(
        callback: Kind, activityID: String? = nil, pushToken: String? = nil, seq: Int64? = nil, state: String? = nil,
        receivedAt: Int64, deviceID: String? = nil, osVersion: String? = nil, deviceModel: String? = nil,
        appVersion: String? = nil, channelID: String? = nil, frequentPushes: String? = nil
    ) {
        self.callback = callback
        self.activityID = activityID
        self.pushToken = pushToken
        self.seq = seq
        self.state = state
        self.receivedAt = receivedAt
        self.deviceID = deviceID
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.appVersion = appVersion
        self.channelID = channelID
        self.frequentPushes = frequentPushes
    }
}

/// The stored de-duplication key: the record's time, in windows of 2^20 ms
/// (about 17.5 minutes), in the high 22 bits, so that one day's keys land in
/// a few regions of the index rather than all over it, and 42 bits of the
/// content hash below. Equal records always get equal keys; different
/// records that share a key are told apart by the store, which then moves
/// on through ``nextRecordKey(after:hash:)``.
///
/// Records that share a millisecond (or any other field) spread over 2^42
/// keys of their window: a million of them collide about once (a key of
/// the time's millisecond and a 20-bit hash made every record past the
/// millionth in one millisecond a collision, and the probing quadratic).
@inline(__always)
@inlinable
public func recordKey(time: Int64, hash: UInt64) -> UInt64 {
    (UInt64(bitPattern: time >> 20) &<< 42) | (hash & recordKeyHashMask)
}

/// The bits of a record key that come from the content hash.
public let recordKeyHashMask: UInt64 = (1 << 42) - 1

/// The key tried after `key` is found taken by a different record: within
/// the same time window, a step set by the hash bits the key leaves out
/// (odd, so the steps visit every key of the window before one repeats).
/// Records whose keys collide rarely share the step too, so a chain of
/// collisions does not grow into a run of neighbouring keys (as `key + 1`
/// did) that every later record near it must walk.
@inline(__always)
@inlinable
public func nextRecordKey(after key: UInt64, hash: UInt64) -> UInt64 {
    let step = (hash >> 42) | 1
    return (key & ~recordKeyHashMask) | ((key &+ step) & recordKeyHashMask)
}

/// A decoded, valid record of any kind.
public enum Record: Hashable, Sendable {
    case apns(APNSRecord)
    case render(RenderRecord)
    case callback(CallbackRecord)

    public var kind: RecordKind {
        switch self {
        case .apns: .apns
        case .render: .render
        case .callback: .callback
        }
    }
}

public enum RecordKind: String, CaseIterable, Sendable, Codable {
    case apns, render, callback

    @inlinable public var index: Int {
        switch self {
        case .apns: 0
        case .render: 1
        case .callback: 2
        }
    }
}

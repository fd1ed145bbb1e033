/// Apple's own push numbers, as its Push Notifications Console exports them
/// (issue 54; Documentation/Apple-metrics.md): what APNs saw, per UTC day,
/// beside what arrival measures on the device.
public enum AppleMetricsKind: String, Sendable, CaseIterable {
    /// `deliverymetrics`: a count per day, push type and status.
    case delivery
    /// `broadcastapplicationmetric`: the application's broadcasts per day.
    case broadcastApplication = "broadcast_application"
    /// `broadcastchannelmetrics`: one channel's broadcasts per day.
    case broadcastChannel = "broadcast_channel"
}

/// One row of a delivery metrics export: its day (midnight UTC, in
/// milliseconds), the push type and status as written, and the count.
public struct AppleDeliveryRow: Sendable, Equatable {
    public var day: Int64
    public var pushType: String
    public var status: String
    /// nil: Apple gave `-1`, a value hidden for privacy (never a count).
    public var count: Int?

    public init(day: Int64, pushType: String, status: String, count: Int?) {
        self.day = day
        self.pushType = pushType
        self.status = status
        self.count = count
    }
}

/// One row of a broadcast metrics export (application-wide: no channel).
public struct AppleBroadcastRow: Sendable, Equatable {
    public var day: Int64
    public var channelID: String?
    public var published: Int?
    public var delivered: Int?
    /// The day's highest number of subscriptions.
    public var totalSubscriptions: Int?
    /// Application-wide exports only.
    public var uniqueSubscribers: Int?
    /// The fields Apple gave as `-1` (too few subscribers to show), by their JSON names.
    public var hidden: [String] = []

    public init(
        day: Int64, channelID: String?, published: Int?, delivered: Int?, totalSubscriptions: Int?,
        uniqueSubscribers: Int?, hidden: [String] = []
    ) {
        self.day = day
        self.channelID = channelID
        self.published = published
        self.delivered = delivered
        self.totalSubscriptions = totalSubscriptions
        self.uniqueSubscribers = uniqueSubscribers
        self.hidden = hidden
    }
}

/// Apple's stored rows of some days: what a report puts beside its own figures.
public struct AppleMetrics: Sendable, Equatable {
    public var delivery: [AppleDeliveryRow]
    public var broadcasts: [AppleBroadcastRow]

    public init(delivery: [AppleDeliveryRow] = [], broadcasts: [AppleBroadcastRow] = []) {
        self.delivery = delivery
        self.broadcasts = broadcasts
    }

    /// The days (midnight UTC, ms) any row is of, in order.
    public var days: [Int64] { Set(delivery.map(\.day) + broadcasts.map(\.day)).sorted() }

    /// Whether `pushType` is the Live Activity push type, however the export spells it
    /// (`liveactivity`; case, spaces, `-` and `_` aside).
    public static func isLiveActivity(_ pushType: String) -> Bool {
        String(pushType.lowercased().unicodeScalars.filter { !" -_".unicodeScalars.contains($0) }) == "liveactivity"
    }
}

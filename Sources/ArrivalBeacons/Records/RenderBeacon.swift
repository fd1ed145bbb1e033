public import Foundation

/// A `render` record: the widget showed the content state `seq` of an
/// activity (written from the view's `onAppear`).
public struct RenderBeacon: Sendable, Equatable {
    public var activityID: String
    public var seq: Int
    public var renderedAt: Date
    /// Where it was shown: one of the ``Surface`` names, or any other text.
    public var surface: String?
    /// The broadcast channel the activity follows, when it was started with
    /// one (`pushType: .channel(id)`, or a push-to-start carrying
    /// `input-push-channel`): `channel_id`, which tells arrival that the
    /// channel's broadcasts stand for this activity.
    public var channel: ChannelID?
    public var device: DeviceInfo
    /// The user's "More Frequent Updates" switch when the beacon was
    /// written (`frequent_pushes`). nil here lets the writer fill it in from
    /// its ``BeaconWriter/Configuration/frequentPushes`` provider.
    public var frequentPushes: FrequentPushes?

    /// The surface names the contract lists (other values are kept as given).
    public enum Surface {
        public static let lockScreen = "lock_screen"
        public static let islandCompact = "island_compact"
        public static let islandExpanded = "island_expanded"
        public static let islandMinimal = "island_minimal"
        public static let standby = "standby"
        public static let watch = "watch"
    }

    public init(
        activityID: String, seq: Int, renderedAt: Date = Date(), surface: String? = nil,
        channel: ChannelID? = nil, device: DeviceInfo = DeviceInfo(), frequentPushes: FrequentPushes? = nil
    ) {
        self.activityID = activityID
        self.seq = seq
        self.renderedAt = renderedAt
        self.surface = surface
        self.channel = channel
        self.device = device
        self.frequentPushes = frequentPushes
    }

    /// The JSON line (with its `\n`), device fields falling back to
    /// `defaults` and the switch to `frequentPushes` (the contract's order:
    /// `frequent_pushes` after the device fields, left out when both are nil).
    public func jsonLine(
        defaults: DeviceInfo = DeviceInfo(), frequentPushes fallback: FrequentPushes? = nil
    ) -> [UInt8] {
        var line = BeaconLine()
        line.int("v", 1)
        line.string("kind", "render")
        line.string("activity_id", activityID)
        line.int("seq", seq)
        line.time("rendered_at", renderedAt)
        line.optionalString("surface", surface)
        line.optionalString("channel_id", channel?.rawValue)
        device.filled(from: defaults).append(to: &line)
        line.optionalString("frequent_pushes", (frequentPushes ?? fallback)?.rawValue)
        return line.finishLine()
    }
}

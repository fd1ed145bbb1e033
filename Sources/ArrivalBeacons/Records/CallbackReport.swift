import ArrivalModel
public import Foundation

/// A `callback` record: the app observed an ActivityKit callback. Each case
/// carries exactly the fields the contract requires for it, so a report that
/// the pipeline would reject as `missing_field` cannot be built.
public struct CallbackReport: Sendable, Equatable {
    public enum Callback: Sendable, Equatable {
        /// `pushTokenUpdates` of one activity; `token` is the hex text of the token bytes.
        case pushToken(activityID: String, token: String)
        /// `pushToStartTokenUpdates` (no activity yet).
        case pushToStartToken(token: String)
        /// `contentUpdates`: the content state carrying `seq` reached the app.
        case contentUpdate(activityID: String, seq: Int)
        /// `activityStateUpdates`.
        case activityState(activityID: String, state: ActivityStateName)
        /// The activity follows a broadcast channel (iOS 18): the app started
        /// it with `pushType: .channel(id)`, or a push-to-start carrying
        /// `input-push-channel` started it. arrival counts the channel's
        /// broadcasts for it while it is open.
        case channelSubscription(activityID: String, channel: ChannelID)

        /// `callback` and the fields the contract requires for it, in the record's order.
        package func append(to line: inout BeaconLine) {
            switch self {
            case .pushToken(let activityID, let token):
                line.string("callback", "push_token")
                line.string("activity_id", activityID)
                line.string("push_token", token)
            case .pushToStartToken(let token):
                line.string("callback", "push_to_start_token")
                line.string("push_token", token)
            case .contentUpdate(let activityID, let seq):
                line.string("callback", "content_update")
                line.string("activity_id", activityID)
                line.int("seq", seq)
            case .activityState(let activityID, let state):
                line.string("callback", "activity_state")
                line.string("activity_id", activityID)
                line.string("state", state.rawValue)
            case .channelSubscription(let activityID, let channel):
                line.string("callback", "channel_subscription")
                line.string("activity_id", activityID)
                line.string("channel_id", channel.rawValue)
            }
        }

        /// The channel the case itself carries (only ``channelSubscription(activityID:channel:)``).
        package var ownChannel: ChannelID? {
            if case .channelSubscription(_, let channel) = self { return channel }
            return nil
        }
    }

    /// The `state` values of the contract: ActivityKit's `ActivityState`
    /// cases, `pending` (iOS 26's scheduled start) included.
    public enum ActivityStateName: String, Sendable, CaseIterable {
        case active, ended, dismissed, stale, pending

        /// The name of an `ActivityState` value as its case reads
        /// (`String(describing:)`), or nil for a state the contract does not
        /// name yet. Matching by name keeps the observer compiling with SDKs
        /// older than a case (`pending` is iOS 26's) and reporting it with
        /// those that have it.
        public init?(observed state: some Any) {
            self.init(rawValue: String(describing: state))
        }
    }

    public var callback: Callback
    public var receivedAt: Date
    /// The activity's broadcast channel on a callback of another kind
    /// (optional there; `channel_id`). Not written on
    /// ``Callback/channelSubscription(activityID:channel:)``, whose own
    /// channel is the one that counts.
    public var channel: ChannelID?
    public var device: DeviceInfo
    /// The user's "More Frequent Updates" switch when the callback was
    /// recorded (`frequent_pushes`). nil here lets the writer fill it in from
    /// its ``BeaconWriter/Configuration/frequentPushes`` provider.
    public var frequentPushes: FrequentPushes?

    public init(
        _ callback: Callback, receivedAt: Date = Date(), channel: ChannelID? = nil, device: DeviceInfo = DeviceInfo(),
        frequentPushes: FrequentPushes? = nil
    ) {
        self.callback = callback
        self.receivedAt = receivedAt
        self.channel = channel
        self.device = device
        self.frequentPushes = frequentPushes
    }

    /// Lower-case hex of a token's bytes, as APNs and the contract write tokens.
    public static func hex(_ token: Data) -> String {
        LowercaseHex.string(token)
    }

    /// The JSON line (with its `\n`), device fields falling back to
    /// `defaults` and the switch to `frequentPushes` (the contract's order:
    /// `frequent_pushes` after the device fields, left out when both are nil).
    public func jsonLine(
        defaults: DeviceInfo = DeviceInfo(), frequentPushes fallback: FrequentPushes? = nil
    ) -> [UInt8] {
        var line = BeaconLine()
        line.int("v", 1)
        line.string("kind", "callback")
        callback.append(to: &line)
        if callback.ownChannel == nil { line.optionalString("channel_id", channel?.rawValue) }
        line.time("received_at", receivedAt)
        device.filled(from: defaults).append(to: &line)
        line.optionalString("frequent_pushes", (frequentPushes ?? fallback)?.rawValue)
        return line.finishLine()
    }
}

/// Who a sender handed a push to (Documentation/InputRecords.md, `provider`).
///
/// With a provider other than ``apns`` an `apns` record's `status` and
/// `reason` are that provider's answer, mapped to APNs terms: "accepted" then
/// means the provider took the push, which is all such a sender can know.
public enum PushProvider: String, CaseIterable, Sendable, Codable, Comparable {
    /// The sender's own HTTP/2 request to APNs (an absent `provider` means this).
    case apns
    /// Firebase Cloud Messaging HTTP v1 (`messages:send` with `apns.live_activity_token`).
    case fcm
    /// Tencent Cloud Chat push (`OfflinePushInfo.ApnsInfo.LiveActivity`).
    case tencentChat = "tencent_chat"

    /// How a report names the provider.
    public var displayName: String {
        switch self {
        case .apns: "APNs (direct)"
        case .fcm: "Firebase Cloud Messaging"
        case .tencentChat: "Tencent Cloud Chat"
        }
    }

    /// What a 200 means for requests sent through this provider.
    public var acceptanceMeaning: String {
        switch self {
        case .apns: "APNs accepted the push"
        case .fcm: "FCM took the push (FCM relays APNs's own refusals when it has them)"
        case .tencentChat: "Tencent Cloud Chat took the push (it talks to APNs itself)"
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

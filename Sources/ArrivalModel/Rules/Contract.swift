/// The limits and names the contract takes from APNs and ActivityKit,
/// shared by the analysis, the SQL views and the sender's payload check.
public enum Contract {
    /// The end of a Live Activity's APNs topic: `<bundle id>.push-type.liveactivity`.
    public static let liveActivityTopicSuffix = ".push-type.liveactivity"
    /// APNs refuses a Live Activity payload larger than this (413, `PayloadTooLarge`).
    public static let maxPayloadBytes = 4096
    /// An accepted payload larger than this is within 512 bytes of the limit:
    /// counted as an oversize risk, warned about by `check-payload`.
    public static let oversizeRiskBytes = 3584
    /// A broadcast's payload (iOS 18, contract 3.0) may be up to 5 KB.
    public static let maxBroadcastPayloadBytes = 5120
    /// An accepted broadcast larger than this is within 512 bytes of its limit.
    public static let broadcastOversizeRiskBytes = 4608
    /// A Live Activity stops taking updates this long after it started: 8 hours, in milliseconds.
    public static let activityLifetimeMS: Int64 = 8 * Milliseconds.hour

    /// How far back `breakdowns.priority_10_last_hour` counts an activity's
    /// other accepted priority-10 updates (contract 3.1): one hour, in milliseconds.
    public static let priority10WindowMS: Int64 = Milliseconds.hour
    /// The keys of `breakdowns.priority_10_last_hour` in their natural order
    /// (contract 3.1), each the lower bound of its range of counts.
    public static let priority10Buckets: [(key: String, from: Int)] = [
        ("0-4", 0), ("5-14", 5), ("15-29", 15), ("30-59", 30), ("60-119", 60), ("120+", 120),
    ]

    /// The index in ``priority10Buckets`` of a count of other priority-10 updates in the hour before.
    public static func priority10Bucket(of count: Int) -> Int {
        priority10Buckets.lastIndex { count >= $0.from } ?? 0
    }

    /// An update's `app`: its topic without `.push-type.liveactivity` when it
    /// ends with it (by code points, not grapheme clusters); "unknown"
    /// without a topic, an empty topic is "".
    public static func app(ofTopic topic: String?) -> String {
        guard let topic else { return "unknown" }
        let suffix = liveActivityTopicSuffix.utf8
        let bytes = topic.utf8
        guard bytes.count >= suffix.count, bytes.suffix(suffix.count).elementsEqual(suffix) else { return topic }
        return String(decoding: bytes.dropLast(suffix.count), as: UTF8.self)
    }
}

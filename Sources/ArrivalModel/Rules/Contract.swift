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
    /// A Live Activity stops taking updates this long after it started: 8 hours, in milliseconds.
    public static let activityLifetimeMS: Int64 = 8 * 3_600_000
}

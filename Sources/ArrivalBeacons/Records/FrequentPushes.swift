/// The user's "More Frequent Updates" switch for the app's Live Activities
/// (`ActivityAuthorizationInfo().frequentPushesEnabled`), as a record writes
/// it: `frequent_pushes`, `enabled` or `disabled` (contract 3.1).
///
/// With the switch off, the system gives the app's activities the smaller
/// budget of priority-10 pushes, so arrival breaks its report down by this
/// value (`breakdowns.frequent_pushes`). A record without it (an older kit,
/// a platform without ActivityKit) is filed under `unknown`.
public enum FrequentPushes: String, Sendable, Equatable, CaseIterable {
    case enabled
    case disabled

    /// `enabled` when `frequentPushesEnabled` is true.
    public init(enabled: Bool) {
        self = enabled ? .enabled : .disabled
    }

    /// Where a writer reads the switch: once per record, when the record is
    /// written, on the writer's own queue (never on the caller's). nil writes
    /// no `frequent_pushes`. Tests and apps that already observe the switch
    /// give their own; the default is ``system``.
    public typealias Provider = @Sendable () -> FrequentPushes?

    /// What the system says now: `ActivityAuthorizationInfo().frequentPushesEnabled`
    /// on iOS 16.2 and later; nil on iOS 16.1 (which has no such switch) and
    /// on every platform without ActivityKit (macOS, Linux), where records
    /// carry no `frequent_pushes`.
    public static let system: Provider = { FrequentPushes.fromSystem() }
}

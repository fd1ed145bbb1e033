/// What became of one accepted logical update (Documentation/Outcomes.md).
///
/// The cases are in the order the rules are tried: the first that holds
/// decides. The rules themselves are in `DeliveryAnalysis.decideOutcomes()`
/// (ArrivalAnalysis) and, for dashboards, in the `update_outcomes` SQL view
/// (ArrivalStore's `Migrations`); a test checks that both agree.
public enum Outcome: UInt8, CaseIterable, Sendable {
    /// A render beacon shows the widget displayed it.
    case rendered
    /// Sent after the activity ended.
    case ended
    /// Sent more than ``Contract/activityLifetimeMS`` after the activity started.
    case expired
    /// Its `aps.timestamp` was not newer than an earlier update's, so the device dropped it.
    case staleTimestamp
    /// Not shown, but a later update of the activity was (the device was offline, say).
    case superseded
    /// Accepted, never shown, and nothing later was shown either.
    case lost

    /// The order reports, tables and charts list outcomes in: the three
    /// that make up the deliverable updates (the arrival rate's
    /// denominator) first, then the device's drops.
    public static let displayOrder: [Outcome] = [.rendered, .superseded, .lost, .staleTimestamp, .ended, .expired]

    /// The outcome's name in the report JSON, the SQL views and `diff`.
    public var name: String {
        switch self {
        case .rendered: "rendered"
        case .ended: "ended"
        case .expired: "expired"
        case .staleTimestamp: "stale_timestamp"
        case .superseded: "superseded"
        case .lost: "lost"
        }
    }

    /// The outcome's column title in tables (`stale` for `stale_timestamp`).
    public var columnTitle: String {
        self == .staleTimestamp ? "stale" : name
    }

    /// One line for a person: what happened to such an update.
    public var meaning: String {
        switch self {
        case .rendered: "the widget showed it"
        case .superseded: "a newer update was shown instead (e.g. the device was offline)"
        case .lost: "accepted by APNs, never shown"
        case .staleTimestamp: "dropped by the device: aps.timestamp not newer than an earlier update's"
        case .ended: "sent after the activity ended"
        case .expired: "sent more than \(Contract.activityLifetimeMS / 3_600_000) hours after the activity started"
        }
    }

    /// Whether the update counts as deliverable (rendered, superseded or
    /// lost): the updates the device would have shown if they had arrived.
    public var isDeliverable: Bool {
        switch self {
        case .rendered, .superseded, .lost: true
        case .ended, .expired, .staleTimestamp: false
        }
    }
}

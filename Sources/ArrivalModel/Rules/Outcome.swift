/// What became of one accepted logical update (Documentation/Outcomes.md).
///
/// The cases are in the order the rules are tried: the first that holds
/// decides. The rules themselves are in `DeliveryAnalysis.decideOutcomes()`
/// (ArrivalAnalysis) and, for dashboards, in the `update_outcomes` SQL view
/// (ArrivalStore's `Migrations`); a test checks that both agree.
public enum Outcome: UInt8, CaseIterable, Sendable {
    /// A render beacon shows the widget displayed it.
    case rendered
    /// Sent after the user (or the system) dismissed the activity, before
    /// any end (contract 3.0): the user's choice, not a failed delivery.
    case dismissed
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
    /// denominator) first, then what the user closed, then the device's drops.
    public static let displayOrder: [Outcome] = [
        .rendered, .superseded, .lost, .dismissed, .staleTimestamp, .ended, .expired,
    ]

    /// The outcome's name in the report JSON, the SQL views and `diff`.
    public var name: String {
        switch self {
        case .rendered: "rendered"
        case .dismissed: "dismissed"
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
        case .dismissed: "sent after the user dismissed the activity"
        case .staleTimestamp: "dropped by the device: aps.timestamp not newer than an earlier update's"
        case .ended: "sent after the activity ended"
        case .expired:
            "sent more than \(Contract.activityLifetimeMS / Milliseconds.hour) hours after the activity started"
        }
    }

    /// Whether the update counts as deliverable (rendered, superseded or
    /// lost): the updates the device would have shown if they had arrived.
    public var isDeliverable: Bool {
        switch self {
        case .rendered, .superseded, .lost: true
        case .dismissed, .ended, .expired, .staleTimestamp: false
        }
    }
}

/// Why a `lost` update was lost (contract 3.0, Documentation/Outcomes.md):
/// what the evidence shows, not proof. The cases are in the order the
/// causes are tried: the first that holds decides.
public enum LossCause: UInt8, CaseIterable, Sendable {
    /// The app saw it arrive (a `content_update` callback) and the widget never showed it.
    case notRendered
    /// Sent to a token the activity had already replaced.
    case oldToken
    /// The activity was dismissed or ended on the device after the send.
    case closedLater
    /// Nothing came from the device after the send.
    case deviceSilent
    /// The device reported something later, and still nothing newer showed.
    case unexplained

    /// The cause's key in `updates.lost_by_cause`.
    public var name: String { LossCauses.keys[Int(rawValue)] }

    /// The key path of its count in ``LossCauses``.
    public var path: any WritableKeyPath<LossCauses, Int> & Sendable { LossCauses.paths[Int(rawValue)] }

    /// One line for a person: what the evidence shows.
    public var meaning: String {
        switch self {
        case .notRendered: "the app received it, the widget never showed it"
        case .oldToken: "sent to a push token the activity had already replaced"
        case .closedLater: "the activity was dismissed or ended on the device after it was sent"
        case .deviceSilent: "nothing came from the device after it was sent"
        case .unexplained: "the device reported something later, and still nothing newer showed"
        }
    }

    /// What usually causes it and what to do about it, for a product team.
    public var advice: String {
        switch self {
        case .notRendered:
            "Usually a widget build that cannot decode the new content state, or a view that fails: check the widget's ContentState against what the sender sends."
        case .oldToken:
            "The system rotated the activity's push token and the sender kept the old one: send to the newest token the app reported."
        case .closedLater:
            "The user or the app closed the activity before a newer update showed; most such updates arrived too late to matter."
        case .deviceSilent:
            "The device was offline, the app was not opened again, or its beacons were never uploaded: nothing proves either way."
        case .unexplained:
            "The device was reachable and reporting, yet neither this update nor a newer one showed: worth a look at the activity's timeline (arrival activity ID)."
        }
    }
}

extension LossCauses {
    /// The lost updates with `cause`.
    public subscript(cause: LossCause) -> Int {
        get { self[keyPath: cause.path] }
        set { self[keyPath: cause.path] = newValue }
    }
}

import ArrivalAnalysis
import ArrivalCompare
import ArrivalIngest
import ArrivalModel
import ArrivalStore
@_exported import ArrivalTestSupport
import Foundation
import Testing

/// The test bundle's fixture folder.
func fixture(_ relative: String) -> String {
    guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
        fatalError("Fixtures folder missing from the test bundle")
    }
    return url.appendingPathComponent(relative).path
}

/// Builds an `UpdateCounts` in one expression. The lost updates are
/// `device_silent` unless `causes` says otherwise: most fixtures hear
/// nothing from the device after a loss.
func counts(
    sent: Int, accepted: Int, rendered: Int = 0, dismissed: Int = 0, ended: Int = 0, expired: Int = 0, stale: Int = 0,
    superseded: Int = 0, lost: Int = 0, causes: [LossCause: Int]? = nil
) -> UpdateCounts {
    var c = UpdateCounts()
    c.sent = sent
    c.accepted = accepted
    c.rendered = rendered
    c.dismissed = dismissed
    for (cause, count) in causes ?? [.deviceSilent: lost] { c.lostByCause[cause] = count }
    c.ended = ended
    c.expired = expired
    c.staleTimestamp = stale
    c.superseded = superseded
    c.lost = lost
    return c
}

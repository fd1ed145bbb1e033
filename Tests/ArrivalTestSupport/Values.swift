package import ArrivalModel

/// Builds an `UpdateCounts` in one expression. The lost updates are
/// `device_silent` unless `causes` says otherwise: most fixtures hear
/// nothing from the device after a loss.
package func counts(
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

/// A small seeded generator so property tests are reproducible.
package struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

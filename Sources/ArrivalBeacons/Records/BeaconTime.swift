import ArrivalModel
package import Foundation

/// Times as the data contract writes them: RFC 3339 in UTC with
/// milliseconds (`2026-11-21T08:00:00.123Z`), and the UTC calendar day
/// (`2026-11-21`) that names a beacon directory. The text is ArrivalModel's
/// ``RFC3339`` (integer arithmetic, no `DateFormatter`, no locale, no
/// time-zone database); this adds only what a `Date` needs.
package enum BeaconTime {
    /// Milliseconds since the Unix epoch, rounded down (digits past the
    /// millisecond are dropped, as readers of the contract do). A time within
    /// a microsecond of a millisecond counts as that millisecond, so a `Date`
    /// made from whole milliseconds keeps them despite binary floating point
    /// (`1795248000.123` is stored as `…122.99999`).
    package static func milliseconds(_ date: Date) -> Int64 {
        let scaled = date.timeIntervalSince1970 * 1000
        let nearest = scaled.rounded()
        let value = abs(scaled - nearest) < 0.001 ? nearest : scaled.rounded(.down)
        // Dates outside ±292 million years cannot be stored; clamp rather than trap.
        guard value.isFinite else { return 0 }
        if value >= 9.2e18 { return Int64.max / 2 }
        if value <= -9.2e18 { return Int64.min / 2 }
        return Int64(value)
    }

    package static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        RFC3339.floorDivide(a, b).quotient
    }

    /// The day number (days since 1970-01-01, UTC) of a time in milliseconds.
    package static func dayNumber(milliseconds ms: Int64) -> Int64 {
        floorDiv(ms, Milliseconds.day)
    }

    /// `YYYY-MM-DD` of a day number.
    package static func dayText(_ dayNumber: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10)
        RFC3339.appendDay(dayNumber, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The day number of a strict `YYYY-MM-DD` directory name (a real day), or nil.
    package static func dayNumber(text: String) -> Int64? {
        guard text.utf8.count == 10, let midnight = RFC3339.parseDay(text) else { return nil }
        return dayNumber(milliseconds: midnight)
    }

    /// The RFC 3339 text of a date (UTC, milliseconds).
    package static func text(_ date: Date) -> String {
        var bytes: [UInt8] = []
        RFC3339.appendTime(milliseconds: milliseconds(date), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

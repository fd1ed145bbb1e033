import Foundation

/// Times as the data contract writes them: RFC 3339 in UTC with
/// milliseconds (`2026-11-21T08:00:00.123Z`), computed with integer
/// arithmetic (no `DateFormatter`, no locale, no time-zone database), and the
/// UTC calendar day (`2026-11-21`) that names a beacon directory.
package enum BeaconTime {
    static let millisecondsPerDay: Int64 = 86_400_000

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
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01
    /// (Howard Hinnant's `civil_from_days`).
    package static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// The day number (days since 1970-01-01, UTC) of a time in milliseconds.
    package static func dayNumber(milliseconds ms: Int64) -> Int64 {
        floorDiv(ms, millisecondsPerDay)
    }

    /// `YYYY-MM-DD` of a day number.
    package static func dayText(_ dayNumber: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10)
        appendDay(dayNumber, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The day number of a strict `YYYY-MM-DD` directory name, or nil.
    package static func dayNumber(text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              (1...12).contains(month), day >= 1
        else { return nil }
        // days_from_civil, then check the round trip (rejects 2026-02-30).
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let check = civil(fromDays: days)
        guard check.year == year, check.month == month, check.day == day else { return nil }
        return days
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS.mmmZ` for `ms` to `bytes`.
    package static func appendTimestamp(milliseconds ms: Int64, to bytes: inout [UInt8]) {
        let day = dayNumber(milliseconds: ms)
        let inDay = ms - day * millisecondsPerDay
        appendDay(day, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(inDay / 3_600_000, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(inDay / 60_000 % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(inDay / 1000 % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(inDay % 1000, count: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The RFC 3339 text of a date (UTC, milliseconds).
    package static func text(_ date: Date) -> String {
        var bytes: [UInt8] = []
        appendTimestamp(milliseconds: milliseconds(date), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendDay(_ dayNumber: Int64, to bytes: inout [UInt8]) {
        let (year, month, day) = civil(fromDays: dayNumber)
        // RFC 3339 has four-digit years only; years outside 0...9999 are clamped
        // so the text stays well-formed (no device clock is that far off).
        appendDigits(min(max(year, 0), 9999), count: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, count: 2, to: &bytes)
    }

    private static func appendDigits(_ value: Int64, count: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}

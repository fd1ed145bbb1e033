import ArrivalBeacons
import ArrivalModel
import Foundation

/// The simulator's calendar: days and times in integer milliseconds, so the
/// output depends on the configuration alone. Times are written by
/// ArrivalModel's ``RFC3339`` through the kit's ``BeaconLine``.
enum SimCalendar {
    /// Days since the epoch of a strict `YYYY-MM-DD` calendar date from 1971 on, or nil.
    static func parseDay(_ text: String) -> Int64? {
        guard text.utf8.count == 10, let midnight = RFC3339.parseDay(text), midnight >= 365 * Milliseconds.day else {
            return nil
        }
        return midnight / Milliseconds.day
    }

    /// The `Date` the kit's records take for a time in whole milliseconds
    /// (the kit reads the same milliseconds back from it).
    static func date(ms: Int64) -> Date {
        Date(timeIntervalSince1970: Double(ms) / 1000)
    }
}

/// How a clock writes its times: the sender logs UTC with `Z`; a device logs
/// its local time with its offset (`+08:00`), or `Z`/`+00:00` in UTC.
struct SimTimeStyle: Sendable {
    /// Offset from UTC in minutes (local = UTC + offset).
    var offsetMinutes: Int
    /// Write `Z` rather than `+00:00` when the offset is zero.
    var zulu: Bool
    /// Write six fraction digits (as some loggers do); digits past the
    /// millisecond are truncated by readers, so they carry no information.
    var micros: Bool

    static let senderUTC = SimTimeStyle(offsetMinutes: 0, zulu: true, micros: false)

    /// Times as the kit's own records write them (UTC, `Z`, milliseconds).
    var isContractUTC: Bool { offsetMinutes == 0 && zulu && !micros }

    /// The time as a `String` (for bad lines built by hand).
    func text(ms: Int64) -> String {
        var bytes: [UInt8] = []
        RFC3339.appendTime(
            milliseconds: ms, offsetMinutes: offsetMinutes, zulu: zulu,
            fractionDigits: micros ? 6 : 3, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension BeaconLine {
    /// `"name":"<RFC 3339 time>"` for `ms` (UTC milliseconds) as read on a
    /// clock with `style`'s offset; `subMillisecond` (0-999) adds three more
    /// fraction digits when `style.micros` is set.
    mutating func time(_ name: StaticString, ms: Int64, style: SimTimeStyle, subMillisecond: Int = 0) {
        time(
            name, milliseconds: ms, offsetMinutes: style.offsetMinutes, zulu: style.zulu,
            fractionDigits: style.micros ? 6 : 3, subMillisecond: subMillisecond)
    }

    /// The finished object without line end, from a record encoder's `jsonLine()` (which ends in `\n`).
    static func withoutLineEnd(_ jsonLine: [UInt8]) -> [UInt8] {
        var line = jsonLine
        line.removeLast()
        return line
    }
}

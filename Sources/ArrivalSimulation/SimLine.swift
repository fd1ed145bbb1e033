import ArrivalModel
/// Calendar arithmetic and RFC 3339 formatting for the simulator, in
/// integers only (no `Date`, no `DateFormatter`, no time-zone database), so
/// the output depends on the configuration alone.
enum SimCalendar {
    static let millisecondsPerDay: Int64 = 86_400_000

    /// The calendar date of a day since 1970-01-01 (shared with the decoder's
    /// RFC 3339 arithmetic).
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let (year, month, day) = RFC3339.civilFromDays(Int(days))
        return (Int64(year), Int64(month), Int64(day))
    }

    /// Days since the epoch of a strict `YYYY-MM-DD` calendar date from 1971 on, or nil.
    static func parseDay(_ text: String) -> Int64? {
        guard text.utf8.count == 10, let midnight = RFC3339.parseDay(text), midnight >= 365 * millisecondsPerDay else {
            return nil
        }
        return midnight / millisecondsPerDay
    }

    /// Floor division (the simulator's times are positive, but keep it exact).
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
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
}

/// A JSON Lines record being built as UTF-8 bytes. The simulator writes
/// millions of lines for large fleets, so it appends bytes directly instead
/// of going through `String` interpolation or `JSONEncoder` (whose key order
/// and number formatting are not ours to fix). Every value it writes is
/// plain ASCII without characters that need escaping.
struct SimLine {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        bytes.reserveCapacity(360)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Appends raw text (no escaping, no separator).
    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func key(_ name: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: name.utf8)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// `"name":"value"`
    mutating func string(_ name: String, _ value: String) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: value.utf8)
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"name":value` for an integer.
    mutating func int(_ name: String, _ value: Int64) {
        key(name)
        appendDigits(value)
    }

    /// `"name":value` with the value written verbatim (for deliberately bad
    /// values such as `3.0` or `NaN`).
    mutating func verbatim(_ name: String, _ text: String) {
        key(name)
        bytes.append(contentsOf: text.utf8)
    }

    /// `"name":"<RFC 3339 time>"`.
    mutating func time(_ name: String, ms: Int64, style: SimTimeStyle, subMillisecond: Int = 0) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        SimLine.appendTime(ms: ms, style: style, subMillisecond: subMillisecond, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Closes the object and returns the finished line (without line end).
    mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func appendDigits(_ value: Int64) {
        SimLine.appendInteger(value, to: &bytes)
    }

    static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start..<bytes.count].reverse()
    }

    private static func appendPadded(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var v = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((v / divisor) % 10))
            v %= divisor
            divisor /= 10
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.mmm(Z|±HH:MM)` for `ms` (UTC milliseconds) as
    /// read on a clock with `style`'s offset; `subMillisecond` (0-999) adds
    /// three more fraction digits when `style.micros` is set.
    static func appendTime(ms: Int64, style: SimTimeStyle, subMillisecond: Int, to bytes: inout [UInt8]) {
        let local = ms + Int64(style.offsetMinutes) * 60_000
        let days = SimCalendar.floorDiv(local, SimCalendar.millisecondsPerDay)
        let inDay = local - days * SimCalendar.millisecondsPerDay
        let date = SimCalendar.civilFromDays(days)
        appendPadded(date.year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(date.month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(date.day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendPadded(inDay / 3_600_000, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded((inDay / 60_000) % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded((inDay / 1000) % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendPadded(inDay % 1000, width: 3, to: &bytes)
        if style.micros { appendPadded(Int64(subMillisecond % 1000), width: 3, to: &bytes) }
        if style.offsetMinutes == 0 && style.zulu {
            bytes.append(UInt8(ascii: "Z"))
        } else {
            let offset = style.offsetMinutes
            bytes.append(UInt8(ascii: offset < 0 ? "-" : "+"))
            appendPadded(Int64(abs(offset) / 60), width: 2, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendPadded(Int64(abs(offset) % 60), width: 2, to: &bytes)
        }
    }

    /// The time as a `String` (for garbage lines built by hand).
    static func timeText(ms: Int64, style: SimTimeStyle) -> String {
        var bytes: [UInt8] = []
        appendTime(ms: ms, style: style, subMillisecond: 0, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}

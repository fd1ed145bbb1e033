/// Strict RFC 3339 times as the contract allows them:
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T` and `Z` in either case,
/// digits past the millisecond truncated. Stricter than
/// `Date.ISO8601FormatStyle` (it rejects second 60, a space for `T`, missing
/// seconds or offset, impossible dates), and needs no Foundation.
public enum RFC3339 {
    /// Milliseconds since the Unix epoch, or `nil` when `bytes` is not such a time.
    public static func parseMilliseconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        let n = bytes.count
        guard n >= 20 else { return nil }
        @inline(__always) func digit(_ i: Int) -> Int? {
            let c = bytes[i] &- 0x30
            return c <= 9 ? Int(c) : nil
        }
        @inline(__always) func two(_ i: Int) -> Int? {
            guard let a = digit(i), let b = digit(i + 1) else { return nil }
            return a * 10 + b
        }
        guard let y1 = two(0), let y2 = two(2), bytes[4] == 0x2D,
            let month = two(5), bytes[7] == 0x2D, let day = two(8),
            bytes[10] == 0x54 || bytes[10] == 0x74,
            let hour = two(11), bytes[13] == 0x3A, let minute = two(14), bytes[16] == 0x3A,
            let second = two(17)
        else { return nil }
        let year = y1 * 100 + y2
        // Years 0001–9999: RFC 3339 has no year 0000 (contract 3.0).
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var i = 19
        var millis = 0
        if bytes[i] == 0x2E {
            i += 1
            let fractionStart = i
            while i < n, let d = digit(i) {
                if i - fractionStart < 3 { millis = millis * 10 + d }
                i += 1
            }
            let used = i - fractionStart
            guard used > 0 else { return nil }
            if used < 3 { for _ in used..<3 { millis *= 10 } }
        }
        guard i < n else { return nil }
        var offsetMinutes = 0
        switch bytes[i] {
        case 0x5A, 0x7A:
            i += 1
        case 0x2B, 0x2D:
            guard i + 6 == n, let oh = two(i + 1), bytes[i + 3] == 0x3A, let om = two(i + 4),
                oh <= 23, om <= 59
            else { return nil }
            offsetMinutes = (oh * 60 + om) * (bytes[i] == 0x2D ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == n else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * Milliseconds.second + Int64(millis)
    }

    public static func parseMilliseconds(_ text: String) -> Int64? {
        var copy = text
        return copy.withUTF8 { parseMilliseconds($0) }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, with `.mmm` only when the milliseconds are not zero (Documentation/ReportSchema.md).
    public static func format(milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        let fraction = floorDivide(milliseconds, Milliseconds.second).remainder != 0
        appendTime(milliseconds: milliseconds, fractionDigits: fraction ? 3 : 0, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `YYYY-MM-DDTHH:MM:SS[.fff[fff]](Z|±HH:MM)`: the time `milliseconds`
    /// (since the epoch, UTC) as a clock `offsetMinutes` ahead of UTC reads it,
    /// in integers only (no `Date`, no time-zone database).
    /// - `zulu`: a zero offset is written `Z` (otherwise `+00:00`).
    /// - `fractionDigits`: 0 (none), 3 (milliseconds) or 6 (milliseconds, then
    ///   `subMillisecond` as three more digits, as some loggers write them).
    /// Years outside 0...9999 are clamped: RFC 3339 has four-digit years only,
    /// so the text stays well-formed whatever the clock says.
    package static func appendTime(
        milliseconds: Int64, offsetMinutes: Int = 0, zulu: Bool = true,
        fractionDigits: Int = 3, subMillisecond: Int = 0, to bytes: inout [UInt8]
    ) {
        let (days, inDay) = floorDivide(milliseconds + Int64(offsetMinutes) * Milliseconds.minute, Milliseconds.day)
        appendDay(days, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(inDay / Milliseconds.hour, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(inDay / Milliseconds.minute % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(inDay / Milliseconds.second % 60, count: 2, to: &bytes)
        if fractionDigits > 0 {
            bytes.append(UInt8(ascii: "."))
            appendDigits(inDay % Milliseconds.second, count: 3, to: &bytes)
            if fractionDigits > 3 { appendDigits(Int64(subMillisecond % 1000), count: 3, to: &bytes) }
        }
        if offsetMinutes == 0 && zulu {
            bytes.append(UInt8(ascii: "Z"))
        } else {
            bytes.append(UInt8(ascii: offsetMinutes < 0 ? "-" : "+"))
            appendDigits(Int64(abs(offsetMinutes) / 60), count: 2, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendDigits(Int64(abs(offsetMinutes) % 60), count: 2, to: &bytes)
        }
    }

    /// Appends `YYYY-MM-DD` of a day number (days since 1970-01-01), the year clamped to 0...9999.
    package static func appendDay(_ days: Int64, to bytes: inout [UInt8]) {
        let (year, month, day) = civilFromDays(Int(days))
        appendDigits(Int64(min(max(year, 0), 9999)), count: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int64(month), count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(Int64(day), count: 2, to: &bytes)
    }

    /// `value` (not negative) as exactly `count` decimal digits, zero-padded.
    private static func appendDigits(_ value: Int64, count: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        var digits = count
        while digits > 1 {  // not `for _ in 1..<count`: a range iterator is slow in debug builds
            divisor *= 10
            digits -= 1
        }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Midnight UTC of a `YYYY-MM-DD` day, or `nil` when it is not a real day.
    public static func parseDay(_ text: String) -> Int64? {
        parseMilliseconds(text + "T00:00:00Z")
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    package static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Division rounding toward minus infinity, with the remainder (0 ..< b for b > 0).
    package static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }
}

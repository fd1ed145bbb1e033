import ArrivalModel
import Foundation

/// How every report, diff and gate output writes numbers, rates,
/// durations and times: one formatter, one glyph for "no value" (``none``).
package enum ReportFormat {
    /// What stands for a value that does not exist (a rate without a denominator).
    package static let none = "—"

    /// 1,234,567
    package static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return value < 0 ? "−" + out : out
    }

    /// "1 line", "0 lines", "2 lines": a count and its noun, singular only for one.
    package static func counted(_ value: Int, _ singular: String, plural: String? = nil) -> String {
        "\(value) \(value == 1 ? singular : plural ?? singular + "s")"
    }

    /// 97.3% (two decimals between 99% and 100%, where one hides the difference); "—" without a denominator.
    package static func percent(_ rate: Double?) -> String {
        guard let rate else { return none }
        let p = rate * 100
        if p > 99 && p < 100 { return fixed(p, 2) + "%" }
        return fixed(p, 1) + "%"
    }

    /// 850 ms, 1.2 s, 3.5 min, 1.1 h
    package static func duration(_ ms: Int64?) -> String {
        guard let ms else { return none }
        if ms < Milliseconds.second { return "\(ms) ms" }
        if ms < Milliseconds.minute { return fixed(Double(ms) / Double(Milliseconds.second), 1) + " s" }
        if ms < Milliseconds.hour { return fixed(Double(ms) / Double(Milliseconds.minute), 1) + " min" }
        return fixed(Double(ms) / Double(Milliseconds.hour), 1) + " h"
    }

    /// 2026-11-21 08:00:03Z (milliseconds kept when present).
    package static func time(_ ms: Int64) -> String {
        RFC3339.format(milliseconds: ms).replacingOccurrences(of: "T", with: " ")
    }

    /// 08:00:03 within a day.
    package static func clock(_ ms: Int64) -> String {
        let text = RFC3339.format(milliseconds: ms)
        let start = text.index(text.startIndex, offsetBy: 11)
        return String(text[start...].dropLast())
    }

    /// 2026-11-21
    package static func day(_ day: Int64) -> String {
        String(RFC3339.format(milliseconds: day * Milliseconds.day).prefix(10))
    }

    /// 1.5 GB, 320 KB
    package static func bytes(_ value: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var v = Double(value)
        var unit = 0
        while v >= 1_000 && unit < units.count - 1 {
            v /= 1_000
            unit += 1
        }
        return unit == 0 ? "\(value) bytes" : fixed(v, 1) + " " + units[unit]
    }

    /// `0.97312` → `97.31%` with `digits` decimals.
    package static func percent(_ fraction: Double, digits: Int) -> String {
        fixed(fraction * 100, digits) + "%"
    }

    /// `1234` → `1234 ms`; ``none`` without a value.
    package static func milliseconds(_ value: Int64?) -> String {
        value.map { "\($0) ms" } ?? none
    }

    /// +3, −2, 0 (a true minus sign).
    package static func signed(_ value: Int) -> String { value > 0 ? "+\(value)" : value < 0 ? "−\(-value)" : "0" }

    /// A change of a rate in percentage points: +1.25 pt, −0.40 pt.
    package static func signedPoints(_ fraction: Double) -> String {
        let text = fixed(abs(fraction) * 100, 2)
        if text == "0.00" { return "0.00 pt" }
        return (fraction > 0 ? "+" : "−") + text + " pt"
    }

    /// A relative change: +12.5%, −3.0%.
    package static func signedPercent(_ fraction: Double) -> String {
        let text = fixed(abs(fraction) * 100, 1)
        if text == "0.0" { return "0.0%" }
        return (fraction > 0 ? "+" : "−") + text + "%"
    }

    /// A fixed number of decimals, rounded half away from zero, without Foundation.
    package static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        // Past 2^53 a Double holds no fraction to print, and Int could not hold it.
        guard value.isFinite, abs(value) * scale < 9_007_199_254_740_992 else { return "\(value.rounded())" }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled) - whole * Int(scale)
        var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let digitsText = String(fraction)
            text += "." + String(repeating: "0", count: digits - digitsText.count) + digitsText
        }
        return text
    }
}

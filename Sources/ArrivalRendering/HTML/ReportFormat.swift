import ArrivalModel
import ArrivalAnalysis
/// How the HTML report writes numbers, rates, durations and times.
enum ReportFormat {
    /// 1,234,567
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(c)
        }
        return value < 0 ? "−" + out : out
    }

    /// 97.3% (two decimals between 99% and 100%, where one hides the difference); "—" without a denominator.
    static func percent(_ rate: Double?) -> String {
        guard let rate else { return "—" }
        let p = rate * 100
        if p > 99 && p < 100 { return fixed(p, 2) + "%" }
        return fixed(p, 1) + "%"
    }

    /// 850 ms, 1.2 s, 3.5 min, 1.1 h
    static func duration(_ ms: Int64?) -> String {
        guard let ms else { return "—" }
        if ms < 1_000 { return "\(ms) ms" }
        if ms < 60_000 { return fixed(Double(ms) / 1_000, 1) + " s" }
        if ms < 3_600_000 { return fixed(Double(ms) / 60_000, 1) + " min" }
        return fixed(Double(ms) / 3_600_000, 1) + " h"
    }

    /// 2026-11-21 08:00:03Z (milliseconds kept when present).
    static func time(_ ms: Int64) -> String {
        RFC3339.format(milliseconds: ms).replacingOccurrences(of: "T", with: " ")
    }

    /// 08:00:03 within a day.
    static func clock(_ ms: Int64) -> String {
        let text = RFC3339.format(milliseconds: ms)
        let start = text.index(text.startIndex, offsetBy: 11)
        return String(text[start...].dropLast())
    }

    /// 2026-11-21
    static func day(_ day: Int64) -> String {
        String(RFC3339.format(milliseconds: day * 86_400_000).prefix(10))
    }

    /// 1.5 GB, 320 KB
    static func bytes(_ value: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var v = Double(value)
        var unit = 0
        while v >= 1_000 && unit < units.count - 1 {
            v /= 1_000
            unit += 1
        }
        return unit == 0 ? "\(value) bytes" : fixed(v, 1) + " " + units[unit]
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = String(rounded)
        if text.contains("e") { return String(Int(rounded)) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        text = String(parts[0])
        if decimals > 0 {
            text += "." + String((fraction + String(repeating: "0", count: decimals)).prefix(decimals))
        }
        return text
    }
}

import ArrivalRendering
import Testing

/// The one formatter every output uses, and the one markdown escaper.
@Suite("Report formatting")
struct ReportFormatTests {
    @Test("Rates, counts, durations and the glyph for no value")
    func numbers() {
        #expect(ReportFormat.percent(0.97312, digits: 2) == "97.31%")
        #expect(ReportFormat.percent(0.9183) == "91.8%")
        #expect(ReportFormat.percent(0.99451) == "99.45%")  // two decimals between 99% and 100%
        #expect(ReportFormat.percent(nil) == ReportFormat.none)
        #expect(ReportFormat.milliseconds(nil) == ReportFormat.none)
        #expect(ReportFormat.milliseconds(2695) == "2695 ms")
        #expect(ReportFormat.count(1_234_567) == "1,234,567" && ReportFormat.count(-1200) == "−1,200")
        #expect(ReportFormat.fixed(2.345, 2) == "2.35" && ReportFormat.fixed(-0.004, 2) == "0.00")
        #expect(ReportFormat.fixed(-1.25, 1) == "-1.3")
        #expect(ReportFormat.fixed(1e300, 2) == "\(1e300)")  // too large for digits: no trap
        #expect(ReportFormat.signedPoints(-0.004) == "−0.40 pt" && ReportFormat.signed(0) == "0")
        #expect(ReportFormat.duration(90_000) == "1.5 min" && ReportFormat.bytes(1_500_000) == "1.5 MB")
    }

    @Test("Markdown cells: no pipe, line break, backtick or tag survives")
    func markdown() {
        #expect(Markdown.escaped("a|b\nc`d<e>") == "a\\|b c'd&lt;e&gt;")
        #expect(Markdown.escaped("e\u{301}") == "e\u{301}")  // combining marks kept as they are
    }
}

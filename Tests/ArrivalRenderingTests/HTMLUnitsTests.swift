import Testing

@testable import ArrivalRendering

/// The HTML page writes a change of a rate in the unit `diff` and `gate` use (issue 43).
@Suite("HTML units")
struct HTMLUnitsTests {
    @Test("A rate's change against an earlier day is in points, 'pt', as diff and gate write it")
    func points() throws {
        let rate = try #require(HeadlineMetric.all.first { $0.kind == .rate })
        let up = try #require(rate.delta(now: 0.93, before: 0.90, against: "the day before"))
        #expect(up.text == "+3.0 pt")
        let down = try #require(rate.delta(now: 0.85, before: 0.90, against: "the day before"))
        #expect(down.text == "−5.0 pt")
        #expect(HTMLReportPage.Cell(text: "+3.0 pt").num)
        #expect(!HTMLReportPage.Cell(text: "+3.0 pp").num)
    }
}

import ArrivalModel
import Testing

/// The one reading of a report window (`--day`/`--from`/`--to` on the
/// command line, `day`/`from`/`to` in the collector's query), and the
/// named durations it is measured in.
@Suite("Report window")
struct ReportWindowParseTests {
    static let midnight: Int64 = 1_795_219_200_000  // 2026-11-21T00:00:00Z

    @Test("Neither a day nor a range is all data; a day is that UTC day; a range is from (inclusive) to (exclusive)")
    func windows() throws {
        #expect(try ReportWindow.parse(day: nil, from: nil, to: nil) == nil)
        let day = try #require(try ReportWindow.parse(day: "2026-11-21", from: nil, to: nil))
        #expect(day == ReportWindow(from: Self.midnight, to: Self.midnight + Milliseconds.day))
        #expect(day.wholeDay == utcDay(of: Self.midnight))
        let range = try #require(
            try ReportWindow.parse(day: nil, from: "2026-11-21T06:00:00Z", to: "2026-11-21T08:00:00.5+01:00"))
        #expect(
            range
                == ReportWindow(
                    from: Self.midnight + 6 * Milliseconds.hour, to: Self.midnight + 7 * Milliseconds.hour + 500))
        #expect(range.wholeDay == nil)
        // A range that happens to be one whole UTC day is that day; a day's length elsewhere is not.
        #expect(
            try ReportWindow.parse(day: nil, from: "2026-11-21T00:00:00Z", to: "2026-11-22T00:00:00Z")?.wholeDay
                == utcDay(of: Self.midnight))
        #expect(
            try ReportWindow.parse(day: nil, from: "2026-11-21T01:00:00Z", to: "2026-11-22T01:00:00Z")?.wholeDay
                == nil)
    }

    @Test("Each refusal says what was wrong, for the command line and the collector to word")
    func refusals() {
        #expect(throws: ReportWindow.Refusal.dayWithRange) {
            try ReportWindow.parse(day: "2026-11-21", from: "2026-11-21T00:00:00Z", to: nil)
        }
        #expect(throws: ReportWindow.Refusal.dayWithRange) {
            try ReportWindow.parse(day: "2026-11-21", from: nil, to: "2026-11-22T00:00:00Z")
        }
        for day in ["2026-02-30", "2026-11-21T00:00:00Z", "21.11.2026", ""] {
            #expect(throws: ReportWindow.Refusal.notADay(day)) { try ReportWindow.parse(day: day, from: nil, to: nil) }
        }
        #expect(throws: ReportWindow.Refusal.notATime(.from, "2026-11-21")) {
            try ReportWindow.parse(day: nil, from: "2026-11-21", to: "2026-11-22")
        }
        #expect(throws: ReportWindow.Refusal.notATime(.to, "tomorrow")) {
            try ReportWindow.parse(day: nil, from: "2026-11-21T00:00:00Z", to: "tomorrow")
        }
        #expect(throws: ReportWindow.Refusal.fromNotBeforeTo) {
            try ReportWindow.parse(day: nil, from: "2026-11-21T00:00:00Z", to: "2026-11-21T00:00:00Z")
        }
        #expect(throws: ReportWindow.Refusal.halfRange) {
            try ReportWindow.parse(day: nil, from: "2026-11-21T00:00:00Z", to: nil)
        }
        #expect(throws: ReportWindow.Refusal.halfRange) {
            try ReportWindow.parse(day: nil, from: nil, to: "2026-11-21T00:00:00Z")
        }
    }

    @Test("The named durations are the milliseconds they name")
    func durations() {
        #expect(Milliseconds.second == 1_000)
        #expect(Milliseconds.minute == 60_000)
        #expect(Milliseconds.hour == 3_600_000)
        #expect(Milliseconds.day == 86_400_000)
        #expect(utcDay(of: -1) == -1 && utcDay(of: Milliseconds.day) == 1 && utcHour(of: -1) == -1)
    }
}

import ArrivalModel
import Testing

@Suite("RFC 3339 times")
struct RFC3339Tests {
    @Test(
        "Accepted forms, to the millisecond",
        arguments: [
            ("2026-11-21T08:00:00Z", 1_795_248_000_000),
            ("2026-11-21t08:00:00z", 1_795_248_000_000),
            ("2026-11-21T08:00:00.1Z", 1_795_248_000_100),
            ("2026-11-21T08:00:00.123999Z", 1_795_248_000_123),
            ("2026-11-21T16:00:00+08:00", 1_795_248_000_000),
            ("2026-11-21T03:30:00-04:30", 1_795_248_000_000),
            ("2024-02-29T00:00:00Z", 1_709_164_800_000),
            ("1969-12-31T23:59:59.999Z", -1),
        ] as [(String, Int64)])
    func accepted(_ text: String, _ millis: Int64) {
        #expect(RFC3339.parseMilliseconds(text) == millis)
    }

    @Test(
        "Rejected forms",
        arguments: [
            "2026-11-21 08:00:00Z", "2026-11-21T08:00Z", "2026-11-21T08:00:00", "2026-02-29T00:00:00Z",
            "2026-11-21T08:00:60Z", "2026-11-21T24:00:00Z", "2026-13-01T00:00:00Z", "2026-11-21T08:00:00.Z",
            "2026-11-21T08:00:00+0800", "2026-11-21T08:00:00+24:00", "2026-11-21T08:00:00Z ", "26-11-21T08:00:00Z",
            "2026-11-00T08:00:00Z",
        ])
    func rejected(_ text: String) {
        #expect(RFC3339.parseMilliseconds(text) == nil)
    }

    @Test("Formatting for the report window")
    func format() {
        #expect(RFC3339.format(milliseconds: 1_795_248_000_000) == "2026-11-21T08:00:00Z")
        #expect(RFC3339.format(milliseconds: 1_795_248_000_007) == "2026-11-21T08:00:00.007Z")
        #expect(RFC3339.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }
}

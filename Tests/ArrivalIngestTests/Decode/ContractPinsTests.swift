import ArrivalAnalysis
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalIngest
@testable import ArrivalStore

/// The choices contract 3.0 pins that the text had left open ("3.0 pins"):
/// one test each, on the decoder, the walk and the report.
@Suite("Contract 3.0 pins")
struct ContractPinsTests {
    static func decode(_ line: String) -> RecordDecoder.Outcome {
        var decoder = RecordDecoder()
        return decoder.decode(line)
    }

    static func render(_ fields: String) -> String {
        #"{"kind":"render","activity_id":"a","seq":1,"rendered_at":"2026-11-21T08:00:00Z""# + fields + "}"
    }

    @Test("An exchange's url may be the path alone: the token is read, and no host tells the environment")
    func pathOnlyURL() throws {
        let token = "3f9c1e0b7a5d42e8"
        let line = ExchangeDecodingTests.line(url: "/3/device/\(token)")
        let record = try #require(ExchangeDecodingTests.derived(line))
        #expect(record.pushToken == token)
        #expect(record.environment == nil)
        // With a query, as a path may carry one; and what is still refused.
        #expect(
            ExchangeDecodingTests.derived(ExchangeDecodingTests.line(url: "/3/device/\(token)?x=1"))?.pushToken == token
        )
        for url in ["/3/device/", "/3/device/a/b", "/3/devices/ab", "3/device/ab", ""] {
            #expect(
                Self.decode(ExchangeDecodingTests.line(url: url)) == .malformed(.invalidExchange), "url \(url)")
        }
    }

    @Test("v: absent or null is 1; 1.0, true, \"1\" and 2 are not")
    func version() {
        #expect(Self.decode(Self.render("")) != .malformed(.unsupportedVersion))
        #expect(Self.decode(Self.render(#","v":null"#)) != .malformed(.unsupportedVersion))
        #expect(Self.decode(Self.render(#","v":1"#)) != .malformed(.unsupportedVersion))
        for v in ["1.0", "true", "\"1\"", "2", "1e0"] {
            #expect(Self.decode(Self.render(#","v":"# + v)) == .malformed(.unsupportedVersion), "v \(v)")
        }
    }

    @Test("Years run 0001–9999 and offsets up to 23:59")
    func timeLimits() {
        func time(_ text: String) -> RecordDecoder.Outcome {
            Self.decode(#"{"kind":"render","activity_id":"a","seq":1,"rendered_at":""# + text + #""}"#)
        }
        for good in [
            "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-11-21T08:00:00+23:59", "2026-11-21T08:00:00-23:59",
        ] {
            #expect(time(good) != .malformed(.invalidTime), "\(good)")
        }
        for bad in [
            "0000-01-01T00:00:00Z", "0000-12-31T23:59:59+23:59", "2026-11-21T08:00:00+24:00",
            "2026-11-21T08:00:00+00:60", "2026-11-21T08:00:00-24:00",
        ] {
            #expect(time(bad) == .malformed(.invalidTime), "\(bad)")
        }
    }

    @Test(
        "state is read on activity_state callbacks only: on others it is ignored, whatever it holds; pending is a state"
    )
    func stateOnlyOnActivityState() throws {
        func callback(_ fields: String) -> String {
            #"{"kind":"callback","received_at":"2026-11-21T08:00:00Z","activity_id":"a""# + fields + "}"
        }
        #expect(Self.decode(callback(#","callback":"activity_state","state":"pending""#)) != .malformed(.invalidEnum))
        #expect(Self.decode(callback(#","callback":"activity_state","state":"paused""#)) == .malformed(.invalidEnum))
        #expect(Self.decode(callback(#","callback":"activity_state""#)) == .malformed(.missingField))
        for state in [#""paused""#, "42", "null", #""ended""#] {
            let outcome = Self.decode(callback(#","callback":"content_update","seq":3,"state":"# + state))
            guard case .record(.callback(let record)) = outcome else {
                Issue.record("state \(state) on content_update: \(outcome)")
                continue
            }
            #expect(record.state == nil, "state \(state) is not kept on a content_update")
        }
        // Ignored like an unknown field: the same callback with and without it is one record.
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("callbacks.jsonl")
        try Data(
            (callback(#","callback":"content_update","seq":3"#) + "\n"
                + callback(#","callback":"content_update","seq":3,"state":"bogus""#) + "\n"
                + callback(#","callback":"activity_state","state":"pending""#) + "\n").utf8
        ).write(to: file)
        let (_, summary) = try ingestAndReport([file.path])
        #expect(summary.records[.callback] == 2 && summary.duplicateRecords == 1 && summary.malformedLines == 0)
    }

    @Test("An empty reason is no reason: by_reason says HTTP<status> or NoResponse, in the report and the SQL views")
    func emptyReason() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func apns(_ id: String, status: Int, reason: String?) -> String {
            #"{"kind":"apns","apns_id":""# + id + #"","sent_at":"2026-11-21T08:00:00Z","status":"# + String(status)
                + (reason.map { #","reason":""# + $0 + #"""# } ?? "")
                + #","push_token":"t","activity_id":"a","seq":1,"aps_timestamp":1795248000}"#
        }
        let file = directory.appendingPathComponent("apns.jsonl")
        try Data(
            [
                apns("1", status: 400, reason: ""), apns("2", status: 0, reason: ""),
                apns("3", status: 400, reason: nil),
                apns("4", status: 410, reason: "Unregistered"),
            ].joined(separator: "\n").utf8
        ).write(to: file)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [file.path])
        let report = try ReportBuilder(store: store).build(window: nil)
        #expect(report.requests.byReason == ["HTTP400": 2, "NoResponse": 1, "Unregistered": 1])
        // The view the dashboards read agrees.
        var rows: [String?] = []
        try store.connection.prepare("SELECT reject_reason FROM resolved_requests ORDER BY apns_id").forEachRow {
            rows.append($0.string(0))
        }
        #expect(rows == ["HTTP400", "NoResponse", "HTTP400", "Unregistered"])
    }

    @Test("Percentiles are exact nearest ranks: position ⌈k·n/100⌉, never a rounding of k/100 × n")
    func nearestRanks() {
        // 0.9 × 10 is 9.000000000000002 in floating point: a float ceiling would take the 10th value.
        let ten = (1...10).map { Int64($0) }
        #expect(nearestRank(ten, percent: 90) == 9)
        #expect(nearestRank(ten, percent: 50) == 5)
        #expect(nearestRank(ten, percent: 99) == 10)
        let hundred = (1...100).map { Int64($0) }
        #expect(nearestRank(hundred, percent: 99) == 99 && nearestRank(hundred, percent: 90) == 90)
        #expect(nearestRank([7], percent: 50) == 7 && nearestRank([], percent: 50) == nil)
    }

    @Test("A walk leaves hidden directories out; a path on the command line that is missing or no file is listed")
    func walkAndNamedPaths() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let hidden = directory.appendingPathComponent("tree/.cache")
        try FileManager.default.createDirectory(at: hidden, withIntermediateDirectories: true)
        try Data((Self.render("") + "\n").utf8).write(to: hidden.appendingPathComponent("f.jsonl"))
        let visible = directory.appendingPathComponent("tree/day")
        try FileManager.default.createDirectory(at: visible, withIntermediateDirectories: true)
        try Data((Self.render(#","surface":"x""#) + "\n").utf8).write(to: visible.appendingPathComponent("f.jsonl"))
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let missing = directory.appendingPathComponent("nowhere.jsonl").path
        let summary = try IngestPipeline(store: store).ingest(paths: [
            missing, directory.appendingPathComponent("tree").path,
        ])
        #expect(summary.filesRead == 1 && summary.newRecords == 1)
        #expect(summary.unreadable.map(\.path) == [missing])
    }

    @Test("The 1 MiB line limit does not count the line end")
    func lineLimit() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let short = Self.render(#","surface":""#)
        let fill = String(repeating: "s", count: (1 << 20) - short.utf8.count - 1)
        let exact = Self.render(#","surface":""# + fill + #"""#)
        #expect(exact.utf8.count == 1 << 20)
        let over = exact.replacingOccurrences(of: #""activity_id":"a""#, with: #""activity_id":"ab""#)
        let file = directory.appendingPathComponent("long.jsonl")
        try Data((exact + "\r\n" + over + "\n").utf8).write(to: file)
        let (_, summary) = try ingestAndReport([file.path])
        #expect(summary.newRecords == 1)
        #expect(summary.malformedByCause == [.lineTooLong: 1])
    }
}

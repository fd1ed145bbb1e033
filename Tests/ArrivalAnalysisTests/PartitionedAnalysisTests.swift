import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis

/// A store analysed in partitions of its activities gives the same bytes as
/// one analysis of everything (issue 14): the report and its samples, the
/// HTML page, and the updates `diff --records` matches.
@Suite("Analysis in partitions")
struct PartitionedAnalysisTests {
    /// Four simulated days of fleets (requests through providers, token-only
    /// requests, malformed lines and the simulator's other faults) in one store.
    static func store(in directory: URL, seed: UInt64 = 7) throws -> SQLiteStore {
        let days = ["2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21"]
        for (i, day) in days.enumerated() {
            let config = SimulationConfig(activities: 60 + 10 * i, seed: seed + UInt64(i), day: day)
            _ = try FleetSimulator(config: config).run(outputDirectory: directory.appendingPathComponent(day).path)
        }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: days.map { directory.appendingPathComponent($0).path })
        return store
    }

    static let windows: [ReportWindow?] = [
        nil, ReportWindow.day("2026-11-21"),
        ReportWindow(from: 1_795_248_000_000 + 6 * 3_600_000, to: 1_795_248_000_000 + 18 * 3_600_000),
    ]

    @Test("The report, its samples and the HTML page are the same in 1, 2, 7 or 40 partitions")
    func sameReports() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let requests = try store.read { try $0.rowEstimates().requests }
        #expect(requests > 2_000)
        for window in Self.windows {
            var builder = ReportBuilder(store: store)
            builder.partitioning = PartitionPolicy(rowsPerPartition: .max)
            let whole = try builder.build(window: window, sampling: true)
            #expect(whole.analysis != nil)
            var daily = DailyReportBuilder(store: store)
            daily.partitioning = PartitionPolicy(rowsPerPartition: .max)
            let wholePage = try daily.build(window: window, trendDays: 4)
            let wholeHTML = try wholePage.htmlText(generatedAt: 0)
            #expect(wholePage.worstActivities.count >= 5)
            for partitions in [2, 7, 40] {
                builder.partitioning = PartitionPolicy(rowsPerPartition: (requests + partitions - 1) / partitions)
                let split = try builder.build(window: window, sampling: true)
                #expect(split.analysis == nil, "analysed in \(partitions) partitions")
                #expect(split.report == whole.report, "\(partitions) partitions, window \(String(describing: window))")
                #expect(split.report.jsonText() == whole.report.jsonText())
                #expect(split.samples == whole.samples)
                daily.partitioning = builder.partitioning
                let page = try daily.build(window: window, trendDays: 4)
                #expect(page.report == wholePage.report)
                #expect(page.trend == wholePage.trend)
                #expect(try page.htmlText(generatedAt: 0) == wholeHTML, "\(partitions) partitions")
            }
        }
    }

    @Test("Extreme seqs, priorities and names survive the partitions' files: the same report as at once")
    func extremes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let seqs: [Int64] = [.min, -1, 0, 1, 127, 128, 1 << 40, .max]
        let names = ["a", "é", "e\u{301}", String(repeating: "x", count: 300), "act-\u{1F600}"]
        var sender = ""
        var devices = ""
        for (n, name) in names.enumerated() {
            for (i, seq) in seqs.enumerated() {
                let second = String(format: "%02d", (n * 8 + i) % 60)
                let priority = i % 2 == 0 ? "\"priority\":\(Int64.min + Int64(i))," : ""
                sender += """
                    {"v":1,"kind":"apns","apns_id":"id-\(n)-\(i)","sent_at":"2026-11-21T10:\(second):00.000Z",\
                    "status":\(i == 3 ? 410 : 200),"push_token":"t\(n)","activity_id":"\(name)","seq":\(seq),\
                    \(priority)"aps_timestamp":\(1_795_255_200 + i)}

                    """
                if i % 3 != 1 {
                    devices += """
                        {"v":1,"kind":"render","activity_id":"\(name)","seq":\(seq),\
                        "rendered_at":"2026-11-21T11:\(second):00.000Z","os_version":"\(i % 2 == 0 ? "18.2" : "")"}

                        """
                }
            }
        }
        // Requests that name only their push token: "shared" was claimed by b and a at the same
        // moment (the smaller id, a, owns it), "later" by z before y (z owns it).
        for (seq, token) in [(900, "shared"), (901, "later")] {
            sender += """
                {"v":1,"kind":"apns","apns_id":"tok-\(seq)","sent_at":"2026-11-21T12:00:00.000Z","status":200,\
                "push_token":"\(token)","seq":\(seq),"aps_timestamp":1795262400}

                """
        }
        for (activity, token, at) in [
            ("b", "shared", "10:00"), ("a", "shared", "10:00"), ("y", "later", "11:00"),
            ("z", "later", "09:00"),
        ] {
            devices += """
                {"v":1,"kind":"callback","callback":"push_token","activity_id":"\(activity)","push_token":"\(token)",\
                "received_at":"2026-11-21T\(at):00.000Z"}

                """
        }
        try sender.write(to: directory.appendingPathComponent("apns.jsonl"), atomically: true, encoding: .utf8)
        try devices.write(to: directory.appendingPathComponent("renders.jsonl"), atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        let summary = try IngestPipeline(store: store).ingest(paths: [directory.path])
        #expect(summary.records[.apns] == names.count * seqs.count + 2)
        var builder = ReportBuilder(store: store)
        builder.partitioning = PartitionPolicy(rowsPerPartition: .max)
        let whole = try builder.build(window: nil, sampling: true)
        #expect(whole.report.updates.sent == names.count * seqs.count + 2)
        builder.partitioning = PartitionPolicy(rowsPerPartition: 3)
        let split = try builder.build(window: nil, sampling: true)
        #expect(split.analysis == nil)
        #expect(split.report.jsonText() == whole.report.jsonText())
        #expect(split.samples == whole.samples)
        // Token owners, resolved in Swift for one analysis and in SQL for partitions, agree.
        let reader = try SQLiteStore(readingAt: directory.appendingPathComponent("s.sqlite").path)
        for rows in [Int.max, 3] {
            var owners: [Int64: String] = [:]
            try PartitionedAnalyses.forEachPair(
                store, nil, reader, nil, partitioning: PartitionPolicy(rowsPerPartition: rows)
            ) { analysis, _ in
                for update in analysis.updates where update.seq >= 900 && update.seq <= 901 {
                    owners[update.seq] = analysis.activityNames[Int(update.activity)].text
                }
            }
            #expect(owners == [900: "a", 901: "z"], "partitions of \(rows) requests")
        }
    }

    @Test("The partitions' files are unlinked as soon as they are made: nothing is left in TMPDIR, even if killed")
    func unlinkedFiles() throws {
        let files = try PartitionFiles(count: 3)
        defer { files.close() }
        let directory = URL(fileURLWithPath: files.name(0)).deletingLastPathComponent().path
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(!FileManager.default.fileExists(atPath: files.name(1)))
        let bytes: [UInt8] = Array(0..<200)
        try bytes.withUnsafeBytes { try files.append($0, to: 1) }
        var back = [UInt8](repeating: 0, count: 50)
        try back.withUnsafeMutableBytes { try files.read(into: $0, at: 100, of: 1) }
        #expect(back == Array(100..<150))
        #expect(throws: SpillError.self) {
            try back.withUnsafeMutableBytes { try files.read(into: $0, at: 190, of: 1) }
        }
    }

    @Test("Two stores analysed side by side in partitions match every update of the whole analyses, once")
    func pairs() throws {
        let directoryA = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directoryA) }
        let directoryB = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directoryB) }
        let a = try Self.store(in: directoryA, seed: 7)
        let b = try Self.store(in: directoryB, seed: 8)
        func outcomes(_ analysis: DeliveryAnalysis) -> [String: String] {
            var all: [String: String] = [:]
            for update in analysis.updates {
                let key = "\(analysis.activityNames[Int(update.activity)].text)#\(update.seq)"
                all[key] = update.accepted ? update.outcome?.name ?? "none" : "not_accepted"
            }
            return all
        }
        var wholeA: [String: String] = [:]
        var wholeB: [String: String] = [:]
        var pairs = 0
        try PartitionedAnalyses.forEachPair(a, nil, b, nil, partitioning: PartitionPolicy(rowsPerPartition: .max)) {
            x, y in
            (wholeA, wholeB) = (outcomes(x), outcomes(y))
            pairs += 1
        }
        #expect(pairs == 1)
        #expect(wholeA.count > 1_000 && wholeA != wholeB)
        var splitA: [String: String] = [:]
        var splitB: [String: String] = [:]
        var activitiesSeen = Set<String>()
        pairs = 0
        try PartitionedAnalyses.forEachPair(a, nil, b, nil, partitioning: PartitionPolicy(rowsPerPartition: 500)) {
            x, y in
            pairs += 1
            let here = Set(x.activityNames.values.map(\.text)).union(y.activityNames.values.map(\.text))
            #expect(here.isDisjoint(with: activitiesSeen), "an activity is in one partition on both sides")
            activitiesSeen.formUnion(here)
            splitA.merge(outcomes(x)) { first, _ in first }
            splitB.merge(outcomes(y)) { first, _ in first }
        }
        #expect(pairs > 4)
        #expect(splitA == wholeA)
        #expect(splitB == wholeB)
    }
}

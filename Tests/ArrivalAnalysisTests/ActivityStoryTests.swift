import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis
@testable import ArrivalStore

/// `arrival activity ID` and `arrival lost`: the same outcomes and loss
/// causes as the report, from one activity's records or as a list.
@Suite("Activity timelines and lost updates")
struct ActivityStoryTests {
    /// A store of a lifecycle fleet (dismissals, rotations, undrawn states) and the hand-written 3.0 cases.
    static func store(in directory: URL) throws -> SQLiteStore {
        var config = SimulationConfig(activities: 250, seed: 77)
        config.lifecycle = true
        config.providers = true
        let fleet = directory.appendingPathComponent("fleet")
        _ = try FleetSimulator(config: config).run(outputDirectory: fleet.path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [fleet.path, fixture("lifecycle")])
        return store
    }

    @Test("Each activity's story gives every update the outcome and cause the whole analysis gives it")
    func storiesAgreeWithTheReport() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        let analysis = try store.read { try DeliveryAnalysis(snapshot: $0, window: nil) }
        var expected: [String: [String]] = [:]
        for u in analysis.updates.sorted(by: { ($0.at, $0.seq) < ($1.at, $1.seq) }) {
            let name = analysis.activityNames[Int(u.activity)].text
            expected[name, default: []].append(
                "\(u.seq) \(u.outcome?.name ?? "-") \(u.lossCause?.name ?? "-")")
        }
        #expect(expected.count > 250)
        var compared = 0
        for (name, lines) in expected {
            let story = try ActivityStory(records: try store.read { try $0.activityRecords(name) })
            let got = story.updates.map { "\($0.seq) \($0.outcome?.name ?? "-") \($0.lossCause?.name ?? "-")" }
            #expect(got == lines, "activity \(name)")
            #expect(story.timeline.map(\.time) == story.timeline.map(\.time).sorted())
            compared += 1
        }
        #expect(compared == expected.count)
    }

    @Test("A request without an activity belongs to the story of the activity that owns its token")
    func attributionByToken() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("a.jsonl")
        try """
        {"v":1,"kind":"callback","callback":"push_token","activity_id":"A","push_token":"aa01","received_at":"2026-11-21T08:00:00Z"}
        {"v":1,"kind":"callback","callback":"push_token","activity_id":"B","push_token":"aa01","received_at":"2026-11-21T09:00:00Z"}
        {"v":1,"kind":"callback","callback":"push_token","activity_id":"B","push_token":"bb01","received_at":"2026-11-21T09:00:00Z"}
        {"v":1,"kind":"apns","apns_id":"x1","sent_at":"2026-11-21T10:00:00Z","status":200,"push_token":"aa01","seq":1,"aps_timestamp":1}
        {"v":1,"kind":"apns","apns_id":"x2","sent_at":"2026-11-21T10:00:00Z","status":200,"push_token":"bb01","seq":1,"aps_timestamp":1}

        """.write(to: file, atomically: true, encoding: .utf8)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [file.path])
        // aa01 is A's (earliest callback), though B reported it too; bb01 is B's.
        let a = try store.read { try $0.activityRecords("A") }
        let b = try store.read { try $0.activityRecords("B") }
        #expect(a.requests.map(\.apnsID) == ["x1"] && a.requests[0].attributedByToken)
        #expect(b.requests.map(\.apnsID) == ["x2"])
        #expect(try store.read { try $0.activityRecords("C") }.isEmpty)
    }

    @Test("arrival lost lists, per cause, exactly the report's lost_by_cause, in any window, whole or in partitions")
    func lostMatchesTheReport() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(in: directory)
        for rows in [nil, 200] as [Int?] {
            var builder = ReportBuilder(store: store)
            if let rows { builder.partitioning = PartitionPolicy(rowsPerPartition: rows) }
            for window in [
                nil, ReportWindow.day("2026-11-21"), ReportWindow(from: 1_795_269_600_000, to: 1_795_290_000_000),
            ] {
                let report = try builder.build(window: window)
                let lost = try builder.lostUpdates(window: window)
                #expect(lost.count == report.updates.lost && lost.count > 0)
                for cause in LossCause.allCases {
                    #expect(lost.filter { $0.cause == cause }.count == report.updates.lostByCause[cause])
                    #expect(
                        try builder.lostUpdates(window: window, causes: [cause]) == lost.filter { $0.cause == cause })
                }
                #expect(lost.map(\.acceptedAt) == lost.map(\.acceptedAt).sorted())
                let app = try #require(lost.first?.app)
                #expect(try builder.lostUpdates(window: window, apps: [app]) == lost.filter { $0.app == app })
            }
        }
    }
}

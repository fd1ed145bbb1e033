import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis

/// Apple's numbers beside arrival's in the report (issue 54): present only for whole days of the window that
/// Apple's exports cover, the rest of the report unchanged, arrival's side equal to the day's own report,
/// the same whole or in partitions, and the same in the daily report.
@Suite("Apple's numbers beside arrival's")
struct AppleComparisonTests {
    /// 2026-11-21T00:00:00Z.
    static let day = ReportWindow.day("2026-11-21")!.from

    func withFleet(_ body: (SQLiteStore) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = SimulationConfig(activities: 600, seed: 23, day: "2026-11-21")
        config.channels = true
        _ = try FleetSimulator(config: config).run(outputDirectory: directory.appendingPathComponent("tree").path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [directory.appendingPathComponent("tree").path])
        try body(store)
    }

    /// Imports Apple's rows of the fleet's day: Live Activity statuses (one hidden, one push type spelled
    /// otherwise), another push type, the application's broadcasts and two channels' (one the fleet's).
    func importApple(into store: SQLiteStore, channel: String) throws {
        let delivery = [
            AppleDeliveryRow(day: Self.day, pushType: "liveactivity", status: "Received by APNs", count: 12_345),
            AppleDeliveryRow(day: Self.day, pushType: "liveactivity", status: "Delivered to Device", count: 11_980),
            AppleDeliveryRow(
                day: Self.day, pushType: "LiveActivity", status: "Stored - Power Considerations", count: nil),
            AppleDeliveryRow(day: Self.day, pushType: "alert", status: "Delivered to Device", count: 77),
            AppleDeliveryRow(
                day: Self.day + Milliseconds.day, pushType: "liveactivity", status: "Received by APNs", count: 5),
        ]
        _ = try store.importAppleMetrics(kind: .delivery, delivery: delivery, broadcasts: [], sha256: "d", at: 0)
        _ = try store.importAppleMetrics(
            kind: .broadcastApplication, delivery: [],
            broadcasts: [
                AppleBroadcastRow(
                    day: Self.day, channelID: nil, published: 40, delivered: 1_200, totalSubscriptions: 300,
                    uniqueSubscribers: nil, hidden: ["unique_subscribers"])
            ], sha256: "a", at: 0)
        for (id, hash) in [(channel, "c"), ("not-a-channel-of-the-fleet", "e")] {
            _ = try store.importAppleMetrics(
                kind: .broadcastChannel, delivery: [],
                broadcasts: [
                    AppleBroadcastRow(
                        day: Self.day, channelID: id, published: 12, delivered: nil, totalSubscriptions: nil,
                        uniqueSubscribers: nil, hidden: ["delivered", "total_subscriptions"])
                ], sha256: hash, at: 0)
        }
    }

    @Test(
        "Without Apple's rows nothing changes; with them an apple object of each whole day, arrival's side the day's own report"
    )
    func sideBySide() throws {
        try withFleet { store in
            let builder = ReportBuilder(store: store)
            let dayWindow = ReportWindow.day("2026-11-21")!
            let before = try builder.build(window: nil)
            let beforeDay = try builder.build(window: dayWindow)
            #expect(before.apple == nil && beforeDay.apple == nil)
            let channel = try #require(beforeDay.breakdowns["channel"]?.keys.sorted().first).text
            try importApple(into: store, channel: channel)

            let after = try builder.build(window: nil)
            var stripped = after
            stripped.apple = nil
            #expect(stripped.jsonText() == before.jsonText(), "the rest of the report is what it was")
            // The whole store: both days Apple covers; the fleet has no update on the second.
            #expect(after.apple?.days.map(\.day) == [Self.day, Self.day + Milliseconds.day])

            let report = try builder.build(window: dayWindow)
            let apple = try #require(report.apple)
            #expect(apple.days.count == 1)
            let day = try #require(apple.days.first)
            // By push type, then status, in byte order: "LiveActivity" before "liveactivity".
            #expect(
                day.delivery.map(\.status) == [
                    "Stored - Power Considerations", "Delivered to Device", "Received by APNs",
                ])
            #expect(day.delivery.map(\.count) == [nil, 11_980, 12_345])
            #expect(day.requests == beforeDay.requests.total && day.accepted == beforeDay.requests.accepted)
            #expect(day.updates == beforeDay.updates)
            #expect(day.requests > 0 && day.updates.rendered > 0)

            // Channels: the application's first (every channel), then each either side names, by code point.
            let rendered = beforeDay.breakdowns["channel"] ?? [:]
            #expect(day.channels.first?.channelID == nil)
            #expect(day.channels.first?.apple?.delivered == 1_200)
            #expect(day.channels.first?.broadcasts == beforeDay.requests.broadcasts)
            #expect(day.channels.first?.rendered == rendered.values.reduce(0) { $0 + $1.rendered })
            let named = day.channels.dropFirst()
            #expect(
                named.map(\.channelID!)
                    == Set(
                        rendered.keys.map(\.text) + beforeDay.channels.keys.map(\.text) + ["not-a-channel-of-the-fleet"]
                    ).sorted(by: codePointOrder))
            for entry in named {
                let id = ExactString(entry.channelID!)
                #expect(entry.rendered == (rendered[id]?.rendered ?? 0))
                #expect(entry.broadcasts == (beforeDay.channels[id]?.broadcasts ?? 0))
                #expect(
                    (entry.apple != nil)
                        == (entry.channelID == channel || entry.channelID == "not-a-channel-of-the-fleet"))
            }
            #expect(
                named.contains {
                    $0.channelID == channel && $0.rendered > 0
                        && $0.apple?.hidden == ["delivered", "total_subscriptions"]
                })

            // In partitions: the same report, byte for byte.
            var split = builder
            let rows = try store.read { try $0.rowEstimates().requests }
            split.partitioning = PartitionPolicy(rowsPerPartition: (rows + 2) / 3)
            #expect(try split.build(window: dayWindow).jsonText() == report.jsonText())
            #expect(try split.build(window: nil).jsonText() == after.jsonText())

            // The daily report (markdown, HTML) sets the same days beside arrival's.
            let daily = try DailyReportBuilder(store: store).build(window: dayWindow)
            #expect(daily.report.apple == report.apple)

            // A window that cuts the day leaves it out: Apple's counts are of whole days.
            let cut = ReportWindow(from: Self.day + 3_600_000, to: Self.day + 20 * 3_600_000)
            #expect(try builder.build(window: cut).apple == nil)
        }
    }

    @Test("The markdown and HTML reports show the section only with Apple's numbers, hidden values as hidden")
    func section() throws {
        try withFleet { store in
            let window = ReportWindow.day("2026-11-21")!
            func texts() throws -> (markdown: String, html: String) {
                let produced = ProducedReport.daily(try DailyReportBuilder(store: store).build(window: window))
                return (try ReportOutput.markdown.render(produced), try ReportOutput.html.render(produced))
            }
            let before = try texts()
            #expect(!before.markdown.contains("Apple's numbers") && !before.html.contains("apple-card"))
            try importApple(into: store, channel: "x")
            let after = try texts()
            #expect(after.markdown.contains("## Apple's numbers beside arrival's"))
            #expect(after.markdown.contains("Stored - Power Considerations: hidden"))
            #expect(after.markdown.contains("never combined into one rate"))
            #expect(!after.markdown.contains("alert"))
            #expect(after.html.contains("id=\"apple-card\"") && after.html.contains("Received by APNs: 12,345"))
        }
    }

    @Test(
        "simulate --apple-metrics: the fleet unchanged, exports that import whole, statuses that add up, the section shown"
    )
    func simulated() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = SimulationConfig(activities: 300, seed: 31, day: "2026-11-21")
        config.channels = true
        config.lifecycle = true
        _ = try FleetSimulator(config: config).run(outputDirectory: directory.appendingPathComponent("plain").path)
        config.appleMetrics = directory.appendingPathComponent("apple").path
        let summary = try FleetSimulator(config: config).run(
            outputDirectory: directory.appendingPathComponent("fleet").path)
        func files(_ name: String) throws -> [String: Data] {
            let root = directory.appendingPathComponent(name)
            var all: [String: Data] = [:]
            for case let path as String in FileManager.default.enumerator(atPath: root.path)! {
                let url = root.appendingPathComponent(path)
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                    all[path] = try Data(contentsOf: url)
                }
            }
            return all
        }
        #expect(try files("plain") == files("fleet"), "the fleet is what it is without the option")
        #expect(summary.appleFiles.count >= 3)

        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [directory.appendingPathComponent("fleet").path])
        var received = 0
        var fates = 0
        for path in summary.appleFiles {
            let export = try AppleMetricsExport(
                bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))), fileName: path)
            _ = try store.importAppleMetrics(
                kind: export.kind, delivery: export.delivery, broadcasts: export.broadcasts, sha256: path, at: 0)
            for row in export.delivery {
                let count = try #require(row.count)
                if row.status == "Received by APNs" {
                    received = count
                } else if !row.status.hasSuffix("(From Storage)") {
                    fates += count
                }
            }
        }
        // Each received push has one fate (delivered, stored and never delivered, or discarded); a stored push
        // delivered later counts as stored and from storage. Rounded to tens: within 5 per status.
        #expect(received > 0 && abs(received - fates) <= 5 * 6, "received \(received), fates \(fates)")
        let report = try ReportBuilder(store: store).build(window: ReportWindow.day("2026-11-21"))
        let day = try #require(report.apple?.days.first)
        #expect(day.delivery.count >= 3 && day.updates.rendered > 0)
        #expect(day.channels.count > 1 && day.channels.dropFirst().allSatisfy { $0.apple != nil })
    }
}

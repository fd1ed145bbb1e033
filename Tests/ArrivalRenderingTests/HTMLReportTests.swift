import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalRendering

@Suite("HTML report")
struct HTMLReportTests {
    /// A store built from `paths` in a temporary directory (removed by the caller).
    static func store(_ paths: [String], in directory: URL) throws -> SQLiteStore {
        let store = try SQLiteStore(path: directory.appendingPathComponent("report.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: paths)
        return store
    }

    static let sampleDay = ReportWindow.day("2026-11-21")

    @Test(
        "The page's figures are the JSON report's for the same window",
        arguments: [
            nil, sampleDay,
            ReportWindow(from: 1_795_248_000_000 + 6 * 3_600_000, to: 1_795_248_000_000 + 18 * 3_600_000),
        ])
    func agreesWithJSON(window: ReportWindow?) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Self.store(samplePaths, in: directory)
        let json = try ReportBuilder(store: store).build(window: window)
        let daily = try DailyReportBuilder(store: store).build(window: window)
        #expect(daily.report == json)
        #expect(daily.report.jsonText() == json.jsonText())
        #expect(json.updates.sent > 100)

        let html = try daily.htmlText(generatedAt: 0)
        // Every headline tile shows the JSON report's value.
        for metric in HeadlineMetric.all {
            expectShown(html, "<p class=\"value\">\(metric.format(metric.value(json)))</p>")
        }
        // Every outcome, with its count.
        for (style, count) in zip(DailyReport.outcomeStyles, DailyReport.outcomeCounts(json.updates)) {
            expectShown(html, "\(style.name)</span></td><td class=\"num\">\(ReportFormat.count(count))</td>")
        }
        // Every rejection reason, with its count.
        for (reason, count) in json.requests.byReason {
            expectShown(
                html,
                "<td class=\"mono\">\(HTMLEscaping().escapeText(reason.text))</td><td class=\"num\">\(ReportFormat.count(count))</td>"
            )
        }
        // Every breakdown row the page shows (the provider one only when a
        // provider other than APNs took part), with its sent and accepted counts.
        #expect(json.showsBreakdown("provider") == html.contains("By provider"))
        for (dimension, rows) in json.breakdowns where json.showsBreakdown(dimension) {
            for (key, counts) in rows {
                let row =
                    "<td>\(HTMLEscaping().escapeText(key.text))</td><td class=\"num\">\(ReportFormat.count(counts.sent))</td><td class=\"num\">\(ReportFormat.count(counts.accepted))</td>"
                expectShown(html, row)
            }
        }
        // The charts' buckets add up to the report.
        var summed = UpdateCounts()
        for bucket in daily.buckets { summed.add(bucket.updates) }
        #expect(summed == json.updates)
        #expect(daily.buckets.reduce(0) { $0 + $1.requests } == json.requests.total)
        #expect(daily.latencyHistogram.reduce(0) { $0 + $1.count } == json.latency.count)
        #expect(html.utf8.count < 2_000_000)
    }

    @Test("Strings from the input are escaped everywhere they appear")
    func hostileStringsAreEscaped() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The file name is input too: it shows in the sources and data-quality tables.
        let input = directory.appendingPathComponent("<img src=x onerror=alert(6)>.jsonl")
        try FileManager.default.copyItem(atPath: fixture("hostile/hostile.jsonl"), toPath: input.path)
        let store = try Self.store([input.path], in: directory)
        let daily = try DailyReportBuilder(store: store).build(window: Self.sampleDay, trendDays: 2)
        #expect(daily.worstActivities.count == 1)
        let html = try daily.htmlText(generatedAt: 0)
        for markup in [
            "<script", "<img", "<iframe", "<svg onload", "<b>", "</table><", "<a href=javascript", "\"\u{301}", "'>",
        ] {
            let unescaped = has(html, markup)
            #expect(!unescaped, "unescaped: \(markup)")
        }
        // Shown, escaped: the app, activity, reason, versions, surface, device, transport error, file name.
        for shown in [
            "&lt;script&gt;alert(1)&lt;/script&gt;", "act&quot;\u{301} onmouseover&#61;alert(0)",
            "&lt;img src&#61;x onerror&#61;alert(7)&gt;",
            "&lt;b&gt;18&lt;/b&gt;", "&lt;/table&gt;&lt;script&gt;alert(3)", "&lt;svg onload&#61;alert(4)&gt;",
            "&#39;&gt;&lt;iframe src&#61;javascript:alert(5)&gt;", "reset &lt;a href&#61;javascript:alert(8)&gt;",
            "&lt;img src&#61;x onerror&#61;alert(6)&gt;.jsonl",
        ] {
            expectShown(html, shown)
        }
    }

    @Test("A day without data is a gap in the trend, not a count of 0 beside the real days")
    func trendGap() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let days = ["2026-11-19", "2026-11-21"]
        for (i, day) in days.enumerated() {
            let config = SimulationConfig(activities: 40, seed: UInt64(11 + i), day: day)
            _ = try FleetSimulator(config: config).run(outputDirectory: directory.appendingPathComponent(day).path)
        }
        let store = try Self.store(days.map { directory.appendingPathComponent($0).path }, in: directory)
        let daily = try DailyReportBuilder(store: store).build(window: ReportWindow.day("2026-11-21"), trendDays: 3)
        #expect(daily.trend.count == 3 && daily.trend[1].requests.total == 0)
        let html = try daily.htmlText(generatedAt: 0)
        // Days with data have a dot per metric; the empty day has none, and its table row only dashes.
        expectShown(html, "2026-11-19: ")
        expectShown(html, "2026-11-21: ")
        #expect(!html.contains("2026-11-20: "), "a dot drawn for a day without data")
        let row = try #require(html.range(of: "<td>2026-11-20</td>"))
        let rest = html[row.upperBound...]
        let rowText = rest[..<(rest.range(of: "</tr>")?.lowerBound ?? rest.endIndex)]
        #expect(!rowText.contains(">0<") && rowText.contains("—"), "\(rowText)")
    }

    @Test("A day is compared with the day before and the median of the week before; --days adds a trend")
    func comparisonsAndTrend() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let days = ["2026-11-18", "2026-11-19", "2026-11-20", "2026-11-21"]
        for (i, day) in days.enumerated() {
            let config = SimulationConfig(activities: 40 + 10 * i, seed: UInt64(7 + i), day: day)
            _ = try FleetSimulator(config: config).run(outputDirectory: directory.appendingPathComponent(day).path)
        }
        let store = try Self.store(days.map { directory.appendingPathComponent($0).path }, in: directory)
        let builder = ReportBuilder(store: store)
        let daily = try DailyReportBuilder(store: store).build(window: ReportWindow.day("2026-11-21"), trendDays: 4)
        #expect(daily.report == (try builder.build(window: ReportWindow.day("2026-11-21"))))
        // The days around the page's own are its figures without outliers (contract 3.2), which the page
        // shows for its own window only: a block per device and day is what its memory would grow by.
        func withoutOutliers(_ window: ReportWindow?) throws -> Report {
            var report = try builder.build(window: window)
            report.outliers = nil
            return report
        }
        #expect(daily.report.outliers != nil)
        #expect(daily.previousDay == (try withoutOutliers(ReportWindow.day("2026-11-20"))))
        #expect(daily.previousWeek.count == 3)
        #expect(daily.trend.count == 4)
        for (report, day) in zip(daily.trend, days) {
            // (The page's own day is its report, with outliers.)
            var figures = report
            figures.outliers = nil
            #expect(figures == (try withoutOutliers(ReportWindow.day(day))), "trend day \(day)")
        }
        let html = try daily.htmlText(generatedAt: 0)
        expectShown(html, "vs 2026-11-20")
        expectShown(html, "vs median of 3 earlier days")
        expectShown(html, "<h2>Trend</h2>")
        expectShown(html, "<td>2026-11-18</td>")
        // The arrival-rate change against the day before, as the tile shows it.
        let arrival = HeadlineMetric.all[0]
        let delta = try #require(
            arrival.delta(
                now: daily.report.updates.arrivalRate, before: daily.previousDay?.updates.arrivalRate,
                against: "vs 2026-11-20"))
        expectShown(html, delta.text + " vs 2026-11-20")

        // No comparison for a window that is not one day, nor for a day without an earlier one.
        let all = try DailyReportBuilder(store: store).build(window: nil)
        #expect(all.previousDay == nil && all.previousWeek.isEmpty)
        let first = try DailyReportBuilder(store: store).build(window: ReportWindow.day("2026-11-18"))
        #expect(first.previousDay == nil && first.previousWeek.isEmpty)
        expectShown(try first.htmlText(generatedAt: 0), "The store holds no earlier day to compare with.")
    }

    @Test("Median of the earlier days")
    func medianOfDays() {
        #expect(median([]) == nil)
        #expect(median([3]) == 3)
        #expect(median([5, 1, 3]) == 3)
        #expect(median([4, 1, 3, 2]) == 2.5)
    }

    @Test("The page stays under 2 MB however many apps, versions, reasons, files and days the data has")
    func sizeIsBounded() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("input")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let start: Int64 = 1_760_000_000_000
        var sender = ""
        var devices = ""
        // 4,000 activities, each with its own app, OS and app version, rejection reason, over 500 days.
        for i in 0..<4_000 {
            let at = start + Int64(i % 500) * 86_400_000 + Int64(i) * 1_000
            let time = RFC3339.format(milliseconds: at)
            let topic = "com.example.app\(i).push-type.liveactivity"
            sender +=
                #"{"kind":"apns","apns_id":"a\#(i)","sent_at":"\#(time)","status":200,"push_token":"t\#(i)","activity_id":"act-\#(i)","seq":1,"event":"start","aps_timestamp":\#(at / 1000),"topic":"\#(topic)","priority":10}"#
                + "\n"
            sender +=
                #"{"kind":"apns","apns_id":"b\#(i)","sent_at":"\#(time)","status":400,"reason":"Reason\#(i)","push_token":"t\#(i)","activity_id":"act-\#(i)","seq":2,"aps_timestamp":\#(at / 1000 + 1),"topic":"\#(topic)"}"#
                + "\n"
            devices +=
                #"{"kind":"render","activity_id":"act-\#(i)","seq":1,"rendered_at":"\#(RFC3339.format(milliseconds: at + 900))","surface":"surface-\#(i)","device_id":"device-\#(i)","os_version":"os-\#(i)","app_version":"v\#(i)"}"#
                + "\n"
        }
        // One activity with 5,000 updates that were all lost.
        for seq in 0..<5_000 {
            let at = start + Int64(seq) * 60_000
            sender +=
                #"{"kind":"apns","apns_id":"l\#(seq)","sent_at":"\#(RFC3339.format(milliseconds: at))","status":200,"push_token":"lost","activity_id":"act-lost","seq":\#(seq),"aps_timestamp":\#(at / 1000),"topic":"com.example.lost.push-type.liveactivity"}"#
                + "\n"
        }
        try Data(sender.utf8).write(to: input.appendingPathComponent("sender.jsonl"))
        try Data(devices.utf8).write(to: input.appendingPathComponent("devices.jsonl"))
        // 300 files, each with a malformed line.
        for i in 0..<300 {
            try Data("not json \(i)\n".utf8).write(to: input.appendingPathComponent("bad-\(i).jsonl"))
        }
        let store = try Self.store([input.path], in: directory)
        let daily = try DailyReportBuilder(store: store).build(window: nil, trendDays: 366)
        #expect(daily.report.breakdowns["app"]?.count == 4_001)
        #expect(daily.report.requests.byReason.count == 4_000)
        #expect(daily.buckets.count <= 92)
        let html = try daily.htmlText(generatedAt: 0)
        #expect(html.utf8.count < 2_000_000, "\(html.utf8.count) bytes")
        // What the cut-off lists say instead.
        expectShown(html, "3981 others")
        expectShown(html, "4,970 more updates not listed")
    }
}

/// Whether `text` contains `part` (a function, so a failed expectation prints
/// the part it looked for rather than the whole page).
func has(_ text: String, _ part: String) -> Bool {
    text.contains(part)
}

/// Expects the page to contain `part`; on failure names the part, not the page.
func expectShown(_ page: String, _ part: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let shown = page.contains(part)
    #expect(shown, "not on the page: \(part)", sourceLocation: sourceLocation)
}

import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalBeacons

@Suite("BeaconWriter", .timeLimit(.minutes(1)))
struct BeaconWriterTests {
    /// 2026-11-21T08:00:00Z
    static let morning = date(ms: 1_795_248_000_000)

    func writer(
        _ container: URL, role: BeaconProcessRole = .widget, pid: Int32 = 4411, clock: TestClock = TestClock(morning),
        configure: (inout BeaconWriter.Configuration) -> Void = { _ in }
    ) -> BeaconWriter {
        var configuration = BeaconWriter.Configuration(container: container, role: role)
        configuration.processID = pid
        configuration.now = { clock.now }
        configure(&configuration)
        return BeaconWriter(configuration)
    }

    @Test(
        "Widget and app records go to <container>/LiveActivityBeacons/<day>/widget-<pid>.jsonl and app-<pid>.jsonl, one line each"
    )
    func layout() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let device = DeviceInfo(deviceID: "d1", appVersion: "4.2.0")
        let widget = writer(container) { $0.device = device }
        let app = writer(container, role: .app)
        let beacons = (0..<3).map {
            RenderBeacon(activityID: "A", seq: $0, renderedAt: date(ms: 1_795_248_000_000 + Int64($0)))
        }
        for beacon in beacons { widget.write(beacon) }
        let report = CallbackReport(.contentUpdate(activityID: "A", seq: 2), receivedAt: Self.morning)
        app.write(report)
        widget.flush()
        app.flush()
        let day = container.path + "/LiveActivityBeacons/2026-11-21/"
        #expect(
            try lines(ofFile: day + "widget-4411.jsonl")
                == beacons.map { String(decoding: $0.jsonLine(defaults: device).dropLast(), as: UTF8.self) })
        #expect(
            try lines(ofFile: day + "app-4411.jsonl") == [String(decoding: report.jsonLine().dropLast(), as: UTF8.self)]
        )
        #expect(widget.statistics.written == 3 && widget.statistics.dropped == 0)
    }

    @Test("A full file is rotated to widget-<pid>.<n>.jsonl; no file passes the cap; every record is kept once")
    func rotation() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let w = writer(container, pid: 7) { $0.maxFileBytes = 1000 }
        for seq in 0..<60 { w.render(activityID: "rotating", seq: seq, at: Self.morning) }
        w.flush()
        let day = container.path + "/LiveActivityBeacons/2026-11-21"
        let names = try FileManager.default.contentsOfDirectory(atPath: day).sorted()
        let rotated = names.filter { BeaconFileName($0)?.rotation != nil }
        #expect(names.contains("widget-7.jsonl"))
        #expect(rotated.count == names.count - 1 && rotated.count >= 5)
        #expect(w.statistics.rotations == rotated.count)
        var seqs: [Int64] = []
        for name in names {
            let size = try FileManager.default.attributesOfItem(atPath: day + "/" + name)[.size] as? Int ?? Int.max
            #expect(size <= 1000, "\(name) has \(size) bytes")
            seqs += try decodeLines(path: day + "/" + name).compactMap { $0.render?.seq }
        }
        #expect(seqs.sorted() == (0..<60).map(Int64.init))
    }

    @Test("Over the directory cap records are dropped and counted; room made by the collector is used again")
    func directoryCap() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let w = writer(container) {
            $0.maxDirectoryBytes = 2000
            $0.directoryRemeasureInterval = 0
        }
        // Another process's file already uses part of the budget.
        let day = container.path + "/LiveActivityBeacons/2026-11-21"
        try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
        try Data(repeating: UInt8(ascii: "\n"), count: 500).write(to: URL(fileURLWithPath: day + "/app-1.1.jsonl"))
        for seq in 0..<40 { w.render(activityID: "capped", seq: seq, at: Self.morning) }
        w.flush()
        let stats = w.statistics
        let size = try FileManager.default.attributesOfItem(atPath: day + "/widget-4411.jsonl")[.size] as? Int ?? 0
        #expect(stats.written > 0 && stats.droppedDirectoryFull > 0)
        #expect(stats.written + stats.droppedDirectoryFull == 40)
        #expect(size + 500 <= 2000)
        #expect(try decodeLines(path: day + "/widget-4411.jsonl").count == stats.written)
        try FileManager.default.removeItem(atPath: day + "/app-1.1.jsonl")
        w.render(activityID: "capped", seq: 40, at: Self.morning)
        w.flush()
        #expect(w.statistics.written == stats.written + 1)
    }

    @Test("The caller never waits: with the queue stalled, writes return and the backlog beyond maxPending is dropped")
    func backlog() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let w = writer(container) { $0.maxPending = 4 }
        w.queue.suspend()
        for seq in 0..<10 { w.render(activityID: "stalled", seq: seq, at: Self.morning) }
        #expect(w.statistics.droppedBacklog == 6)
        #expect(w.statistics.written == 0)
        w.queue.resume()
        w.flush()
        #expect(w.statistics.written == 4)
        let path = container.path + "/LiveActivityBeacons/2026-11-21/widget-4411.jsonl"
        #expect(try decodeLines(path: path).compactMap { $0.render?.seq } == [0, 1, 2, 3])
    }

    @Test("Failures are counted, never thrown: a container that is a file")
    func failuresAreCounted() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notADirectory = directory.appendingPathComponent("container")
        try Data("x".utf8).write(to: notADirectory)
        let w = writer(notADirectory)
        for seq in 0..<5 { w.render(activityID: "nowhere", seq: seq) }
        w.flush()
        #expect(w.statistics.failedWrites == 5)
        #expect(w.statistics.written == 0)
    }

    @Test("At midnight (UTC) the writer moves to the next day's directory")
    func dayChange() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let clock = TestClock(date(ms: 1_795_305_599_000))  // 2026-11-21T23:59:59Z
        let w = writer(container, clock: clock)
        w.render(activityID: "late", seq: 1)
        w.flush()
        clock.advance(by: 2)
        w.render(activityID: "late", seq: 2)
        w.flush()
        let root = container.path + "/LiveActivityBeacons/"
        #expect(try decodeLines(path: root + "2026-11-21/widget-4411.jsonl").compactMap { $0.render?.seq } == [1])
        #expect(try decodeLines(path: root + "2026-11-22/widget-4411.jsonl").compactMap { $0.render?.seq } == [2])
    }

    @Test("A file left with a torn last line gets a newline first: the torn line stays one malformed line")
    func tornFileRepaired() throws {
        let container = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: container) }
        let day = container.path + "/LiveActivityBeacons/2026-11-21"
        try FileManager.default.createDirectory(atPath: day, withIntermediateDirectories: true)
        let torn = #"{"v":1,"kind":"render","activity_id":"x","se"#
        try Data(torn.utf8).write(to: URL(fileURLWithPath: day + "/widget-4411.jsonl"))
        let w = writer(container)
        w.render(activityID: "after", seq: 1, at: Self.morning)
        w.flush()
        let (_, summary) = try ingestAndReport([day])
        #expect(summary.records[.render] == 1)
        #expect(summary.malformedByCause == [.invalidJSON: 1])
    }
}

import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalSimulation
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalAnalysis

/// The per-device blocks of contract 3.2's `outliers` (``DeviceTally``): the
/// same sums as a dictionary by id, across partitions, and the same
/// `outliers` whether a store is analysed at once or in partitions.
@Suite("Device tally")
struct DeviceTallyTests {
    static func block(_ seed: Int) -> UpdateCounts {
        var counts = UpdateCounts()
        counts.sent = seed % 7 + 1
        counts.accepted = seed % 5 + 1
        counts.rendered = seed % 3
        counts.lost = seed % 4
        counts.superseded = seed % 2
        counts.lostByCause.notRendered = seed % 4
        return counts
    }

    @Test(
        "Sums equal a dictionary's by id, through the log's file: thousands of ids, prefixes of others, empty, non-ASCII"
    )
    func sums() throws {
        var ids: [ExactString] = ["", "a", "ab", "abc", "é", "e\u{301}", "🙂", String(repeating: "x", count: 10_000)]
            .map { ExactString($0) }
        ids += (0..<5_000).map { ExactString(String(format: "%016llx", UInt64($0) &* 0x9E37_79B9_7F4A_7C15)) }
        var expected: [ExactString: UpdateCounts] = [:]
        var parts: [DeviceTally] = []
        for round in 0..<3 {
            var part = DeviceTally(spilling: false)
            for (index, id) in ids.enumerated() where (index + round) % 3 != 0 {
                let counts = Self.block(index * 3 + round)
                part.add(counts, to: id)
                expected[id, default: UpdateCounts()].add(counts)
            }
            parts.append(part)
        }
        for limit in [1_000, .max] {
            var merged = DeviceTally(spillingPast: limit)
            for part in parts { merged.add(part) }
            #expect(merged.spilled == (limit == 1_000))
            #expect(merged.count == expected.count)
            let blocks = try merged.blocks(Array(0..<merged.count))
            var seen: [ExactString: UpdateCounts] = [:]
            for index in 0..<merged.count {
                seen[merged.id(index)] = blocks[index]
                #expect(merged.pair(index) == (blocks[index].deliverable, blocks[index].rendered))
            }
            #expect(seen == expected, "log in memory up to \(limit) entries")
            // "é" precomposed and decomposed are different bytes, so different devices.
            #expect(seen[ExactString("é")] != nil && seen[ExactString("e\u{301}")] != nil)
            // Some devices only, in the order asked.
            let some = [7, 3, 4_000]
            #expect(try merged.blocks(some) == some.map { blocks[$0] })
        }
    }

    @Test("A count past 32 bits goes in several entries of the log, which add up to it")
    func wideCounts() throws {
        var counts = UpdateCounts()
        counts.sent = 5_000_000_000
        counts.accepted = 4_294_967_295
        counts.rendered = 4_294_967_296
        counts.lost = 12
        counts.lostByCause.deviceSilent = 12
        var tally = DeviceTally()
        tally.add(counts, to: "big")
        tally.add(counts, to: "big")
        var twice = counts
        twice.add(counts)
        #expect(try tally.blocks([0]) == [twice])
        #expect(tally.pair(0) == (twice.deliverable, twice.rendered))
    }

    @Test("Planted devices: the same outliers, listed, in 1, 3 or 9 partitions, for the whole store and a window")
    func partitions() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = SimulationConfig(activities: 1_500, seed: 11, day: "2026-11-21")
        config.outliers = 4
        _ = try FleetSimulator(config: config).run(outputDirectory: directory.appendingPathComponent("tree").path)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [directory.appendingPathComponent("tree").path])
        let requests = try store.read { try $0.rowEstimates().requests }
        for window in [
            nil, ReportWindow(from: 1_795_248_000_000 + 3 * 3_600_000, to: 1_795_248_000_000 + 20 * 3_600_000),
        ] {
            var builder = ReportBuilder(store: store)
            builder.partitioning = PartitionPolicy(rowsPerPartition: .max)
            let whole = try builder.build(window: window)
            let outliers = try #require(whole.outliers)
            // The whole store lists the four planted devices; a 17-hour window of it at least one.
            #expect(outliers.devices.count >= (window == nil ? 4 : 1), "the planted devices are listed")
            #expect(outliers.devicesTested > 20)
            for partitions in [3, 9] {
                builder.partitioning = PartitionPolicy(rowsPerPartition: (requests + partitions - 1) / partitions)
                let split = try builder.build(window: window)
                #expect(split.outliers == whole.outliers, "\(partitions) partitions")
                #expect(split.jsonText() == whole.jsonText())
            }
        }
    }
}

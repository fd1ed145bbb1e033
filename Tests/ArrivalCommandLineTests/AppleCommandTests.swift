import ArrivalTestSupport
import Foundation
import Testing

/// `arrival apple import` and `apple show` (issue 54) as a user runs them: the three example exports,
/// the same files again, a revised day, a malformed file refused whole with its line, the rows given
/// back, and `prune --format json` counting the rows it removes.
@Suite("arrival apple")
struct AppleCommandTests {
    @Test("Import, import again, a revised day, a refused file that stores nothing; show gives the rows back")
    func importAndShow() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("a.sqlite").path
        let first = try run("arrival", ["apple", "import"] + appleExampleExports() + ["--db", db])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.components(separatedBy: "new: 2026-11-21").count == 4, "\(first.stdout)")
        let again = try run("arrival", ["apple", "import"] + appleExampleExports() + ["--db", db])
        #expect(again.status == 0 && again.stdout.contains("already stored as is: 2026-11-21"), "\(again)")

        let revised = directory.appendingPathComponent("deliverymetrics-revised.csv")
        try "Push Type,Status,Date (UTC),Count\r\nliveactivity,Received by APNs,2026-11-21,\"12,400\"\r\n"
            .write(to: revised, atomically: true, encoding: .utf8)
        let replaced = try run("arrival", ["apple", "import", revised.path, "--db", db])
        #expect(replaced.status == 0 && replaced.stdout.contains("replaced by this later export: 2026-11-21"))

        let broken = directory.appendingPathComponent("deliverymetrics-broken.csv")
        try
            "Push Type,Status,Date (UTC),Count\nliveactivity,Received by APNs,2026-11-22,5\nliveactivity,\"Delivered,2026-11-22,4\n"
            .write(to: broken, atomically: true, encoding: .utf8)
        let before = try run("arrival", ["apple", "show", "--db", db, "--format", "json"])
        let refused = try run("arrival", ["apple", "import", broken.path, "--db", db])
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderr.contains("deliverymetrics-broken.csv:3") && refused.stderr.contains("never closed"),
            "\(refused.stderr)")
        let after = try run("arrival", ["apple", "show", "--db", db, "--format", "json"])
        #expect(after.stdout == before.stdout, "a refused file stores nothing")

        let shown = try JSONSerialization.jsonObject(with: Data(after.stdout.utf8)) as? [String: Any]
        let delivery = shown?["delivery"] as? [[String: Any]] ?? []
        #expect(delivery.count == 1, "the revised export replaced the day's four rows with its one")
        #expect(
            delivery.first?["count"] as? Int == 12_400 && delivery.first?["status"] as? String == "Received by APNs")
        let broadcasts = shown?["broadcasts"] as? [[String: Any]] ?? []
        #expect(broadcasts.map { $0["channel_id"] as? String } == [nil, "dHN0LU1TQkw="])
        #expect(broadcasts.first?["unique_subscribers"] is NSNull && broadcasts.first?["delivered"] as? Int == 1_200)
        #expect(broadcasts.last?["hidden"] as? [String] == ["delivered", "total_subscriptions"])
    }

    @Test("prune --format json counts Apple's rows it removes, and says nothing of them when there were none")
    func pruneCounts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = directory.appendingPathComponent("a.sqlite").path
        try #require(try run("arrival", ["apple", "import"] + appleExampleExports() + ["--db", db]).status == 0)
        let none = try run("arrival", ["prune", "--db", db, "--before", "2026-11-21", "--format", "json"])
        #expect(none.status == 0 && !none.stdout.contains("apple_rows"), "\(none)")
        let pruned = try run("arrival", ["prune", "--db", db, "--before", "2026-11-22", "--format", "json"])
        #expect(pruned.status == 0 && pruned.stdout.contains("\"apple_rows\": 6"), "\(pruned)")
        let shown = try run("arrival", ["apple", "show", "--db", db, "--format", "json"])
        #expect(shown.stdout.contains("\"delivery\": []"), "\(shown.stdout)")
    }

    @Test("simulate --apple-metrics DIR writes exports demo --apple-metrics imports: the report has Apple's numbers")
    func simulatedDemo() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fleet = directory.appendingPathComponent("fleet").path
        let exports = directory.appendingPathComponent("exports").path
        let inside = try run(
            "arrival", ["simulate", "--out", fleet, "--activities", "50", "--apple-metrics", fleet + "/apple"])
        #expect(inside.status == 2 && inside.stderr.contains("outside --out"), "\(inside)")
        let simulated = try run(
            "arrival",
            [
                "simulate", "--out", fleet, "--activities", "200", "--seed", "3", "--channels", "--apple-metrics",
                exports,
            ])
        #expect(simulated.status == 0 && simulated.stdout.contains("Apple's exports"), "\(simulated)")
        let demo = try run("arrival", ["demo", "--data", fleet, "--apple-metrics", exports, "--format", "json"])
        #expect(demo.status == 0, "\(demo)")
        let report = try JSONSerialization.jsonObject(with: Data(demo.stdout.utf8)) as? [String: Any]
        let days = (report?["apple"] as? [String: Any])?["days"] as? [[String: Any]] ?? []
        #expect(days.map { $0["date"] as? String } == ["2026-11-21"])
        #expect(((days.first?["channels"] as? [Any])?.count ?? 0) > 1)
        let plain = try run("arrival", ["demo", "--data", fleet, "--format", "json"])
        #expect(plain.status == 0 && !plain.stdout.contains("\"apple\""))
    }
}

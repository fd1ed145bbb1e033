import ArrivalTestSupport
import Foundation
import Testing

/// Contract 3.2 from the command line (issue 53): a fleet with planted devices, the report that
/// lists them, and `arrival lost --device` and `arrival activity --device` following one to its evidence.
@Suite("Devices far below the fleet, from the command line")
struct OutlierCommandTests {
    @Test("simulate --outliers plants devices the report lists; lost --device gives each one's lost updates")
    func plantedDevices() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fleet = directory.appendingPathComponent("fleet").path
        let db = directory.appendingPathComponent("store.sqlite").path
        let simulated = try run(
            "arrival", ["simulate", "--out", fleet, "--activities", "800", "--seed", "3", "--outliers", "3"])
        #expect(simulated.status == 0 && simulated.stdout.contains("outlier_devices_planted=3"), "\(simulated)")
        #expect(try run("arrival", ["ingest", fleet, "--db", db, "--quiet"]).status == 0)
        let report = try run("arrival", ["report", "--db", db, "--format", "json"])
        let object = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let outliers = object?["outliers"] as? [String: Any]
        let devices = outliers?["devices"] as? [[String: Any]] ?? []
        #expect(devices.count >= 3, "\(outliers ?? [:])")
        for device in devices {
            let id = try #require(device["device_id"] as? String)
            let updates = try #require(device["updates"] as? [String: Any])
            // activity --device: the device's block is the report's, summed over activities each followable.
            let shown = try run("arrival", ["activity", "--db", db, "--device", id, "--format", "json"])
            let story = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
            #expect(story?["schema"] as? String == "arrival.device/1")
            #expect((story?["updates"] as? NSDictionary) == (updates as NSDictionary), "device \(id)")
            let activities = story?["activities"] as? [[String: Any]] ?? []
            let rendered = activities.compactMap { ($0["updates"] as? [String: Any])?["rendered"] as? Int }
            #expect(rendered.reduce(0, +) == updates["rendered"] as? Int && rendered.count == activities.count)
            if let first = activities.first?["activity_id"] as? String {
                #expect(try run("arrival", ["activity", first, "--db", db]).status == 0, "activity \(first)")
            }
            let lost = try run("arrival", ["lost", "--db", db, "--device", id, "--format", "json"])
            let listed = try JSONSerialization.jsonObject(with: Data(lost.stdout.utf8)) as? [String: Any]
            // The device's lost updates are the report's for it, cause by cause.
            #expect(listed?["total"] as? Int == updates["lost"] as? Int, "device \(id)")
            let causes = (listed?["updates"] as? [[String: Any]] ?? []).compactMap { $0["cause"] as? String }
            for (cause, count) in updates["lost_by_cause"] as? [String: Int] ?? [:] {
                #expect(causes.filter { $0 == cause }.count == count, "device \(id), \(cause)")
            }
        }
        // A device no record names: nothing, said on stderr.
        let none = try run("arrival", ["lost", "--db", db, "--device", "no-such-device"])
        #expect(none.status == 0 && none.stderr.contains("no lost update of device 'no-such-device'"))
        let noActivity = try run("arrival", ["activity", "--db", db, "--device", "no-such-device"])
        #expect(noActivity.status == 1 && noActivity.stderr.contains("no activity of device 'no-such-device'"))
        // A day with none of the device's updates: the same, for that day.
        let first = try #require(devices.first?["device_id"] as? String)
        let otherDay = try run("arrival", ["activity", "--db", db, "--device", first, "--day", "2020-01-01"])
        #expect(otherDay.status == 1 && otherDay.stderr.contains("2020-01-01T00:00:00Z"))
        let both = try run("arrival", ["activity", "some-activity", "--db", db, "--device", first])
        #expect(both.status == 2 && both.stderr.contains("not both"))
    }
}

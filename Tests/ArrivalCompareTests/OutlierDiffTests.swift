import ArrivalCompare
import ArrivalModel
import ArrivalRendering
import Foundation
import Testing

/// Contract 3.2's `outliers` in `diff` and `gate` (issue 53).
@Suite("Devices far below the fleet in diff and gate")
struct OutlierDiffTests {
    static func device(_ id: String, rendered: Int, lost: Int, p: Double) -> Outliers.Device {
        var counts = UpdateCounts()
        counts.sent = rendered + lost
        counts.accepted = counts.sent
        counts.rendered = rendered
        counts.lost = lost
        counts.lostByCause.notRendered = lost
        return Outliers.Device(deviceID: ExactString(id), updates: counts, pValue: p)
    }

    static func report(_ devices: [Outliers.Device]?) -> Report {
        var report = Report(window: nil)
        report.schema = 2
        report.updates.sent = 1_000
        report.updates.accepted = 1_000
        report.updates.rendered = 900
        report.updates.lost = 100
        report.updates.lostByCause.notRendered = 100
        report.outliers = devices.map { Outliers(fleetArrivalRate: 0.9, devicesTested: 40, devices: $0) }
        return report
    }

    static func diff(_ a: Report, _ b: Report) -> ReportDiff {
        ReportDiff(
            a: a, samplesA: nil, b: b, samplesB: nil,
            sideA: ReportDiff.Side(path: "a.json", source: .reportJSON, window: nil),
            sideB: ReportDiff.Side(path: "b.json", source: .reportJSON, window: nil))
    }

    @Test("diff names the devices one side lists and the other does not, in each format")
    func diffDevices() throws {
        let a = Self.report([
            Self.device("x", rendered: 2, lost: 38, p: 1e-20), Self.device("y", rendered: 10, lost: 30, p: 1e-9),
        ])
        let b = Self.report([
            Self.device("y", rendered: 11, lost: 29, p: 2e-9), Self.device("z", rendered: 5, lost: 35, p: 3e-15),
        ])
        let diff = Self.diff(a, b)
        #expect(diff.devices?.map(\.deviceID) == ["x", "z"])
        #expect(diff.devices?.map(\.status) == [.vanished, .appeared])
        #expect(
            diff.text(color: false).range(of: #"\n +z +appeared +40 +12\.5% +3\.0e-15\n"#, options: .regularExpression)
                != nil)
        #expect(diff.markdownText().contains("| `z` | appeared | 40 | 12.5% | 3.0e-15 |"))
        let json = try JSONSerialization.jsonObject(with: Data(diff.jsonText().utf8)) as? [String: Any]
        let devices = json?["devices"] as? [[String: Any]]
        #expect(devices?.map { $0["device_id"] as? String } == ["x", "z"])
        // The same lists on both sides: said, nothing listed.
        #expect(Self.diff(a, a).devices?.isEmpty == true)
        #expect(Self.diff(a, a).text(color: false).contains("none: both sides list the same devices"))
    }

    @Test("gate counts the devices; a report without outliers lacks the figure; JSON reads back the same")
    func gateAndAbsence() throws {
        let b = Self.report([Self.device("z", rendered: 5, lost: 35, p: 3e-15)])
        #expect(Metric.named("outliers.devices") == Metric.outliersDevices)
        #expect(Metric.outliersDevices.value(in: b) == 1)
        #expect(Metric.outliersDevicesTested.value(in: b) == 40)
        let earlier = Self.report(nil)
        #expect(!Metric.outliersDevices.isPresent(in: earlier))
        #expect(Self.diff(earlier, b).devices == nil)
        #expect(!Self.diff(earlier, b).text(color: false).contains("Devices far below the fleet"))
        let read = try Report(jsonData: Data(b.jsonText().utf8))
        #expect(read.outliers == b.outliers)
        let readEarlier = try Report(jsonData: Data(earlier.jsonText().utf8))
        #expect(readEarlier.outliers == nil)
    }
}

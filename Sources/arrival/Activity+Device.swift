import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Foundation

/// `arrival activity --device ID`: one device's activities, each followable with `arrival activity`.
extension Activity {
    func runDevice(_ device: String, database: any StoreReader) throws {
        let window = try self.window.resolved()
        let found = try ProducedReport.deviceActivities(of: database, device: device, window: window)
        guard !found.activities.isEmpty else {
            throw Diagnostic(
                .input, "no activity of device '\(device)' in \(WindowOptions.scope(window))",
                hint: "a device is named by the device_id of its renders and callbacks, compared exactly (case and "
                    + "Unicode form), as the report's \"Devices far below the fleet\" names it.")
        }
        try write(format == .json ? Self.json(found, window: window) : Self.text(found, window: window), to: out)
    }

    /// "rendered / deliverable (arrival)" of a block.
    static func arrival(_ counts: UpdateCounts) -> String {
        "\(counts.rendered) / \(counts.deliverable)"
            + (counts.arrivalRate.map { " (" + ReportFormat.percent($0) + ")" } ?? "")
    }

    static func text(_ found: DeviceActivities, window: ReportWindow?) -> String {
        let u = found.updates
        var lines = [
            "Device \(found.deviceID) · \(WindowOptions.scope(window))",
            "  \(ReportFormat.counted(found.activities.count, "activity", plural: "activities")) · "
                + "\(ReportFormat.counted(u.sent, "update")) sent, \(u.accepted) accepted · "
                + "rendered / deliverable \(arrival(u))",
            "  lost \(u.lost): " + LossCause.allCases.map { "\($0.name) \(u.lostByCause[$0])" }.joined(separator: ", "),
            "",
        ]
        var table = TextTable(
            ["activity", "app", "started", "ended", "sent", "rendered / deliverable", "lost", "stale", "os"],
            alignments: [.left, .left, .left, .left, .right, .right, .right, .right, .left])
        for a in found.activities {
            table.add([
                a.activityID, a.app ?? "", time(a.startedAt), time(a.endedAt), String(a.updates.sent),
                arrival(a.updates), String(a.updates.lost), String(a.updates.staleTimestamp), a.osVersion ?? "unknown",
            ])
        }
        lines.append(table.render(color: false))
        lines.append("Follow one: arrival activity ACTIVITY_ID (its timeline and each update's evidence).")
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ found: DeviceActivities, window: ReportWindow?) -> String { found.jsonText(window: window) }
}

package import ArrivalModel
import Foundation

/// Contract 3.2's `outliers` as the reports show them: "Devices far below
/// the fleet", what the test found and, per listed device, what to look at first.
extension Report {
    /// The devices a page lists, and the top a markdown report shows (the JSON holds them all).
    package static let outliersShown = 20
    package static let outliersInMarkdown = 10

    /// What the section says above its table; nil for a report without `outliers` (an earlier arrival's).
    package var outliersSummary: String? {
        guard let outliers else { return nil }
        guard let rate = outliers.fleetArrivalRate else {
            return "No update of this window was deliverable, so no device could be held to the fleet's rate."
        }
        let tested =
            "Each device with at least \(Outliers.minimumDeliverable) deliverable updates "
            + "(\(ReportFormat.count(outliers.devicesTested)) devices) was tested against the fleet's arrival "
            + "rate of \(ReportFormat.percent(rate)): a device is listed when so few of its updates arriving "
            + "would happen by chance less than once in a thousand reports (a one-sided binomial test, "
            + "Bonferroni over the devices tested)."
        guard !outliers.devices.isEmpty else {
            return tested + " No device is far below the fleet."
        }
        let listed = ReportFormat.counted(outliers.devices.count, "device")
        return tested + " \(listed) \(outliers.devices.count == 1 ? "is" : "are") far below the fleet, "
            + "lowest arrival first: evidence of where to look, not a cause."
    }

    /// The listed devices as table rows: device, deliverable, rendered, arrival, p-value, loss cause, what to check.
    package func outlierRows(limit: Int = Report.outliersShown) -> [[String]] {
        (outliers?.devices ?? []).prefix(limit).map { device in
            let u = device.updates
            let (missed, check) = Self.firstCheck(u)
            return [
                device.deviceID.text, ReportFormat.count(u.deliverable), ReportFormat.count(u.rendered),
                ReportFormat.percent(u.arrivalRate), Self.pValueText(device.pValue), missed, check,
            ]
        }
    }

    package static let outlierHeader = [
        "device", "deliverable", "rendered", "arrival", "p-value", "most missed as", "look first at",
    ]

    /// How most of `u`'s deliverable updates that were not drawn ended (superseded, or lost by a
    /// cause), and what to look at first.
    static func firstCheck(_ u: UpdateCounts) -> (missed: String, check: String) {
        let cause = dominantCause(u)
        if u.superseded > (cause.map { u.lostByCause[$0] } ?? 0) {
            return ("superseded", "the widget build on it: a later update was drawn, these never were")
        }
        guard let cause else { return ("none", "nothing: all its deliverable updates were drawn") }
        return (cause.name, firstCheck(cause))
    }

    /// The loss cause with the most of `u`'s lost updates (the contract's order breaks ties); nil when none was lost.
    static func dominantCause(_ u: UpdateCounts) -> LossCause? {
        var best: LossCause?
        for cause in LossCause.allCases where u.lostByCause[cause] > 0 {
            if best.map({ u.lostByCause[cause] > u.lostByCause[$0] }) ?? true { best = cause }
        }
        return best
    }

    /// The first thing to check for a device whose lost updates were mostly `cause`.
    static func firstCheck(_ cause: LossCause) -> String {
        switch cause {
        case .notRendered: "the widget build on it: its updates reached it and were not drawn"
        case .deviceSilent: "the device or its uploads: it told nothing after these updates"
        case .oldToken: "the push token the sender used: the device had moved to a newer one"
        case .closedLater: "when its activities were closed: the updates came after the end"
        case .unexplained: "its activities' timelines (arrival activity)"
        }
    }

    /// How a listed device is followed to its evidence, under its table.
    package static let followDevice =
        "Follow a device to its evidence: arrival activity --device ID lists its activities, "
        + "arrival lost --device ID its lost updates."

    /// A p-value as people read it: four decimals down to 0.0001, then a power of ten.
    package static func pValueText(_ p: Double) -> String {
        if p >= 0.0001 { return String(format: "%.4f", p) }
        if p < Double.leastNormalMagnitude { return "< 1e-307" }
        let exponent = Int(floor(log10(p)))
        let mantissa = p / pow(10, Double(exponent))
        return String(format: "%.1f", mantissa) + "e\(exponent)"
    }

    /// The markdown section "Devices far below the fleet" (none for a report without `outliers`).
    func outlierLines() -> [String] {
        guard let summary = outliersSummary else { return [] }
        var lines = ["## Devices far below the fleet", "", summary, ""]
        let rows = outlierRows(limit: Self.outliersInMarkdown)
        guard !rows.isEmpty else { return lines }
        lines.append("| " + Self.outlierHeader.joined(separator: " | ") + " |")
        lines.append("|---|---:|---:|---:|---:|---|---|")
        for row in rows { lines.append("| " + row.map(Markdown.escaped).joined(separator: " | ") + " |") }
        lines.append("")
        if let count = outliers?.devices.count, count > rows.count {
            lines.append("\(count - rows.count) more in the JSON report (`outliers.devices`). " + Self.followDevice)
        } else {
            lines.append(Self.followDevice)
        }
        lines.append("")
        return lines
    }
}

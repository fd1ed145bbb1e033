package import ArrivalModel

/// The evidence of contract 3.1 for Apple's priority-10 budget: the
/// arrival rate by an activity's recent priority-10 load
/// (`breakdowns.priority_10_last_hour`) and by the user's "More Frequent
/// Updates" switch (`breakdowns.frequent_pushes`). Apple publishes no
/// per-push throttling signal, so the reports show this as evidence and
/// never name it as a cause.
extension Report {
    /// The entries of `breakdowns.priority_10_last_hour`, in the natural
    /// order of their buckets (not sorted as strings); keys the contract
    /// does not name (a report read back from elsewhere) come last, sorted.
    package var priority10LoadRows: [(key: ExactString, counts: UpdateCounts)] {
        let rows = breakdowns["priority_10_last_hour"] ?? [:]
        let named = Contract.priority10Buckets.compactMap { bucket in
            rows[ExactString(bucket.key)].map { (key: ExactString(bucket.key), counts: $0) }
        }
        let known = Set(Contract.priority10Buckets.map { ExactString($0.key) })
        return named + rows.filter { !known.contains($0.key) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The entries of `breakdowns.frequent_pushes`: `enabled`, `disabled`,
    /// any other value as given (sorted), then `unknown`.
    package var frequentPushesRows: [(key: ExactString, counts: UpdateCounts)] {
        let rows = breakdowns["frequent_pushes"] ?? [:]
        let rank = { (key: ExactString) -> Int in
            switch key.text {
            case "enabled": 0
            case "disabled": 1
            case "unknown": 3
            default: 2
            }
        }
        return rows.sorted { rank($0.key) != rank($1.key) ? rank($0.key) < rank($1.key) : $0.key < $1.key }
            .map { ($0.key, $0.value) }
    }

    /// Whether there is any evidence to show: a priority-10 update sent to a
    /// token, or an activity whose device said what its switch was.
    package var showsThrottling: Bool {
        !priority10LoadRows.isEmpty || frequentPushesRows.contains { $0.key.text != "unknown" }
    }

    /// What the section shows and how to read it.
    package static let throttlingExplanation =
        "Apple gives each app a budget of priority-10 Live Activity updates per hour, a larger one with "
        + "NSSupportsLiveActivitiesFrequentUpdates, and the user can take the larger one away in Settings "
        + "(\"More Frequent Updates\"). Apple publishes neither the numbers nor a sign on the push that one was "
        + "held back: APNs still answers 200. This is evidence, not a verdict: the arrival rate of accepted "
        + "priority-10 updates sent to a token, by how many other such updates the same activity had accepted in "
        + "the hour before. A rate that falls as that count grows is what a spent budget looks like; a flat one "
        + "says the budget is not what stops these updates."

    /// What the switch split says, in words that describe and do not explain.
    package var frequentPushesSummary: String? {
        let rows = Dictionary(uniqueKeysWithValues: frequentPushesRows.map { ($0.key.text, $0.counts) })
        if rows.count == 1, rows["unknown"] != nil {
            return "No render or callback of these activities says what the switch was: the instrumentation kit "
                + "writes frequent_pushes on every beacon and callback (Documentation/Instrumenting.md)."
        }
        guard let on = rows["enabled"]?.arrivalRate, let off = rows["disabled"]?.arrivalRate else { return nil }
        return "Updates of activities whose user had \"More Frequent Updates\" on arrived at "
            + "\(ReportFormat.percent(on)); with it off, at \(ReportFormat.percent(off)) "
            + "(\(ReportFormat.count(rows["disabled"]?.deliverable ?? 0)) deliverable updates)."
    }

    /// The markdown section "Is Apple throttling these updates?" (none without evidence).
    func throttlingLines() -> [String] {
        guard showsThrottling else { return [] }
        var lines = ["## Is Apple throttling these updates?", "", Self.throttlingExplanation, ""]
        let load = priority10LoadRows
        if !load.isEmpty {
            lines += throttlingTable(
                load, title: "other priority-10 updates in the hour before", bars: true)
        }
        let switches = frequentPushesRows
        if !switches.isEmpty {
            lines.append(
                "By the user's \"More Frequent Updates\" switch (from the activity's earliest render or "
                    + "callback that says):")
            lines.append("")
            lines += throttlingTable(switches, title: "frequent_pushes", bars: false)
            if let summary = frequentPushesSummary {
                lines.append(summary)
                lines.append("")
            }
        }
        return lines
    }

    private func throttlingTable(
        _ rows: [(key: ExactString, counts: UpdateCounts)], title: String, bars: Bool
    ) -> [String] {
        var lines = [
            "| \(title) | updates | rendered | superseded | lost | arrival |" + (bars ? " |" : ""),
            "|---|---:|---:|---:|---:|---:|" + (bars ? "---|" : ""),
        ]
        for (key, u) in rows {
            let bar = bars ? " " + String(repeating: "█", count: Int(((u.arrivalRate ?? 0) * 20).rounded())) + " |" : ""
            lines.append(
                "| \(Markdown.escaped(key.text)) | \(u.accepted) | \(u.rendered) | \(u.superseded) | \(u.lost) | "
                    + "\(ReportFormat.percent(u.arrivalRate)) |" + bar)
        }
        lines.append("")
        return lines
    }
}

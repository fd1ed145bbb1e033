package import ArrivalModel
import Foundation

extension Report {
    /// A readable summary for a person: headline rates first, then where the
    /// updates went, why APNs refused requests, and what the data lacked.
    package func markdownText() -> String {
        var lines: [String] = []
        let title =
            window.map { "\(RFC3339.format(milliseconds: $0.from)) – \(RFC3339.format(milliseconds: $0.to))" }
            ?? "all data"
        lines.append("# Live Activity delivery: \(title)")
        lines.append("")
        lines.append("| metric | value | from |")
        lines.append("|---|---:|---|")
        lines.append(
            "| arrival rate | \(percent(updates.arrivalRate)) | \(updates.rendered) rendered of \(updates.deliverable) deliverable updates |"
        )
        lines.append(
            "| effective arrival rate | \(percent(updates.effectiveArrivalRate)) | rendered or superseded by a newer rendered update |"
        )
        lines.append(
            "| APNs acceptance | \(percent(requests.acceptanceRate)) | \(requests.accepted) of \(requests.total) requests |"
        )
        lines.append(
            "| stale-timestamp drops | \(updates.staleTimestamp) | accepted updates the device ignored (`aps.timestamp` not newer) |"
        )
        lines.append(
            "| dismissed by the user | \(updates.dismissed) | accepted updates sent after the activity was dismissed, not counted as lost |"
        )
        lines.append(
            "| requests to dead tokens | \(requests.toDeadTokens) | sent after APNs or the provider said the token was gone (`arrival tokens` lists them) |"
        )
        lines.append(
            "| oversize failures | \(requests.oversizeFailures) | 413 / PayloadTooLarge; \(requests.oversizeRisk) accepted payloads within 512 bytes of 4 KB |"
        )
        lines.append(
            "| content-update callback loss | \(percent(callbacks.callbackLossRate)) | \(callbacks.contentUpdateReceived) of \(callbacks.contentUpdateExpected) rendered updates reported |"
        )
        lines.append(
            "| token callback loss | \(percent(callbacks.tokenCallbackLossRate)) | \(callbacks.tokenReceived) of \(callbacks.tokenExpected) activities reported a push token |"
        )
        lines.append(
            "| render latency p50 / p90 / p99 | \(ReportFormat.milliseconds(latency.p50)) / \(ReportFormat.milliseconds(latency.p90)) / \(ReportFormat.milliseconds(latency.p99)) | \(latency.count) rendered updates |"
        )
        lines.append("")
        lines.append("## Where the accepted updates went")
        lines.append("")
        lines.append("| outcome | updates | share | meaning |")
        lines.append("|---|---:|---:|---|")
        for outcome in Outcome.displayOrder {
            let count = updates[outcome]
            lines.append(
                "| \(outcome.name) | \(count) | \(percent(ratio(count, updates.accepted))) | \(outcome.meaning) |")
        }
        lines.append("")
        lines.append("\(updates.sent) logical updates were sent, \(updates.accepted) accepted by \(acceptor).")
        lines.append("")
        if updates.lost > 0 {
            lines.append("## Why updates were lost")
            lines.append("")
            lines.append("What the device's evidence shows for each of the \(updates.lost) lost updates (not proof).")
            lines.append("")
            lines.append("| cause | updates | share of lost | what it usually means |")
            lines.append("|---|---:|---:|---|")
            for cause in LossCause.allCases {
                let count = updates.lostByCause[cause]
                lines.append(
                    "| \(cause.name) | \(count) | \(percent(ratio(count, updates.lost))) | \(cause.meaning) |")
            }
            lines.append("")
        }
        if starts.sent > 0 {
            lines.append("## Push-to-start")
            lines.append("")
            lines.append("| step | starts | rate |")
            lines.append("|---|---:|---:|")
            lines.append("| sent | \(starts.sent) | |")
            lines.append("| accepted | \(starts.accepted) | |")
            lines.append(
                "| appeared on the device | \(starts.appeared) | \(percent(starts.appearanceRate)) of accepted |")
            lines.append(
                "| gave an update token | \(starts.updateTokenReceived) | \(percent(starts.updateTokenRate)) of appeared |"
            )
            let latency = starts.updateTokenLatency
            lines.append("")
            lines.append(
                "Update token after the accepted start: p50 \(ReportFormat.milliseconds(latency.p50)), p90 \(ReportFormat.milliseconds(latency.p90)), p99 \(ReportFormat.milliseconds(latency.p99)) (\(latency.count) starts)."
            )
            lines.append("")
        }
        if !requests.byReason.isEmpty {
            lines.append("## Rejected requests by APNs reason")
            lines.append("")
            lines.append("| reason | requests |")
            lines.append("|---|---:|")
            for (reason, count) in requests.byReason.sorted(by: {
                $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key
            }) {
                lines.append("| \(Markdown.escaped(reason.text)) | \(count) |")
            }
            lines.append("")
        }
        lines += outlierLines() + appleLines()
        for dimension in Report.breakdownDimensions where showsBreakdown(dimension) {
            guard let rows = breakdowns[dimension] else { continue }
            lines.append("## By \(dimension.replacingOccurrences(of: "_", with: " "))")
            lines.append("")
            let outcomes = Outcome.displayOrder
            lines.append(
                "| \(dimension) | sent | accepted | " + outcomes.map(\.columnTitle).joined(separator: " | ")
                    + " | arrival |")
            lines.append("|---|---:|---:|" + String(repeating: "---:|", count: outcomes.count) + "---:|")
            for key in rows.keys.sorted() {
                guard let u = rows[key] else { continue }
                let counts = outcomes.map { String(u[$0]) }.joined(separator: " | ")
                lines.append(
                    "| \(Markdown.escaped(key.text)) | \(u.sent) | \(u.accepted) | \(counts) | \(percent(u.arrivalRate)) |"
                )
            }
            if dimension == "provider", let note = providerAcceptanceNote {
                lines.append("")
                lines.append(note)
            }
            lines.append("")
        }
        lines += broadcastChannelLines() + throttlingLines()
        lines.append("## Data quality")
        lines.append("")
        lines.append(
            "- malformed lines: \(dataQuality.malformedLines)"
                + (dataQuality.malformedByCause.isEmpty
                    ? ""
                    : " ("
                        + dataQuality.malformedByCause.keys.sorted().map {
                            "\($0): \(dataQuality.malformedByCause[$0] ?? 0)"
                        }.joined(separator: ", ") + ")"))
        lines.append(
            "- duplicate records ignored: \(dataQuality.duplicateRecords); files skipped as re-uploads: \(dataQuality.filesSkippedAsDuplicate)"
        )
        lines.append(
            "- requests without `seq`: \(dataQuality.apnsWithoutSeq); unattributed requests (no activity, token unknown): \(dataQuality.unattributed)"
        )
        lines.append("- rendered before sent (device clock behind): \(dataQuality.clockSkewNegative)")
        lines.append("")
        lines.append("_Made by arrival \(ArrivalVersion.current)._")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension Report {
    /// The "Broadcast channels" section: per channel its broadcasts, the
    /// subscribers they stood for, what arrived and why the rest did not;
    /// none when the window has no broadcast and no broadcast update.
    func broadcastChannelLines() -> [String] {
        let rows = breakdowns["channel"] ?? [:]
        let names = Set(rows.keys).union(channels.keys).sorted()
        guard !names.isEmpty else { return [] }
        var lines = ["## Broadcast channels", ""]
        lines.append(Report.broadcastExplanation)
        lines.append("")
        lines.append(
            "| channel | broadcasts (accepted) | subscribers reached | updates | rendered | arrival | latency p50 | p90 | "
                + "lost | " + LossCause.allCases.map(\.name).joined(separator: " | ") + " |")
        lines.append(
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
                + String(repeating: "---:|", count: LossCause.allCases.count))
        for name in names {
            let u = rows[name] ?? UpdateCounts()
            let c = channels[name] ?? Report.Channel()
            let causes = LossCause.allCases.map { String(u.lostByCause[$0]) }.joined(separator: " | ")
            lines.append(
                "| \(Markdown.escaped(name.text)) | \(c.broadcasts) (\(c.accepted)) | \(c.subscribers) | \(u.sent) | "
                    + "\(u.rendered) | \(percent(u.arrivalRate)) | \(ReportFormat.milliseconds(c.latency.p50)) | "
                    + "\(ReportFormat.milliseconds(c.latency.p90)) | \(u.lost) | \(causes) |")
        }
        lines.append("")
        if dataQuality.broadcastsWithoutSubscribers > 0 {
            lines.append(
                "\(dataQuality.broadcastsWithoutSubscribers) of \(requests.broadcasts) broadcasts stood for no activity: "
                    + "no activity that follows their channel was open when they were sent.")
            lines.append("")
        }
        return lines
    }

    /// What a broadcast is and why only the devices can say who got it, in plain words.
    package static let broadcastExplanation =
        "A broadcast (iOS 18) is one push to a channel: APNs delivers it to every Live Activity subscribed to the "
        + "channel and answers the sender once, without saying who received it. arrival counts the activities "
        + "that follow the channel (by their renders and callbacks) and were open when it was sent: each is an "
        + "update that should have appeared, and its widget's render beacon says whether it did."
}

/// 91.8%, one decimal; ``ReportFormat/none`` without a denominator.
private func percent(_ value: Double?) -> String {
    value.map { ReportFormat.percent($0, digits: 1) } ?? ReportFormat.none
}

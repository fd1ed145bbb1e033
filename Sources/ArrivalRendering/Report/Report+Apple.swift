package import ArrivalModel

// Apple's numbers (issue 54): the rows of `arrival apple show` and the report's `apple` object, written
// the same way in both.

/// The UTC day of a midnight in milliseconds, as `YYYY-MM-DD`.
package func appleDate(_ day: Int64) -> String { String(RFC3339.format(milliseconds: day).prefix(10)) }

extension AppleDeliveryRow: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["date": appleDate(day), "push_type": pushType, "status": status, "count": count]
    }
}

extension AppleBroadcastRow: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "date": appleDate(day), "channel_id": channelID, "published": published, "delivered": delivered,
            "total_subscriptions": totalSubscriptions, "unique_subscribers": uniqueSubscribers, "hidden": hidden,
        ]
    }
}

extension Report.Apple: JSONWritableObject {
    package var jsonFields: JSONFields { ["days": days] }
}

extension Report.Apple.Day: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "date": appleDate(day), "delivery": delivery,
            "arrival": ["requests": requests, "accepted": accepted, "updates": updates] as JSONFields,
            "channels": channels,
        ]
    }
}

extension Report.Apple.Channel: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["channel_id": channelID, "apple": apple, "arrival_broadcasts": broadcasts, "arrival_rendered": rendered]
    }
}

// MARK: - The section of the markdown and HTML reports

extension Report {
    /// What the section says above its tables; nil without Apple's numbers (the section is left out).
    package var appleSummary: String? {
        guard let apple, !apple.days.isEmpty else { return nil }
        return "Apple's Push Notifications Console counts (imported with arrival apple import) beside arrival's, "
            + "for \(ReportFormat.counted(apple.days.count, "UTC day")) of this window. Apple's counts are "
            + "aggregated and rounded by Apple and count pushes (requests) by what APNs did with them; arrival's "
            + "count updates by what the device drew. They are shown side by side, never combined into one rate. "
            + "Where Apple says delivered and arrival's updates were not drawn, the loss is on the device "
            + "(its budget, stale timestamps, decode failures): arrival's loss causes split it further."
    }

    package static let appleDeliveryHeader = [
        "day", "Apple: received", "Apple: delivered", "Apple: stored", "Apple: discarded", "Apple: other",
        "arrival: requests", "arrival: accepted", "arrival: rendered", "arrival: lost", "not drawn, by arrival",
    ]

    /// Per day, Apple's Live Activity statuses in four families (each status with its count, as written,
    /// never added up) beside arrival's figures of the day.
    package var appleDeliveryRows: [[String]] {
        (apple?.days ?? []).map { day in
            var families = ["received": [String](), "delivered": [], "stored": [], "discarded": [], "other": []]
            for row in day.delivery {
                let first = row.status.split(separator: " ").first.map { $0.lowercased() } ?? ""
                let family = families[first] != nil && first != "other" ? first : "other"
                families[family, default: []].append(
                    "\(row.status): \(row.count.map(ReportFormat.count) ?? "hidden")")
            }
            let u = day.updates
            let causes = LossCause.allCases.filter { u.lostByCause[$0] > 0 }
                .map { "\($0.name) \(ReportFormat.count(u.lostByCause[$0]))" }
            let notDrawn =
                causes + (u.staleTimestamp > 0 ? ["stale_timestamp \(ReportFormat.count(u.staleTimestamp))"] : [])
            return [appleDate(day.day)]
                + ["received", "delivered", "stored", "discarded", "other"].map {
                    families[$0]!.isEmpty ? "—" : families[$0]!.joined(separator: "; ")
                }
                + [
                    ReportFormat.count(day.requests), ReportFormat.count(day.accepted),
                    ReportFormat.count(u.rendered), ReportFormat.count(u.lost),
                    notDrawn.isEmpty ? "none" : notDrawn.joined(separator: ", "),
                ]
        }
    }

    package static let appleChannelHeader = [
        "day", "channel", "Apple: published", "Apple: delivered", "arrival: broadcasts",
        "arrival: subscriber-updates rendered",
    ]

    /// Per day and channel (the application's first), Apple's broadcasts beside arrival's.
    package var appleChannelRows: [[String]] {
        (apple?.days ?? []).flatMap { day in
            day.channels.map { channel in
                func apple(_ value: Int?, _ field: String) -> String {
                    guard let row = channel.apple else { return "not exported" }
                    return value.map(ReportFormat.count) ?? (row.hidden.contains(field) ? "hidden" : "—")
                }
                return [
                    appleDate(day.day), channel.channelID ?? "(the application: every channel)",
                    apple(channel.apple?.published, "published"), apple(channel.apple?.delivered, "delivered"),
                    ReportFormat.count(channel.broadcasts), ReportFormat.count(channel.rendered),
                ]
            }
        }
    }

    /// Under the tables.
    package static let appleNote =
        "\"hidden\" is Apple's -1 (too few subscribers to show); Apple keeps 30 days. "
        + "See Documentation/Apple-metrics.md for what each status means and what is verified."

    /// The markdown section "Apple's numbers beside arrival's" (none without them).
    func appleLines() -> [String] {
        guard let summary = appleSummary else { return [] }
        var lines = ["## Apple's numbers beside arrival's", "", summary, ""]
        // Counts right-aligned; days, statuses and channels left.
        func table(_ header: [String], _ rows: [[String]], counts: Range<Int>) {
            lines.append("| " + header.joined(separator: " | ") + " |")
            lines.append("|" + header.indices.map { counts.contains($0) ? "---:" : "---" }.joined(separator: "|") + "|")
            for row in rows { lines.append("| " + row.map(Markdown.escaped).joined(separator: " | ") + " |") }
            lines.append("")
        }
        table(Self.appleDeliveryHeader, appleDeliveryRows, counts: 6..<10)
        let channels = appleChannelRows
        if !channels.isEmpty { table(Self.appleChannelHeader, channels, counts: 2..<6) }
        lines += [Self.appleNote, ""]
        return lines
    }
}

import ArrivalModel
package import ArrivalRendering
import Foundation

extension ReportDiff {
    // MARK: - Text

    /// Aligned columns for a terminal; `color` adds ANSI colours (worse in
    /// red, better in green, noise dimmed).
    package func text(color: Bool) -> String {
        var out: [String] = []
        let bold: (String) -> String = { color ? ANSIColor.bold.wrap($0) : $0 }
        out.append(bold("arrival diff") + "  A = \(describe(a))")
        out.append(String(repeating: " ", count: 14) + "B = \(describe(b))")
        out.append(
            "Rates tested at \(ReportFormat.percent(confidence, digits: 0)) confidence (\(methodNote)); a change within noise is not called better or worse."
        )
        for note in notes { out.append((color ? ANSIColor.bold.wrap("Note:") : "Note:") + " " + note) }
        out.append("")
        var table = TextTable(
            ["metric", "A", "B", "change", "relative", "test", "verdict"],
            alignments: [.left, .right, .right, .right, .right, .left, .left])
        for change in metrics {
            let tint = Self.color(of: change.verdict)
            table.add([
                .init(text: change.metric.id, color: nil),
                .init(text: change.presentA ? Self.value(change.a, change.metric) : "absent", color: nil),
                .init(text: change.presentB ? Self.value(change.b, change.metric) : "absent", color: nil),
                .init(text: Self.change(change), color: tint),
                .init(text: change.relative.map { ReportFormat.signedPercent($0) } ?? ReportFormat.none, color: nil),
                .init(text: Self.test(change.significance), color: nil),
                .init(text: change.verdict.rawValue, color: tint),
            ])
        }
        out.append(table.render(color: color))
        out.append("")
        out.append(bold("APNs reasons") + " (rejected requests)")
        if reasons.isEmpty {
            out.append("  none on either side")
        } else {
            var reasonTable = TextTable(
                ["reason", "A", "B", "change", "status"], alignments: [.left, .right, .right, .right, .left])
            for reason in reasons {
                let tint: ANSIColor? = reason.status == .appeared ? .red : reason.status == .vanished ? .green : nil
                reasonTable.add([
                    .init(text: reason.key, color: nil), .init(text: String(reason.a), color: nil),
                    .init(text: String(reason.b), color: nil),
                    .init(text: ReportFormat.signed(reason.b - reason.a), color: nil),
                    .init(text: reason.status.rawValue, color: tint),
                ])
            }
            out.append(reasonTable.render(color: color))
        }
        out.append("")
        out.append(bold("Update outcomes"))
        let outcomeTable = TextTable(
            ["outcome", "A", "B", "change"], alignments: [.left, .right, .right, .right],
            rows: outcomes.map { [$0.key] + Self.counts($0) })
        out.append(outcomeTable.render(color: color))
        out.append("")
        out.append(
            bold("Breakdown rows that moved most")
                + " (arrival rate; rows with at least \(Self.breakdownMinimum) deliverable updates on both sides)")
        if breakdowns.isEmpty {
            out.append("  none moved")
        } else {
            let rowTable = TextTable(
                ["dimension", "key", "A", "B", "change", "test"],
                alignments: [.left, .left, .right, .right, .right, .left],
                rows: breakdowns.map { row in
                    [
                        row.dimension, row.key, Self.rateWithCount(row.a), Self.rateWithCount(row.b),
                        row.change.map { ReportFormat.signedPoints($0) } ?? ReportFormat.none,
                        Self.test(row.significance),
                    ]
                })
            out.append(rowTable.render(color: color))
        }
        if let devices {
            out.append("")
            out.append(bold("Devices far below the fleet") + " listed on one side only")
            if devices.isEmpty {
                out.append("  none: both sides list the same devices")
            } else {
                var deviceTable = TextTable(
                    ["device", "status", "deliverable", "arrival", "p-value"],
                    alignments: [.left, .left, .right, .right, .right])
                for device in devices {
                    deviceTable.add([
                        .init(text: device.deviceID, color: nil),
                        .init(text: device.status.rawValue, color: device.status == .appeared ? .red : .green),
                        .init(text: String(device.updates.deliverable), color: nil),
                        .init(text: ReportFormat.percent(device.updates.arrivalRate), color: nil),
                        .init(text: Report.pValueText(device.pValue), color: nil),
                    ])
                }
                out.append(deviceTable.render(color: color))
            }
        }
        if let records {
            out.append("")
            out.append(records.text(color: color))
        }
        return out.joined(separator: "\n") + "\n"
    }

    private var methodNote: String {
        let methods = Set(metrics.compactMap { $0.significance?.method })
        if methods == [.binomial] {
            return "each update an independent trial: a side is a report JSON without per-activity counts"
        }
        if methods.contains(.binomial) { return "activities as the sampling unit where both sides have records" }
        return "activities as the sampling unit"
    }

    private func describe(_ side: Side) -> String {
        let window =
            side.window.map { "\(RFC3339.format(milliseconds: $0.from)) – \(RFC3339.format(milliseconds: $0.to))" }
            ?? "all data"
        return "\(side.path) (\(side.source.rawValue), \(window))"
    }

    // MARK: - Markdown

    /// A summary that pastes into a pull request: the verdicts first, then
    /// every metric in a table.
    package func markdownText() -> String {
        var out: [String] = []
        out.append("### arrival diff")
        out.append("")
        out.append(
            "A: `\(a.path)` (\(a.source.rawValue)) · B: `\(b.path)` (\(b.source.rawValue)) · rates tested at \(ReportFormat.percent(confidence, digits: 0)) confidence, \(methodNote)."
        )
        out.append("")
        let worse = metrics.filter { $0.verdict == .worse }.map { "`\($0.metric.id)`" }
        let better = metrics.filter { $0.verdict == .better }.map { "`\($0.metric.id)`" }
        out.append(
            "**Worse:** \(worse.isEmpty ? "nothing" : worse.joined(separator: ", ")) · **Better:** \(better.isEmpty ? "nothing" : better.joined(separator: ", "))"
        )
        out.append("")
        for note in notes {
            out.append("> **Note:** \(note)")
            out.append("")
        }
        out += Markdown.table(
            ["metric", "A", "B", "change", "relative", "test", "verdict"],
            alignments: [.left, .right, .right, .right, .right, .left, .left],
            rows: metrics.map { change in
                [
                    "`\(change.metric.id)`", change.presentA ? Self.value(change.a, change.metric) : "absent",
                    change.presentB ? Self.value(change.b, change.metric) : "absent",
                    Self.change(change), change.relative.map { ReportFormat.signedPercent($0) } ?? ReportFormat.none,
                    Self.test(change.significance), change.verdict == .worse ? "**worse**" : change.verdict.rawValue,
                ]
            })
        if !reasons.isEmpty {
            out.append("")
            out += Markdown.table(
                ["APNs reason", "A", "B", "change", "status"], alignments: [.left, .right, .right, .right, .left],
                rows: reasons.map { ["`\(Markdown.escaped($0.key))`"] + Self.counts($0) + [$0.status.rawValue] })
        }
        out.append("")
        out += Markdown.table(
            ["outcome", "A", "B", "change"], alignments: [.left, .right, .right, .right],
            rows: outcomes.map { [$0.key] + Self.counts($0) })
        if !breakdowns.isEmpty {
            out.append("")
            out += Markdown.table(
                ["breakdown row (arrival rate)", "A", "B", "change", "test"],
                alignments: [.left, .right, .right, .right, .left],
                rows: breakdowns.map { row in
                    [
                        "\(row.dimension) = `\(Markdown.escaped(row.key))`", Self.rateWithCount(row.a),
                        Self.rateWithCount(row.b),
                        row.change.map { ReportFormat.signedPoints($0) } ?? ReportFormat.none,
                        Self.test(row.significance),
                    ]
                })
        }
        if let devices, !devices.isEmpty {
            out.append("")
            out += Markdown.table(
                ["device far below the fleet on one side", "status", "deliverable", "arrival", "p-value"],
                alignments: [.left, .left, .right, .right, .right],
                rows: devices.map {
                    [
                        "`\(Markdown.escaped($0.deviceID))`", $0.status.rawValue, String($0.updates.deliverable),
                        ReportFormat.percent($0.updates.arrivalRate), Report.pValueText($0.pValue),
                    ]
                })
        }
        if let records {
            out.append("")
            out.append(records.markdownText())
        }
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: - JSON

    /// A stable object for tools: keys in a fixed order, metrics in report
    /// order, numbers at full precision.
    package func jsonText() -> String { JSONWriter.document(self) }

    // MARK: - Formatting

    static func color(of verdict: Verdict) -> ANSIColor? {
        switch verdict {
        case .worse: .red
        case .better: .green
        case .noise, .unchanged: .dim
        case .changed, .undefined, .absent: nil
        }
    }

    static func value(_ value: Double?, _ metric: Metric) -> String {
        guard let value else { return ReportFormat.none }
        switch metric.kind {
        case .rate: return ReportFormat.percent(value, digits: 2)
        case .count: return String(Int(value))
        case .milliseconds: return "\(Int(value)) ms"
        }
    }

    static func change(_ change: MetricChange) -> String {
        guard let absolute = change.absolute else { return ReportFormat.none }
        switch change.metric.kind {
        case .rate: return ReportFormat.signedPoints(absolute)
        case .count: return ReportFormat.signed(Int(absolute))
        case .milliseconds: return ReportFormat.signed(Int(absolute)) + " ms"
        }
    }

    static func test(_ significance: Significance?) -> String {
        guard let significance else { return ReportFormat.none }
        return "p\(formatP(significance.pValue)), ±\(ReportFormat.fixed(significance.margin * 100, 2)) pt"
    }

    static func formatP(_ p: Double) -> String {
        p < 0.001 ? "<0.001" : "=" + ReportFormat.fixed(p, 3)
    }

    /// A, B and the signed change of a count.
    static func counts(_ change: CountChange) -> [String] {
        [String(change.a), String(change.b), ReportFormat.signed(change.b - change.a)]
    }

    static func rateWithCount(_ counts: UpdateCounts) -> String {
        let deliverable = counts.deliverable
        return
            "\(counts.arrivalRate.map { ReportFormat.percent($0, digits: 2) } ?? ReportFormat.none) of \(deliverable)"
    }
}

extension RecordDiff {
    func text(color: Bool) -> String {
        var out: [String] = []
        out.append(
            (color ? ANSIColor.bold.wrap("Records") : "Records")
                + " (apns matched by apns_id, updates by activity_id and seq)")
        out.append(
            "  apns:    \(apns.same) same, \(apns.changed) answered differently, \(apns.onlyInA) only in A, \(apns.onlyInB) only in B"
        )
        out.append(
            "  updates: \(updates.same) same outcome, \(updates.changed) changed outcome, \(updates.onlyInA) only in A, \(updates.onlyInB) only in B"
        )
        for transition in transitions.keys.sorted(by: codePointOrder) {
            out.append("    \(transition): \(transitions[transition] ?? 0)")
        }
        if !apnsChangedRows.isEmpty {
            out.append("")
            out.append("  Same apns_id, different answer (first \(apnsChangedRows.count) of \(apns.changed)):")
            let table = TextTable(
                ["apns_id", "activity", "seq", "A", "B"], alignments: [.left, .left, .right, .left, .left],
                rows: apnsChangedRows.map { row in
                    [
                        row.a.apnsID, row.a.activityID ?? ReportFormat.none,
                        row.a.seq.map(String.init) ?? ReportFormat.none, Self.answer(row.a), Self.answer(row.b),
                    ]
                })
            out.append(table.render(color: color, indent: "    "))
        }
        for (title, rows, total) in [
            ("A", apnsOnlyInARows, apns.onlyInA), ("B", apnsOnlyInBRows, apns.onlyInB),
        ] where !rows.isEmpty {
            out.append("")
            out.append("  apns records only in \(title) (first \(rows.count) of \(total)):")
            let table = TextTable(
                ["apns_id", "sent_at", "activity", "seq", "answer"], alignments: [.left, .left, .left, .right, .left],
                rows: rows.map { row in
                    [
                        row.apnsID, RFC3339.format(milliseconds: row.sentAt), row.activityID ?? ReportFormat.none,
                        row.seq.map(String.init) ?? ReportFormat.none, Self.answer(row),
                    ]
                })
            out.append(table.render(color: color, indent: "    "))
        }
        if !updateRows.isEmpty {
            out.append("")
            out.append(
                "  Updates that differ (first \(updateRows.count) of \(updates.differences)):"
            )
            let table = TextTable(
                ["activity", "seq", "A", "B"], alignments: [.left, .right, .left, .left],
                rows: updateRows.map {
                    [$0.activityID, String($0.seq), $0.a ?? ReportFormat.none, $0.b ?? ReportFormat.none]
                })
            out.append(table.render(color: color, indent: "    "))
        }
        return out.joined(separator: "\n")
    }

    func markdownText() -> String {
        var out: [String] = []
        out.append("#### Records")
        out.append("")
        out += Markdown.table(
            ["", "same", "changed", "only in A", "only in B"], alignments: [.left, .right, .right, .right, .right],
            rows: [
                ["apns (by `apns_id`)"] + apns.cells,
                ["updates (by activity, seq)"] + updates.cells,
            ])
        if !transitions.isEmpty {
            out.append("")
            out += Markdown.table(
                ["outcome change", "updates"], alignments: [.left, .right],
                rows: transitions.keys.sorted(by: codePointOrder).map { [$0, String(transitions[$0] ?? 0)] })
        }
        if !apnsChangedRows.isEmpty {
            out.append("")
            out += Markdown.table(
                ["apns_id", "A", "B"], alignments: [.left, .left, .left],
                rows: apnsChangedRows.map { row in
                    [
                        "`\(Markdown.escaped(row.a.apnsID))`", Markdown.escaped(Self.answer(row.a)),
                        Markdown.escaped(Self.answer(row.b)),
                    ]
                })
        }
        return out.joined(separator: "\n")
    }

    static func answer(_ record: ApnsRecord) -> String {
        record.reason.map { "\(record.status) \($0)" } ?? String(record.status)
    }
}

// MARK: - JSON objects

extension ReportDiff: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "schema": "arrival.diff/1", "a": a, "b": b, "confidence": confidence, "metrics": metrics,
            "reasons": reasons.map { $0.jsonFields(keyNamed: "reason") },
            "outcomes": outcomes.map { $0.jsonFields(keyNamed: "outcome") }, "breakdowns": breakdowns,
            "devices": devices, "records": records,
        ]
    }
}

extension ReportDiff.DeviceChange: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["device_id": deviceID, "status": status.rawValue, "updates": updates, "p_value": pValue]
    }
}

extension ReportDiff.Side: JSONWritableObject {
    package var jsonFields: JSONFields { ["path": path, "source": source.rawValue, "window": window] }
}

extension ReportDiff.MetricChange: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "metric": metric.id, "a": a, "b": b, "absolute": absolute, "relative": relative, "sample_a": sampleA,
            "sample_b": sampleB, "test": significance, "verdict": verdict.rawValue,
        ]
    }
}

extension ReportDiff.CountChange {
    /// The change as an object whose first field, the reason or outcome, is `name`.
    func jsonFields(keyNamed name: String) -> JSONFields {
        [name: key, "a": a, "b": b, "status": status.rawValue]
    }
}

extension ReportDiff.BreakdownChange: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["dimension": dimension, "key": key, "a": a, "b": b, "change": change, "test": significance]
    }
}

extension Significance: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["method": method.rawValue, "z": z, "p_value": pValue, "margin": margin, "significant": isSignificant]
    }
}

extension RecordDiff: JSONWritableObject {
    package var jsonFields: JSONFields {
        let transitions = JSONFields(
            self.transitions.keys.sorted(by: codePointOrder).map { ($0, self.transitions[$0] ?? 0) })
        return [
            "limit": limit,
            "apns": apns.jsonFields
                + [
                    "changed_rows": apnsChangedRows, "only_in_a_rows": apnsOnlyInARows,
                    "only_in_b_rows": apnsOnlyInBRows,
                ],
            "updates": updates.jsonFields + ["transitions": transitions, "rows": updateRows],
        ]
    }
}

extension RecordDiff.Tally {
    /// Same, changed, only in A, only in B: the columns of the Markdown summary.
    var cells: [String] { [same, changed, onlyInA, onlyInB].map(String.init) }

    var jsonFields: JSONFields { ["same": same, "changed": changed, "only_in_a": onlyInA, "only_in_b": onlyInB] }
}

extension RecordDiff.ApnsChange: JSONWritableObject {
    package var jsonFields: JSONFields { ["a": a, "b": b] }
}

extension RecordDiff.ApnsRecord: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "apns_id": apnsID, "sent_at": RFC3339.format(milliseconds: sentAt), "status": status, "reason": reason,
            "activity_id": activityID, "seq": seq,
        ]
    }
}

extension RecordDiff.UpdateChange: JSONWritableObject {
    package var jsonFields: JSONFields { ["activity_id": activityID, "seq": seq, "a": a, "b": b] }
}

import ArgumentParser
import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Foundation

struct Activity: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One activity's timeline: what was sent, what APNs said, what the device showed and reported.",
        discussion: """
            For "APNs said 200 but nothing changed": every request of the activity (time, status, reason, \
            token, seq, event, provider; requests without an activity_id whose push token it owns included), \
            every render and callback, in time order, then each update with its outcome, its loss cause when \
            it was lost, and the evidence that decided them. The outcomes are the report's (the same rules on \
            the same records; contract 3.0). One pass over each table of the store (it keeps no index by \
            activity): about a third of a second on two million requests. The store is opened read-only. Exit 1 \
            when no record names the activity.

            With --device ID instead of an activity id: that device's activities (contract 3.2, the device the \
            report's "Devices far below the fleet" names), each with its updates of the window (--day, or --from \
            and --to; all data without) and the counts of their outcomes, summed into the device's updates block \
            as the report's outliers give it; follow any of them with `arrival activity ID`. Exit 1 when no \
            activity of the window is on the device.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: "The activity_id, exactly as the records carry it.")
    var id: String?

    @Option(
        help: """
            Instead of one activity: the activities of this device, its device_id as the report's "Devices far \
            below the fleet" names it (contract 3.2).
            """)
    var device: String?

    @OptionGroup var store: StoreOptions
    @OptionGroup var window: WindowOptions

    @Option(help: "Output format: text (for a terminal) or json (schema arrival.activity/1).")
    var format: Format = .text

    @Option(help: "Write to this file instead of standard output.")
    var out: String?

    func validate() throws {
        switch (id, device) {
        case (nil, nil): throw ValidationError("Name an activity (arrival activity ID) or a device (--device ID).")
        case (.some, .some): throw ValidationError("Give an activity id or --device, not both.")
        case (.some, nil) where window.day != nil || window.from != nil || window.to != nil:
            throw ValidationError(
                "--day, --from and --to choose the updates of --device; an activity's timeline is always whole.")
        default: _ = try window.resolved()
        }
    }

    func run() throws {
        let database = try store.reading()
        guard let id else { return try runDevice(device ?? "", database: database) }
        let records = try database.read { try $0.activityRecords(id) }
        guard !records.isEmpty else {
            throw Diagnostic(
                .input, "no request, render or callback of the store names the activity '\(id)'",
                hint:
                    "activity ids are compared exactly (case and Unicode form); `arrival lost` lists activities with lost updates."
            )
        }
        let story = try ActivityStory(records: records)
        try write(format == .json ? Self.json(story) : Self.text(story), to: out)
    }

    static func time(_ milliseconds: Int64?) -> String {
        milliseconds.map { RFC3339.format(milliseconds: $0) } ?? ReportFormat.none
    }

    static func outcome(_ line: ActivityStory.UpdateLine) -> String {
        guard let outcome = line.outcome else { return "not accepted" }
        return outcome.name + (line.lossCause.map { " (\($0.name))" } ?? "")
    }

    static func text(_ story: ActivityStory) -> String {
        var lines = [
            "Activity \(story.activityID)" + (story.app.map { " · \($0)" } ?? ""),
            "  started \(time(story.startedAt)) · ended \(time(story.endedAt)) · dismissed \(time(story.dismissedAt))"
                + " · last heard from the device \(time(story.lastDeviceAt))",
            "  os \(story.osVersion ?? "unknown") · app version \(story.appVersion ?? "unknown")"
                + " · More Frequent Updates \(story.frequentPushes ?? "unknown")",
            "",
            "Timeline (\(ReportFormat.counted(story.timeline.count, "record")))",
        ]
        var timeline = TextTable(["time", "kind", "seq", "what"], alignments: [.left, .left, .right, .left])
        for entry in story.timeline {
            timeline.add([time(entry.time), entry.kind.rawValue, entry.seq.map(String.init) ?? "", entry.what])
        }
        lines.append(timeline.render(color: false))
        lines.append("")
        lines.append("Updates (\(ReportFormat.counted(story.updates.count, "update")))")
        // A channel column when a broadcast decided an update (contract 3.0).
        let channels = story.updates.contains { $0.channel != nil }
        // "p10/h": the other priority-10 updates accepted in the hour before (contract 3.1).
        var updates = TextTable(
            ["seq", "event", "at", "requests", "outcome"] + (channels ? ["channel"] : []) + ["p10/h", "evidence"],
            alignments: [.right, .left, .left, .right, .left] + (channels ? [.left] : []) + [.right, .left])
        for line in story.updates {
            updates.add(
                [String(line.seq), line.event, time(line.at), String(line.requests), outcome(line)]
                    + (channels ? [line.channel ?? "(direct)"] : [])
                    + [line.priority10LastHour.map(String.init) ?? "-", line.evidence])
        }
        lines.append(updates.render(color: false))
        lines.append(
            "p10/h: the other priority-10 updates of this activity accepted in the hour before "
                + "(evidence for Apple's budget; - when the update is not priority 10, was not accepted or went "
                + "through a channel).")
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ story: ActivityStory) -> String {
        let w = JSONWriter()
        func optionalTime(_ value: Int64?) {
            if let value { w.string(RFC3339.format(milliseconds: value)) } else { w.null() }
        }
        w.object {
            w.field("schema") { w.string("arrival.activity/1") }
            w.field("activity_id") { w.string(story.activityID) }
            w.field("app") { if let app = story.app { w.string(app) } else { w.null() } }
            w.field("started_at") { optionalTime(story.startedAt) }
            w.field("ended_at") { optionalTime(story.endedAt) }
            w.field("dismissed_at") { optionalTime(story.dismissedAt) }
            w.field("last_device_at") { optionalTime(story.lastDeviceAt) }
            w.field("os_version") { if let v = story.osVersion { w.string(v) } else { w.null() } }
            w.field("app_version") { if let v = story.appVersion { w.string(v) } else { w.null() } }
            w.field("frequent_pushes") { if let v = story.frequentPushes { w.string(v) } else { w.null() } }
            w.field("updates") {
                w.array {
                    for line in story.updates {
                        w.element {
                            w.object {
                                w.field("seq") { w.int(Int(line.seq)) }
                                w.field("event") { w.string(line.event) }
                                w.field("accepted") { w.bool(line.accepted) }
                                w.field("at") { w.string(RFC3339.format(milliseconds: line.at)) }
                                w.field("requests") { w.int(line.requests) }
                                w.field("outcome") { if let o = line.outcome { w.string(o.name) } else { w.null() } }
                                w.field("loss_cause") {
                                    if let c = line.lossCause { w.string(c.name) } else { w.null() }
                                }
                                w.field("evidence") { w.string(line.evidence) }
                                w.field("channel_id") { if let c = line.channel { w.string(c) } else { w.null() } }
                                w.field("priority_10_last_hour") {
                                    if let n = line.priority10LastHour { w.int(n) } else { w.null() }
                                }
                            }
                        }
                    }
                }
            }
            w.field("timeline") {
                w.array {
                    for entry in story.timeline {
                        w.element {
                            w.object {
                                w.field("time") { w.string(RFC3339.format(milliseconds: entry.time)) }
                                w.field("kind") { w.string(entry.kind.rawValue) }
                                w.field("seq") { if let s = entry.seq { w.int(Int(s)) } else { w.null() } }
                                for (name, value) in entry.fields {
                                    w.field(name) {
                                        switch value {
                                        case .text(let text): if let text { w.string(text) } else { w.null() }
                                        case .number(let n): if let n { w.int(Int(n)) } else { w.null() }
                                        case .flag(let b): w.bool(b)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return w.text + "\n"
    }
}

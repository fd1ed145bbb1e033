import ArgumentParser
import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Foundation

struct Lost: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the lost updates themselves, with why each was lost: from a count to the activities behind it.",
        discussion: """
            Every accepted update whose outcome is lost, with its loss cause (contract 3.0: not_rendered, \
            old_token, closed_later, device_silent, unexplained), the activity, seq, app, provider, accept time, \
            token and the evidence. The same analysis as the report: for the same window, the count of each \
            cause is the report's updates.lost_by_cause. In order of accept time, then activity id, then seq. \
            `arrival activity ID` shows one activity's whole timeline. The store is opened read-only.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, csv, json
    }

    @OptionGroup var store: StoreOptions
    @OptionGroup var window: WindowOptions

    @Option(
        name: .customLong("cause"),
        help: ArgumentHelp(
            "Only this loss cause (repeat for several).",
            valueName: LossCause.allCases.map(\.name).joined(separator: "|")))
    var causes: [String] = []

    @Option(
        name: .customLong("app"),
        help: "Only updates of this app (the topic without .push-type.liveactivity; repeat for several).")
    var apps: [String] = []

    @Option(
        name: .customLong("channel"),
        help: "Only updates a broadcast to this channel decided (contract 3.0; repeat for several).")
    var channels: [String] = []

    @Option(
        name: .customLong("device"),
        help: """
            Only updates of activities on this device: its device_id, as the report's "Devices far below the \
            fleet" names it (contract 3.2; repeat for several).
            """)
    var devices: [String] = []

    // `.unconditional`: `--limit -1` reaches validate() as -1, instead of ArgumentParser's "Missing value".
    @Option(parsing: .unconditional, help: "At most this many updates, the earliest first (0: all).")
    var limit: Int = 0

    @Option(help: "Output format: text (an aligned table), csv or json (schema arrival.lost/1).")
    var format: Format = .text

    @Option(help: "Write the list to this file instead of standard output.")
    var out: String?

    func validate() throws {
        _ = try window.resolved()
        _ = try causeSet()
        guard limit >= 0 else { throw ValidationError("--limit must be 0 (all) or more (got \(limit)).") }
    }

    func causeSet() throws -> Set<LossCause>? {
        guard !causes.isEmpty else { return nil }
        return Set(
            try causes.map { name in
                guard let cause = LossCause.allCases.first(where: { $0.name == name }) else {
                    throw ValidationError(
                        "--cause '\(name)' is not a loss cause; use one of "
                            + LossCause.allCases.map(\.name).joined(separator: ", ") + ".")
                }
                return cause
            })
    }

    func run() throws {
        let database = try store.reading()
        let window = try self.window.resolved()
        let all = try ProducedReport.lostUpdates(
            of: database, window: window, causes: try causeSet(), apps: apps.isEmpty ? nil : Set(apps),
            channels: channels.isEmpty ? nil : Set(channels), devices: devices.isEmpty ? nil : Set(devices))
        try warnOfAbsentApps(in: all, database: database, window: window)
        if !devices.isEmpty && all.isEmpty {
            let warning = Diagnostic(
                .input,
                "no lost update of device \(devices.map { "'\($0)'" }.joined(separator: ", ")) in "
                    + WindowOptions.scope(window),
                hint: "a device is named by the device_id of its renders and callbacks, as the report's "
                    + "\"Devices far below the fleet\" names it; one with nothing lost is not listed here.")
            FileHandle.standardError.write(Data((warning.warningDescription + "\n").utf8))
        }
        let shown = limit > 0 ? Array(all.prefix(limit)) : all
        let text: String
        switch format {
        case .text: text = Self.text(shown, of: all, window: window)
        case .csv: text = Self.csv(shown)
        case .json: text = Self.json(shown, total: all.count, window: window)
        }
        try write(text, to: out)
    }

    /// An `--app` that no lost update names (a typo, or an app with nothing lost) is said on stderr, with
    /// the apps that have lost updates in the window.
    private func warnOfAbsentApps(in all: [LostUpdate], database: any StoreReader, window: ReportWindow?) throws {
        let seen = Set(all.map(\.app))
        let absent = apps.filter { !seen.contains($0) }
        guard !absent.isEmpty else { return }
        let known = Set(
            try ProducedReport.lostUpdates(of: database, window: window, causes: nil, apps: nil, channels: nil).map(
                \.app)
        ).sorted()
        let warning = Diagnostic(
            .input,
            "no lost update of app \(absent.map { "'\($0)'" }.joined(separator: ", ")) in "
                + WindowOptions.scope(window),
            hint: known.isEmpty
                ? "no app has a lost update there."
                : "the apps with lost updates there: \(known.joined(separator: ", ")).")
        FileHandle.standardError.write(Data((warning.warningDescription + "\n").utf8))
    }

    static let columns = [
        "activity_id", "seq", "app", "provider", "accepted_at", "cause", "push_token", "evidence", "channel_id",
        "priority_10_last_hour",
    ]

    static func cells(_ u: LostUpdate) -> [String] {
        [
            u.activityID, String(u.seq), u.app, u.provider, RFC3339.format(milliseconds: u.acceptedAt), u.cause.name,
            u.pushToken, u.evidence, u.channel ?? "", u.priority10LastHour.map(String.init) ?? "",
        ]
    }

    /// The table of `updates`, the first of `all`; the counts by cause are of `all`.
    static func text(_ updates: [LostUpdate], of all: [LostUpdate], window: ReportWindow?) -> String {
        let total = all.count
        var counts: [LossCause: Int] = [:]
        for u in all { counts[u.cause, default: 0] += 1 }
        var lines = [
            "Lost updates (\(WindowOptions.scope(window))): \(ReportFormat.count(total))"
                + (updates.count < total ? ", the first \(ReportFormat.count(updates.count)) shown" : "")
        ]
        if !updates.isEmpty {
            lines[0] +=
                " · "
                + LossCause.allCases.compactMap { c in counts[c].map { "\(c.name) \(ReportFormat.count($0))" } }
                .joined(separator: ", ")
            // A channel column when a broadcast decided one of them (contract 3.0).
            let channels = updates.contains { $0.channel != nil }
            // "p10/h": the other priority-10 updates of the activity accepted in the hour before (contract 3.1).
            var table = TextTable(
                ["accepted at", "activity", "seq", "app"] + (channels ? ["channel"] : []) + [
                    "p10/h", "cause", "evidence",
                ],
                alignments: [.left, .left, .right, .left] + (channels ? [.left] : []) + [.right, .left, .left])
            for u in updates {
                table.add(
                    [RFC3339.format(milliseconds: u.acceptedAt), u.activityID, String(u.seq), u.app]
                        + (channels ? [u.channel ?? "(direct)"] : [])
                        + [u.priority10LastHour.map(String.init) ?? "-", u.cause.name, u.evidence])
            }
            lines.append(
                "p10/h: the other priority-10 updates its activity had accepted in the hour before "
                    + "(evidence for Apple's budget; - when the update is not priority 10 or went through a channel).")
            lines.append(table.render(color: false))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func csv(_ updates: [LostUpdate]) -> String {
        csvText([columns] + updates.map(cells))
    }

    static func json(_ updates: [LostUpdate], total: Int, window: ReportWindow?) -> String {
        let w = JSONWriter()
        w.object {
            w.field("schema") { w.string("arrival.lost/1") }
            w.field("window") { window.write(to: w) }
            w.field("total") { w.int(total) }
            w.field("updates") {
                w.array {
                    for u in updates {
                        w.element {
                            w.object {
                                w.field("activity_id") { w.string(u.activityID) }
                                w.field("seq") { w.int(Int(u.seq)) }
                                w.field("app") { w.string(u.app) }
                                w.field("provider") { w.string(u.provider) }
                                w.field("accepted_at") { w.string(RFC3339.format(milliseconds: u.acceptedAt)) }
                                w.field("cause") { w.string(u.cause.name) }
                                w.field("push_token") {
                                    if u.channel != nil { w.null() } else { w.string(u.pushToken) }
                                }
                                w.field("evidence") { w.string(u.evidence) }
                                w.field("channel_id") { if let c = u.channel { w.string(c) } else { w.null() } }
                                w.field("priority_10_last_hour") {
                                    if let n = u.priority10LastHour { w.int(n) } else { w.null() }
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

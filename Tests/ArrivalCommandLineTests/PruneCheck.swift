import ArrivalModel
import ArrivalTestSupport
import Foundation

/// The retention property, checked through the built `arrival` on a store
/// of either engine: prune at each of several times, in order, on one store,
/// and after each, every report of a window from that time on (and from
/// each later one) is what it was before any prune, byte for byte but for
/// the store-wide `data_quality` counts; so are `tokens` and `lost` of those
/// windows and `activity` of the activities they name. The all-data report
/// loses exactly the requests the prune says it removed. Ingesting the same
/// inputs again afterwards stores nothing.
package enum PruneCheck {
    /// What one run found wrong (empty: nothing).
    ///
    /// `brief`: only the windows from each cut to the end of the data (and
    /// its day), and fewer timelines: for a server's store, whose every read
    /// copies a snapshot.
    package static func failures(db: String, inputs: [String], cuts: [String], brief: Bool = false) throws
        -> [String]
    {
        var failures: [String] = []
        func arrival(_ arguments: [String]) throws -> String {
            let outcome = try run("arrival", arguments + ["--db", db])
            if outcome.status != 0 { failures.append("\(arguments): \(outcome)") }
            return outcome.stdout
        }
        for input in inputs { _ = try arrival(["ingest", input, "--quiet"]) }
        let times = try cuts.map { cut in
            guard let time = RFC3339.parseMilliseconds(cut) else { throw ProcessRunError("\(cut) is no time") }
            return time
        }
        // Before any prune: each view of each window from each cut on.
        var baseline: [[String]: String] = [:]
        // Activities the lost updates of windows from each cut on name, a few a cut: kept, so their timelines stay.
        var activities: [[String]] = []
        for time in times {
            var named: Set<String> = []
            for command in views(from: time, brief: brief) {
                baseline[command] = try arrival(command)
                if command.first == "lost" { named.formUnion(activityIDs(inLost: baseline[command] ?? "")) }
            }
            let some = Array(named.sorted().prefix(brief ? 2 : activitiesPerCut))
            activities.append(some)
            for id in some {
                baseline[["activity", id, "--format", "json"]] = try arrival(["activity", id, "--format", "json"])
            }
        }
        var allData = try arrival(["report", "--format", "json"])
        var prunedAny = false
        for index in times.indices {
            let summary = try arrival(["prune", "--before", cuts[index], "--format", "json"])
            let removed = (json(summary)?["removed"] as? [String: Any])?["requests"] as? Int ?? -1
            prunedAny = prunedAny || removed > 0
            let after = try arrival(["report", "--format", "json"])
            let total = { (text: String) in (json(text)?["requests"] as? [String: Any])?["total"] as? Int ?? -1 }
            if total(after) != total(allData) - removed {
                failures.append(
                    "prune before \(cuts[index]): all-data requests.total \(total(allData)) -> \(total(after)), "
                        + "but \(removed) were removed")
            }
            allData = after
            for later in times[index...] {
                for command in views(from: later, brief: brief) {
                    let now = try arrival(command)
                    let was = baseline[command] ?? ""
                    let same = command.first == "report" ? withoutStoreWide(now) == withoutStoreWide(was) : now == was
                    if !same { failures.append("after prune before \(cuts[index]): \(command) changed") }
                }
            }
            for id in activities[index...].joined() {
                let command = ["activity", id, "--format", "json"]
                if try arrival(command) != baseline[command] {
                    failures.append("after prune before \(cuts[index]): the timeline of \(id) changed")
                }
            }
        }
        if !prunedAny { failures.append("no prune removed anything: the check proves nothing") }
        // The same bytes again: nothing is stored, nothing comes back.
        for input in inputs {
            let again = try arrival(["ingest", input])
            if !again.contains("new records: 0") { failures.append("re-ingest of \(input) stored records: \(again)") }
        }
        if try arrival(["report", "--format", "json"]) != allData {
            failures.append("re-ingest after prune changed the all-data report")
        }
        return failures
    }

    /// How many activities' timelines are compared per cut.
    static let activitiesPerCut = 4

    /// The commands whose output must not change for windows from `time` on.
    static func views(from time: Int64, brief: Bool) -> [[String]] {
        let hour: Int64 = 3_600_000
        let windows: [(Int64, Int64)] =
            brief
            ? [(time, time + 400 * 24 * hour)]
            : [
                (time, time + 400 * 24 * hour), (time, time + hour), (time + 3 * hour, time + 9 * hour),
            ]
        var commands: [[String]] = []
        for (from, to) in windows {
            let window = ["--from", RFC3339.format(milliseconds: from), "--to", RFC3339.format(milliseconds: to)]
            commands.append(["report", "--format", "json"] + window)
            commands.append(["tokens", "--format", "json"] + window)
            commands.append(["lost", "--format", "json"] + window)
        }
        // A whole day, when the cut is one's start.
        if time % (24 * hour) == 0 {
            let day = String(RFC3339.format(milliseconds: time).prefix(10))
            commands.append(["report", "--format", "json", "--day", day])
        }
        return commands
    }

    /// The report without the `data_quality` counts that cover the whole store, keys sorted.
    package static func withoutStoreWide(_ text: String) -> String {
        guard var report = json(text) else { return text }
        if var quality = report["data_quality"] as? [String: Any] {
            for key in ["malformed_lines", "malformed_by_cause", "duplicate_records", "files_skipped_as_duplicate"] {
                quality[key] = nil
            }
            report["data_quality"] = quality
        }
        guard let data = try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys]) else {
            return text
        }
        return String(decoding: data, as: UTF8.self)
    }

    package static func json(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// The activity ids a `lost --format json` output names.
    static func activityIDs(inLost text: String) -> Set<String> {
        var ids: Set<String> = []
        var rest = Substring(text)
        while let range = rest.range(of: "\"activity_id\"") {
            rest = rest[range.upperBound...]
            guard let open = rest.firstIndex(of: "\"") else { break }
            let value = rest[rest.index(after: open)...]
            guard let close = value.firstIndex(of: "\"") else { break }
            ids.insert(String(value[..<close]))
            rest = value[value.index(after: close)...]
        }
        return ids
    }
}

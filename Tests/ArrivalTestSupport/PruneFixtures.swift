package import Foundation

/// Inputs for the retention checks (``PruneCheck``).
package enum PruneFixtures {
    /// Simulated fleets over three days, with channels, lifecycles, providers and stale timestamps:
    /// `arrival simulate` arguments, one fleet a day.
    package static let fleets: [[String]] = [
        ["--day", "2026-11-20", "--activities", "150", "--seed", "11", "--lifecycle", "--channels"],
        ["--day", "2026-11-21", "--activities", "150", "--seed", "12", "--lifecycle", "--providers"],
        ["--day", "2026-11-22", "--activities", "150", "--seed", "13", "--channels", "--inject", "stale-timestamps"],
    ]

    /// Simulates ``fleets`` into `directory` (one folder each); the folders, in order.
    package static func simulateFleets(into directory: URL) throws -> [String] {
        try fleets.enumerated().map { index, fleet in
            let out = directory.appendingPathComponent("fleet-\(index)").path
            let simulated = try run("arrival", ["simulate", "--out", out] + fleet)
            guard simulated.status == 0 else { throw FixtureError(description: "arrival simulate: \(simulated)") }
            return out
        }
    }

    /// A fixture that could not be made.
    package struct FixtureError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Cuts for ``fleets``, in order: midnights, and times inside a day.
    package static let fleetCuts = [
        "2026-11-21T00:00:00Z", "2026-11-21T13:17:05.250Z", "2026-11-22T06:00:00Z", "2026-11-22T20:00:00Z",
    ]

    /// Cuts for ``edgeCases``.
    package static let edgeCuts = ["2026-11-21T10:00:00Z", "2026-11-21T10:40:00Z"]

    private static let topic = "\"topic\":\"com.example.app.push-type.liveactivity\""

    private static func request(
        _ id: String, at time: String, activity: String? = nil, token: String? = nil, channel: String? = nil,
        seq: Int, status: Int = 200, reason: String? = nil, aps: Int, event: String = "update"
    ) -> String {
        var fields = [
            "\"v\":1", "\"kind\":\"apns\"", "\"apns_id\":\"\(id)\"", "\"sent_at\":\"2026-11-21T\(time)Z\"",
            "\"status\":\(status)", "\"seq\":\(seq)", "\"aps_timestamp\":\(aps)", "\"event\":\"\(event)\"", topic,
        ]
        if let activity { fields.append("\"activity_id\":\"\(activity)\"") }
        if let token { fields.append("\"push_token\":\"\(token)\"") }
        if let channel { fields.append("\"channel_id\":\"\(channel)\"") }
        if let reason { fields.append("\"reason\":\"\(reason)\"") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    private static func render(_ activity: String, seq: Int, at time: String) -> String {
        "{\"v\":1,\"kind\":\"render\",\"activity_id\":\"\(activity)\",\"seq\":\(seq),\"rendered_at\":\"2026-11-21T\(time)Z\"}"
    }

    private static func callback(
        _ kind: String, _ activity: String?, at time: String, token: String? = nil, channel: String? = nil,
        state: String? = nil, seq: Int? = nil
    ) -> String {
        var fields = [
            "\"v\":1", "\"kind\":\"callback\"", "\"callback\":\"\(kind)\"", "\"received_at\":\"2026-11-21T\(time)Z\"",
        ]
        if let activity { fields.append("\"activity_id\":\"\(activity)\"") }
        if let token { fields.append("\"push_token\":\"\(token)\"") }
        if let channel { fields.append("\"channel_id\":\"\(channel)\"") }
        if let state { fields.append("\"state\":\"\(state)\"") }
        if let seq { fields.append("\"seq\":\(seq)") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Hand-made records around the cuts ``edgeCuts`` (10:00 and 10:40 on 2026-11-21), each case one that a
    /// careless prune gets wrong:
    /// - `tok-a`: a token owned by a callback before the cut, requested after it; a request to it before
    ///   the cut makes the later one stale; `tok-b` holds the token too, later, and is gone before the cut;
    /// - `tok-a2`: holds token `cc01` whose owner (`tok-o`, all before the cut) was sent a rejected request
    ///   with the seq of `tok-a2`'s never-accepted update after the cut: were the owner's callback pruned,
    ///   that request would join `tok-a2`'s update and move it before the cut;
    /// - `chan-c`: subscribes to `ch1` before the cut; a broadcast before the cut makes the one after it
    ///   stale; `chan-c0` subscribed and went before the cut;
    /// - `straddle-d`: starts before the cut, a stale update after it, ended later;
    /// - dead tokens: `ee01` killed before the cut by an activity that is gone, sent to after it;
    ///   `ff07` killed and sent to with no owner; `ab08` killed by a request to it alone, owned by
    ///   `dead-g` (all before the cut), sent to after it;
    /// - `gone-h`, a push-to-start token and a malformed line, all before the cut: removed.
    package static let edgeCases: String =
        [
            callback("push_token", "tok-a", at: "09:00:00.000", token: "aa01"),
            request("a-1", at: "09:10:00.000", token: "aa01", seq: 1, aps: 1000),
            render("tok-a", seq: 1, at: "09:10:01.000"),
            request("a-2", at: "11:00:00.000", token: "aa01", seq: 2, aps: 900),
            callback("push_token", "tok-b", at: "09:30:00.000", token: "aa01"),
            request("b-1", at: "09:31:00.000", activity: "tok-b", token: "bb01", seq: 1, aps: 1),
            render("tok-b", seq: 1, at: "09:31:01.000"),
            callback("push_token", "tok-o", at: "07:00:00.000", token: "cc01"),
            request("o-5", at: "08:00:00.000", token: "cc01", seq: 5, status: 429, reason: "TooManyRequests", aps: 5),
            callback("push_token", "tok-a2", at: "09:40:00.000", token: "cc01"),
            request("a2-4", at: "10:20:00.000", activity: "tok-a2", token: "cc01", seq: 4, aps: 40),
            render("tok-a2", seq: 4, at: "10:20:02.000"),
            request(
                "a2-5", at: "10:30:00.000", activity: "tok-a2", token: "cc01", seq: 5, status: 429,
                reason: "TooManyRequests", aps: 50),
            callback("channel_subscription", "chan-c0", at: "06:00:00.000", channel: "ch1"),
            render("chan-c0", seq: 0, at: "06:01:00.000"),
            callback("channel_subscription", "chan-c", at: "09:50:00.000", channel: "ch1"),
            request("ch-1", at: "09:55:00.000", channel: "ch1", seq: 1, aps: 2000),
            render("chan-c", seq: 1, at: "09:55:01.000"),
            request("ch-2", at: "10:30:00.000", channel: "ch1", seq: 2, aps: 1500),
            request("d-1", at: "09:00:00.000", activity: "straddle-d", token: "dd01", seq: 1, aps: 100, event: "start"),
            render("straddle-d", seq: 1, at: "09:00:02.000"),
            request("d-2", at: "10:05:00.000", activity: "straddle-d", token: "dd01", seq: 2, aps: 50),
            callback("activity_state", "straddle-d", at: "12:00:00.000", state: "ended"),
            request(
                "e-1", at: "08:00:00.000", activity: "dead-e", token: "ee01", seq: 1, status: 410,
                reason: "Unregistered", aps: 1),
            request(
                "f-1", at: "11:00:00.000", activity: "dead-f", token: "ee01", seq: 1, status: 410,
                reason: "Unregistered", aps: 1),
            request("t7-1", at: "08:15:00.000", token: "ff07", seq: 1, status: 410, aps: 1),
            request("t7-3", at: "10:45:00.000", token: "ff07", seq: 3, aps: 3),
            callback("push_token", "dead-g", at: "07:30:00.000", token: "ab08"),
            request("g-1", at: "07:31:00.000", activity: "dead-g", token: "ab09", seq: 1, aps: 1),
            render("dead-g", seq: 1, at: "07:31:01.000"),
            request("g-8", at: "08:20:00.000", token: "ab08", seq: 2, status: 410, reason: "Unregistered", aps: 2),
            request("h2-1", at: "10:50:00.000", activity: "dead-h2", token: "ab08", seq: 1, status: 410, aps: 1),
            request("h-1", at: "06:00:00.000", activity: "gone-h", token: "aa99", seq: 1, aps: 1),
            render("gone-h", seq: 1, at: "06:00:03.000"),
            callback("content_update", "gone-h", at: "06:00:05.000", seq: 1),
            callback("push_to_start_token", nil, at: "05:00:00.000", token: "ab77"),
            "{\"v\":1,\"kind\":\"render\"}",
            request("x-1", at: "11:30:00.000", activity: "after-x", token: "ab10", seq: 1, aps: 1),
            render("after-x", seq: 1, at: "11:30:01.000"),
        ].joined(separator: "\n") + "\n"

    /// Writes ``edgeCases`` into `directory` and returns the file's path.
    package static func writeEdgeCases(into directory: URL) throws -> String {
        let file = directory.appendingPathComponent("edge-cases.jsonl")
        try Data(edgeCases.utf8).write(to: file)
        return file.path
    }
}

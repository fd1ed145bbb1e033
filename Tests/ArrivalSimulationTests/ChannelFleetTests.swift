import ArrivalIngest
import ArrivalSimulation
import ArrivalTestSupport
import Foundation
import Testing

/// `arrival simulate --channels`: iOS 18 broadcast channels and their
/// subscribers (contract 3.0), after the fleet's own activities.
@Suite("Fleet simulator with --channels")
struct ChannelFleetTests {
    static func fleet(seed: UInt64, channels: Bool = true) -> SimulationConfig {
        var config = SimulationConfig(activities: 200, seed: seed)
        config.channels = channels
        return config
    }

    /// The JSON objects of every line of the device files that parse.
    static func deviceLines(_ root: URL) throws -> [[String: Any]] {
        var objects: [[String: Any]] = []
        for path in InputWalker(paths: [root.appendingPathComponent("devices").path]).files.sorted() {
            _ = try LineReader().read(path: path) { line in
                guard let bytes = line.bytes,
                    let object = try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]
                else { return }
                objects.append(object)
            }
        }
        return objects
    }

    @Test("The same seed writes the same channel fleet; without the flag none of it is written")
    func deterministic() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var trees: [[String: Data]] = []
        var summaries: [SimulationSummary] = []
        for (name, config) in [
            ("a", Self.fleet(seed: 11)), ("b", Self.fleet(seed: 11)), ("c", Self.fleet(seed: 11, channels: false)),
        ] {
            let out = directory.appendingPathComponent(name)
            var summary = try FleetSimulator(config: config).run(outputDirectory: out.path)
            summary.outputDirectory = ""
            summaries.append(summary)
            trees.append(ProviderFleetTests().tree(out))
        }
        #expect(trees[0] == trees[1] && summaries[0] == summaries[1])
        #expect(trees[0] != trees[2])
        #expect(summaries[0].channels == 5 && summaries[2].channels == 0 && summaries[2].broadcastLines == 0)
        #expect(!summaries[2].description.contains("broadcasts:"))
        #expect(summaries[0].description.contains("  broadcasts: \(summaries[0].broadcastLines) lines on 5 channels"))
        // The fleet's own devices are those of the plain run; the subscribers come after them.
        #expect(summaries[0].devices == summaries[2].devices + max(40, 200 / 2))
        #expect(summaries[2].phenomena.keys.allSatisfy { !$0.contains("broadcast") && !$0.contains("subscri") })
    }

    @Test(
        "Broadcasts are logged as records with channel_id and as exchanges to /4/broadcasts/apps/, with 413s and near-limit payloads"
    )
    func senderLines() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let summary = try FleetSimulator(config: Self.fleet(seed: 12)).run(outputDirectory: directory.path)
        let lines = try ProviderFleetTests().senderLines(directory)
        let records = lines.filter { $0["kind"] as? String == "apns" && $0["channel_id"] != nil }
        let exchanges = lines.filter {
            ($0["request"] as? [String: Any])?["url"].map { ($0 as? String)?.contains("/4/broadcasts/apps/") == true }
                ?? false
        }
        #expect(records.count > 50 && exchanges.count > 50)
        #expect(records.count + exchanges.count == summary.broadcastLines)
        for record in records {
            #expect(record["push_token"] == nil && record["activity_id"] == nil)
            #expect((record["channel_id"] as? String)?.isEmpty == false)
        }
        var channels = Set(records.compactMap { $0["channel_id"] as? String })
        for exchange in exchanges {
            let request = try #require(exchange["request"] as? [String: Any])
            let headers = try #require(request["headers"] as? [String: String])
            let channel = try #require(headers["apns-channel-id"])
            channels.insert(channel)
            #expect(headers["apns-push-type"] == "liveactivity" && exchange["activity_id"] == nil)
            #expect(
                (request["url"] as? String)?.hasPrefix(
                    "https://api-broadcast.push.apple.com/4/broadcasts/apps/com.example.") == true)
            if let response = exchange["response"] as? [String: Any] {
                #expect((response["headers"] as? [String: String])?["apns-request-id"] != nil)
            }
        }
        #expect(channels.count == 5)
        // Too large (413 above 5,120 bytes) and accepted within 512 bytes of it.
        func size(_ line: [String: Any]) -> Int {
            line["payload_bytes"] as? Int
                ?? ((line["request"] as? [String: Any])?["body"] as? String)?.utf8.count ?? 0
        }
        func status(_ line: [String: Any]) -> Int {
            line["status"] as? Int ?? ((line["response"] as? [String: Any])?["status"] as? Int) ?? 0
        }
        let broadcasts = records + exchanges
        #expect(broadcasts.contains { status($0) == 413 && size($0) > 5120 })
        #expect(broadcasts.allSatisfy { status($0) != 413 || size($0) > 5120 })
        #expect(broadcasts.contains { status($0) == 200 && size($0) > 4608 && size($0) <= 5120 })
        #expect(broadcasts.contains { status($0) == 429 } && broadcasts.contains { status($0) == 0 })
        // Direct pushes are there too: the fleet's, and subscribers' push-to-start starts.
        #expect(lines.contains { $0["kind"] as? String == "apns" && $0["push_token"] != nil })
        #expect((summary.phenomena["subscribers_started_by_push"] ?? 0) > 0)
        #expect((summary.phenomena["broadcasts_from_slow_host"] ?? 0) > 0)
        #expect((summary.phenomena["channels_nobody_follows"] ?? 0) == 1)
    }

    @Test("Subscribers report channel_subscription or are known only from renders that carry channel_id")
    func subscribers() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let summary = try FleetSimulator(config: Self.fleet(seed: 13)).run(outputDirectory: directory.path)
        let lines = try Self.deviceLines(directory)
        let subscriptions = lines.filter { $0["callback"] as? String == "channel_subscription" }
        let channelRenders = lines.filter { $0["kind"] as? String == "render" && $0["channel_id"] != nil }
        #expect(!subscriptions.isEmpty && !channelRenders.isEmpty)
        for subscription in subscriptions {
            #expect((subscription["channel_id"] as? String)?.isEmpty == false)
            #expect((subscription["activity_id"] as? String)?.isEmpty == false)
        }
        let subscribed = Set(subscriptions.compactMap { $0["activity_id"] as? String })
        let rendered = Set(channelRenders.compactMap { $0["activity_id"] as? String })
        #expect(!rendered.subtracting(subscribed).isEmpty, "some are known only from their renders")
        #expect(
            !subscribed.subtracting(rendered).isEmpty
                || (summary.phenomena["subscriber_widgets_without_channel_id"] ?? 0) == 0)
        // Renders of broadcast seqs (not only the start's seq 0), and channel_id on content_update callbacks.
        #expect(channelRenders.contains { ($0["seq"] as? Int ?? 0) > 0 })
        #expect(lines.contains { $0["callback"] as? String == "content_update" && $0["channel_id"] != nil })
        #expect(lines.contains { $0["channel_id"] as? String == "" } == false)
        for phenomenon in [
            "subscription_callbacks_lost", "subscriber_dismissals", "broadcasts_replaced_while_offline",
            "broadcasts_ignored_as_not_newer", "subscribers_past_8_hours", "broadcasts_too_large",
            "broadcasts_accepted_near_limit",
        ] {
            #expect((summary.phenomena[phenomenon] ?? 0) > 0, "\(phenomenon)")
        }
    }
}

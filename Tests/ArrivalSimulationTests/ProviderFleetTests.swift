import ArrivalIngest
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalSimulation

@Suite("Fleet simulator with --providers")
struct ProviderFleetTests {
    /// The JSON objects of every line of the hourly sender batches (not the
    /// planted copies: re-upload, overlap, cut file).
    func senderLines(_ root: URL) throws -> [[String: Any]] {
        var objects: [[String: Any]] = []
        let batches = InputWalker(paths: [root.appendingPathComponent("sender").path]).files.filter {
            let name = ($0 as NSString).lastPathComponent
            return name.count == "apns-00.jsonl.gz".count
        }
        for path in batches.sorted() {
            _ = try LineReader().read(path: path) { line in
                guard let bytes = line.bytes,
                    let object = try? JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any]
                else { return }
                objects.append(object)
            }
        }
        return objects
    }

    /// Every file under `root` with its bytes, by relative path.
    func tree(_ root: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for path in InputWalker(paths: [root.path]).files {
            files[String(path.dropFirst(root.path.count))] = FileManager.default.contents(atPath: path)
        }
        return files
    }

    static let config = providerFleet(seed: 101)

    /// 300 activities from `seed`, with `--providers`.
    static func providerFleet(seed: UInt64) -> SimulationConfig {
        var config = SimulationConfig(activities: 300, seed: seed)
        config.providers = true
        return config
    }

    @Test("A --providers fleet is the same for the same seed, and another without the flag or with another seed")
    func deterministic() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var runs: [[String: Data]] = []
        var summaries: [SimulationSummary] = []
        for (name, config) in [
            ("a", Self.config), ("b", Self.config),
            ("c", SimulationConfig(activities: 300, seed: 101)),
            ("d", Self.providerFleet(seed: 102)),
        ] {
            let out = directory.appendingPathComponent(name)
            var summary = try FleetSimulator(config: config).run(outputDirectory: out.path)
            summary.outputDirectory = ""
            summaries.append(summary)
            runs.append(tree(out))
        }
        #expect(!runs[0].isEmpty)
        #expect(runs[0] == runs[1])
        #expect(summaries[0] == summaries[1])
        #expect(runs[0] != runs[2] && runs[0] != runs[3])
        #expect(Set(summaries[0].exchangeRecords.keys) == ["apns", "fcm", "tencent_chat"])
        #expect(summaries[2].exchangeRecords.isEmpty)
        #expect(summaries[0].description.contains("records: apns \(summaries[0].apnsRecords), exchange "))
        #expect(!summaries[2].description.contains("exchange"))
    }

    @Test(
        "A --providers fleet logs most requests as exchanges of all three providers, with every provider's error shapes"
    )
    func shapes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try FleetSimulator(config: Self.config).run(outputDirectory: directory.path)
        let lines = try senderLines(directory)
        let exchanges = lines.filter { $0["kind"] as? String == "exchange" }
        let plain = lines.filter { $0["kind"] as? String == "apns" }
        #expect(!plain.isEmpty && exchanges.count > 2 * plain.count)
        #expect(Set(exchanges.compactMap { $0["provider"] as? String }) == ["apns", "fcm", "tencent_chat"])

        func responseBody(_ line: [String: Any]) -> [String: Any]? {
            guard let response = line["response"] as? [String: Any], let body = response["body"] as? String else {
                return nil
            }
            return try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        }
        func status(_ line: [String: Any]) -> Int? { (line["response"] as? [String: Any])?["status"] as? Int }
        func details(_ line: [String: Any]) -> [[String: Any]] {
            ((responseBody(line)?["error"] as? [String: Any])?["details"] as? [[String: Any]]) ?? []
        }
        func type(_ detail: [String: Any]) -> String { detail["@type"] as? String ?? "" }

        let fcmErrors = exchanges.filter {
            $0["provider"] as? String == "fcm" && status($0) != nil && status($0) != 200
        }
        let relayed = fcmErrors.filter {
            details($0).contains { type($0).hasSuffix("google.firebase.fcm.v1.ApnsError") }
        }
        #expect(relayed.contains { line in details(line).contains { $0["reason"] as? String == "Unregistered" } })
        #expect(relayed.contains { line in details(line).contains { $0["statusCode"] as? Int == 400 } })
        let fcmOnly = fcmErrors.filter { !relayed.map { $0 as NSDictionary }.contains($0 as NSDictionary) }
        let codes = Set(fcmOnly.flatMap { details($0).compactMap { $0["errorCode"] as? String } })
        #expect(codes.isSuperset(of: ["UNREGISTERED", "THIRD_PARTY_AUTH_ERROR", "QUOTA_EXCEEDED"]))
        #expect(
            fcmErrors.contains { line in
                status(line) == 500 && details(line).isEmpty
                    && (responseBody(line)?["error"] as? [String: Any])?["status"] as? String == "INTERNAL"
            })

        let tencent = exchanges.filter { $0["provider"] as? String == "tencent_chat" }
        #expect(
            tencent.contains {
                status($0) == 200 && responseBody($0)?["ActionStatus"] as? String == "FAIL"
                    && responseBody($0)?["ErrorCode"] as? Int == 70107
            })
        #expect(tencent.contains { responseBody($0)?["ActionStatus"] as? String == "OK" })

        for provider in ["apns", "fcm", "tencent_chat"] {
            let mine = exchanges.filter { $0["provider"] as? String == provider }
            #expect(mine.contains { $0["response"] == nil && $0["error"] is String }, "\(provider) timeout")
            #expect(mine.contains { status($0) == 500 }, "\(provider) 500")
        }
        let headerNames = Set(
            exchanges.flatMap { (($0["request"] as? [String: Any])?["headers"] as? [String: String] ?? [:]).keys })
        #expect(headerNames.isSuperset(of: ["APNs-Priority", "apns-topic", "apns-priority", "Apns-Topic"]))
    }

    @Test(
        "Tencent Cloud Chat's derived records agree with what the devices show: renders follow accepted pushes in newer seconds"
    )
    func tencentGroundTruth() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try FleetSimulator(config: Self.config).run(outputDirectory: directory.path)
        // Accepted by the contract's rule: HTTP 200, ActionStatus OK, ErrorCode 0.
        struct Accepted {
            var sentAt: String
            var seq: Int
            var event: String
        }
        var accepted: [String: [Accepted]] = [:]
        var activities: Set<String> = []
        for line in try senderLines(directory) where line["provider"] as? String == "tencent_chat" {
            let request = try #require(line["request"] as? [String: Any])
            let bodyText = try #require(request["body"] as? String)
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(bodyText.utf8)) as? [String: Any])
            let activity = try #require(
                ((body["OfflinePushInfo"] as? [String: Any])?["ApnsInfo"] as? [String: Any])?["LiveActivity"]
                    as? [String: Any])
            let id = try #require(activity["LaId"] as? String)
            activities.insert(id)
            guard let response = line["response"] as? [String: Any], response["status"] as? Int == 200,
                let text = response["body"] as? String,
                let answer = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                answer["ActionStatus"] as? String == "OK", answer["ErrorCode"] as? Int == 0
            else { continue }
            let seq = try #require((activity["ContentState"] as? [String: Any])?["seq"] as? Int)
            let sentAt = try #require(line["sent_at"] as? String)
            accepted[id, default: []].append(
                Accepted(sentAt: sentAt, seq: seq, event: activity["Event"] as? String ?? ""))
        }
        #expect(activities.count > 20)
        // What the widgets showed of those activities: render lines the pipeline's
        // decoder takes (not the planted bad lines, a repeated "seq" among them).
        var rendered: Set<String> = []
        var decoder = RecordDecoder()
        for path in InputWalker(paths: [directory.appendingPathComponent("devices").path]).files {
            _ = try LineReader().read(path: path) { line in
                guard let bytes = line.bytes, case .record(.render(let render)) = decoder.decode(bytes),
                    activities.contains(render.activityID), render.seq > 0
                else { return }
                rendered.insert("\(render.activityID)#\(render.seq)")
            }
        }
        #expect(rendered.count > 100)
        var checked = 0
        for (id, pushes) in accepted {
            var lastSecond: Substring?
            for push in pushes.sorted(by: { ($0.sentAt, $0.seq) < ($1.sentAt, $1.seq) })
            where rendered.contains("\(id)#\(push.seq)") {
                // The provider stamps aps.timestamp with the second it sends: a device
                // shows an update only when that second is newer than the one on screen.
                let second = push.sentAt.prefix(19)
                if push.event != "end", let lastSecond { #expect(second > lastSecond, "\(id) seq \(push.seq)") }
                lastSecond = second
                checked += 1
            }
        }
        #expect(checked > 100)
        for key in rendered {
            let parts = key.split(separator: "#")
            #expect(
                accepted[String(parts[0]), default: []].contains { "\($0.seq)" == parts[1] },
                "\(key) rendered without an accepted push")
        }
    }

    @Test(
        "Through Tencent Cloud Chat the device sees the accepted request's second as aps.timestamp, not the planned one"
    )
    func tencentStampsTimestamp() {
        let plan = PushPlan(
            seq: 3, logsSeq: true, event: .update, sendMs: 1_795_248_000_000, apsTimestamp: 1_795_247_990,
            payloadBytes: 900, priority: 10)
        let retried: Int64 = 1_795_248_012_999
        #expect(AcceptedPush(plan: plan, acceptMs: retried, channel: .tencentChat).plan.apsTimestamp == 1_795_248_012)
        for channel in [SenderChannel.apnsRecord, .apnsExchange, .fcm] {
            #expect(AcceptedPush(plan: plan, acceptMs: retried, channel: channel).plan.apsTimestamp == 1_795_247_990)
        }
    }
}

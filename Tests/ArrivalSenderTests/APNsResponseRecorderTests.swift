import ArrivalIngest
import ArrivalModel
import ArrivalSender
import ArrivalTestSupport
import Foundation
import Testing

@Suite("APNsResponseRecorder")
struct APNsResponseRecorderTests {
    /// The recorded exchanges, in the order of `apns/expected.jsonl`.
    static let cases = [
        "200", "400-bad-device-token", "410-unregistered", "413-payload-too-large", "429-too-many-requests",
        "400-unknown-reason", "000-timeout",
    ]

    struct Loaded {
        var exchange: APNsExchange
        var activityID: String?
    }

    /// Reads `apns/<name>.exchange.json` and its payload file.
    static func load(_ name: String) throws -> Loaded {
        let object = try JSONSerialization.jsonObject(with: try fixtureData("apns/\(name).exchange.json", in: .module))
        guard let json = object as? [String: Any], let sentAt = json["sent_at_ms"] as? Int,
            let path = json["path"] as? String, let headers = json["headers"] as? [String: String],
            let payloadFile = json["payload_file"] as? String
        else { throw CocoaError(.fileReadCorruptFile) }
        var response: APNsExchange.Response?
        if let r = json["response"] as? [String: Any], let status = r["status"] as? Int {
            response = APNsExchange.Response(
                status: status, headers: r["headers"] as? [String: String] ?? [:],
                body: Data((r["body"] as? String ?? "").utf8))
        }
        let exchange = APNsExchange(
            sentAt: date(ms: Int64(sentAt)),
            request: .init(path: path, headers: headers, payload: try fixtureData("apns/" + payloadFile, in: .module)),
            response: response,
            transportError: json["transport_error"] as? String,
            latency: (json["latency_ms"] as? Int).map { Double($0) / 1000 }
        )
        return Loaded(exchange: exchange, activityID: json["activity_id"] as? String)
    }

    @Test(
        "Recorded exchanges (200, 400 BadDeviceToken, 410 with its timestamp body, 413, 429, an unknown reason, a timeout) give exactly the expected records"
    )
    func exactRecords() throws {
        let expected = try lines(ofFile: fixture("apns/expected.jsonl", in: .module))
        #expect(expected.count == Self.cases.count)
        for (name, line) in zip(Self.cases, expected) {
            let loaded = try Self.load(name)
            let record = try APNsLogRecord(exchange: loaded.exchange, activityID: loaded.activityID)
            #expect(String(decoding: record.jsonLine(), as: UTF8.self) == line + "\n", "\(name)")
        }
    }

    @Test("Hourly gzip batches hold exactly those lines, and the pipeline ingests them with every reason")
    func hourlyBatches() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = APNsResponseRecorder(.init(directory: directory))
        for name in Self.cases {
            let loaded = try Self.load(name)
            try recorder.record(loaded.exchange, activityID: loaded.activityID)
        }
        try recorder.close()
        let day = directory.path + "/2026-11-21"
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: day).sorted() == [
                "apns-08.jsonl.gz", "apns-09.jsonl.gz",
            ])
        #expect(recorder.closedBatches.map(\.lastPathComponent) == ["apns-08.jsonl.gz", "apns-09.jsonl.gz"])
        var written: [String] = []
        for name in ["apns-08.jsonl.gz", "apns-09.jsonl.gz"] {
            _ = try LineReader().read(path: day + "/" + name) { line in
                written.append(line.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "<too long>")
            }
        }
        #expect(written == (try lines(ofFile: fixture("apns/expected.jsonl", in: .module))))
        let (report, summary) = try ingestAndReport([directory.path])
        #expect(summary.records == [.apns: 7])
        #expect(summary.malformedLines == 0)
        #expect(
            report.requests.byReason == [
                "BadDeviceToken": 1, "LiveActivityBudgetExceeded2027": 1, "PayloadTooLarge": 1, "TooManyRequests": 1,
                "Unregistered": 1, "timeout after 10 s": 1,
            ])
        #expect(report.requests.oversizeFailures == 1)
        #expect(report.requests.accepted == 1)
    }

    @Test("Batches rotate by size and never overwrite: a second recorder in the same hour gets new names")
    func rotationAndRestart() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let loaded = try Self.load("200")
        var names: [[String]] = []
        for run in 0..<2 {
            let recorder = APNsResponseRecorder(
                .init(directory: directory, environment: "sandbox", maxBatchBytes: 1000))
            for seq in 0..<6 {
                var exchange = loaded.exchange
                exchange.sentAt = exchange.sentAt.addingTimeInterval(Double(run * 10 + seq))
                try recorder.record(exchange)
            }
            try recorder.close()
            names.append(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/2026-11-21").sorted())
        }
        #expect(names[0].count >= 3)  // six ~450-byte records, 1000 bytes a batch
        #expect(names[0].allSatisfy { $0.hasPrefix("apns-08") && $0.hasSuffix(".jsonl.gz") })
        #expect(names[1].count == 2 * names[0].count)
        #expect(Set(names[0]).isSubset(of: Set(names[1])))
        let (report, summary) = try ingestAndReport([directory.path])
        #expect(summary.records[.apns] == 12)
        #expect(summary.malformedLines == 0)
        #expect(report.requests.total == 12)
    }

    @Test("Recording from many threads at once loses and tears nothing")
    func concurrentRecording() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = APNsResponseRecorder(.init(directory: directory))
        let base = try Self.load("200").exchange
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for n in 0..<100 {
                var exchange = base
                exchange.sentAt = base.sentAt.addingTimeInterval(Double(thread * 100 + n) / 1000)
                _ = try? recorder.record(exchange)
            }
        }
        try recorder.close()
        let (_, summary) = try ingestAndReport([directory.path])
        #expect(summary.records[.apns] == 800)
        #expect(summary.malformedLines == 0 && summary.duplicateRecords == 0)
    }

    @Test("After flush a crash loses nothing recorded: the hidden batch is renamed on the next start and ingested")
    func crashLeftover() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let crashed = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: crashed) }
        let recorder = APNsResponseRecorder(.init(directory: directory))
        for name in Self.cases.prefix(5) { try recorder.record(try Self.load(name).exchange) }
        try recorder.flush()
        // What a crash leaves: the open batch as it is on disk now, never finished.
        try FileManager.default.createDirectory(atPath: crashed.path + "/2026-11-21", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: directory.path + "/2026-11-21/.apns-08.jsonl.gz.open",
            toPath: crashed.path + "/2026-11-21/.apns-08.jsonl.gz.open")
        _ = APNsResponseRecorder(.init(directory: crashed))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: crashed.path + "/2026-11-21") == ["apns-08.jsonl.gz"])
        let (_, summary) = try ingestAndReport([crashed.path])
        #expect(summary.records[.apns] == 5)
        #expect(summary.malformedByCause == [.truncatedGzip: 1])
        try recorder.close()
    }

    @Test("An exchange whose payload has no integer aps.timestamp is refused, not recorded with a made-up one")
    func noTimestamp() throws {
        let exchange = APNsExchange(
            sentAt: Date(),
            request: .init(path: "/3/device/abcd", headers: [:], payload: Data(#"{"aps":{"timestamp":"1"}}"#.utf8)),
            response: .init(status: 200))
        #expect(throws: APNsLogRecord.Failure.noTimestamp) { try APNsLogRecord(exchange: exchange) }
        let noToken = APNsExchange(
            sentAt: Date(),
            request: .init(path: "/3/device/", headers: [:], payload: Data(#"{"aps":{"timestamp":1}}"#.utf8)),
            response: nil)
        #expect(throws: APNsLogRecord.Failure.noDeviceToken(path: "/3/device/")) {
            try APNsLogRecord(exchange: noToken)
        }
    }
}

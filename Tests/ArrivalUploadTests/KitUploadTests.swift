import ArrivalBeacons
import ArrivalStore
import ArrivalTestSupport
import ArrivalUpload
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The kit's uploaders against the real collector on loopback (``ServedCollector``, `arrival serve`).
@Suite("Kit uploads to the collector", .serialized)
struct KitUploadTests {
    static let render =
        #"{"v":1,"kind":"render","activity_id":"ride-1","seq":3,"rendered_at":"2026-11-21T08:00:01Z","surface":"lock_screen"}"#
    static let apns =
        #"{"v":1,"kind":"apns","apns_id":"a","sent_at":"2026-11-21T08:00:00Z","status":200,"push_token":"ab","activity_id":"ride-1","seq":3,"aps_timestamp":1795248000}"#

    /// A beacon directory with two closed files (their process is gone) and
    /// one that lies, an apns line a device has no business sending.
    static func beaconContainer(in directory: URL) throws -> URL {
        let container = directory.appendingPathComponent("container")
        let day = container.appendingPathComponent(BeaconWriter.directoryName).appendingPathComponent("2026-11-21")
        try FileManager.default.createDirectory(at: day, withIntermediateDirectories: true)
        try Data((render + "\n").utf8).write(to: day.appendingPathComponent("widget-4411.jsonl"))
        try Data((apns + "\n").utf8).write(to: day.appendingPathComponent("app-4412.jsonl"))
        return container
    }

    static func uploader(_ server: ServedCollector, token: String, attempts: Int = 5) -> CollectorUploader {
        CollectorUploader(
            .init(
                baseURL: URL(string: server.base)!, token: token, maxAttempts: attempts, initialBackoff: 0.2,
                maxBackoff: 1))
    }

    @Test("The app's batch goes up with the device token and its files are deleted; its apns line is refused")
    func beacons() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServedCollector(directory: directory, port: CollectorClient.freePort())
        try await server.ready()
        let container = try Self.beaconContainer(in: directory)
        let collector = BeaconCollector(container: container, isProcessAlive: { _ in false })
        let summary = try await collector.upload(with: Self.uploader(server, token: ServedCollector.device))
        #expect(summary.batches == 1 && summary.filesDeleted == 2 && summary.lines == 2)
        #expect(collector.closedFiles().isEmpty)
        let sha = try #require(summary.receipts.first?.sha256)
        var state: [String: Any] = [:]
        for _ in 0..<1500 {
            let (body, _) = try await CollectorClient.request(
                "\(server.base)/v1/uploads/\(sha)", token: ServedCollector.device)
            state = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
            if state["state"] as? String == "ingested" { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(state["records"] as? Int == 1 && state["malformed_lines"] as? Int == 1)
        #expect((state["name"] as? String)?.hasPrefix("beacons/beacons-") == true)
        try await server.stop(SIGTERM)
    }

    @Test("The sender's closed batches go up with the sender token; a wrong token is refused at once, files kept")
    func senderBatches() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServedCollector(directory: directory, port: CollectorClient.freePort())
        try await server.ready()
        let log = directory.appendingPathComponent("sendlog")
        let day = log.appendingPathComponent("2026-11-21")
        try FileManager.default.createDirectory(at: day, withIntermediateDirectories: true)
        try Data(GzipWriter.gzip(Array((Self.apns + "\n").utf8))).write(
            to: day.appendingPathComponent("apns-08.jsonl.gz"))
        try Data().write(to: day.appendingPathComponent(".apns-09.jsonl.gz.open"))

        let wrong = SenderLogShipper(
            directory: log, uploader: Self.uploader(server, token: "not-a-known-token-0123456789"))
        await #expect(throws: CollectorUploader.Failure.self) { _ = try await wrong.ship() }
        #expect(wrong.closedBatches() == ["2026-11-21/apns-08.jsonl.gz"])

        let shipper = SenderLogShipper(
            directory: log, uploader: Self.uploader(server, token: ServedCollector.sender))
        let summary = try await shipper.ship()
        #expect(summary.shipped == ["2026-11-21/apns-08.jsonl.gz"] && summary.receipts.first?.state == "queued")
        #expect(shipper.closedBatches().isEmpty)
        #expect(FileManager.default.fileExists(atPath: day.appendingPathComponent(".apns-09.jsonl.gz.open").path))
        try await server.stop(SIGTERM)
    }

    @Test(
        "A full spool answers 503 with Retry-After; the uploader waits what it asks, up to its cap, then gets through")
    func retryAfter() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServedCollector(
            directory: directory, port: CollectorClient.freePort(),
            arguments: ["--max-upload-bytes", "4096", "--max-spool-bytes", "4096"])
        try await server.ready()
        // Another writer holds the store (as a long ingest would): the worker waits, so what is queued stays.
        let holder = try SQLiteStore(path: directory.appendingPathComponent("store.sqlite").path)
        let held = try holder.beginFile(path: "held", now: 0)
        let line = Self.render + "\n"
        let first = Data(String(repeating: line, count: 2500 / line.utf8.count).utf8)
        let (_, status) = try await CollectorClient.request(
            "\(server.base)/v1/uploads", method: "POST", token: ServedCollector.device, name: "first.jsonl",
            body: first)
        #expect(status == 202)
        // The second does not fit beside the first: 503, Retry-After 30.
        var request = URLRequest(url: URL(string: "\(server.base)/v1/uploads")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(ServedCollector.device)", forHTTPHeaderField: "Authorization")
        let second = Data(
            String(
                repeating: line.replacingOccurrences(of: "\"seq\":3", with: "\"seq\":4"), count: 2500 / line.utf8.count
            ).utf8)
        request.httpBody = second
        let (_, response) = try await URLSession.shared.data(for: request)
        let refused = try #require(response as? HTTPURLResponse)
        #expect(refused.statusCode == 503 && refused.value(forHTTPHeaderField: "Retry-After") == "30")

        // The uploader's own backoff is 0.05 s; Retry-After asks 30 s, capped by its 2 s.
        let uploader = CollectorUploader(
            .init(
                baseURL: URL(string: server.base)!, token: ServedCollector.device, maxAttempts: 10,
                initialBackoff: 0.05, maxBackoff: 2))
        let started = ContinuousClock.now
        let upload = Task { try await uploader.upload(second, name: "second.jsonl") }
        // The store is let go once the collector has refused the uploader's first attempt too (two refusals in
        // /metrics: the request above and that attempt), whatever the machine's pace: an uploader that ignored
        // Retry-After would then be through at once, one that honoured it uncapped only after 30 s.
        var refusals = 0
        for _ in 0..<600 where refusals < 2 {
            let (metrics, _) = try await CollectorClient.request("\(server.base)/metrics")
            refusals = String(decoding: metrics, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("arrival_uploads_total{") && $0.contains(#"result="spool_full""#) }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0) { $0 + Int($1) }
            if refusals < 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(refusals == 2)
        held.rollback()
        try holder.commitBatch()
        let receipt = try await upload.value
        let waited = ContinuousClock.now - started
        #expect(receipt.state == "queued")
        #expect(waited >= .seconds(2), "retried after \(waited)")
        #expect(waited < .seconds(30), "retried after \(waited): Retry-After's 30 s, not the uploader's cap of 2 s")
        try await server.stop(SIGTERM)
    }

    @Test("An upload retries while the collector is down and goes through once it is up")
    func retries() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = CollectorClient.freePort()
        let uploader = CollectorUploader(
            .init(
                baseURL: URL(string: "http://127.0.0.1:\(port)")!, token: ServedCollector.device, maxAttempts: 40,
                initialBackoff: 0.1, maxBackoff: 0.3))
        let upload = Task { try await uploader.upload(Data((Self.render + "\n").utf8), name: "late.jsonl") }
        try await Task.sleep(for: .milliseconds(600))
        let server = try ServedCollector(directory: directory, port: port)
        let receipt = try await upload.value
        #expect(receipt.state == "queued" && receipt.sha256.count == 64)
        try await server.stop(SIGTERM)
    }
}

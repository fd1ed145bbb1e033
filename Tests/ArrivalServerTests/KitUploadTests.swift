import ArrivalBeacons
import ArrivalSender
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// The kit's uploaders against the real collector on loopback.
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

    static func uploader(_ server: LiveCollectorTests.Server, token: String, attempts: Int = 5) -> CollectorUploader {
        CollectorUploader(
            .init(
                baseURL: URL(string: server.base)!, token: token, maxAttempts: attempts, initialBackoff: 0.2,
                maxBackoff: 1))
    }

    @Test("The app's batch goes up with the device token and its files are deleted; its apns line is refused")
    func beacons() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LiveCollectorTests.Server(directory: directory, port: LiveCollectorTests.freePort())
        defer { server.kill(SIGTERM) }
        try await server.ready()
        let container = try Self.beaconContainer(in: directory)
        let collector = BeaconCollector(container: container, isProcessAlive: { _ in false })
        let summary = try await collector.upload(with: Self.uploader(server, token: LiveCollectorTests.device))
        #expect(summary.batches == 1 && summary.filesDeleted == 2 && summary.lines == 2)
        #expect(collector.closedFiles().isEmpty)
        let sha = try #require(summary.receipts.first?.sha256)
        var state: [String: Any] = [:]
        for _ in 0..<200 {
            let (body, _) = try await LiveCollectorTests.request(
                "\(server.base)/v1/uploads/\(sha)", token: LiveCollectorTests.device)
            state = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
            if state["state"] as? String == "ingested" { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(state["records"] as? Int == 1 && state["malformed_lines"] as? Int == 1)
        #expect((state["name"] as? String)?.hasPrefix("beacons/beacons-") == true)
    }

    @Test("The sender's closed batches go up with the sender token; a wrong token is refused at once, files kept")
    func senderBatches() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LiveCollectorTests.Server(directory: directory, port: LiveCollectorTests.freePort())
        defer { server.kill(SIGTERM) }
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
            directory: log, uploader: Self.uploader(server, token: LiveCollectorTests.sender))
        let summary = try await shipper.ship()
        #expect(summary.shipped == ["2026-11-21/apns-08.jsonl.gz"] && summary.receipts.first?.state == "queued")
        #expect(shipper.closedBatches().isEmpty)
        #expect(FileManager.default.fileExists(atPath: day.appendingPathComponent(".apns-09.jsonl.gz.open").path))
    }

    @Test("An upload retries while the collector is down and goes through once it is up")
    func retries() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = LiveCollectorTests.freePort()
        let uploader = CollectorUploader(
            .init(
                baseURL: URL(string: "http://127.0.0.1:\(port)")!, token: LiveCollectorTests.device, maxAttempts: 40,
                initialBackoff: 0.1, maxBackoff: 0.3))
        let upload = Task { try await uploader.upload(Data((Self.render + "\n").utf8), name: "late.jsonl") }
        try await Task.sleep(for: .milliseconds(600))
        let server = try LiveCollectorTests.Server(directory: directory, port: port)
        defer { server.kill(SIGTERM) }
        let receipt = try await upload.value
        #expect(receipt.state == "queued" && receipt.sha256.count == 64)
    }
}

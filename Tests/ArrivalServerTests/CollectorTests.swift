import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalStores
import ArrivalTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import NIOFoundationEssentialsCompat
import Prometheus
import Testing

@testable import ArrivalServer

/// The collector's HTTP rules, through Hummingbird's test client.
@Suite("Collector")
struct CollectorTests {
    static let device = "device-token-0123456789abcdef"
    static let sender = "sender-token-0123456789abcdef"
    static let reader = "read-token-0123456789abcdef00"

    /// The test process' metrics, bootstrapped once as `arrival serve` does (swift-metrics takes one bootstrap a process).
    static let metricsRegistry: PrometheusCollectorRegistry = {
        let metrics = Collector.prometheusMetrics()
        MetricsSystem.bootstrap(metrics.factory)
        return metrics.registry
    }()

    static func collector(in directory: URL, maxUploadBytes: Int = 1 << 20, maxSpoolBytes: Int = 1 << 30) throws
        -> Collector
    {
        var configuration = Collector.Configuration()
        configuration.registry = metricsRegistry
        configuration.store = .sqlite(path: directory.appendingPathComponent("store.sqlite").path)
        configuration.spoolPath = directory.appendingPathComponent("spool").path
        configuration.maxUploadBytes = maxUploadBytes
        configuration.maxSpoolBytes = maxSpoolBytes
        try configuration.tokens.add(device, as: .device)
        try configuration.tokens.add(sender, as: .sender)
        try configuration.tokens.add(reader, as: .read)
        return try Collector(configuration: configuration)
    }

    /// The router alone: uploads are spooled, nothing ingests them.
    static func withRouter(
        maxUploadBytes: Int = 1 << 20, maxSpoolBytes: Int = 1 << 30,
        _ body: @Sendable (Collector, any TestClientProtocol) async throws -> Void
    ) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let collector = try collector(in: directory, maxUploadBytes: maxUploadBytes, maxSpoolBytes: maxSpoolBytes)
        try await Application(router: collector.router()).test(.router) { client in try await body(collector, client) }
    }

    /// The whole application: its ingest worker runs.
    static func withApplication(_ body: @Sendable (Collector, any TestClientProtocol) async throws -> Void)
        async throws
    {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let collector = try collector(in: directory)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        try await collector.application(logger: logger).test(.router) { client in try await body(collector, client) }
    }

    static func auth(_ token: String, name: String? = nil) -> HTTPFields {
        var fields: HTTPFields = [.authorization: "Bearer \(token)"]
        if let name { fields.uploadName = name }
        return fields
    }

    /// What `GET /v1/uploads/{sha}` answers once the upload is ingested, or its last answer after 30 s.
    static func ingestedState(_ sha: String, client: any TestClientProtocol) async throws -> [String: Any] {
        var state: [String: Any] = [:]
        for _ in 0..<1500 {
            try await client.execute(uri: "/v1/uploads/\(sha)", method: .get, headers: auth(reader)) {
                state = json($0)
            }
            if state["state"] as? String == "ingested" { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return state
    }

    static func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body))) as? [String: Any] ?? [:]
    }

    static let render =
        #"{"v":1,"kind":"render","activity_id":"a1","seq":1,"rendered_at":"2026-11-21T08:00:01Z","surface":"lock_screen"}"#
    static let apns =
        #"{"v":1,"kind":"apns","apns_id":"x","sent_at":"2026-11-21T08:00:00Z","status":200,"push_token":"ab","activity_id":"a1","seq":1,"aps_timestamp":1795248000}"#
    static let exchange =
        #"{"v":1,"kind":"exchange","provider":"fcm","sent_at":"2026-11-21T08:00:00Z","request":{"url":"u","body":"{\"message\":{\"apns\":{\"live_activity_token\":\"ab\",\"payload\":{\"aps\":{\"timestamp\":1795248000}}}}}"}}"#
    /// Contract 3.0: a broadcast record and a broadcast exchange, sender lines like any `apns` one.
    static let broadcast =
        #"{"v":1,"kind":"apns","apns_id":"b","sent_at":"2026-11-21T08:00:00Z","status":200,"channel_id":"Y2g=","seq":2,"aps_timestamp":1795248000}"#
    static let broadcastExchange =
        #"{"v":1,"kind":"exchange","provider":"apns","sent_at":"2026-11-21T08:00:00Z","request":{"url":"/4/broadcasts/apps/com.example","headers":{"apns-channel-id":"Y2g="},"body":"{\"aps\":{\"timestamp\":1795248001}}"},"response":{"status":200}}"#

    @Test("Uploads need a known bearer token: 401 with WWW-Authenticate otherwise, 403 for a read token")
    func authentication() async throws {
        try await Self.withRouter { _, client in
            let body = ByteBuffer(string: Self.render + "\n")
            for headers in [HTTPFields(), Self.auth("not-a-token-of-this-collector"), [.authorization: "Basic abc"]] {
                try await client.execute(uri: "/v1/uploads", method: .post, headers: headers, body: body) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
                    #expect((Self.json(response)["error"] as? String)?.isEmpty == false)
                }
            }
            try await client.execute(uri: "/v1/uploads", method: .post, headers: Self.auth(Self.reader), body: body) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: "/v1/report", method: .get, headers: Self.auth(Self.sender)) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: "/v1/report", method: .get, headers: Self.auth(Self.device)) {
                #expect($0.status == .forbidden)
            }
            try await client.execute(uri: "/v1/report", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    @Test("An upload is acknowledged once spooled: 202 queued, then 200 duplicate for the same bytes")
    func acknowledged() async throws {
        try await Self.withRouter { collector, client in
            let body = ByteBuffer(string: Self.render + "\n")
            var sha = ""
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.device, name: "devices/d1/widget-1.jsonl"),
                body: body
            ) { response in
                #expect(response.status == .accepted)
                let answer = Self.json(response)
                #expect(answer["state"] as? String == "queued")
                sha = answer["upload"] as? String ?? ""
            }
            #expect(sha.count == 64)
            #expect(collector.spool.queuedEntry(sha256: sha)?.name == "devices/d1/widget-1.jsonl")
            try await client.execute(uri: "/v1/uploads", method: .post, headers: Self.auth(Self.device), body: body) {
                #expect($0.status == .ok)
                #expect(Self.json($0)["state"] as? String == "duplicate")
            }
            try await client.execute(uri: "/v1/uploads/\(sha)", method: .get, headers: Self.auth(Self.reader)) {
                #expect($0.status == .ok)
                #expect(Self.json($0)["state"] as? String == "queued")
            }
            try await client.execute(
                uri: "/v1/uploads/\(String(repeating: "0", count: 64))", method: .get, headers: Self.auth(Self.device)
            ) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v1/uploads/xyz", method: .get, headers: Self.auth(Self.device)) {
                #expect($0.status == .badRequest)
            }
            try await client.execute(uri: "/v1/uploads/\(sha)", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    @Test("Bad uploads: 400 empty or badly named, 413 over the limit, 503 with Retry-After when the spool is full")
    func refusals() async throws {
        try await Self.withRouter(maxUploadBytes: 1000, maxSpoolBytes: 1500) { _, client in
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender), body: ByteBuffer()
            ) { #expect($0.status == .badRequest) }
            for name in ["../etc/passwd", "/abs.jsonl", "a//b", "a/../b"] {
                try await client.execute(
                    uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender, name: name),
                    body: ByteBuffer(string: Self.render)
                ) { #expect($0.status == .badRequest, "\(name)") }
            }
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender),
                body: ByteBuffer(string: String(repeating: "x", count: 1001))
            ) { response in
                #expect(response.status == .contentTooLarge)
                #expect((Self.json(response)["error"] as? String)?.contains("1000") == true)
            }
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender),
                body: ByteBuffer(string: String(repeating: "y", count: 900))
            ) { #expect($0.status == .accepted) }
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender),
                body: ByteBuffer(string: String(repeating: "z", count: 900))
            ) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "30")
            }
        }
    }

    @Test("Two X-Upload-Name headers, a . name and a Transfer-Encoding other than chunked are refused")
    func headerRules() async throws {
        try await Self.withRouter { _, client in
            var twice = Self.auth(Self.sender)
            twice.append(HTTPFields.Element(name: UploadName.header, value: "a.jsonl"))
            twice.append(HTTPFields.Element(name: UploadName.header, value: "b.jsonl"))
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: twice, body: ByteBuffer(string: Self.render)
            ) { response in
                #expect(response.status == .badRequest)
                #expect((Self.json(response)["error"] as? String)?.contains("one X-Upload-Name") == true)
            }
            for name in [".", "a/./b.jsonl", "devices/\u{FFFD}.jsonl"] {
                try await client.execute(
                    uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender, name: name),
                    body: ByteBuffer(string: Self.render)
                ) { #expect($0.status == .badRequest, "\(name)") }
            }
            var coded = Self.auth(Self.sender)
            coded[.transferEncoding] = "gzip, chunked"
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: coded, body: ByteBuffer(string: Self.render)
            ) { response in
                #expect(response.status == .notImplemented)
                #expect((Self.json(response)["error"] as? String)?.contains("Transfer-Encoding") == true)
            }
            // One name, plain: taken.
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.sender, name: "./senders/a.jsonl"),
                body: ByteBuffer(string: Self.render)
            ) { #expect($0.status == .accepted) }
        }
    }

    @Test("Unknown paths are 404 and known ones asked with another method 405, both with a JSON message")
    func routing() async throws {
        try await Self.withRouter { _, client in
            try await client.execute(uri: "/v2/nothing", method: .get) { response in
                #expect(response.status == .notFound)
                #expect((Self.json(response)["error"] as? String)?.contains("/v2/nothing") == true)
            }
            try await client.execute(uri: "/v1/uploads", method: .delete, headers: Self.auth(Self.reader)) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, POST")
            }
            try await client.execute(uri: "/v1/report", method: .post, headers: Self.auth(Self.reader)) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET")
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test("/readyz answers 503 with the reason when the spool cannot be written; /healthz still 200")
    func notReady() async throws {
        try await Self.withRouter { collector, client in
            // The spool's disk went away under the collector (unmounted, removed by hand).
            try FileManager.default.removeItem(at: collector.spool.root.appendingPathComponent("incoming"))
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect((Self.json(response)["error"] as? String)?.contains("spool") == true)
            }
            try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test(
        "A device token's apns, exchange and broadcast lines are kind_not_allowed; its renders, and a sender's records, are stored"
    )
    func roles() async throws {
        try await Self.withApplication { collector, client in
            let lines =
                [Self.render, Self.apns, Self.exchange, "{torn", Self.broadcast, Self.broadcastExchange].joined(
                    separator: "\n") + "\n"
            var shas: [String] = []
            for (token, name) in [(Self.device, "device.jsonl"), (Self.sender, "sender.jsonl")] {
                try await client.execute(
                    uri: "/v1/uploads", method: .post, headers: Self.auth(token, name: name),
                    body: ByteBuffer(string: lines + (token == Self.sender ? "\n" : ""))
                ) { response in
                    #expect(response.status == .accepted)
                    shas.append(Self.json(response)["upload"] as? String ?? "")
                }
            }
            var states: [[String: Any]] = []
            for sha in shas { states.append(try await Self.ingestedState(sha, client: client)) }
            #expect(states[0]["state"] as? String == "ingested")
            #expect(states[0]["records"] as? Int == 1 && states[0]["malformed_lines"] as? Int == 5)
            // The sender's upload: the render repeats the device's; apns, exchange and broadcasts are its own.
            #expect(states[1]["records"] as? Int == 4 && states[1]["duplicate_records"] as? Int == 1)
            #expect(states[1]["malformed_lines"] as? Int == 1)
            let problems = try await collector.engine.read { try $0.read { try $0.malformedProblems() } }
            let notAllowed = problems.filter { $0.cause == "kind_not_allowed" }
            #expect(notAllowed.map(\.path) == Array(repeating: "device.jsonl", count: 4))
            #expect(notAllowed.map(\.line) == [2, 3, 5, 6])
            // The report a read token gets is the report of the store.
            let expected = try await collector.engine.read {
                try ReportOutput.json.render(try ProducedReport.of($0, window: nil, daily: false))
            }
            try await client.execute(uri: "/v1/report?format=json", method: .get, headers: Self.auth(Self.reader)) {
                #expect($0.status == .ok)
                #expect(String(buffer: $0.body) == expected)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(response.status == .ok)
                #expect(text.contains("arrival_uploads_total"))
                #expect(text.contains("arrival_records_ingested_total"))
                #expect(text.contains("arrival_spool_uploads"))
                // Requests were answered 200 and 202 here: no error counter for a status that is no error.
                #expect(text.contains("http_server_requests_total"))
                #expect(!text.contains("error_type=\"2") && !text.contains("error_type=\"3"))
            }
        }
    }

    @Test("Contract 3.1: a device's frequent_pushes is stored with its render and callback; a non-string is wrong_type")
    func frequentPushes() async throws {
        try await Self.withApplication { collector, client in
            let lines =
                [
                    #"{"v":1,"kind":"render","activity_id":"a1","seq":1,"rendered_at":"2026-11-21T08:00:01Z","frequent_pushes":"disabled"}"#,
                    #"{"v":1,"kind":"callback","callback":"content_update","activity_id":"a1","seq":1,"received_at":"2026-11-21T08:00:02Z","frequent_pushes":"enabled"}"#,
                    #"{"v":1,"kind":"render","activity_id":"a1","seq":2,"rendered_at":"2026-11-21T08:00:03Z","frequent_pushes":true}"#,
                ].joined(separator: "\n") + "\n"
            var sha = ""
            try await client.execute(
                uri: "/v1/uploads", method: .post, headers: Self.auth(Self.device, name: "switch.jsonl"),
                body: ByteBuffer(string: lines)
            ) { response in
                #expect(response.status == .accepted)
                sha = Self.json(response)["upload"] as? String ?? ""
            }
            let state = try await Self.ingestedState(sha, client: client)
            #expect(state["records"] as? Int == 2 && state["malformed_lines"] as? Int == 1)
            let records = try await collector.engine.read { try $0.read { try $0.activityRecords("a1") } }
            #expect(records.renders.map(\.frequentPushes) == ["disabled"])
            #expect(records.callbacks.map(\.frequentPushes) == ["enabled"])
            let problems = try await collector.engine.read { try $0.read { try $0.malformedProblems() } }
            #expect(problems.map(\.cause) == ["wrong_type"])
        }
    }
}

import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The built `arrival serve` as a child process, over loopback: what a
/// deployment does, crashes included.
@Suite("Collector, live", .serialized)
struct LiveCollectorTests {
    static let device = ServedCollector.device
    static let sender = ServedCollector.sender
    static let reader = ServedCollector.reader

    static func freePort() -> Int { CollectorClient.freePort() }

    static func request(
        _ url: String, method: String = "GET", token: String? = nil, name: String? = nil, body: Data? = nil
    ) async throws -> (Data, Int) {
        try await CollectorClient.request(url, method: method, token: token, name: name, body: body)
    }

    /// SampleData's record files, with their names relative to it.
    static func sampleFiles() -> [(name: String, path: String)] {
        let root = packageRoot.appendingPathComponent("SampleData").path
        return InputWalker(paths: [root]).files.filter { $0.contains(".jsonl") }.sorted().map {
            (String($0.dropFirst(root.count + 1)), $0)
        }
    }

    @Test(
        "Uploads from several clients with a kill -9 mid-way, a restart and the unacknowledged ones sent again give arrival ingest's report"
    )
    func killedMidway() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = Self.sampleFiles()
        #expect(files.count > 50)
        var server = try ServedCollector(directory: directory, port: Self.freePort())
        try await server.ready()
        // Four clients; the server is killed once a third of the files are acknowledged.
        let acknowledged = Acknowledged()
        let killAt = files.count / 3
        let first = server
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<4 {
                group.addTask {
                    for (index, file) in files.enumerated() where index % 4 == client {
                        let token = file.name.hasPrefix("sender/") ? Self.sender : Self.device
                        guard let data = FileManager.default.contents(atPath: file.path),
                            let (_, status) = try? await Self.request(
                                "\(first.base)/v1/uploads", method: "POST", token: token, name: file.name, body: data),
                            status == 200 || status == 202
                        else { continue }
                        if acknowledged.add(file.name) == killAt {
                            let killed = try? await first.stop(SIGKILL)
                            #expect(killed?.signal == SIGKILL, "\(String(describing: killed))")
                        }
                    }
                }
            }
        }
        #expect(acknowledged.count >= killAt && acknowledged.count < files.count)
        // Stopped at the end; if the test throws first, letting go of it kills it.
        server = try ServedCollector(directory: directory, port: Self.freePort())
        try await server.ready()
        for file in files where !acknowledged.contains(file.name) {
            let token = file.name.hasPrefix("sender/") ? Self.sender : Self.device
            let (_, status) = try await Self.request(
                "\(server.base)/v1/uploads", method: "POST", token: token, name: file.name,
                body: FileManager.default.contents(atPath: file.path))
            #expect(status == 200 || status == 202, "\(file.name)")
        }
        // Wait for the spool to drain, then compare with an ingest of the same files.
        for _ in 0..<600 {
            let (metrics, _) = try await Self.request("\(server.base)/metrics")
            if String(decoding: metrics, as: UTF8.self).contains("arrival_spool_uploads 0.0") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let (served, status) = try await Self.request("\(server.base)/v1/report?format=json", token: Self.reader)
        #expect(status == 200)
        let store = try SQLiteStore(path: directory.appendingPathComponent("direct.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(files.map { NamedFile(path: $0.path, name: $0.name) })
        let expected = try ReportOutput.json.render(try ProducedReport.of(store, window: nil, daily: false))
        #expect(String(decoding: served, as: UTF8.self) == expected)
        try await server.stop(SIGTERM)
    }

    @Test("/metrics passes promtool check metrics, and SIGTERM ends the collector with status 0")
    func metricsAndShutdown() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ServedCollector(directory: directory, port: Self.freePort())
        try await server.ready()
        let file = Self.sampleFiles()[0]
        _ = try await Self.request(
            "\(server.base)/v1/uploads", method: "POST", token: Self.device, name: file.name,
            body: FileManager.default.contents(atPath: file.path))
        _ = try await Self.request("\(server.base)/v1/uploads", method: "POST", token: "wrong-token-0123456789")
        let (metrics, status) = try await Self.request("\(server.base)/metrics")
        #expect(status == 200)
        let text = String(decoding: metrics, as: UTF8.self)
        #expect(text.contains("http_server_request_duration_bucket"))
        #expect(text.contains(#"arrival_uploads_total{role="none",result="unauthorized"} 1"#))
        let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        if let promtool {
            let check = try await run(.path(promtool), ["check", "metrics"], stdin: metrics)
            #expect(check.status == 0, "promtool: \(check)")
        } else {
            Issue.record("promtool is not installed (Debian: apt-get install prometheus); .ci/run installs it")
        }
        let end = try await server.stop(SIGTERM)
        #expect(end.signal == nil && end.status == 0, "\(end)")
    }
}

package import Foundation

/// A running `arrival serve` (the built executable) with its store and spool
/// in a directory, over loopback: what a deployment runs, crashes included.
/// For the command line's tests, and for the kit's uploaders, whose
/// collector must be a process of its own: the collector's metrics are
/// process-wide (swift-metrics takes one bootstrap a process) and every test
/// target runs in the one test process.
package final class ServedCollector: Sendable {
    package static let device = "device-token-live-0123456789"
    package static let sender = "sender-token-live-0123456789"
    package static let reader = "read-token-live-0123456789ab"

    package let process: ChildProcess
    package let port: Int

    /// Starts `arrival serve` on `port` with `directory`'s store and spool, and `arguments` after them.
    package init(directory: URL, port: Int, arguments: [String] = []) throws {
        self.port = port
        process = try ChildProcess(
            "arrival",
            [
                "serve", "--db", directory.appendingPathComponent("store.sqlite").path, "--spool",
                directory.appendingPathComponent("spool").path, "--port", String(port), "--log-level", "warning",
            ] + arguments,
            environment: [
                "ARRIVAL_DEVICE_TOKENS": Self.device, "ARRIVAL_SENDER_TOKENS": Self.sender,
                "ARRIVAL_READ_TOKENS": Self.reader,
            ])
    }

    package var base: String { "http://127.0.0.1:\(port)" }

    /// Waits until `/readyz` answers 200.
    package func ready() async throws {
        for _ in 0..<300 {
            if let (_, status) = try? await CollectorClient.request("\(base)/readyz"), status == 200 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ProcessRunError("the collector did not start: \(process.stderr)\(process.stdout)")
    }

    /// Sends `signal` and waits (off the cooperative pool) for the collector to end.
    @discardableResult
    package func stop(_ signal: Int32) async throws -> ProcessOutcome {
        try await process.stop(signal)
    }
}

import ArrivalAnalysis
import ArrivalModel
import Foundation
import Logging
import ServiceLifecycle

/// Recomputes today's (UTC) per-app rates for `/metrics` every few seconds,
/// so a scrape never waits for an analysis.
struct RatesRefresher: Service {
    let engine: StoreEngine
    let metrics: CollectorMetrics
    let everySeconds: Int
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            let started = ContinuousClock.now
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let day = now - now % Milliseconds.day
            do {
                // Not awaited past SIGTERM: an analysis of a large day must not hold the shutdown.
                let today = ReportWindow(from: day, to: day + Milliseconds.day)
                let report = try await untilGracefulShutdown {
                    try await engine.read { store in
                        try ProducedReport.of(store, window: today, daily: false).report
                    }
                }
                guard let report else { return }
                metrics.dailyRates(report)
            } catch {
                logger.warning("today's rates not computed: \(error)")
            }
            // A PostgreSQL store is shared with other collectors and jobs: at most a tenth of the time goes to
            // this collector's reading it for the rates.
            let took = ContinuousClock.now - started
            let pause =
                engine.readsServer ? max(.seconds(max(1, everySeconds)), took * 9) : .seconds(max(1, everySeconds))
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
        }
    }
}

/// The result of `work`, or nil as soon as graceful shutdown begins: the
/// work then goes on unawaited and its result is dropped.
func untilGracefulShutdown<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T? {
    let outcome = FirstOutcome<T?>()
    return try await withGracefulShutdownHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.wait(continuation)
            Task {
                do {
                    outcome.resolve(.success(try await work()))
                } catch {
                    outcome.resolve(.failure(error))
                }
            }
        }
    } onGracefulShutdown: {
        outcome.resolve(.success(nil))
    }
}

/// A continuation resumed once, with the first outcome that comes (which
/// may come before the continuation is there; later ones are dropped).
private final class FirstOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var result: Result<T, any Error>?

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = lock.withLock {
            if result == nil { self.continuation = continuation }
            return result
        }
        if let early { continuation.resume(with: early) }
    }

    func resolve(_ outcome: Result<T, any Error>) {
        let waiting: CheckedContinuation<T, any Error>? = lock.withLock {
            guard result == nil else { return nil }
            result = outcome
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: outcome)
    }
}

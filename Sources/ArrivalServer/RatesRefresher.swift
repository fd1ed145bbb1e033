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
    let outcome = OneOutcome<Result<T?, any Error>>()
    return try await withGracefulShutdownHandler {
        await withCheckedContinuation { continuation in
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
    }.get()
}

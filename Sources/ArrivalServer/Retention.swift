import ArrivalModel
import ArrivalStore
import Foundation
import Logging
import ServiceLifecycle

/// `arrival serve --retain DAYS`: prunes the store before now − DAYS at
/// start and then once a day (Documentation/Retention.md). The spool needs
/// no pruning: it keeps an upload only until it is stored (a segment is
/// deleted once every upload in it is ingested), and an upload acknowledged
/// but not yet stored is never removed.
///
/// The clock and the pause between prunes are given, so tests drive it
/// without waiting.
struct Retention: Service {
    let engine: StoreEngine
    let days: Int
    let logger: Logger
    /// Milliseconds since the Unix epoch, now.
    let now: @Sendable () -> Int64
    /// Waits until the next prune is due.
    let pause: @Sendable (Duration) async throws -> Void

    /// How long between prunes.
    static let interval: Duration = .milliseconds(Milliseconds.day)

    /// The cut of a prune at `now` that retains `days` days.
    static func cut(now: Int64, days: Int) -> Int64 { now - Int64(days) * Milliseconds.day }

    /// Prunes once, now; logs what went, or why nothing did.
    @discardableResult
    func pruneOnce() async -> PruneSummary? {
        let cut = Self.cut(now: now(), days: days)
        switch await engine.prune(before: cut) {
        case .success(let summary):
            logger.info(
                "retention: pruned before \(RFC3339.format(milliseconds: cut))",
                metadata: [
                    "requests": "\(summary.requests)", "renders": "\(summary.renders)",
                    "callbacks": "\(summary.callbacks)", "kept_before": "\(summary.keptBefore)",
                ])
            return summary
        case .failure(let error):
            logger.warning(
                "retention: prune before \(RFC3339.format(milliseconds: cut)) failed, tried again tomorrow: \(error)")
            return nil
        }
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            _ = try await untilGracefulShutdown { await pruneOnce() }
            do {
                try await cancelWhenGracefulShutdown { try await pause(Self.interval) }
            } catch {
                return
            }
        }
    }
}

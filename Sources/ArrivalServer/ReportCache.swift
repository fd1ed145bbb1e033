import Foundation

/// Bounds what `GET /v1/report` costs: at most ``maxConcurrent`` reports
/// are computed at once (each may hold a large store's analysis in memory),
/// a request past that is refused (503 with `Retry-After`), and a report
/// already computed is served again from memory while the store has not
/// changed. Requests for the same report while it is computed wait for
/// that computation instead of starting their own.
///
/// A report is known by its request (format, window, trend days) and the
/// store's change state (``StoreEngine/changeState``): a commit changes the
/// state, so a cached report is never served for a store that changed
/// since (entries of other states are dropped as soon as a report of the
/// new state is stored). At most ``maxEntries`` reports, ``maxBytes``
/// together, are kept, the least recently used going first; with
/// ``maxAge``, none is served older than that (a PostgreSQL store, whose
/// other writers' commits the change state does not see).
/// `@unchecked Sendable`: `computing`, `entries`, `bytes` and `uses` change only under `lock`; the limits are constants.
final class ReportCache: @unchecked Sendable {
    struct Key: Hashable, Sendable {
        /// The request: format, window and trend days.
        var request: String
        /// The store's change state when the request came.
        var state: String
    }

    /// Past ``maxConcurrent`` computations.
    struct Busy: Error {}

    enum Source: Equatable {
        case computed, cached, shared
    }

    /// Seconds a refused request is told to wait.
    static let retryAfterSeconds = 5

    let maxConcurrent: Int
    let maxEntries: Int
    let maxBytes: Int
    let maxAge: Duration?

    private let lock = NSLock()
    private var computing: [Key: Task<String, any Error>] = [:]
    private var entries: [Key: (text: String, storedAt: ContinuousClock.Instant, used: UInt64)] = [:]
    private var bytes = 0
    private var uses: UInt64 = 0

    init(maxConcurrent: Int, maxEntries: Int = 16, maxBytes: Int = 64 << 20, maxAge: Duration? = nil) {
        self.maxConcurrent = maxConcurrent
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.maxAge = maxAge
    }

    /// The report for `key`: from the cache, from a computation of it in
    /// progress, or computed now by `compute`; throws ``Busy`` when it
    /// would be one computation too many.
    func report(_ key: Key, compute: @escaping @Sendable () async throws -> String) async throws -> (
        text: String, source: Source
    ) {
        enum Step {
            case cached(String)
            case join(Task<String, any Error>)
            case start(Task<String, any Error>)
        }
        let step: Step = try lock.withLock {
            uses += 1
            if let entry = entries[key] {
                if let maxAge, ContinuousClock.now - entry.storedAt > maxAge {
                    drop(key)
                } else {
                    entries[key]?.used = uses
                    return .cached(entry.text)
                }
            }
            if let task = computing[key] { return .join(task) }
            guard computing.count < maxConcurrent else { throw Busy() }
            // Started under the lock, so that the entry is in place before anyone can look for it.
            let task = Task<String, any Error> {
                do {
                    let text = try await compute()
                    self.finish(key, text: text)
                    return text
                } catch {
                    self.finish(key, text: nil)
                    throw error
                }
            }
            computing[key] = task
            return .start(task)
        }
        switch step {
        case .cached(let text): return (text, .cached)
        case .join(let task): return (try await task.value, .shared)
        case .start(let task): return (try await task.value, .computed)
        }
    }

    /// Reports kept, and their bytes (UTF-8).
    var size: (entries: Int, bytes: Int) { lock.withLock { (entries.count, bytes) } }

    /// Reports being computed.
    var inProgress: Int { lock.withLock { computing.count } }

    private func finish(_ key: Key, text: String?) {
        lock.withLock {
            computing[key] = nil
            guard let text, text.utf8.count <= maxBytes else { return }
            // Reports of another state of the store are stale: this one is of a later state.
            for stale in entries.keys where stale.state != key.state { drop(stale) }
            uses += 1
            entries[key] = (text, .now, uses)
            bytes += text.utf8.count
            while entries.count > maxEntries || bytes > maxBytes,
                let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key
            {
                drop(oldest)
            }
        }
    }

    /// Called with `lock` held.
    private func drop(_ key: Key) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        bytes -= entry.text.utf8.count
    }
}

import ArrivalIngest
import ArrivalModel
import ArrivalStores
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Drains the spool: runs of uploads, each run of one role's uploads in
/// their arrival order, ingested and then removed. Runs alternate between
/// the roles that have uploads waiting (sender first), so a large or slow
/// upload made with the public device token never holds the senders' behind
/// it; a device run that has gone on for ``RunScheduler/deviceSlice`` while
/// sender uploads wait is stopped between batches, and its unfinished
/// uploads stay queued for its next turn.
///
/// On SIGTERM (once the server has let its connections go) the run in
/// flight is told to stop between batches: it commits what it finished and
/// leaves the rest queued. A run that has not returned
/// ``abandonAfter`` later is abandoned uncommitted (its uploads stay queued,
/// and the next start ingests them). What is queued stays for the next start.
struct IngestWorker: Service {
    let spool: Spool
    let engine: StoreEngine
    let metrics: CollectorMetrics
    let logger: Logger
    /// What one upload may cost once read, per role.
    var limits: [Role: LineReader.Limits] = [.device: .device, .sender: .sender]
    /// How long a device run may go on while sender uploads wait (doubled for each stop in a row).
    var deviceSlice: Duration = RunScheduler.defaultDeviceSlice

    /// The uploads failed runs are being pinned on (``UploadIsolation``).
    let isolation = NIOLockedValueBox(UploadIsolation())

    /// How long after SIGTERM a run that has not stopped is waited for.
    static let abandonAfter: Duration = .seconds(5)

    func run() async throws {
        var scheduler = RunScheduler(deviceSlice: deviceSlice)
        for await _ in spool.arrivals.cancelOnGracefulShutdown() {
            await drain(&scheduler)
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
        }
    }

    /// Uploads ingested per run, at most: a backlog of small device batches
    /// is read as `arrival ingest` reads a directory of them, committed every
    /// 2,000 files (``IngestPipeline/Options``), and taken out of the spool when
    /// the run ends. Fewer, longer runs keep the reading thread and the
    /// writer both busy; an upload is readable as ingested from its commit
    /// on.
    static let uploadsPerRun = 10_000
    /// …and at most this many bytes of uploads (at least one upload), so a
    /// run lasts seconds.
    static let bytesPerRun = 64 << 20

    private var stopping: Bool { Task.isShuttingDownGracefully || Task.isCancelled }

    private func drain(_ scheduler: inout RunScheduler) async {
        while !stopping {
            // Uploads a failed run is being pinned on go first, when due; the rest as the scheduler says.
            var entries: [Spool.Entry]
            let role: Role
            if let group = isolation.withLockedValue({ $0.due(now: .now) })?.filter(spool.isQueued), !group.isEmpty {
                entries = group
                role = group[0].role.mayUploadSenderRecords ? .sender : .device
            } else {
                let held = isolation.withLockedValue { $0.held }
                let waiting = Set(spool.depthByRole.filter { $0.value.uploads > 0 }.keys)
                switch scheduler.next(waiting: waiting, now: .now) {
                case .idle:
                    if held.isEmpty { return }
                    await pause(until: isolation.withLockedValue { $0.nextDue } ?? .now)
                    continue
                case .wait(let until):
                    // Every waiting role is backing off: look again within a second (an upload of another role may come).
                    await pause(until: until)
                    continue
                case .run(let next):
                    role = next
                }
                entries = spool.next(Self.uploadsPerRun, maxBytes: Self.bytesPerRun, role: role, excluding: held)
                if entries.isEmpty {
                    // All that waits is held for a retry alone.
                    await pause(until: isolation.withLockedValue { $0.nextDue } ?? .now)
                    continue
                }
            }
            guard await run(entries, role: role, &scheduler) else { return }
        }
    }

    /// Sleeps until `instant`, a second at most, at least 10 ms (an upload of another role may come meanwhile).
    private func pause(until instant: ContinuousClock.Instant) async {
        let pause = min(instant - .now, .seconds(1))
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: max(pause, .milliseconds(10))) }
    }

    /// Ingests one run of uploads of `role` and settles what it did; false when it was abandoned at shutdown.
    private func run(_ entries: [Spool.Entry], role: Role, _ scheduler: inout RunScheduler) async -> Bool {
        let started = ContinuousClock.now
        let stop = StopFlag()
        let slice = scheduler.deviceSlice
        let spool = self.spool
        let options = StoreEngine.runOptions(limits: limits[role] ?? .device) {
            if stop.isSet { return true }
            // A device run gives way to waiting senders once its slice is over.
            return role == .device && ContinuousClock.now - started >= slice && spool.hasQueued(.sender)
        }
        let uploads = entries.map {
            let location = spool.location(of: $0)
            return ($0, location.path, location.range)
        }
        guard let outcome = await untilStopped(stop, { [engine] in await engine.ingest(uploads, options: options) })
        else {
            logger.warning(
                "ingest run abandoned at shutdown: it did not stop within \(Self.abandonAfter); its \(entries.count) uploads stay queued for the next start"
            )
            return false
        }
        switch outcome {
        case .success(let summary):
            engine.noteCommitted()
            noteWritten()
            // An upload the ingest could not read stays queued (it is retried), as does one a stopped
            // run did not finish (not a failure); one the store refused is tried alone again or set aside;
            // the others are stored and leave the spool.
            let unreadable = Set(summary.unreadable.map(\.path))
            let interrupted = Set(summary.interrupted)
            let refused = Dictionary(
                summary.refused.map { ($0.path, $0.reason) }, uniquingKeysWith: { first, _ in first })
            var removed = 0
            for entry in entries where !unreadable.contains(entry.name) && !interrupted.contains(entry.name) {
                if let reason = refused[entry.name] {
                    failedAlone(entry, reason: reason)
                    continue
                }
                spool.remove(entry)
                spool.forgetSetAside(entry)
                isolation.withLockedValue { $0.succeeded(entry) }
                removed += 1
            }
            spool.checkpoint()
            metrics.ingested(summary, uploads: removed, seconds: (ContinuousClock.now - started).inSeconds)
            let preempted = !interrupted.isEmpty && !stop.isSet
            if !interrupted.isEmpty { metrics.runStopped(preempted ? .preempted : .shutdown) }
            if role == .device { scheduler.deviceRunEnded(preempted: preempted) }
            logger.debug(
                "ingested uploads",
                metadata: [
                    "role": "\(role.rawValue)", "uploads": "\(removed)", "records": "\(summary.newRecords)",
                    "duplicates": "\(summary.duplicateRecords)", "unfinished": "\(interrupted.count)",
                    "refused": "\(refused.count)",
                ])
            if let first = summary.unreadable.first {
                metrics.ingestFailed()
                let failures = scheduler.failed(role, now: .now)
                let wait = RunScheduler.backOffSeconds(failures)
                logger.error(
                    "upload '\(first.path)' not ingested (attempt \(failures), \(role.rawValue) uploads wait \(wait) s): \(first.reason)"
                )
            } else {
                scheduler.succeeded(role)
            }
        case .failure(let error) where StoreLocation.isStoreWide(error):
            // The store as a whole: nothing is pinned on an upload; the role backs off, and /readyz says so.
            // One line when the outage begins and one when it ends; each retry between at debug level.
            metrics.ingestFailed()
            let began = engine.noteWriteFailed(error)
            let failures = scheduler.failed(role, now: .now)
            let wait = RunScheduler.backOffSeconds(failures)
            if began {
                logger.error(
                    "the store cannot be written: uploads are still acknowledged into the spool, and ingest is tried again with a doubling backoff until the store can be written (each try logged at debug level): \(error)"
                )
            } else {
                logger.debug(
                    "\(role.rawValue) uploads not ingested (attempt \(failures), retried in \(wait) s): \(error)")
            }
        case .failure(let error):
            metrics.ingestFailed()
            noteWritten()
            if entries.count > 1 {
                // One of these uploads, or more, makes the run fail: halve it until each that does is alone.
                logger.warning(
                    "a run of \(entries.count) \(role.rawValue) uploads failed (\(error)); running each half again to find the upload at fault"
                )
                isolation.withLockedValue { $0.split(entries, now: .now) }
            } else {
                failedAlone(entries[0], reason: "\(error)")
            }
        }
        return true
    }

    /// A run wrote the store (or failed on its uploads): an outage under way ended, said in one line.
    private func noteWritten() {
        guard let ended = engine.noteWritten() else { return }
        let seconds = (ContinuousClock.now - ended.since).inSeconds
        // At warning level, so that a collector logging warnings and errors only sees the outage's end too.
        logger.warning(
            "the store is written again after \(String(format: "%.1f", seconds)) s and \(ended.failedRuns) failed ingest run\(ended.failedRuns == 1 ? "" : "s"); \(spool.depth.uploads) uploads wait in the spool"
        )
    }

    /// An upload failed alone (or the store refused it inside a run): tried again later, or set aside.
    private func failedAlone(_ entry: Spool.Entry, reason: String) {
        metrics.ingestFailed()
        let before = spool.wasSetAside(entry)
        let verdict = isolation.withLockedValue { $0.failed(entry, setAsideBefore: before, now: .now) }
        let role = entry.role.mayUploadSenderRecords ? Role.sender : .device
        switch verdict {
        case .retry(let after, let attempt):
            logger.warning(
                "upload \(entry.sha256) ('\(entry.name)', \(role.rawValue)) refused by the store (attempt \(attempt) of \(UploadIsolation.attemptsBeforeSetAside)), tried alone again in \(after): \(reason)"
            )
        case .setAside(let attempts):
            guard spool.setAside(entry, reason: reason, attempts: attempts) else { return }
            metrics.setAside(role: role)
            logger.error(
                "upload \(entry.sha256) ('\(entry.name)', \(role.rawValue)) set aside: the store refused it \(attempts) time\(attempts == 1 ? "" : "s") alone\(before ? " (it was set aside before this start)" : ""); its bytes stay in the spool and the next start tries it again: \(reason)"
            )
        }
    }

    /// The run's outcome; after graceful shutdown begins, `stop` is set and
    /// the run waited for at most ``abandonAfter`` (nil past it: abandoned).
    private func untilStopped(
        _ stop: StopFlag, _ work: @escaping @Sendable () async -> Result<IngestSummary, any Error>
    ) async -> Result<IngestSummary, any Error>? {
        let outcome = OneOutcome<Result<IngestSummary, any Error>?>()
        return await withGracefulShutdownHandler {
            await withCheckedContinuation { continuation in
                outcome.wait(continuation)
                Task { outcome.resolve(await work()) }
            }
        } onGracefulShutdown: {
            stop.set()
            Task {
                try? await Task.sleep(for: Self.abandonAfter)
                outcome.resolve(nil)
            }
        }
    }
}

/// Which role's uploads the worker ingests next, and how long a device run
/// may hold the writer while senders wait. Pure: the worker asks it what
/// to do, and tells it how runs went.
struct RunScheduler: Sendable, Equatable {
    enum Decision: Equatable {
        /// Nothing is waiting.
        case idle
        /// Uploads wait, but every role that has some is backing off until then.
        case wait(until: ContinuousClock.Instant)
        case run(Role)
    }

    static let defaultDeviceSlice: Duration = .seconds(2)

    /// The role of the last run.
    private(set) var last: Role?
    /// How long the next device run may go on while sender uploads wait.
    private(set) var deviceSlice: Duration
    private let baseSlice: Duration
    private var failures: [Role: Int] = [:]
    private var retryAt: [Role: ContinuousClock.Instant] = [:]

    init(deviceSlice: Duration = defaultDeviceSlice) {
        self.deviceSlice = deviceSlice
        baseSlice = deviceSlice
    }

    /// Sender first when both wait and neither ran last; otherwise the role
    /// that did not run last, when it waits: runs alternate, each bounded.
    mutating func next(waiting: Set<Role>, now: ContinuousClock.Instant) -> Decision {
        let candidates = (last == .sender ? [Role.device, .sender] : [.sender, .device]).filter(waiting.contains)
        guard !candidates.isEmpty else { return .idle }
        guard let role = candidates.first(where: { (retryAt[$0] ?? now) <= now }) else {
            return .wait(until: candidates.compactMap { retryAt[$0] }.min()!)
        }
        last = role
        return .run(role)
    }

    /// A device run ended: stopped for waiting senders (its next slice is
    /// twice as long, so a device upload that needs long is finished in the
    /// end however many senders come), or not (the slice is back to its base).
    mutating func deviceRunEnded(preempted: Bool) {
        deviceSlice = preempted ? deviceSlice * 2 : baseSlice
    }

    /// A run of `role` failed: that role's uploads wait 1, 2, 4 … 60 s (the
    /// other role's go on). Returns the attempt's number.
    mutating func failed(_ role: Role, now: ContinuousClock.Instant) -> Int {
        let count = failures[role, default: 0] + 1
        failures[role] = count
        retryAt[role] = now + .seconds(Self.backOffSeconds(count))
        return count
    }

    mutating func succeeded(_ role: Role) {
        failures[role] = nil
        retryAt[role] = nil
    }

    static func backOffSeconds(_ failures: Int) -> Int { min(60, 1 << min(max(failures, 1) - 1, 6)) }
}

/// Set once, read from any thread (the pipeline's writer asks between batches).
final class StopFlag: Sendable {
    private let value = NIOLockedValueBox(false)

    var isSet: Bool { value.withLockedValue { $0 } }
    func set() { value.withLockedValue { $0 = true } }
}

/// A continuation resumed once, with the first outcome that comes (which
/// may come before the continuation is there; later ones are dropped).
final class OneOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, Never>?
        var result: T?
        var resolved = false
    }

    private let state = NIOLockedValueBox(State())

    func wait(_ continuation: CheckedContinuation<T, Never>) {
        let early: T? = state.withLockedValue { state in
            if state.resolved { return state.result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func resolve(_ outcome: T) {
        let waiting: CheckedContinuation<T, Never>? = state.withLockedValue { state in
            guard !state.resolved else { return nil }
            state.resolved = true
            state.result = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        waiting?.resume(returning: outcome)
    }
}

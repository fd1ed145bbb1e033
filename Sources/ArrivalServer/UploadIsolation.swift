/// Which uploads a failed ingest run is pinned on, and when each is tried
/// again (WRITE-PATH, point 5: a failure belongs to the smallest thing that
/// failed). Pure: the worker tells it how runs went and asks it what to run.
///
/// - A run that failed for a reason that is not the store's as a whole is
///   halved, and each half is run again at once: the uploads that do not
///   fail are ingested in the first half that holds none that does, and a
///   failing one ends up run alone.
/// - An upload that fails alone (or that the store refused inside a run,
///   ``IngestSummary/refused``) is tried alone again 1 s and then 2 s later;
///   at its ``attemptsBeforeSetAside``-th failure it is set aside. Three,
///   because a refusal by a rule of the store's (a trigger, a constraint)
///   fails the same way every time, while a fault that passes (a lock held
///   a moment, a deadlock the server broke) seldom fails three attempts
///   spread over three seconds; and set aside is not lost: its bytes stay,
///   and every start of the collector tries it once more.
/// - Meanwhile every other upload goes on: the ones waiting here are left
///   out of the runs taken from the spool (``held``).
struct UploadIsolation: Sendable {
    static let attemptsBeforeSetAside = 3

    /// Runs to make before any taken from the spool, each due at its instant.
    private(set) var groups: [(entries: [Spool.Entry], due: ContinuousClock.Instant)] = []
    /// Failures alone so far, by sequence.
    private var failures: [UInt64: Int] = [:]

    /// What to do with an upload that failed alone.
    enum Verdict: Equatable {
        /// Try it alone again after this long.
        case retry(after: Duration, attempt: Int)
        /// Set it aside (its attempts so far).
        case setAside(attempts: Int)
    }

    /// The sequences waiting here: not to be taken from the spool meanwhile.
    var held: Set<UInt64> { Set(groups.flatMap { $0.entries.map(\.sequence) }) }

    /// The first group due by `now`, taken out; nil when none is.
    mutating func due(now: ContinuousClock.Instant) -> [Spool.Entry]? {
        guard let index = groups.firstIndex(where: { $0.due <= now }) else { return nil }
        return groups.remove(at: index).entries
    }

    /// When the next group is due; nil when none waits.
    var nextDue: ContinuousClock.Instant? { groups.map(\.due).min() }

    /// A run of several uploads failed, not for the store as a whole: its halves run next, at once.
    mutating func split(_ entries: [Spool.Entry], now: ContinuousClock.Instant) {
        let half = entries.count / 2
        groups.insert(contentsOf: [(Array(entries[..<half]), now), (Array(entries[half...]), now)], at: 0)
    }

    /// `entry` failed alone (or was refused inside a run). `setAsideBefore`:
    /// an earlier run of the collector set it aside, so this was its one more try.
    mutating func failed(_ entry: Spool.Entry, setAsideBefore: Bool, now: ContinuousClock.Instant) -> Verdict {
        let attempt = (failures[entry.sequence] ?? 0) + 1
        if setAsideBefore || attempt >= Self.attemptsBeforeSetAside {
            failures[entry.sequence] = nil
            return .setAside(attempts: attempt)
        }
        failures[entry.sequence] = attempt
        let pause = Duration.seconds(1 << (attempt - 1))
        groups.append(([entry], now + pause))
        return .retry(after: pause, attempt: attempt)
    }

    /// `entry` was ingested: its failures are forgotten.
    mutating func succeeded(_ entry: Spool.Entry) {
        failures[entry.sequence] = nil
    }
}

import Synchronization

/// A count that `@Sendable` closures and tasks share (how often a stop
/// flag or a report computation was asked for).
package final class SharedCounter: Sendable {
    private let value = Mutex(0)

    package init() {}

    /// Adds one and returns the new count.
    package func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }

    package var count: Int { value.withLock { $0 } }
}

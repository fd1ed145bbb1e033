import Foundation

/// A value shared by the threads of ``AnalysisPartitions/forEach(_:combine:)``,
/// which keep to its rules (see there).
// @unchecked: `forEach` keeps its rules: `body` touches only its partition and SQLite under the lock, `combine` runs locked.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The partitions still to analyse, shared by the threads of
/// ``AnalysisPartitions/forEach(_:combine:)``, and the first error.
// @unchecked: `upcoming` and `error` change only under `lock`; `count` is a constant.
final class PartitionQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var upcoming = 0
    private let count: Int
    private var error: (any Error)?

    init(count: Int) { self.count = count }

    /// The next partition, or nil when all are taken or one failed.
    func next() -> Int? {
        lock.withLock {
            guard error == nil, upcoming < count else { return nil }
            defer { upcoming += 1 }
            return upcoming
        }
    }

    func withLock(_ body: () -> Void) { lock.withLock(body) }

    func fail(_ failure: any Error) { lock.withLock { if error == nil { error = failure } } }

    func check() throws { if let error = lock.withLock({ error }) { throw error } }
}

import Foundation

/// A bounded hand-off between two threads: the one that reads and decodes a
/// file and the one that writes it (ingest), or the one that steps a query
/// and the one that analyses its rows (``StoreSnapshot``). The producer
/// waits when `capacity` batches are queued, so memory stays bounded by
/// batch size, not input size.
///
/// A producer that found the queue full is woken once the consumer took it
/// down to half, not after each element: otherwise, while the consumer is
/// the slower side, every element taken wakes the producer for one element
/// more, two context switches per element (a device tree's small files are
/// three messages each). Nobody is signalled who does not wait.
package final class BatchChannel<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Element] = []
    private var closed = false
    private var cancelled = false
    private let capacity: Int
    private var waitingProducers = 0
    private var waitingConsumers = 0

    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// Returns false when the consumer cancelled: stop producing.
    package func send(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= capacity && !cancelled {
            waitingProducers += 1
            condition.wait()
            waitingProducers -= 1
        }
        if cancelled { return false }
        queue.append(element)
        if waitingConsumers > 0 { condition.broadcast() }
        return true
    }

    /// After an element was taken: wakes a waiting producer once there is room for half the capacity.
    private func tookOne() {
        if waitingProducers > 0 && queue.count <= capacity / 2 { condition.broadcast() }
    }

    package func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    package func cancel() {
        condition.lock()
        cancelled = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Adds `element` if there is room and nobody cancelled; never waits.
    /// Returns whether it was taken.
    @discardableResult
    package func offer(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard queue.count < capacity, !cancelled, !closed else { return false }
        queue.append(element)
        if waitingConsumers > 0 { condition.broadcast() }
        return true
    }

    /// The next element if one is queued; never waits.
    package func poll() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        guard !queue.isEmpty else { return nil }
        let element = queue.removeFirst()
        tookOne()
        return element
    }

    /// The next element, or nil once the channel is closed and drained.
    package func receive() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !closed {
            waitingConsumers += 1
            condition.wait()
            waitingConsumers -= 1
        }
        if queue.isEmpty { return nil }
        let element = queue.removeFirst()
        tookOne()
        return element
    }
}

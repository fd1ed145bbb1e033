import Foundation

/// A bounded hand-off between two threads: the one that reads and decodes a
/// file and the one that writes it (ingest), or the one that steps a query
/// and the one that analyses its rows (``StoreSnapshot``). The producer
/// waits while the queued elements weigh `capacity` (each weighs 1 unless
/// the channel is given a `weight`), so memory stays bounded by batch size,
/// not input size. An element heavier than the capacity is taken when the
/// queue is empty.
///
/// A producer that found the queue full is woken once the consumer took it
/// down to half, not after each element: otherwise, while the consumer is
/// the slower side, every element taken wakes the producer for one element
/// more, two context switches per element (a device tree's small files are
/// three messages each). Nobody is signalled who does not wait.
/// `@unchecked Sendable`: every `var` is read and written with `condition` locked; `capacity` and `weight` are constants.
package final class BatchChannel<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Each queued element with its weight, as weighed when it came.
    private var queue: [(element: Element, weight: Int)] = []
    private var closed = false
    private var cancelled = false
    private let capacity: Int
    private let weight: @Sendable (Element) -> Int
    /// The weight of what is queued.
    private var load = 0
    private var waitingProducers = 0
    private var waitingConsumers = 0

    package init(capacity: Int, weight: @escaping @Sendable (Element) -> Int = { _ in 1 }) {
        self.capacity = capacity
        self.weight = weight
    }

    /// Whether an element of weight `w` may be queued now.
    private func hasRoom(for w: Int) -> Bool { queue.isEmpty || load + w <= capacity }

    /// Returns false when the consumer cancelled: stop producing.
    package func send(_ element: Element) -> Bool {
        let w = max(1, weight(element))
        condition.lock()
        defer { condition.unlock() }
        while !hasRoom(for: w) && !cancelled {
            waitingProducers += 1
            condition.wait()
            waitingProducers -= 1
        }
        if cancelled { return false }
        queue.append((element, w))
        load += w
        if waitingConsumers > 0 { condition.broadcast() }
        return true
    }

    /// Takes the first element (the queue is not empty); wakes a waiting
    /// producer once the load is down to half the capacity.
    private func takeFirst() -> Element {
        let (element, w) = queue.removeFirst()
        load -= w
        if waitingProducers > 0 && load <= capacity / 2 { condition.broadcast() }
        return element
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
        load = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Adds `element` if there is room and nobody cancelled; never waits.
    /// Returns whether it was taken.
    @discardableResult
    package func offer(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let w = max(1, weight(element))
        guard hasRoom(for: w), !cancelled, !closed else { return false }
        queue.append((element, w))
        load += w
        if waitingConsumers > 0 { condition.broadcast() }
        return true
    }

    /// The next element if one is queued; never waits.
    package func poll() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        guard !queue.isEmpty else { return nil }
        return takeFirst()
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
        return takeFirst()
    }
}

import ArrivalHandOff
import Foundation
import Testing

/// The hand-off between a reading and a writing thread: every element once,
/// in order, whichever side is slower, and a producer waiting on a full
/// channel is let go by the consumer taking, or by its cancelling.
@Suite("BatchChannel")
struct BatchChannelTests {
    /// Sends `count` numbers through a channel of `capacity` from another
    /// thread; `slowProducer` / `slowConsumer` pause every few elements, so
    /// that the queue runs empty or full.
    func handOff(count: Int, capacity: Int, slowProducer: Bool, slowConsumer: Bool) -> [Int] {
        let channel = BatchChannel<Int>(capacity: capacity)
        let done = DispatchSemaphore(value: 0)
        let producer = Thread {
            defer { done.signal() }
            for number in 0..<count {
                if slowProducer && number % 97 == 0 { usleep(200) }
                guard channel.send(number) else { return }
            }
            channel.close()
        }
        producer.start()
        var received: [Int] = []
        while let number = channel.receive() {
            if slowConsumer && number % 89 == 0 { usleep(200) }
            received.append(number)
        }
        done.wait()
        return received
    }

    @Test(
        "Every element once and in order, whichever side is slower",
        .timeLimit(.minutes(1)),
        arguments: [(1, false, true), (4, false, true), (8, true, false), (8, false, false), (3, true, true)])
    func everyElementInOrder(capacity: Int, slowProducer: Bool, slowConsumer: Bool) {
        let received = handOff(
            count: 20_000, capacity: capacity, slowProducer: slowProducer, slowConsumer: slowConsumer)
        #expect(received == Array(0..<20_000))
    }

    @Test("With weights, the queued elements weigh at most the capacity, and a heavier one goes alone")
    func weights() {
        let channel = BatchChannel<Int>(capacity: 8) { $0 }
        #expect(channel.offer(3))
        #expect(channel.offer(4))  // 7
        #expect(!channel.offer(2))  // 9 would pass 8
        #expect(channel.offer(1))  // 8
        #expect(channel.poll() == 3)  // 5
        #expect(channel.offer(3))  // 8
        #expect([channel.poll(), channel.poll(), channel.poll(), channel.poll()] == [4, 1, 3, nil])
        #expect(channel.offer(20))  // alone in an empty queue
        #expect(!channel.offer(1))
        #expect(channel.poll() == 20)
        #expect(channel.offer(8))

        // A producer of weighed elements gets every element through, in order.
        let sent = Array(repeating: [1, 5, 2, 9, 1, 1, 3], count: 500).joined()
        let weighed = BatchChannel<Int>(capacity: 8) { $0 }
        let done = DispatchSemaphore(value: 0)
        Thread {
            for element in sent { _ = weighed.send(element) }
            weighed.close()
            done.signal()
        }.start()
        var received: [Int] = []
        while let element = weighed.receive() { received.append(element) }
        done.wait()
        #expect(received == Array(sent))
    }

    @Test("A producer waiting on a full channel goes on once the consumer takes half, and stops when it cancels")
    func fullChannel() {
        let channel = BatchChannel<Int>(capacity: 4)
        for number in 0..<4 { #expect(channel.offer(number)) }
        #expect(!channel.offer(4))  // full
        let sent = DispatchSemaphore(value: 0)
        Thread {
            let taken = channel.send(4)
            #expect(taken)
            sent.signal()
        }.start()
        #expect(sent.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        #expect(channel.poll() == 0)
        // Room for one: the producer sleeps on, so as not to be woken for each element.
        #expect(sent.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        #expect(channel.poll() == 1)  // half the capacity free: the producer is woken
        #expect(sent.wait(timeout: .now() + .seconds(10)) == .success)
        #expect([channel.poll(), channel.poll(), channel.poll()] == [2, 3, 4])

        for number in 0..<4 { #expect(channel.offer(number)) }
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            let taken = channel.send(9)
            #expect(!taken)
            stopped.signal()
        }.start()
        #expect(stopped.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
        channel.cancel()
        #expect(stopped.wait(timeout: .now() + .seconds(10)) == .success)
    }
}

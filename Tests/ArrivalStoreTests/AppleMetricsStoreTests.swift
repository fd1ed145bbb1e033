import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

/// Apple's exports in a SQLite store (issue 54): stored as written, a day
/// replaced whole by a later export (and said so), the same export twice
/// stored once, a hidden value kept as hidden.
@Suite("Apple metrics in the store")
struct AppleMetricsStoreTests {
    static let day: Int64 = 1_795_219_200_000
    static let next: Int64 = day + 86_400_000

    static func delivery(_ received: Int?, day: Int64 = day) -> [AppleDeliveryRow] {
        [
            AppleDeliveryRow(day: day, pushType: "liveactivity", status: "Received by APNs", count: received),
            AppleDeliveryRow(day: day, pushType: "liveactivity", status: "Delivered to Device", count: 90),
        ]
    }

    @Test("Delivery rows: new, the same again, revised; other days untouched; hidden stays null")
    func delivery() throws {
        let store = try SQLiteStore(path: ":memory:")
        let first = try store.importAppleMetrics(
            kind: .delivery, delivery: Self.delivery(100) + Self.delivery(nil, day: Self.next), broadcasts: [],
            sha256: "a", at: 1)
        #expect(first.newDays == [Self.day, Self.next] && first.rows == 4)
        let again = try store.importAppleMetrics(
            kind: .delivery, delivery: Self.delivery(100), broadcasts: [], sha256: "a", at: 2)
        #expect(again.unchangedDays == [Self.day] && again.newDays.isEmpty && again.revisedDays.isEmpty)
        let revised = try store.importAppleMetrics(
            kind: .delivery, delivery: Self.delivery(120), broadcasts: [], sha256: "b", at: 3)
        #expect(revised.revisedDays == [Self.day])
        let stored = try store.appleMetrics().delivery
        #expect(stored.count == 4)
        #expect(stored.first { $0.day == Self.day && $0.status == "Received by APNs" }?.count == 120)
        #expect(stored.first { $0.day == Self.next && $0.status == "Received by APNs" }?.count == nil)
        #expect(try store.appleMetrics(from: Self.next, to: Self.next + 86_400_000).delivery.count == 2)
        // A later export of a day with one status fewer: the day is what that export says.
        let fewer = try store.importAppleMetrics(
            kind: .delivery, delivery: Array(Self.delivery(120).prefix(1)), broadcasts: [], sha256: "c", at: 4)
        #expect(fewer.revisedDays == [Self.day])
        #expect(try store.appleMetrics(from: Self.day, to: Self.next).delivery.count == 1)
    }

    @Test("Broadcast rows: the application's and each channel's apart; -1 fields hidden, not 0")
    func broadcasts() throws {
        let store = try SQLiteStore(path: ":memory:")
        let application = AppleBroadcastRow(
            day: Self.day, channelID: nil, published: 4, delivered: 400, totalSubscriptions: 100,
            uniqueSubscribers: nil, hidden: ["unique_subscribers"])
        let channel = AppleBroadcastRow(
            day: Self.day, channelID: "Y2g=", published: 4, delivered: nil, totalSubscriptions: nil,
            uniqueSubscribers: nil, hidden: ["delivered", "total_subscriptions"])
        _ = try store.importAppleMetrics(
            kind: .broadcastApplication, delivery: [], broadcasts: [application], sha256: "a", at: 1)
        let second = try store.importAppleMetrics(
            kind: .broadcastChannel, delivery: [], broadcasts: [channel], sha256: "b", at: 1)
        #expect(second.newDays == [Self.day])
        #expect(try store.appleMetrics().broadcasts == [application, channel])
        var revised = channel
        revised.delivered = 3
        revised.hidden = ["total_subscriptions"]
        let outcome = try store.importAppleMetrics(
            kind: .broadcastChannel, delivery: [], broadcasts: [revised], sha256: "c", at: 2)
        #expect(outcome.revisedDays == [Self.day])
        #expect(try store.appleMetrics().broadcasts == [application, revised])
    }

    @Test("prune removes the rows of days wholly before the cut; the day it falls in stays")
    func prune() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try store.importAppleMetrics(
            kind: .delivery, delivery: Self.delivery(1) + Self.delivery(2, day: Self.next), broadcasts: [],
            sha256: "a", at: 1)
        let summary = try store.prune(before: Self.next + 12 * 3_600_000, vacuum: false)
        #expect(summary.appleRows == 2)
        #expect(try store.appleMetrics().delivery.map(\.day) == [Self.next, Self.next])
        #expect(try store.prune(before: Self.next, vacuum: false).appleRows == 0)
    }
}

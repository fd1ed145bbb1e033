import ArrivalModel
import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// Apple's exports in a PostgreSQL store (issue 54): what the SQLite store
/// keeps, read back the same, a day replaced whole and said so.
@Suite("Apple metrics in PostgreSQL", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresAppleMetricsTests {
    static let day: Int64 = 1_795_219_200_000

    @Test("Delivery and broadcast rows as in SQLite: new, unchanged, revised; hidden stays null")
    func sameAsSQLite() throws {
        try TestDatabase.with { url in
            let location = try PostgresLocation(url: url)
            let sqlite = try SQLiteStore(path: ":memory:")
            let delivery = [
                AppleDeliveryRow(day: Self.day, pushType: "liveactivity", status: "Received by APNs", count: 100),
                AppleDeliveryRow(day: Self.day, pushType: "Liveactivity", status: "Delivered to Device", count: nil),
                AppleDeliveryRow(day: Self.day + 86_400_000, pushType: "widgets", status: "Ünknown", count: 3),
            ]
            let channel = AppleBroadcastRow(
                day: Self.day, channelID: "Y2g=", published: 4, delivered: nil, totalSubscriptions: 7,
                uniqueSubscribers: nil, hidden: ["delivered"])
            let application = AppleBroadcastRow(
                day: Self.day, channelID: nil, published: 9, delivered: 900, totalSubscriptions: 100,
                uniqueSubscribers: 80)
            func both(_ kind: AppleMetricsKind, _ d: [AppleDeliveryRow], _ b: [AppleBroadcastRow]) throws
                -> AppleImportOutcome
            {
                let a = try sqlite.importAppleMetrics(kind: kind, delivery: d, broadcasts: b, sha256: "x", at: 1)
                let p = try PostgresAppleMetrics.importRows(
                    location, kind: kind, delivery: d, broadcasts: b, sha256: "x", at: 1)
                #expect(a == p, "\(kind)")
                return p
            }
            #expect(try both(.delivery, delivery, []).newDays.count == 2)
            #expect(try both(.delivery, delivery, []).unchangedDays.count == 2)
            var revised = delivery
            revised[1].count = 95
            #expect(try both(.delivery, Array(revised.prefix(2)), []).revisedDays == [Self.day])
            #expect(try both(.broadcastChannel, [], [channel]).newDays == [Self.day])
            #expect(try both(.broadcastApplication, [], [application]).newDays == [Self.day])
            #expect(try PostgresAppleMetrics.metrics(location) == sqlite.appleMetrics())
            #expect(try PostgresAppleMetrics.metrics(location).broadcasts == [application, channel])
            #expect(
                try PostgresAppleMetrics.metrics(location, from: Self.day, to: Self.day + 86_400_000).delivery.count
                    == 2)
            // prune: the days wholly before the cut go, on both engines alike.
            let cut = Self.day + 86_400_000 + 3_600_000
            let pruned = try PostgresPrune.prune(location, before: cut)
            #expect(pruned.appleRows == 2 + 2)
            #expect(try PostgresAppleMetrics.metrics(location).delivery.map(\.day) == [Self.day + 86_400_000])
            #expect(try PostgresAppleMetrics.metrics(location).broadcasts.isEmpty)
        }
    }
}

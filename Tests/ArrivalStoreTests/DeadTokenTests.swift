import ArrivalIngest
import ArrivalModel
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// Dead tokens (contract 3.0): when a token died, why, and what was still
/// sent to it, as `arrival tokens` lists them.
@Suite("Dead tokens")
struct DeadTokenTests {
    static func apns(
        _ id: String, _ sentAt: String, status: Int, reason: String? = nil, token: String, topic: String? = nil,
        provider: String? = nil
    ) -> String {
        var fields = [
            #""kind":"apns""#, #""apns_id":"\#(id)""#, #""sent_at":"\#(sentAt)""#, #""status":\#(status)"#,
            #""push_token":"\#(token)""#, #""aps_timestamp":1795248000"#,
        ]
        if let reason { fields.append(#""reason":"\#(reason)""#) }
        if let topic { fields.append(#""topic":"\#(topic)""#) }
        if let provider { fields.append(#""provider":"\#(provider)""#) }
        return "{" + fields.joined(separator: ",") + "}"
    }

    func store(_ lines: [String]) throws -> (SQLiteStore, URL) {
        let directory = try makeTemporaryDirectory()
        let file = directory.appendingPathComponent("apns.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        let store = try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path)
        _ = try IngestPipeline(store: store).ingest(paths: [file.path])
        return (store, directory)
    }

    @Test("A token dies at its earliest 410 or dead-token reason; what is sent after it, strictly, is counted")
    func deathAndAfter() throws {
        let (store, directory) = try store([
            Self.apns("1", "2026-11-20T08:00:00Z", status: 200, token: "aa", topic: "com.x.push-type.liveactivity"),
            Self.apns(
                "2", "2026-11-20T09:00:00Z", status: 410, reason: "Unregistered", token: "aa",
                topic: "com.x.push-type.liveactivity"),
            // At the same instant as the death: not after it.
            Self.apns("3", "2026-11-20T09:00:00Z", status: 200, token: "aa"),
            Self.apns("4", "2026-11-21T09:00:00Z", status: 200, token: "aa"),
            Self.apns("5", "2026-11-21T10:00:00Z", status: 410, token: "bb", provider: "fcm"),
            Self.apns("6", "2026-11-21T10:00:00Z", status: 400, reason: "ExpiredToken", token: "cc"),
            Self.apns("7", "2026-11-21T10:00:00Z", status: 400, reason: "FCM:UNREGISTERED", token: "dd"),
            // Not a dead-token answer, and an empty token is never dead.
            Self.apns("8", "2026-11-21T10:00:00Z", status: 400, reason: "BadTopic", token: "ee"),
            Self.apns("9", "2026-11-21T10:00:00Z", status: 410, token: ""),
        ])
        defer { try? FileManager.default.removeItem(at: directory) }
        let all = try store.deadTokens()
        #expect(all.map(\.pushToken) == ["aa", "bb", "cc", "dd"])
        let aa = try #require(all.first)
        #expect(aa.app == "com.x" && aa.provider == "apns" && aa.reason == "Unregistered")
        #expect(aa.diedAt == RFC3339.parseMilliseconds("2026-11-20T09:00:00Z"))
        #expect(aa.requestsAfter == 1 && aa.lastSentAt == RFC3339.parseMilliseconds("2026-11-21T09:00:00Z"))
        #expect(all[1].reason == "HTTP410" && all[1].provider == "fcm" && all[1].app == "unknown")
    }

    @Test("With a window: the tokens that died in it and those still sent to in it, counting that window's sends")
    func window() throws {
        let (store, directory) = try store([
            Self.apns("1", "2026-11-19T09:00:00Z", status: 410, token: "old"),
            Self.apns("2", "2026-11-20T09:00:00Z", status: 200, token: "old"),
            Self.apns("3", "2026-11-21T09:00:00Z", status: 200, token: "old"),
            Self.apns("4", "2026-11-21T09:30:00Z", status: 200, token: "old"),
            Self.apns("5", "2026-11-18T09:00:00Z", status: 410, token: "quiet"),
            Self.apns("6", "2026-11-21T12:00:00Z", status: 410, token: "new"),
        ])
        defer { try? FileManager.default.removeItem(at: directory) }
        let day = try #require(ReportWindow.day("2026-11-21"))
        let tokens = try store.deadTokens(from: day.from, to: day.to)
        // "quiet" died before the day and got nothing in it: not on the day's list.
        #expect(tokens.map(\.pushToken) == ["old", "new"])
        #expect(tokens.map(\.requestsAfter) == [2, 0])
        #expect(try store.deadTokens().first { $0.pushToken == "old" }?.requestsAfter == 3)
    }

    @Test("Among requests that killed a token at the same instant, the smallest apns_id is named, in any order")
    func tie() throws {
        for order in [[0, 1], [1, 0]] {
            let lines = [
                Self.apns("B", "2026-11-21T10:00:00Z", status: 400, reason: "BadDeviceToken", token: "t"),
                Self.apns("A", "2026-11-21T10:00:00Z", status: 410, reason: "Unregistered", token: "t"),
            ]
            let (store, directory) = try store(order.map { lines[$0] })
            defer { try? FileManager.default.removeItem(at: directory) }
            #expect(try store.deadTokens().map(\.reason) == ["Unregistered"])
        }
    }
}

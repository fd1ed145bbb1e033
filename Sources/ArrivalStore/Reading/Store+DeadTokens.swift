import ArrivalModel

/// A push token that died (contract 3.0, "Dead tokens"): APNs or the
/// provider said it no longer reaches a device, and requests sent to it
/// afterwards were wasted.
package struct DeadToken: Equatable, Sendable {
    package var pushToken: String
    /// The app of the request that killed it: its topic without `.push-type.liveactivity`; "unknown" without one.
    package var app: String
    /// `apns`, `fcm` or `tencent_chat`.
    package var provider: String
    /// When it died: the `sent_at` of its earliest request answered 410 or with a dead-token reason.
    package var diedAt: Int64
    /// That request's reason (`HTTP410` for a 410 without one).
    package var reason: String
    /// Requests sent to it strictly after it died, within the window.
    package var requestsAfter: Int
    /// The last of those, if any.
    package var lastSentAt: Int64?
}

extension SQLiteStore {
    /// The reasons that kill a token, whatever the status (contract 3.0).
    package static let deadTokenReasons = ["Unregistered", "BadDeviceToken", "ExpiredToken", "FCM:UNREGISTERED"]
}

extension SQLiteSnapshot {
    package func forEachKillingRequest(
        _ body: (
            _ token: String, _ sentAt: Int64, _ apnsID: String, _ row: Int64, _ topic: String?,
            _ provider: String, _ status: Int64, _ reason: String?
        ) throws -> Void
    ) throws {
        let reasons = SQLiteStore.deadTokenReasons.map { "'\($0)'" }.joined(separator: ", ")
        let scan = try connection.prepare(
            """
            SELECT push_token, sent_at, apns_id, id, topic, coalesce(provider, 'apns'), status, reason FROM apns
            WHERE push_token <> '' AND (status = 410 OR reason IN (\(reasons)))
            """)
        try scan.forEachRow { row in
            try body(
                row.string(0) ?? "", row.int(1), row.string(2) ?? "", row.int(3), row.string(4),
                row.string(5) ?? "apns",
                row.int(6), row.string(7))
        }
    }
}

/// The dead push tokens of a store (contract 3.0, "Dead tokens"), found by
/// one scan that keeps the requests that killed a token, then fed every
/// request of a pass the caller makes anyway (the report's, or
/// `arrival tokens`'s own): ``note(_:sentAt:)`` tells whether a request went
/// to a token after its death and counts it per token when it was sent in
/// the window. A request's token is looked up by its bytes, through a hash
/// of its length and ends, and compared exactly: no String per request.
package struct DeadTokenTally {
    /// What a listing shows of a token beyond when it died (kept only with `listing`).
    private struct Detail {
        var apnsID: String
        var row: Int64
        var topic: String?
        var provider: String
        var status: Int64
        var reason: String?
        var requestsAfter = 0
        var lastSentAt: Int64?
    }

    private var tokens: [[UInt8]] = []
    private var diedAt: [Int64] = []
    private var details: [Detail] = []
    private var byHash: [UInt64: [Int32]] = [:]
    private var from = Int64.min
    private var to = Int64.max
    private var listing = false

    package var isEmpty: Bool { tokens.isEmpty }

    /// No dead token.
    package init() {}

    /// The deaths of the store's tokens; requests are counted for
    /// `from`..<`to` (everything without). With `listing`, what
    /// ``tokens(limit:)`` shows of each (app, provider, reason, the requests
    /// after its death) is kept too; without, only when it died (a report
    /// that counts requests to dead tokens needs no more).
    package init(snapshot: any StoreSnapshot, from: Int64? = nil, to: Int64? = nil, listing: Bool = true) throws {
        self.from = from ?? Int64.min
        self.to = to ?? Int64.max
        self.listing = listing
        // By bytes: a Swift String would merge canonically equivalent tokens.
        var index: [[UInt8]: Int] = [:]
        try snapshot.forEachKillingRequest { token, sentAt, apnsID, row, topic, provider, status, reason in
            let bytes = Array(token.utf8)
            let detail = Detail(
                apnsID: apnsID, row: row, topic: topic, provider: provider, status: status, reason: reason)
            guard let at = index[bytes] else {
                index[bytes] = tokens.count
                tokens.append(bytes)
                diedAt.append(sentAt)
                if listing { details.append(detail) }
                return
            }
            // The earliest request; ties (listing only: the instant is the same):
            // the smaller apns_id, then the earliest stored.
            if sentAt < diedAt[at] {
                diedAt[at] = sentAt
                if listing { details[at] = detail }
            } else if listing && sentAt == diedAt[at] {
                let held = details[at]
                let earlier =
                    !apnsID.utf8.elementsEqual(held.apnsID.utf8) ? codePointOrder(apnsID, held.apnsID) : row < held.row
                if earlier { details[at] = detail }
            }
        }
        for (position, token) in tokens.enumerated() {
            token.withUnsafeBytes { byHash[Self.hash($0), default: []].append(Int32(position)) }
        }
    }

    /// Whether a request to `token` sent at `sentAt` went to it strictly
    /// after its death; with `listing`, such a request sent in the window is
    /// counted for its token.
    @inline(__always)
    package mutating func note(_ token: UnsafeRawBufferPointer?, sentAt: Int64) -> Bool {
        guard let token, token.count > 0, let candidates = byHash[Self.hash(token)] else { return false }
        for position in candidates {
            let i = Int(position)
            guard tokens[i].count == token.count, tokens[i].withUnsafeBytes({ $0.elementsEqual(token) }) else {
                continue
            }
            guard sentAt > diedAt[i] else { return false }
            if listing && sentAt >= from && sentAt < to {
                details[i].requestsAfter += 1
                details[i].lastSentAt = max(details[i].lastSentAt ?? sentAt, sentAt)
            }
            return true
        }
        return false
    }

    /// The tokens to purge for the window, in order (``SQLiteStore/deadTokens(from:to:)``):
    /// the first `limit` (all without one) and how many there are. Empty without `listing`.
    package func tokens(limit: Int? = nil) -> (list: [DeadToken], total: Int) {
        guard listing else { return ([], 0) }
        var chosen = tokens.indices.filter {
            (diedAt[$0] >= from && diedAt[$0] < to) || details[$0].requestsAfter > 0
        }
        chosen.sort { a, b in
            if details[a].requestsAfter != details[b].requestsAfter {
                return details[a].requestsAfter > details[b].requestsAfter
            }
            if diedAt[a] != diedAt[b] { return diedAt[a] < diedAt[b] }
            return tokens[a].lexicographicallyPrecedes(tokens[b])
        }
        let list = chosen.prefix(limit ?? chosen.count).map { i -> DeadToken in
            let d = details[i]
            let reason = d.reason.flatMap { $0.isEmpty ? nil : $0 } ?? "HTTP\(d.status)"
            return DeadToken(
                pushToken: String(decoding: tokens[i], as: UTF8.self), app: Contract.app(ofTopic: d.topic),
                provider: d.provider, diedAt: diedAt[i], reason: reason, requestsAfter: d.requestsAfter,
                lastSentAt: d.lastSentAt)
        }
        return (list, chosen.count)
    }

    /// FNV-1a over the length and the first and last 16 bytes (tokens are random hex; the bytes decide).
    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        let n = bytes.count
        for i in 0..<min(16, n) { h = (h ^ UInt64(bytes[i])) &* 0x100_0000_01b3 }
        for i in max(min(16, n), n - 16)..<n { h = (h ^ UInt64(bytes[i])) &* 0x100_0000_01b3 }
        return h
    }
}

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

extension Store {
    /// The reasons that kill a token, whatever the status (contract 3.0).
    package static let deadTokenReasons = ["Unregistered", "BadDeviceToken", "ExpiredToken", "FCM:UNREGISTERED"]

    /// The tokens to purge for `window`: those that died in it, and those
    /// that died before it and were still sent to in it; every token that
    /// ever died without a window. Each with the requests sent to it after
    /// its death within the window, so that their sum is the report's
    /// `requests.to_dead_tokens`. Most requests after death first, then the
    /// earliest death, then the token by code point.
    ///
    /// Among requests that killed a token at the same instant, the one
    /// named is the smallest `apns_id`, then the earliest stored: the
    /// instant is the same whichever it is.
    package func deadTokens(from: Int64? = nil, to: Int64? = nil) throws -> [DeadToken] {
        try read { try $0.deadTokens(from: from, to: to) }
    }
}

extension StoreSnapshot {
    /// ``Store/deadTokens(from:to:)`` inside a read transaction.
    package func deadTokens(from: Int64? = nil, to: Int64? = nil) throws(DatabaseError) -> [DeadToken] {
        let reasons = Store.deadTokenReasons.map { "'\($0)'" }.joined(separator: ", ")
        let kills = "(status = 410 OR reason IN (\(reasons)))"
        let statement = try connection.prepare(
            """
            WITH killers AS (
                SELECT push_token, sent_at AS died_at, topic, coalesce(provider, 'apns') AS provider, status, reason,
                       row_number() OVER (PARTITION BY push_token ORDER BY sent_at, apns_id, id) AS pick
                FROM apns
                WHERE push_token <> '' AND \(kills)
            ),
            deaths AS MATERIALIZED (
                SELECT * FROM killers WHERE pick = 1
            ),
            after AS (
                SELECT a.push_token, count(*) AS requests, max(a.sent_at) AS last_sent_at
                FROM apns AS a JOIN deaths AS d ON a.push_token = d.push_token
                WHERE a.sent_at > d.died_at AND a.sent_at >= ?1 AND a.sent_at < ?2
                GROUP BY a.push_token
            )
            SELECT k.push_token,
                   CASE WHEN k.topic IS NULL THEN 'unknown'
                        WHEN substr(k.topic, -23) = '.push-type.liveactivity' AND length(k.topic) >= 23
                            THEN substr(k.topic, 1, length(k.topic) - 23)
                        ELSE k.topic END,
                   k.provider, k.died_at,
                   CASE WHEN k.reason IS NOT NULL AND k.reason <> '' THEN k.reason ELSE 'HTTP' || k.status END,
                   coalesce(f.requests, 0), f.last_sent_at
            FROM deaths AS k LEFT JOIN after AS f ON f.push_token = k.push_token
            WHERE (k.died_at >= ?1 AND k.died_at < ?2) OR f.requests > 0
            ORDER BY coalesce(f.requests, 0) DESC, k.died_at, k.push_token
            """)
        statement.bind(1, from ?? Int64.min)
        statement.bind(2, to ?? Int64.max)
        var tokens: [DeadToken] = []
        do {
            try statement.forEachRow { row in
                tokens.append(
                    DeadToken(
                        pushToken: row.string(0) ?? "", app: row.string(1) ?? "unknown",
                        provider: row.string(2) ?? "apns",
                        diedAt: row.int(3), reason: row.string(4) ?? "", requestsAfter: Int(row.int(5)),
                        lastSentAt: row.optionalInt(6)))
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(code: 1, message: "\(error)", context: "reading dead tokens")
        }
        return tokens
    }

    /// Calls `body` with every dead token (contract 3.0, "Dead tokens")
    /// and the `sent_at` of its death: one scan of the requests that keeps
    /// the few that killed a token.
    package func forEachTokenDeath(_ body: (_ token: String, _ diedAt: Int64) throws -> Void) throws {
        let reasons = Store.deadTokenReasons.map { "'\($0)'" }.joined(separator: ", ")
        let scan = try connection.prepare(
            """
            SELECT push_token, min(sent_at) FROM apns
            WHERE push_token <> '' AND (status = 410 OR reason IN (\(reasons)))
            GROUP BY push_token
            """)
        try scan.forEachRow { row in try body(row.string(0) ?? "", row.int(1)) }
    }
}

import ArrivalModel
package import ArrivalStore
import Foundation
import PostgresNIO

/// Retention on a PostgreSQL store: ``PruneRule`` (the SQLite store's rule)
/// in PostgreSQL's tables, in one transaction.
///
/// Its time follows what lies before the cut, not the table: every step
/// starts from the records before it (by the indexes on the time columns,
/// migration `0003_prune_indexes`), and asks of each activity, token and
/// channel met there, by index look-ups, whether anything at or after the
/// cut names it. A daily prune of one day's records reads that day and the
/// few records earlier prunes kept (token deaths and their owners), however
/// many days the store holds (Documentation/PostgreSQL.md, "Retention").
///
/// Writers may store files meanwhile. A deadlock with one (both removing
/// the same rows, a grown file's earlier version) or a serialization
/// failure rolls the prune back and tries it again, as a writer does.
package enum PostgresPrune {
    /// How many times a prune is tried when the server breaks a deadlock by failing it.
    package static let attempts = 8

    /// Removes from the store at `location` what no report of a window from
    /// `before` on reads.
    package static func prune(
        _ location: PostgresLocation, before: Int64,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PruneSummary {
        let session = try PostgresSession(location, environment: environment)
        defer { session.close() }
        // Opening migrates the store: the time indexes are there before the first prune.
        try PostgresSchema.migrate(session)
        var attempt = 1
        while true {
            do {
                return try prune(on: session, before: before)
            } catch let error as PostgresStoreError where error.isRetryable && attempt < attempts {
                attempt += 1
                // Let the writer that won finish its file first.
                Thread.sleep(forTimeInterval: 0.05 * Double(attempt))
            }
        }
    }

    /// One try, in one transaction.
    static func prune(on session: PostgresSession, before t: Int64) throws -> PruneSummary {
        try session.execute("BEGIN")
        do {
            for statement in statements(before: t) { try session.execute(statement) }
            var summary = PruneSummary(before: t)
            let counts = try session.run(
                """
                SELECT (SELECT count(*) FROM prune_deleted WHERE kind = 'apns'),
                       (SELECT count(*) FROM prune_deleted WHERE kind = 'render'),
                       (SELECT count(*) FROM prune_deleted WHERE kind = 'callback'),
                       (SELECT count(*) FROM prune_counts WHERE what = 'repeats'),
                       (SELECT count(*) FROM prune_counts WHERE what = 'malformed'),
                       (SELECT count(*) FROM prune_counts WHERE what = 'apple'),
                       (SELECT count(*) FROM arrival.requests WHERE sent_at < \(t))
                       + (SELECT count(*) FROM arrival.token_requests WHERE sent_at < \(t))
                       + (SELECT count(*) FROM arrival.broadcasts WHERE sent_at < \(t))
                       + (SELECT count(*) FROM arrival.renders WHERE rendered_at < \(t))
                       + (SELECT count(*) FROM arrival.callbacks WHERE received_at < \(t))
                       + (SELECT count(*) FROM arrival.start_tokens WHERE received_at < \(t))
                """)
            for row in counts {
                let (requests, renders, callbacks, repeats, malformed, apple, kept) = try row.decode(
                    (Int, Int, Int, Int, Int, Int, Int).self)
                summary.appleRows = apple
                summary.requests = requests
                summary.renders = renders
                summary.callbacks = callbacks
                summary.repeats = repeats
                summary.malformedLines = malformed
                summary.keptBefore = kept
            }
            try session.execute("COMMIT")
            return summary
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
    }

    /// The statements of one prune before `t`, in order. Integers only are
    /// written into them.
    package static func statements(before t: Int64) -> [String] {
        recordStatements(before: t) + appleStatements(before: t)
    }

    /// The statements that remove records (and what notes them) before `t`.
    private static func recordStatements(before t: Int64) -> [String] {
        let kills = PruneRule.killsToken
        // An activity is kept when anything at or after the cut names it.
        let kept = { (activity: String) in
            """
            (EXISTS (SELECT 1 FROM arrival.requests AS x WHERE x.activity_id = \(activity) AND x.sent_at >= \(t))
             OR EXISTS (SELECT 1 FROM arrival.renders AS x WHERE x.activity_id = \(activity) AND x.rendered_at >= \(t))
             OR EXISTS (SELECT 1 FROM arrival.callbacks AS x WHERE x.activity_id = \(activity) AND x.received_at >= \(t))
             OR EXISTS (SELECT 1 FROM arrival.callbacks AS p
                        JOIN arrival.token_requests AS x ON x.push_token = p.push_token AND x.sent_at >= \(t)
                        WHERE p.activity_id = \(activity) AND p.callback = 'push_token')
             OR EXISTS (SELECT 1 FROM (SELECT channel_id FROM arrival.renders
                                       WHERE activity_id = \(activity) AND channel_id IS NOT NULL
                                       UNION ALL
                                       SELECT channel_id FROM arrival.callbacks
                                       WHERE activity_id = \(activity) AND channel_id IS NOT NULL) AS s
                        JOIN arrival.broadcasts AS x ON x.channel_id = s.channel_id AND x.sent_at >= \(t)))
            """
        }
        return [
            "CREATE TEMP TABLE prune_deleted (kind text NOT NULL, id bigint NOT NULL) ON COMMIT DROP",
            "CREATE TEMP TABLE prune_counts (what text NOT NULL) ON COMMIT DROP",
            // The activities with a record before the cut, and which of them are kept.
            """
            CREATE TEMP TABLE prune_candidates ON COMMIT DROP AS
            SELECT activity_id FROM arrival.requests WHERE sent_at < \(t)
            UNION SELECT activity_id FROM arrival.renders WHERE rendered_at < \(t)
            UNION SELECT activity_id FROM arrival.callbacks WHERE received_at < \(t)
            """,
            """
            CREATE TEMP TABLE prune_keep ON COMMIT DROP AS
            SELECT activity_id FROM prune_candidates AS c WHERE \(kept("c.activity_id"))
            """,
            "CREATE UNIQUE INDEX ON prune_keep (activity_id)",
            "ANALYZE prune_keep",
            // Requests before the cut: those of kept activities, and each token's death, stay.
            """
            WITH d AS (
                DELETE FROM arrival.requests AS r WHERE r.sent_at < \(t)
                    AND NOT EXISTS (SELECT 1 FROM prune_keep AS k WHERE k.activity_id = r.activity_id)
                    AND NOT coalesce(\(kills) AND r.sent_at = (\(death("r.push_token"))), false)
                RETURNING id)
            INSERT INTO prune_deleted SELECT 'apns', id FROM d
            """,
            // Requests to a token alone: kept when a kept activity holds the token (a
            // holder's callback at or after the cut makes it kept), or at the token's death.
            """
            WITH d AS (
                DELETE FROM arrival.token_requests AS r WHERE r.sent_at < \(t)
                    AND NOT EXISTS (
                        SELECT 1 FROM arrival.callbacks AS p
                        WHERE p.callback = 'push_token' AND p.push_token = r.push_token
                          AND (p.received_at >= \(t)
                               OR EXISTS (SELECT 1 FROM prune_keep AS k WHERE k.activity_id = p.activity_id)))
                    AND NOT coalesce(\(kills) AND r.sent_at = (\(death("r.push_token"))), false)
                RETURNING id)
            INSERT INTO prune_deleted SELECT 'apns', id FROM d
            """,
            // Broadcasts: kept when a kept activity subscribes to the channel.
            """
            CREATE TEMP TABLE prune_channels ON COMMIT DROP AS
            SELECT DISTINCT channel_id FROM arrival.broadcasts WHERE sent_at < \(t)
            """,
            """
            WITH gone AS (
                SELECT channel_id FROM prune_channels AS c
                WHERE NOT EXISTS (SELECT 1 FROM arrival.renders AS s
                                  WHERE s.channel_id = c.channel_id
                                    AND (s.rendered_at >= \(t)
                                         OR EXISTS (SELECT 1 FROM prune_keep AS k WHERE k.activity_id = s.activity_id)))
                  AND NOT EXISTS (SELECT 1 FROM arrival.callbacks AS s
                                  WHERE s.channel_id = c.channel_id
                                    AND (s.received_at >= \(t)
                                         OR EXISTS (SELECT 1 FROM prune_keep AS k WHERE k.activity_id = s.activity_id)))),
            d AS (
                DELETE FROM arrival.broadcasts AS b USING gone
                WHERE b.channel_id = gone.channel_id AND b.sent_at < \(t)
                RETURNING b.id)
            INSERT INTO prune_deleted SELECT 'apns', id FROM d
            """,
            // The owners of the tokens of the requests to a token alone still stored before the cut.
            """
            CREATE TEMP TABLE prune_owners ON COMMIT DROP AS
            SELECT DISTINCT ON (p.push_token) p.push_token, p.activity_id, p.received_at
            FROM arrival.callbacks AS p
            WHERE p.callback = 'push_token'
              AND p.push_token IN (SELECT push_token FROM arrival.token_requests WHERE sent_at < \(t))
            ORDER BY p.push_token, p.received_at, p.activity_id COLLATE "C"
            """,
            """
            WITH d AS (
                DELETE FROM arrival.callbacks AS c WHERE c.received_at < \(t)
                    AND NOT EXISTS (SELECT 1 FROM prune_keep AS k WHERE k.activity_id = c.activity_id)
                    AND NOT EXISTS (SELECT 1 FROM prune_owners AS o
                                    WHERE c.callback = 'push_token' AND o.push_token = c.push_token
                                      AND o.activity_id = c.activity_id AND o.received_at = c.received_at)
                RETURNING id)
            INSERT INTO prune_deleted SELECT 'callback', id FROM d
            """,
            """
            WITH d AS (DELETE FROM arrival.start_tokens WHERE received_at < \(t) RETURNING id)
            INSERT INTO prune_deleted SELECT 'callback', id FROM d
            """,
            """
            WITH d AS (
                DELETE FROM arrival.renders AS r WHERE r.rendered_at < \(t)
                    AND NOT EXISTS (SELECT 1 FROM prune_keep AS k WHERE k.activity_id = r.activity_id)
                RETURNING id)
            INSERT INTO prune_deleted SELECT 'render', id FROM d
            """,
            // The repeat notes of the records removed, and the malformed lines of files ingested before the cut.
            """
            WITH d AS (
                DELETE FROM arrival.record_repeats AS r USING prune_deleted AS g
                WHERE r.record_id = g.id AND r.kind = g.kind RETURNING 1)
            INSERT INTO prune_counts SELECT 'repeats' FROM d
            """,
            """
            WITH d AS (
                DELETE FROM arrival.malformed_lines AS m USING arrival.files AS f
                WHERE f.id = m.file_id AND f.ingested_at < \(t) RETURNING 1)
            INSERT INTO prune_counts SELECT 'malformed' FROM d
            """,
        ]
    }

    /// Apple's rows of days wholly before the cut `t` (issue 54), as the SQLite store's prune.
    private static func appleStatements(before t: Int64) -> [String] {
        ["apple_delivery", "apple_broadcasts"].map {
            "WITH d AS (DELETE FROM arrival.\($0) WHERE day <= \(t) - \(Milliseconds.day) RETURNING 1) "
                + "INSERT INTO prune_counts SELECT 'apple' FROM d"
        }
    }

    /// The instant the token `token` died: its earliest request that killed it (either table).
    private static func death(_ token: String) -> String {
        let kills = PruneRule.killsToken
        return """
            SELECT min(sent_at) FROM (
                SELECT min(sent_at) AS sent_at FROM arrival.requests WHERE push_token = \(token) AND \(kills)
                UNION ALL
                SELECT min(sent_at) FROM arrival.token_requests WHERE push_token = \(token) AND \(kills)) AS deaths
            """
    }
}

import ArrivalModel
import Foundation

/// What a prune removed (``SQLiteStore/prune(before:vacuum:)``, and the
/// PostgreSQL store's): the same on either engine.
package struct PruneSummary: Equatable, Sendable {
    /// The time before which records could go (milliseconds since the epoch).
    package var before: Int64
    /// `apns` records removed (requests, requests to a token alone, broadcasts).
    package var requests = 0
    package var renders = 0
    /// Callbacks removed, push-to-start tokens among them.
    package var callbacks = 0
    /// Malformed lines removed (those of files ingested before ``before``).
    package var malformedLines = 0
    /// Rows of `record_repeats` that named a record removed.
    package var repeats = 0
    /// Rows of Apple's exports removed (issue 54): those of days that end at or before ``before``.
    package var appleRows = 0
    /// Records before ``before`` kept because a report of a window from it on reads them.
    package var keptBefore = 0
    /// The SQLite file's size before and after (nil on a server).
    package var bytesBefore: Int64?
    package var bytesAfter: Int64?
    /// Pages of the SQLite file that are free after the prune and that its
    /// next ingests reuse (0 after a vacuum; nil on a server).
    package var freePages: Int64?
    /// Whether the SQLite file was vacuumed (its free pages given back to the file system).
    package var vacuumed = false

    package init(before: Int64) { self.before = before }

    /// Records removed, of every kind.
    package var records: Int { requests + renders + callbacks }
}

/// The prune rule (Documentation/Retention.md), the same on both engines.
///
/// A report of a window from `T` on reads the updates whose time is at or
/// after `T`, and each outcome rests on its activity's own records, whenever
/// they came, on the requests that reach it (directly, through the owner of
/// the token they went to, or as a broadcast to a channel it subscribes to),
/// and on the death of the tokens requested in the window. So an activity
/// is **kept whole** when it has a record at or after `T`, holds (by a
/// `push_token` callback) a token that a request without an activity was
/// sent to at or after `T`, or subscribes to a channel broadcast to at or
/// after `T`. Only records before `T` are removed, and of those every one
/// is kept that
/// - belongs to a kept activity;
/// - is a request to a token alone, held by a kept activity;
/// - is a broadcast to a channel a kept activity subscribes to;
/// - is a request that killed its token, at the earliest instant one did
///   (the token's death, which later requests to it are counted against);
/// - is the `push_token` callback that owns the token of a request to a
///   token alone that is kept (so such a request keeps its owner and joins
///   no other activity's updates).
/// Push-to-start tokens before `T` go (no report reads them); so do the
/// malformed lines of files ingested before `T`, and the repeat notes of
/// records removed. The file registry stays whole: bytes met again are
/// still recognised as ingested.
package enum PruneRule {
    /// The reasons that kill a token, as an SQL list.
    package static let deadReasonList = SQLiteStore.deadTokenReasons.map { "'\($0)'" }.joined(separator: ", ")

    /// Whether an `apns` row (columns unqualified) killed its token: NULL
    /// rather than false when it did not and has no reason, so a condition
    /// that negates it wraps it in `coalesce`.
    package static let killsToken = "(status = 410 OR reason IN (\(deadReasonList)))"
}

extension SQLiteStore {
    /// Removes what no report of a window from `before` on reads
    /// (``PruneRule``), in one write transaction; with `vacuum`, then gives
    /// the freed pages back to the file system (`VACUUM`, which rewrites the
    /// file). Without, the freed pages are reused by the next ingests.
    package func prune(before: Int64, vacuum: Bool) throws(DatabaseError) -> PruneSummary {
        precondition(!batchOpen, "a store is pruned outside an ingest batch")
        var summary = PruneSummary(before: before)
        summary.bytesBefore = fileBytes()
        try connection.execute("BEGIN IMMEDIATE")
        do throws(DatabaseError) {
            try prepareKeep(before: before)
            summary.requests = try delete(Self.pruneRequestsSQL(before))
            try connection.execute(Self.ownersSQL(before))
            summary.callbacks = try delete(Self.pruneCallbacksSQL(before))
            summary.renders = try delete(
                """
                DELETE FROM renders WHERE rendered_at < \(before)
                    AND NOT EXISTS (SELECT 1 FROM temp.prune_keep AS k WHERE k.activity_id = renders.activity_id)
                """)
            summary.repeats = try delete(
                """
                DELETE FROM record_repeats WHERE
                       (kind = 'apns' AND NOT EXISTS (SELECT 1 FROM apns WHERE id = record_repeats.record_id))
                    OR (kind = 'render' AND NOT EXISTS (SELECT 1 FROM renders WHERE id = record_repeats.record_id))
                    OR (kind = 'callback' AND NOT EXISTS (SELECT 1 FROM callbacks WHERE id = record_repeats.record_id))
                """)
            // Apple's rows of days wholly before the cut; a day the cut falls in stays, as reports from it read it.
            if try connection.hasAppleTables() {
                summary.appleRows =
                    try delete("DELETE FROM apple_delivery WHERE day <= \(before) - \(Milliseconds.day)")
                    + delete("DELETE FROM apple_broadcasts WHERE day <= \(before) - \(Milliseconds.day)")
            }
            summary.malformedLines = try delete(
                "DELETE FROM malformed_lines WHERE file_id IN (SELECT id FROM files WHERE ingested_at < \(before))")
            let kept = try connection.prepare(
                """
                SELECT (SELECT count(*) FROM apns WHERE sent_at < \(before))
                     + (SELECT count(*) FROM renders WHERE rendered_at < \(before))
                     + (SELECT count(*) FROM callbacks WHERE received_at < \(before))
                """)
            if try kept.step() { summary.keptBefore = Int(kept.int(0)) }
            kept.reset()
            try dropKeep()
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            try? dropKeep()
            throw error
        }
        if vacuum {
            // Outside any transaction; then the WAL it went through is truncated too.
            try connection.execute("VACUUM")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            summary.vacuumed = true
        } else {
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let free = try connection.prepare("PRAGMA freelist_count")
        if try free.step() { summary.freePages = free.int(0) }
        free.reset()
        summary.bytesAfter = fileBytes()
        return summary
    }

    /// Runs one DELETE and returns how many rows it removed.
    private func delete(_ sql: String) throws(DatabaseError) -> Int {
        try connection.execute(sql)
        return connection.changes
    }

    /// The size of the store's file and its write-ahead log.
    private func fileBytes() -> Int64 {
        [path, path + "-wal"].reduce(Int64(0)) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value
            return total + (size ?? 0)
        }
    }

    private static let keepTables = [
        "prune_tokens_after", "prune_channels_after", "prune_keep", "prune_held_tokens", "prune_kept_channels",
        "prune_deaths", "prune_owners",
    ]

    private func dropKeep() throws(DatabaseError) {
        try connection.execute(Self.keepTables.map { "DROP TABLE IF EXISTS temp.\($0);" }.joined(separator: "\n"))
    }

    /// Fills the temporary tables the rule reads: the kept activities, the
    /// tokens they hold, the channels they subscribe to, and every token's death.
    private func prepareKeep(before t: Int64) throws(DatabaseError) {
        try dropKeep()
        try connection.execute(
            """
            CREATE TEMP TABLE prune_tokens_after (push_token TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO temp.prune_tokens_after
                SELECT push_token FROM apns
                WHERE sent_at >= \(t) AND activity_id IS NULL AND channel_id IS NULL AND push_token IS NOT NULL;
            CREATE TEMP TABLE prune_channels_after (channel_id TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO temp.prune_channels_after
                SELECT channel_id FROM apns WHERE channel_id IS NOT NULL AND sent_at >= \(t);
            CREATE TEMP TABLE prune_keep (activity_id TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO temp.prune_keep
                SELECT activity_id FROM apns WHERE sent_at >= \(t) AND activity_id IS NOT NULL;
            INSERT OR IGNORE INTO temp.prune_keep
                SELECT activity_id FROM renders
                WHERE rendered_at >= \(t) OR channel_id IN (SELECT channel_id FROM temp.prune_channels_after);
            INSERT OR IGNORE INTO temp.prune_keep
                SELECT activity_id FROM callbacks
                WHERE activity_id IS NOT NULL
                  AND (received_at >= \(t) OR channel_id IN (SELECT channel_id FROM temp.prune_channels_after)
                       OR (callback = 'push_token' AND push_token IN (SELECT push_token FROM temp.prune_tokens_after)));
            CREATE TEMP TABLE prune_held_tokens (push_token TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO temp.prune_held_tokens
                SELECT push_token FROM callbacks
                WHERE callback = 'push_token' AND push_token IS NOT NULL
                  AND activity_id IN (SELECT activity_id FROM temp.prune_keep);
            CREATE TEMP TABLE prune_kept_channels (channel_id TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT OR IGNORE INTO temp.prune_kept_channels
                SELECT channel_id FROM renders
                WHERE channel_id IS NOT NULL AND activity_id IN (SELECT activity_id FROM temp.prune_keep);
            INSERT OR IGNORE INTO temp.prune_kept_channels
                SELECT channel_id FROM callbacks
                WHERE channel_id IS NOT NULL AND activity_id IN (SELECT activity_id FROM temp.prune_keep);
            CREATE TEMP TABLE prune_deaths (push_token TEXT PRIMARY KEY, died_at INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO temp.prune_deaths
                SELECT push_token, min(sent_at) FROM apns
                WHERE push_token <> '' AND \(PruneRule.killsToken) GROUP BY push_token;
            """)
    }

    /// Removes the requests before `t` that the rule does not keep.
    private static func pruneRequestsSQL(_ t: Int64) -> String {
        """
        DELETE FROM apns WHERE sent_at < \(t)
            AND NOT (activity_id IS NOT NULL
                     AND EXISTS (SELECT 1 FROM temp.prune_keep AS k WHERE k.activity_id = apns.activity_id))
            AND NOT (activity_id IS NULL AND channel_id IS NULL
                     AND EXISTS (SELECT 1 FROM temp.prune_held_tokens AS h WHERE h.push_token = apns.push_token))
            AND NOT (channel_id IS NOT NULL
                     AND EXISTS (SELECT 1 FROM temp.prune_kept_channels AS c WHERE c.channel_id = apns.channel_id))
            AND NOT coalesce(\(PruneRule.killsToken)
                             AND EXISTS (SELECT 1 FROM temp.prune_deaths AS d
                                         WHERE d.push_token = apns.push_token AND d.died_at = apns.sent_at), 0)
        """
    }

    /// The owner (contract 3: the earliest `push_token` callback, then the
    /// smallest activity) of the token of every request to a token alone
    /// still stored before `t`, over every callback.
    private static func ownersSQL(_ t: Int64) -> String {
        """
        CREATE TEMP TABLE prune_owners (
            push_token TEXT PRIMARY KEY, activity_id TEXT NOT NULL, received_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO temp.prune_owners (push_token, activity_id, received_at)
        SELECT push_token, activity_id, received_at FROM callbacks
        WHERE callback = 'push_token' AND push_token IS NOT NULL AND activity_id IS NOT NULL
          AND push_token IN (SELECT push_token FROM apns
                             WHERE sent_at < \(t) AND activity_id IS NULL AND channel_id IS NULL)
        ON CONFLICT (push_token) DO UPDATE SET activity_id = excluded.activity_id, received_at = excluded.received_at
        WHERE excluded.received_at < received_at
           OR (excluded.received_at = received_at AND excluded.activity_id < activity_id);
        """
    }

    /// Removes the callbacks before `t` that the rule does not keep.
    private static func pruneCallbacksSQL(_ t: Int64) -> String {
        """
        DELETE FROM callbacks WHERE received_at < \(t)
            AND NOT (activity_id IS NOT NULL
                     AND EXISTS (SELECT 1 FROM temp.prune_keep AS k WHERE k.activity_id = callbacks.activity_id))
            AND NOT (callback = 'push_token'
                     AND EXISTS (SELECT 1 FROM temp.prune_owners AS o
                                 WHERE o.push_token = callbacks.push_token AND o.activity_id = callbacks.activity_id
                                   AND o.received_at = callbacks.received_at))
        """
    }
}

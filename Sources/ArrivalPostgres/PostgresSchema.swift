import ArrivalModel
import ArrivalStore
import Foundation
import PostgresNIO

/// The PostgreSQL store's schema, in a schema of its own (`arrival`) so that
/// it can live in a database a team already runs, as named, append-only
/// migrations: one that has shipped is never edited; a change is a new one
/// at the end. Applied under an advisory lock, so writers that start at
/// once migrate one after the other.
///
/// The data model is the SQLite store's (Documentation/Architecture.md,
/// Documentation/PostgreSQL.md), laid out to be spread over Citus nodes
/// (``layout``, Documentation/Scale-out.md):
/// - records naming an activity (`requests`, `renders`, `callbacks`) are
///   distributed by `activity_id`, with the rows the rules relate on one node;
/// - records naming no activity go by what they do name: requests to a push
///   token alone (`token_requests`) and push-to-start tokens (`start_tokens`)
///   by `push_token`, broadcasts by `channel_id`;
/// - the registry by file (`files`, `skipped_files` by content hash,
///   `malformed_lines`, `record_repeats` by file id).
///
/// A record's identity is its distribution value, its time and the 64-bit
/// hash of every contract field (`content_hash`): a unique key, so equal
/// records from any number of writers are stored once by
/// `ON CONFLICT DO NOTHING`, never by a read before the write. Ids come from
/// one sequence per kind (`token_requests` and `broadcasts` share the
/// requests'), so the three `apns` tables read in id order are one stream in
/// the order the rows were stored, as in a SQLite store.
package enum PostgresSchema {
    /// The schema's name.
    package static let name = "arrival"

    static let all: [(name: String, statements: [String])] = [
        ("0001_records", records),
        ("0002_repeat_counts_and_limits", repeatCountsAndLimits),
        ("0003_prune_indexes", pruneIndexes),
        ("0004_frequent_pushes", frequentPushes),
        ("0005_nul_character", nulCharacter),
        ("0006_time_ranges", timeRanges),
        ("0007_apple_metrics", appleMetrics),
    ]

    /// As the SQLite store's `0015_apple_metrics` (issue 54): Apple's
    /// delivery and broadcast exports, one row per day and key; a null
    /// count is a value Apple hid (`-1`).
    static let appleMetrics = [
        """
        CREATE TABLE arrival.apple_delivery (
            day         bigint NOT NULL,
            push_type   text   NOT NULL,
            status      text   NOT NULL,
            count       bigint CHECK (count >= 0),
            file_sha256 text   NOT NULL,
            imported_at bigint NOT NULL,
            PRIMARY KEY (day, push_type, status))
        """,
        """
        CREATE TABLE arrival.apple_broadcasts (
            day                 bigint   NOT NULL,
            channel_id          text     NOT NULL,
            application         smallint NOT NULL CHECK (application IN (0, 1)),
            published           bigint CHECK (published >= 0),
            delivered           bigint CHECK (delivered >= 0),
            total_subscriptions bigint CHECK (total_subscriptions >= 0),
            unique_subscribers  bigint CHECK (unique_subscribers >= 0),
            hidden              text     NOT NULL,
            file_sha256         text     NOT NULL,
            imported_at         bigint   NOT NULL,
            PRIMARY KEY (day, application, channel_id))
        """,
    ]

    /// The records before a time (``pruneIndexes``) found by block range
    /// (BRIN) rather than by a B-tree: every row stored paid for its place in
    /// a B-tree of times, a third of what storing a render cost the server
    /// (issue 52), and only a prune asks for them. Rows go in about in the
    /// order of their times, so a day's prune still reads the blocks of that
    /// day and the ones mixed with them; a block range not yet summarized is
    /// read whole (`autosummarize` summarizes each as it fills).
    static let timeRanges: [String] = [
        ("requests", "sent_at"), ("token_requests", "sent_at"), ("broadcasts", "sent_at"),
        ("renders", "rendered_at"), ("callbacks", "received_at"), ("start_tokens", "received_at"),
    ].flatMap { table, column in
        [
            "DROP INDEX arrival.\(table)_\(column)",
            "CREATE INDEX \(table)_\(column) ON arrival.\(table) USING brin (\(column)) WITH (autosummarize = on)",
        ]
    }

    /// As the SQLite store's `0013_frequent_pushes` (contract 3.1): the
    /// user's "More Frequent Updates" switch on renders and callbacks (and
    /// push-to-start tokens, which are callbacks), null on rows stored before.
    static let frequentPushes: [String] = ["renders", "callbacks", "start_tokens"].map {
        "ALTER TABLE arrival.\($0) ADD COLUMN frequent_pushes text"
    }

    /// What a prune (``PostgresPrune``) finds by index, so that one day's
    /// prune reads that day rather than the tables: the records before a
    /// time (the identity keys lead with the activity, token or channel; by
    /// block range since ``timeRanges``),
    /// who holds a token, who subscribes to a channel, the requests that
    /// killed a token (partial: few), and the repeat notes of a record.
    static let pruneIndexes: [String] = [
        "CREATE INDEX requests_sent_at ON arrival.requests (sent_at)",
        "CREATE INDEX token_requests_sent_at ON arrival.token_requests (sent_at)",
        "CREATE INDEX broadcasts_sent_at ON arrival.broadcasts (sent_at)",
        "CREATE INDEX renders_rendered_at ON arrival.renders (rendered_at)",
        "CREATE INDEX callbacks_received_at ON arrival.callbacks (received_at)",
        "CREATE INDEX start_tokens_received_at ON arrival.start_tokens (received_at)",
        "CREATE INDEX callbacks_token_holders ON arrival.callbacks (push_token, received_at) WHERE callback = 'push_token'",
        "CREATE INDEX renders_channels ON arrival.renders (channel_id, rendered_at) WHERE channel_id IS NOT NULL",
        "CREATE INDEX callbacks_channels ON arrival.callbacks (channel_id, received_at) WHERE channel_id IS NOT NULL",
        "CREATE INDEX requests_deaths ON arrival.requests (push_token, sent_at) WHERE \(PruneRule.killsToken)",
        "CREATE INDEX token_requests_deaths ON arrival.token_requests (push_token, sent_at) WHERE \(PruneRule.killsToken)",
        "CREATE INDEX record_repeats_record ON arrival.record_repeats (record_id)",
    ]

    /// As the SQLite store's `0012_repeat_counts_and_limits`: a repeated
    /// record is counted per file (rows written before keep a count of 1
    /// each, and readers add them up), and the malformed cause `too_large`
    /// for a file that passes an ingest limit.
    static let repeatCountsAndLimits = [
        "ALTER TABLE arrival.record_repeats ADD COLUMN repeats bigint NOT NULL DEFAULT 1 CHECK (repeats > 0)",
        """
        ALTER TABLE arrival.malformed_lines DROP CONSTRAINT malformed_lines_cause_check,
            ADD CONSTRAINT malformed_lines_cause_check CHECK (cause IN ('line_too_long', 'invalid_utf8',
                'invalid_json', 'too_deep', 'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind',
                'missing_field', 'wrong_type', 'invalid_time', 'invalid_enum', 'invalid_exchange', 'kind_not_allowed',
                'truncated_gzip', 'too_large'))
        """,
    ]

    /// As the SQLite store's `0014_nul_character`: contract 3.2's malformed cause for U+0000 in a kept text.
    static let nulCharacter = [
        """
        ALTER TABLE arrival.malformed_lines DROP CONSTRAINT malformed_lines_cause_check,
            ADD CONSTRAINT malformed_lines_cause_check CHECK (cause IN ('line_too_long', 'invalid_utf8',
                'invalid_json', 'too_deep', 'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind',
                'missing_field', 'wrong_type', 'invalid_time', 'invalid_enum', 'invalid_exchange', 'nul_character',
                'kind_not_allowed', 'truncated_gzip', 'too_large'))
        """
    ]

    /// How Citus is to spread the schema (checked by ``CitusRules`` in the tests).
    package static let layout = CitusLayout(
        distributed: [
            "requests": "activity_id", "renders": "activity_id", "callbacks": "activity_id",
            "token_requests": "push_token", "start_tokens": "push_token", "broadcasts": "channel_id",
            "files": "content_sha256", "skipped_files": "content_sha256",
            "malformed_lines": "file_id", "record_repeats": "file_id",
        ],
        reference: ["migrations", "apple_delivery", "apple_broadcasts"])

    /// The `apns` columns of a request table after its id, file and hash.
    private static func requestColumns(_ activity: String, _ token: String, _ channel: String) -> String {
        """
            apns_id       text   NOT NULL,
            sent_at       bigint NOT NULL,
            status        bigint NOT NULL,
            reason        text,
            push_token    text   \(token),
            activity_id   text   \(activity),
            seq           bigint,
            event         text CHECK (event IN ('start', 'update', 'end')),
            aps_timestamp bigint NOT NULL,
            payload_bytes bigint,
            topic         text,
            push_type     text,
            priority      bigint,
            environment   text,
            latency_ms    bigint,
            provider      text CHECK (provider IN ('fcm', 'tencent_chat')),
            channel_id    text   \(channel)
        """
    }

    /// The `callbacks` columns after its id, file and hash.
    private static func callbackColumns(activity: String, token: String = "") -> String {
        """
            callback     text   NOT NULL CHECK (callback IN ('push_token', 'push_to_start_token', 'content_update',
                                                             'activity_state', 'channel_subscription')),
            activity_id  text   \(activity),
            push_token   text   \(token) CHECK (push_token IS NOT NULL OR callback NOT IN ('push_token', 'push_to_start_token')),
            seq          bigint CHECK (seq IS NOT NULL OR callback <> 'content_update'),
            state        text   CHECK (state IN ('active', 'ended', 'dismissed', 'stale', 'pending')
                                       AND (state IS NOT NULL OR callback <> 'activity_state')),
            received_at  bigint NOT NULL,
            device_id    text,
            os_version   text,
            device_model text,
            app_version  text,
            channel_id   text   CHECK (channel_id <> '' AND (channel_id IS NOT NULL OR callback <> 'channel_subscription'))
        """
    }

    /// The first schema: registry, records, and the indexes ingest and reads use.
    /// Times are integer milliseconds since the Unix epoch (UTC), as in SQLite.
    static let records: [String] =
        [
            "CREATE SEQUENCE arrival.file_ids",
            "CREATE SEQUENCE arrival.request_ids",
            "CREATE SEQUENCE arrival.render_ids",
            "CREATE SEQUENCE arrival.callback_ids",
            """
            CREATE TABLE arrival.files (
                content_sha256  text    PRIMARY KEY CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
                id              bigint  NOT NULL DEFAULT nextval('arrival.file_ids'),
                path            text    NOT NULL,
                byte_count      bigint  NOT NULL,
                gzip            boolean NOT NULL,
                line_count      bigint  NOT NULL,
                record_count    bigint  NOT NULL,
                duplicate_count bigint  NOT NULL,
                malformed_count bigint  NOT NULL,
                ingested_at     bigint  NOT NULL
            )
            """,
            "CREATE INDEX files_id ON arrival.files (id)",
            "CREATE INDEX files_path ON arrival.files (path, byte_count)",
            "CREATE INDEX files_byte_count ON arrival.files (byte_count)",
            """
            CREATE TABLE arrival.skipped_files (
                content_sha256 text   NOT NULL REFERENCES arrival.files (content_sha256),
                path           text   NOT NULL,
                first_seen_at  bigint NOT NULL,
                PRIMARY KEY (content_sha256, path)
            )
            """,
            """
            CREATE TABLE arrival.malformed_lines (
                file_id bigint NOT NULL,
                line    bigint NOT NULL,
                cause   text   NOT NULL CHECK (cause IN ('line_too_long', 'invalid_utf8', 'invalid_json', 'too_deep',
                            'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind', 'missing_field',
                            'wrong_type', 'invalid_time', 'invalid_enum', 'invalid_exchange', 'kind_not_allowed',
                            'truncated_gzip')),
                problem text,
                PRIMARY KEY (file_id, line)
            )
            """,
            """
            CREATE TABLE arrival.record_repeats (
                file_id   bigint NOT NULL,
                kind      text   NOT NULL CHECK (kind IN ('apns', 'render', 'callback')),
                record_id bigint NOT NULL
            )
            """,
            "CREATE INDEX record_repeats_file ON arrival.record_repeats (file_id)",
            """
            CREATE TABLE arrival.requests (
                id           bigint NOT NULL DEFAULT nextval('arrival.request_ids'),
                file_id      bigint NOT NULL,
                content_hash bigint NOT NULL,
            \(requestColumns("NOT NULL", "NOT NULL", "CHECK (channel_id IS NULL)")),
                UNIQUE (activity_id, sent_at, content_hash)
            )
            """,
            """
            CREATE TABLE arrival.token_requests (
                id           bigint NOT NULL DEFAULT nextval('arrival.request_ids'),
                file_id      bigint NOT NULL,
                content_hash bigint NOT NULL,
            \(requestColumns("CHECK (activity_id IS NULL)", "NOT NULL", "CHECK (channel_id IS NULL)")),
                UNIQUE (push_token, sent_at, content_hash)
            )
            """,
            """
            CREATE TABLE arrival.broadcasts (
                id           bigint NOT NULL DEFAULT nextval('arrival.request_ids'),
                file_id      bigint NOT NULL,
                content_hash bigint NOT NULL,
            \(requestColumns("CHECK (activity_id IS NULL)", "CHECK (push_token IS NULL)", "NOT NULL CHECK (channel_id <> '')")),
                UNIQUE (channel_id, sent_at, content_hash)
            )
            """,
            """
            CREATE TABLE arrival.renders (
                id           bigint NOT NULL DEFAULT nextval('arrival.render_ids'),
                file_id      bigint NOT NULL,
                content_hash bigint NOT NULL,
                activity_id  text   NOT NULL,
                seq          bigint NOT NULL,
                rendered_at  bigint NOT NULL,
                surface      text,
                device_id    text,
                os_version   text,
                device_model text,
                app_version  text,
                channel_id   text CHECK (channel_id <> ''),
                UNIQUE (activity_id, rendered_at, content_hash)
            )
            """,
            """
            CREATE TABLE arrival.callbacks (
                id           bigint NOT NULL DEFAULT nextval('arrival.callback_ids'),
                file_id      bigint NOT NULL,
                content_hash bigint NOT NULL,
            \(callbackColumns(activity: "NOT NULL")),
                UNIQUE (activity_id, received_at, content_hash)
            )
            """,
            """
            CREATE TABLE arrival.start_tokens (
                id           bigint NOT NULL DEFAULT nextval('arrival.callback_ids'),
                file_id      bigint NOT NULL,
                content_hash bigint NOT NULL,
            \(callbackColumns(activity: "CHECK (activity_id IS NULL AND callback = 'push_to_start_token')", token: "NOT NULL")),
                UNIQUE (push_token, received_at, content_hash)
            )
            """,
        ]
        + ["requests", "token_requests", "broadcasts", "renders", "callbacks", "start_tokens"].flatMap { table in
            [
                // Reads go in id order; a file's rows are found (replaced, counted) by its id.
                "CREATE INDEX \(table)_id ON arrival.\(table) (id)",
                "CREATE INDEX \(table)_file ON arrival.\(table) (file_id)",
            ]
        }

    /// The outcome views (Documentation/Outcomes.md) in PostgreSQL's dialect,
    /// after `apns`: the three request tables as the one stream SQLite keeps
    /// and the rules read. Like SQLite's, they are no migration: ``migrate(_:)``
    /// makes them again whenever ``OutcomeRules`` change, and marks them with
    /// ``viewsMark`` (a comment on `update_outcomes`).
    package static let views: [(name: String, sql: String)] = {
        let columns = """
            id, file_id, apns_id, sent_at, status, reason, push_token, activity_id, seq, event, aps_timestamp,
            payload_bytes, topic, push_type, priority, environment, latency_ms, provider, channel_id
            """
        let apns = ["requests", "token_requests", "broadcasts"].map { "SELECT \(columns) FROM \($0)" }
        let rules = OutcomeRules.viewSQL(for: .postgres).components(separatedBy: ";\n")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        precondition(rules.count == OutcomeRules.viewNames.count, "one statement a view")
        return [("apns", "CREATE VIEW apns AS\n" + apns.joined(separator: "\nUNION ALL\n"))]
            + zip(OutcomeRules.viewNames, rules).map { ($0, $1) }
    }()

    /// What marks views made by these rules.
    package static let viewsMark: String = {
        var hash = StableHash()
        for view in views { hash.combine(view.sql) }
        return "arrival outcome views \(String(hash.finish(), radix: 16))"
    }()

    /// Makes the outcome views again unless they carry ``viewsMark``; in the
    /// caller's transaction. Returns whether it did.
    private static func makeViews(_ session: PostgresSession) throws -> Bool {
        let marked = try session.run(
            "SELECT obj_description(to_regclass('arrival.update_outcomes'), 'pg_class')")
        for row in marked where try row.decode(String?.self) == viewsMark { return false }
        // Names in the views' text are the schema's; views of other rules go first, the last made first.
        try session.execute("SET LOCAL search_path = arrival")
        for view in views.reversed() { try session.execute("DROP VIEW IF EXISTS arrival.\(view.name)") }
        for view in views { try session.execute(view.sql) }
        try session.execute("COMMENT ON VIEW arrival.update_outcomes IS '\(viewsMark)'")
        return true
    }

    /// What ``migrate(_:)`` found.
    package enum Outcome: Equatable, Sendable {
        case upToDate
        case applied([String])
    }

    /// Applies the migrations this arrival has and the store lacks, in one
    /// transaction under an advisory lock. A store migrated by a newer
    /// arrival (a migration this one does not know) is refused untouched.
    @discardableResult
    package static func migrate(_ session: PostgresSession) throws -> Outcome {
        try session.execute("BEGIN")
        do {
            // One key for arrival's migrations in this database: ASCII "arrival1".
            try session.execute("SELECT pg_advisory_xact_lock(7021800566307253297)")
            try session.execute(
                "CREATE SCHEMA IF NOT EXISTS arrival",
                """
                CREATE TABLE IF NOT EXISTS arrival.migrations (
                    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            var applied = Set<String>()
            for row in try session.run("SELECT name FROM arrival.migrations") {
                applied.insert(try row.decode(String.self))
            }
            let known = Set(all.map(\.name))
            if let unknown = applied.subtracting(known).sorted().last {
                throw PostgresStoreError(
                    "\(session.location.redacted): the store was migrated by a newer arrival (migration \(unknown)); "
                        + "upgrade arrival to use it")
            }
            var done: [String] = []
            for migration in all where !applied.contains(migration.name) {
                for statement in migration.statements { try session.execute(statement) }
                try session.run("INSERT INTO arrival.migrations (name) VALUES (\(migration.name))")
                done.append(migration.name)
            }
            if try makeViews(session) { done.append("outcome views") }
            try session.execute("COMMIT")
            return done.isEmpty ? .upToDate : .applied(done)
        } catch {
            try? session.execute("ROLLBACK")
            throw error
        }
    }
}

/// The store's schema as named, append-only migrations: a migration that has
/// shipped is never edited; a change is a new migration at the end.
enum Migrations {
    static let all: [(name: String, sql: String)] = [
        ("0001_records", records),
        // The views are (re-)created after the migrations, from the rules of
        // this arrival (SQLiteStore.upgradeSchema); this name only stays applied.
        ("0002_analysis_views", "-- views: see OutcomeRules.viewSQL"),
        ("0003_malformed_problem", malformedProblem),
        ("0004_record_repeats", recordRepeats),
        ("0005_providers", providers),
        ("0006_file_lookup", fileLookup),
        ("0007_record_key_indexes", recordKeyIndexes),
        ("0008_repeat_record_ids", repeatRecordIDs),
        ("0009_pending_state", pendingState),
        ("0010_broadcast_channels", broadcastChannels),
        // Code: Migrations.rekeyRecords (Migrations+RecordKeys.swift).
        ("0011_record_keys_by_window", "-- keys: see Migrations.rekeyRecords"),
        ("0012_repeat_counts_and_limits", repeatCountsAndLimits),
        ("0013_frequent_pushes", frequentPushes),
        ("0014_nul_character", nulCharacter),
        ("0015_apple_metrics", appleMetrics),
    ]

    /// Apple's own numbers (issue 54, Documentation/Apple-metrics.md): the
    /// rows of its delivery and broadcast metrics exports, one per day and
    /// key, replaced whole day by day when a later export of the day comes.
    /// A null count is a value Apple hid (`-1`), never 0. `file_sha256` is
    /// the export that gave the row.
    static let appleMetrics = """
        CREATE TABLE apple_delivery (
            day         INTEGER NOT NULL,
            push_type   TEXT    NOT NULL,
            status      TEXT    NOT NULL,
            count       INTEGER CHECK (count >= 0),
            file_sha256 TEXT    NOT NULL,
            imported_at INTEGER NOT NULL,
            PRIMARY KEY (day, push_type, status)
        ) WITHOUT ROWID;
        CREATE TABLE apple_broadcasts (
            day                 INTEGER NOT NULL,
            channel_id          TEXT    NOT NULL,
            application         INTEGER NOT NULL CHECK (application IN (0, 1)),
            published           INTEGER CHECK (published >= 0),
            delivered           INTEGER CHECK (delivered >= 0),
            total_subscriptions INTEGER CHECK (total_subscriptions >= 0),
            unique_subscribers  INTEGER CHECK (unique_subscribers >= 0),
            hidden              TEXT    NOT NULL,
            file_sha256         TEXT    NOT NULL,
            imported_at         INTEGER NOT NULL,
            PRIMARY KEY (day, application, channel_id)
        ) WITHOUT ROWID;
        """

    /// Contract 3.2: U+0000 in a text a record keeps makes its line
    /// malformed, with the cause `nul_character`. SQLite cannot change a
    /// CHECK, so `malformed_lines` is copied into a table with the longer
    /// list, as ``repeatCountsAndLimits`` did.
    static let nulCharacter = """
        CREATE TABLE malformed_lines_0014 (
            file_id INTEGER NOT NULL REFERENCES files (id),
            line    INTEGER NOT NULL,
            cause   TEXT    NOT NULL CHECK (cause IN ('line_too_long', 'invalid_utf8', 'invalid_json', 'too_deep',
                        'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind', 'missing_field',
                        'wrong_type', 'invalid_time', 'invalid_enum', 'invalid_exchange', 'nul_character',
                        'kind_not_allowed', 'truncated_gzip', 'too_large')),
            problem TEXT,
            PRIMARY KEY (file_id, line)
        ) WITHOUT ROWID;
        INSERT INTO malformed_lines_0014 (file_id, line, cause, problem)
            SELECT file_id, line, cause, problem FROM malformed_lines;
        DROP TABLE malformed_lines;
        ALTER TABLE malformed_lines_0014 RENAME TO malformed_lines;
        """

    /// Contract 3.1: renders and callbacks may say what the user's "More
    /// Frequent Updates" switch was (`frequent_pushes`). A column each, null
    /// on every row stored before; the de-duplication hash leaves it out
    /// when null (``RecordKind/laterColumns``), so those rows keep their keys.
    static let frequentPushes = """
        ALTER TABLE renders ADD COLUMN frequent_pushes TEXT;
        ALTER TABLE callbacks ADD COLUMN frequent_pushes TEXT;
        """

    /// A repeated record is counted, not noted once per line: one row per
    /// file and record with how many of the file's lines repeat it (a file
    /// of one line written a million times is one row, not a million). And
    /// the malformed cause `too_large`: a file that passes an ingest limit
    /// (inflated bytes or lines, Documentation/InputRecords.md) keeps the
    /// lines before the limit, and the first line not read counts as this
    /// cause. SQLite cannot change a CHECK, so `malformed_lines` is copied
    /// into a table with the longer list, as ``providers`` did.
    static let repeatCountsAndLimits = """
        CREATE TABLE record_repeats_0012 (
            file_id   INTEGER NOT NULL REFERENCES files (id),
            kind      TEXT    NOT NULL CHECK (kind = 'apns' OR kind = 'render' OR kind = 'callback'),
            record_id INTEGER NOT NULL,
            repeats   INTEGER NOT NULL CHECK (repeats > 0),
            PRIMARY KEY (file_id, kind, record_id)
        ) WITHOUT ROWID;
        INSERT INTO record_repeats_0012 (file_id, kind, record_id, repeats)
            SELECT file_id, kind, record_id, count(*) FROM record_repeats WHERE record_id IS NOT NULL
            GROUP BY file_id, kind, record_id;
        DROP TABLE record_repeats;
        ALTER TABLE record_repeats_0012 RENAME TO record_repeats;
        CREATE TABLE malformed_lines_0012 (
            file_id INTEGER NOT NULL REFERENCES files (id),
            line    INTEGER NOT NULL,
            cause   TEXT    NOT NULL CHECK (cause IN ('line_too_long', 'invalid_utf8', 'invalid_json', 'too_deep',
                        'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind', 'missing_field',
                        'wrong_type', 'invalid_time', 'invalid_enum', 'invalid_exchange', 'kind_not_allowed',
                        'truncated_gzip', 'too_large')),
            problem TEXT,
            PRIMARY KEY (file_id, line)
        ) WITHOUT ROWID;
        INSERT INTO malformed_lines_0012 (file_id, line, cause, problem)
            SELECT file_id, line, cause, problem FROM malformed_lines;
        DROP TABLE malformed_lines;
        ALTER TABLE malformed_lines_0012 RENAME TO malformed_lines;
        """

    /// Contract 3.0's broadcast channels: an `apns` row may be a broadcast,
    /// with a `channel_id` and neither a push token nor an activity; renders
    /// and callbacks may name the activity's channel, and a callback may be
    /// a `channel_subscription`. SQLite cannot relax a NOT NULL or change a
    /// CHECK, so `apns` and `callbacks` are copied into tables that allow
    /// them (the same ids and rows; the unique indexes on `record_key` made
    /// again, as ``pendingState`` does); `renders` gets a column. The
    /// partial index holds broadcasts only: the analysis reads them before
    /// anything else and sizes its partitions by them without a scan of
    /// every request; a store without broadcasts keeps it empty.
    static let broadcastChannels = """
        PRAGMA legacy_alter_table = ON;
        CREATE TABLE apns_0010 (
            id            INTEGER PRIMARY KEY,
            record_key    INTEGER NOT NULL,
            file_id       INTEGER NOT NULL,
            apns_id       TEXT    NOT NULL,
            sent_at       INTEGER NOT NULL,
            status        INTEGER NOT NULL,
            reason        TEXT,
            push_token    TEXT,
            activity_id   TEXT,
            seq           INTEGER,
            event         TEXT CHECK (event = 'start' OR event = 'update' OR event = 'end'),
            aps_timestamp INTEGER NOT NULL,
            payload_bytes INTEGER,
            topic         TEXT,
            push_type     TEXT,
            priority      INTEGER,
            environment   TEXT,
            latency_ms    INTEGER,
            provider      TEXT CHECK (provider = 'fcm' OR provider = 'tencent_chat'),
            channel_id    TEXT,
            CHECK (CASE WHEN channel_id IS NULL THEN push_token IS NOT NULL
                        ELSE channel_id <> '' AND push_token IS NULL AND activity_id IS NULL END)
        );
        INSERT INTO apns_0010 (id, record_key, file_id, apns_id, sent_at, status, reason, push_token, activity_id, seq,
                               event, aps_timestamp, payload_bytes, topic, push_type, priority, environment,
                               latency_ms, provider)
            SELECT id, record_key, file_id, apns_id, sent_at, status, reason, push_token, activity_id, seq, event,
                   aps_timestamp, payload_bytes, topic, push_type, priority, environment, latency_ms, provider
            FROM apns;
        DROP TABLE apns;
        ALTER TABLE apns_0010 RENAME TO apns;
        CREATE UNIQUE INDEX apns_record_key ON apns (record_key);
        CREATE INDEX apns_broadcasts ON apns (channel_id) WHERE channel_id IS NOT NULL;
        ALTER TABLE renders ADD COLUMN channel_id TEXT CHECK (channel_id <> '');
        CREATE TABLE callbacks_0010 (
            id           INTEGER PRIMARY KEY,
            record_key   INTEGER NOT NULL,
            file_id      INTEGER NOT NULL,
            callback     TEXT    NOT NULL CHECK (callback = 'push_token' OR callback = 'push_to_start_token'
                                                 OR callback = 'content_update' OR callback = 'activity_state'
                                                 OR callback = 'channel_subscription'),
            activity_id  TEXT CHECK (activity_id IS NOT NULL OR callback = 'push_to_start_token'),
            push_token   TEXT CHECK (push_token IS NOT NULL OR callback NOT IN ('push_token', 'push_to_start_token')),
            seq          INTEGER CHECK (seq IS NOT NULL OR callback <> 'content_update'),
            state        TEXT CHECK ((state = 'active' OR state = 'ended' OR state = 'dismissed' OR state = 'stale'
                                      OR state = 'pending')
                                     AND (state IS NOT NULL OR callback <> 'activity_state')),
            received_at  INTEGER NOT NULL,
            device_id    TEXT,
            os_version   TEXT,
            device_model TEXT,
            app_version  TEXT,
            channel_id   TEXT CHECK (channel_id <> '' AND (channel_id IS NOT NULL OR callback <> 'channel_subscription'))
        );
        INSERT INTO callbacks_0010 (id, record_key, file_id, callback, activity_id, push_token, seq, state, received_at,
                                    device_id, os_version, device_model, app_version)
            SELECT id, record_key, file_id, callback, activity_id, push_token, seq, state, received_at, device_id,
                   os_version, device_model, app_version
            FROM callbacks;
        DROP TABLE callbacks;
        ALTER TABLE callbacks_0010 RENAME TO callbacks;
        CREATE UNIQUE INDEX callbacks_record_key ON callbacks (record_key);
        PRAGMA legacy_alter_table = OFF;
        """

    /// Contract 3.0: an `activity_state` callback may say `pending` (a
    /// start scheduled for later). SQLite cannot change a CHECK, so the
    /// callbacks are copied into a table that allows it: the same columns,
    /// ids and rows, and the unique index on `record_key` made again (a
    /// store whose index a first load had put off gets it now, as its next
    /// write would have made it). A `state` stored before 3.0 on a callback
    /// of another kind stays as it was: the analysis reads `state` on
    /// `activity_state` callbacks only (Documentation/ContractChoices.md).
    static let pendingState = """
        PRAGMA legacy_alter_table = ON;
        CREATE TABLE callbacks_0009 (
            id           INTEGER PRIMARY KEY,
            record_key   INTEGER NOT NULL,
            file_id      INTEGER NOT NULL,
            callback     TEXT    NOT NULL CHECK (callback = 'push_token' OR callback = 'push_to_start_token'
                                                 OR callback = 'content_update' OR callback = 'activity_state'),
            activity_id  TEXT CHECK (activity_id IS NOT NULL OR callback = 'push_to_start_token'),
            push_token   TEXT CHECK (push_token IS NOT NULL OR callback NOT IN ('push_token', 'push_to_start_token')),
            seq          INTEGER CHECK (seq IS NOT NULL OR callback <> 'content_update'),
            state        TEXT CHECK ((state = 'active' OR state = 'ended' OR state = 'dismissed' OR state = 'stale'
                                      OR state = 'pending')
                                     AND (state IS NOT NULL OR callback <> 'activity_state')),
            received_at  INTEGER NOT NULL,
            device_id    TEXT,
            os_version   TEXT,
            device_model TEXT,
            app_version  TEXT
        );
        INSERT INTO callbacks_0009 SELECT * FROM callbacks;
        DROP TABLE callbacks;
        ALTER TABLE callbacks_0009 RENAME TO callbacks;
        CREATE UNIQUE INDEX callbacks_record_key ON callbacks (record_key);
        PRAGMA legacy_alter_table = OFF;
        """

    /// The names of the unique indexes on `record_key`, by ``RecordKind/index``.
    static let recordKeyIndexNames = ["apns_record_key", "renders_record_key", "callbacks_record_key"]

    /// `record_key` unique by an index of its own rather than by a `UNIQUE`
    /// in the table's definition, which SQLite cannot drop: the first load
    /// of a store puts the index off until the load commits and keeps the
    /// keys in memory meanwhile (`RecordStatements+DeferredKeys.swift`),
    /// because keeping the index while rows arrive in no order of their keys
    /// would be most of what SQLite does in such a load.
    /// The same columns, ids and rows; SQLite cannot change a constraint, so
    /// each table is copied, once (a store of 2 M records takes seconds).
    /// The rename must not rewrite or check the outcome views, which name
    /// the tables and are made again afterwards in any case (legacy rename).
    static let recordKeyIndexes = """
        PRAGMA legacy_alter_table = ON;
        CREATE TABLE apns_0007 (
            id            INTEGER PRIMARY KEY,
            record_key    INTEGER NOT NULL,
            file_id       INTEGER NOT NULL,
            apns_id       TEXT    NOT NULL,
            sent_at       INTEGER NOT NULL,
            status        INTEGER NOT NULL,
            reason        TEXT,
            push_token    TEXT    NOT NULL,
            activity_id   TEXT,
            seq           INTEGER,
            event         TEXT CHECK (event = 'start' OR event = 'update' OR event = 'end'),
            aps_timestamp INTEGER NOT NULL,
            payload_bytes INTEGER,
            topic         TEXT,
            push_type     TEXT,
            priority      INTEGER,
            environment   TEXT,
            latency_ms    INTEGER,
            provider      TEXT CHECK (provider = 'fcm' OR provider = 'tencent_chat')
        );
        INSERT INTO apns_0007 SELECT * FROM apns;
        DROP TABLE apns;
        ALTER TABLE apns_0007 RENAME TO apns;
        CREATE UNIQUE INDEX apns_record_key ON apns (record_key);
        CREATE TABLE renders_0007 (
            id           INTEGER PRIMARY KEY,
            record_key   INTEGER NOT NULL,
            file_id      INTEGER NOT NULL,
            activity_id  TEXT    NOT NULL,
            seq          INTEGER NOT NULL,
            rendered_at  INTEGER NOT NULL,
            surface      TEXT,
            device_id    TEXT,
            os_version   TEXT,
            device_model TEXT,
            app_version  TEXT
        );
        INSERT INTO renders_0007 SELECT * FROM renders;
        DROP TABLE renders;
        ALTER TABLE renders_0007 RENAME TO renders;
        CREATE UNIQUE INDEX renders_record_key ON renders (record_key);
        CREATE TABLE callbacks_0007 (
            id           INTEGER PRIMARY KEY,
            record_key   INTEGER NOT NULL,
            file_id      INTEGER NOT NULL,
            callback     TEXT    NOT NULL CHECK (callback = 'push_token' OR callback = 'push_to_start_token'
                                                 OR callback = 'content_update' OR callback = 'activity_state'),
            activity_id  TEXT CHECK (activity_id IS NOT NULL OR callback = 'push_to_start_token'),
            push_token   TEXT CHECK (push_token IS NOT NULL OR callback NOT IN ('push_token', 'push_to_start_token')),
            seq          INTEGER CHECK (seq IS NOT NULL OR callback <> 'content_update'),
            state        TEXT CHECK ((state = 'active' OR state = 'ended' OR state = 'dismissed' OR state = 'stale')
                                     AND (state IS NOT NULL OR callback <> 'activity_state')),
            received_at  INTEGER NOT NULL,
            device_id    TEXT,
            os_version   TEXT,
            device_model TEXT,
            app_version  TEXT
        );
        INSERT INTO callbacks_0007 SELECT * FROM callbacks;
        DROP TABLE callbacks;
        ALTER TABLE callbacks_0007 RENAME TO callbacks;
        CREATE UNIQUE INDEX callbacks_record_key ON callbacks (record_key);
        PRAGMA legacy_alter_table = OFF;
        """

    /// The id of the stored record each `record_repeats` row repeats, beside
    /// its key, filled for the rows already there. Who stored a repeated
    /// record is then found by the record table's primary key, which every
    /// store has, rather than by the unique index on `record_key`, which a
    /// first load leaves to the next write (`RecordStatements+DeferredKeys.swift`).
    static let repeatRecordIDs = """
        ALTER TABLE record_repeats ADD COLUMN record_id INTEGER;
        UPDATE record_repeats SET record_id = CASE kind
            WHEN 'apns' THEN (SELECT id FROM apns WHERE apns.record_key = record_repeats.record_key)
            WHEN 'render' THEN (SELECT id FROM renders WHERE renders.record_key = record_repeats.record_key)
            ELSE (SELECT id FROM callbacks WHERE callbacks.record_key = record_repeats.record_key)
        END;
        """

    /// What ingest asks of the file registry before it reads a file ("was a
    /// file of this size stored?", "which versions of this path are?"), by
    /// index: the collector asks it for every run of uploads, and reading
    /// the whole registry each time grew with every file ever stored.
    static let fileLookup = """
        CREATE INDEX files_path ON files (path, byte_count);
        CREATE INDEX files_byte_count ON files (byte_count);
        """

    /// Exchange records and providers (Documentation/InputRecords.md): who
    /// the sender talked to, NULL for APNs itself (what every `apns` row
    /// stored before this migration is), and the malformed causes
    /// `invalid_exchange` and `kind_not_allowed` (an `apns` or `exchange` line
    /// uploaded to the collector with a device token). SQLite cannot change a CHECK, so
    /// `malformed_lines` is copied into a table with the longer list.
    static let providers = """
        ALTER TABLE apns ADD COLUMN provider TEXT CHECK (provider = 'fcm' OR provider = 'tencent_chat');
        CREATE TABLE malformed_lines_0005 (
            file_id INTEGER NOT NULL REFERENCES files (id),
            line    INTEGER NOT NULL,
            cause   TEXT    NOT NULL CHECK (cause IN ('line_too_long', 'invalid_utf8', 'invalid_json', 'too_deep',
                        'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind', 'missing_field',
                        'wrong_type', 'invalid_time', 'invalid_enum', 'invalid_exchange', 'kind_not_allowed',
                        'truncated_gzip')),
            problem TEXT,
            PRIMARY KEY (file_id, line)
        ) WITHOUT ROWID;
        INSERT INTO malformed_lines_0005 (file_id, line, cause, problem)
            SELECT file_id, line, cause, problem FROM malformed_lines;
        DROP TABLE malformed_lines;
        ALTER TABLE malformed_lines_0005 RENAME TO malformed_lines;
        """

    /// One row per line whose record was already stored (by an earlier file,
    /// or earlier in the same file): the file, and the stored record's kind
    /// and key. With the record's own `file_id` this tells every file that
    /// holds a record, so per-file tables of repeated records do not depend
    /// on the order files were ingested in. Empty for what was ingested
    /// before this migration. No index: a row is an append during ingest,
    /// where an index would be kept on every retry a sender logs, and its
    /// readers (the HTML report, `files remove`) scan it once.
    static let recordRepeats = """
        CREATE TABLE record_repeats (
            file_id    INTEGER NOT NULL REFERENCES files (id),
            kind       TEXT    NOT NULL CHECK (kind = 'apns' OR kind = 'render' OR kind = 'callback'),
            record_key INTEGER NOT NULL
        );
        """

    /// Which field made a line malformed, and why (`sent_at: expected an RFC
    /// 3339 time string, got 1795248000`); NULL for causes that concern the
    /// whole line and for lines ingested before this migration.
    static let malformedProblem = """
        ALTER TABLE malformed_lines ADD COLUMN problem TEXT;
        """

    /// Tables of ingested files and records. Times are integer milliseconds
    /// since the Unix epoch (UTC). `record_key` is the de-duplication key:
    /// the record's time in its high bits and a stable hash of every contract
    /// field in its low 20 bits, moved to the next free value on a (verified)
    /// collision, so the UNIQUE index enforces "a record equal to an earlier
    /// one is stored once" (Documentation/InputRecords.md) while inserts land near the end of
    /// the index. CHECKs spell out enumerations with OR: an IN list would make
    /// SQLite build a temporary table on every insert.
    static let records = """
        CREATE TABLE files (
            id              INTEGER PRIMARY KEY,
            content_sha256  TEXT    NOT NULL UNIQUE,
            path            TEXT    NOT NULL,
            byte_count      INTEGER NOT NULL,
            gzip            INTEGER NOT NULL CHECK (gzip IN (0, 1)),
            line_count      INTEGER NOT NULL,
            record_count    INTEGER NOT NULL,
            duplicate_count INTEGER NOT NULL,
            malformed_count INTEGER NOT NULL,
            ingested_at     INTEGER NOT NULL
        );
        CREATE TABLE skipped_files (
            content_sha256 TEXT NOT NULL REFERENCES files (content_sha256),
            path           TEXT NOT NULL,
            first_seen_at  INTEGER NOT NULL,
            PRIMARY KEY (content_sha256, path)
        ) WITHOUT ROWID;
        CREATE TABLE malformed_lines (
            file_id INTEGER NOT NULL REFERENCES files (id),
            line    INTEGER NOT NULL,
            cause   TEXT    NOT NULL CHECK (cause IN ('line_too_long', 'invalid_utf8', 'invalid_json', 'too_deep',
                        'duplicate_key', 'not_an_object', 'unsupported_version', 'unknown_kind', 'missing_field',
                        'wrong_type', 'invalid_time', 'invalid_enum', 'truncated_gzip')),
            PRIMARY KEY (file_id, line)
        ) WITHOUT ROWID;
        CREATE TABLE apns (
            id            INTEGER PRIMARY KEY,
            record_key    INTEGER NOT NULL UNIQUE,
            file_id       INTEGER NOT NULL,
            apns_id       TEXT    NOT NULL,
            sent_at       INTEGER NOT NULL,
            status        INTEGER NOT NULL,
            reason        TEXT,
            push_token    TEXT    NOT NULL,
            activity_id   TEXT,
            seq           INTEGER,
            event         TEXT CHECK (event = 'start' OR event = 'update' OR event = 'end'),
            aps_timestamp INTEGER NOT NULL,
            payload_bytes INTEGER,
            topic         TEXT,
            push_type     TEXT,
            priority      INTEGER,
            environment   TEXT,
            latency_ms    INTEGER
        );
        CREATE TABLE renders (
            id           INTEGER PRIMARY KEY,
            record_key   INTEGER NOT NULL UNIQUE,
            file_id      INTEGER NOT NULL,
            activity_id  TEXT    NOT NULL,
            seq          INTEGER NOT NULL,
            rendered_at  INTEGER NOT NULL,
            surface      TEXT,
            device_id    TEXT,
            os_version   TEXT,
            device_model TEXT,
            app_version  TEXT
        );
        CREATE TABLE callbacks (
            id           INTEGER PRIMARY KEY,
            record_key   INTEGER NOT NULL UNIQUE,
            file_id      INTEGER NOT NULL,
            callback     TEXT    NOT NULL CHECK (callback = 'push_token' OR callback = 'push_to_start_token'
                                                 OR callback = 'content_update' OR callback = 'activity_state'),
            activity_id  TEXT CHECK (activity_id IS NOT NULL OR callback = 'push_to_start_token'),
            push_token   TEXT CHECK (push_token IS NOT NULL OR callback NOT IN ('push_token', 'push_to_start_token')),
            seq          INTEGER CHECK (seq IS NOT NULL OR callback <> 'content_update'),
            state        TEXT CHECK ((state = 'active' OR state = 'ended' OR state = 'dismissed' OR state = 'stale')
                                     AND (state IS NOT NULL OR callback <> 'activity_state')),
            received_at  INTEGER NOT NULL,
            device_id    TEXT,
            os_version   TEXT,
            device_model TEXT,
            app_version  TEXT
        );
        """
}

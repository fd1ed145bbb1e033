/// The outcome rules (Documentation/Outcomes.md), stated twice side by
/// side: as a Swift function, which the report applies in one pass over the
/// store, and as SQL views, which dashboards and ad-hoc queries read (in
/// SQLite's and PostgreSQL's dialect, ``viewSQL(for:)``).
/// `OutcomeRulesTests` checks that both give every update the same outcome,
/// `PostgresStoreTests` that both dialects give the same rows; a rule change
/// is an edit of this file (a store re-creates its views when a writer opens
/// it, ``viewNames``).
public enum OutcomeRules {
    /// The outcome of one accepted update, from what is known about it and
    /// its activity. The first rule that holds decides:
    /// - `rendered`: a render beacon shows the update;
    /// - `dismissed`: accepted after the activity's dismissal (its earliest
    ///   `dismissed` callback), when the dismissal came before any end;
    /// - `ended`: accepted after the activity's end (the earlier of its
    ///   earliest accepted `end` and its earliest `ended` callback);
    /// - `expired`: accepted more than 8 hours after the activity started;
    /// - `staleTimestamp`: not an `end`, and its `aps.timestamp` is not newer
    ///   than every earlier accepted update's (`earlierMaxTimestamp`);
    /// - `superseded`: a later accepted update of the activity was rendered;
    /// - `lost`: none of these.
    ///
    /// "Earlier" and "later" order the activity's accepted updates by accept
    /// time, then seq.
    @inlinable
    public static func outcome(
        rendered: Bool, acceptedAt at: Int64, isEnd: Bool, apsTimestamp: Int64,
        activityStartedAt startedAt: Int64?, activityEndedAt endedAt: Int64?, activityDismissedAt dismissedAt: Int64?,
        earlierMaxTimestamp: Int64?, laterRendered: Bool
    ) -> Outcome {
        if rendered { return .rendered }
        if let dismissedAt, endedAt.map({ dismissedAt < $0 }) ?? true, at > dismissedAt { return .dismissed }
        if let endedAt, at > endedAt { return .ended }
        if let startedAt, at - startedAt > Contract.activityLifetimeMS { return .expired }
        if !isEnd, let earlierMaxTimestamp, apsTimestamp <= earlierMaxTimestamp { return .staleTimestamp }
        if laterRendered { return .superseded }
        return .lost
    }

    /// Why a `lost` update was lost; the first cause that holds decides:
    /// - `notRendered`: a `content_update` callback of the update exists;
    /// - `oldToken`: its deciding request's token is not empty and differs
    ///   from the activity's newest `push_token` callback at or before the
    ///   accept time (`newestTokenMatches` false; nil: no such callback);
    /// - `closedLater`: the activity's dismissal, or an `ended` callback of
    ///   it, is later than the accept time;
    /// - `deviceSilent`: no render or callback of the activity is later than
    ///   the accept time;
    /// - `unexplained`: none of these.
    @inlinable
    public static func lossCause(
        acceptedAt at: Int64, hasContentCallback: Bool, sentWithToken: Bool, newestTokenMatches: Bool?,
        activityDismissedAt dismissedAt: Int64?, lastEndedCallbackAt lastEnded: Int64?, lastDeviceAt: Int64?
    ) -> LossCause {
        if hasContentCallback { return .notRendered }
        if sentWithToken, newestTokenMatches == false { return .oldToken }
        if let dismissedAt, dismissedAt > at { return .closedLater }
        if let lastEnded, lastEnded > at { return .closedLater }
        guard let lastDeviceAt, lastDeviceAt > at else { return .deviceSilent }
        return .unexplained
    }

    /// The views, in the order they are created (each reads only those before it).
    public static let viewNames = [
        "token_owner", "direct_requests", "direct_updates", "activity_device_story", "channel_subscriptions",
        "broadcast_requests", "resolved_requests", "updates", "render_firsts", "activity_starts", "activity_ends",
        "activity_devices", "update_outcomes", "device_arrivals",
    ]

    /// The same rules as SQL views over the store's tables, in SQLite's dialect.
    public static let viewSQL = viewSQL(for: .sqlite)

    /// The same rules as SQL views over the store's tables (`apns`,
    /// `renders`, `callbacks`), in one dialect. The rules are written once;
    /// the dialect fills in what SQLite and PostgreSQL spell differently,
    /// and orders text by its bytes and NULL first in both, as the contract
    /// orders (PostgreSQL would otherwise sort by the database's locale and
    /// put NULL last).
    public static func viewSQL(for dialect: SQLDialect) -> String {
        let d = dialect
        return """
            -- The activity a push token belongs to: its push_token callback with the
            -- earliest received_at, then the smallest activity_id.
            CREATE VIEW token_owner AS
            SELECT push_token, activity_id FROM (
                SELECT push_token, activity_id,
                       row_number() OVER (PARTITION BY push_token ORDER BY received_at, \(d.text("activity_id"))) AS pick
                FROM callbacks WHERE callback = 'push_token'
            )\(d.alias("owners")) WHERE pick = 1;

            -- Every APNs request sent to a token, with its activity resolved, its app, and its reject reason.
            CREATE VIEW direct_requests AS
            SELECT a.id, a.apns_id, a.sent_at, a.status, a.reason, a.push_token,
                   coalesce(a.activity_id, t.activity_id) AS activity_id,
                   a.activity_id IS NULL AND t.activity_id IS NOT NULL AS activity_from_token,
                   a.seq, coalesce(a.event, 'update') AS event, a.aps_timestamp, a.payload_bytes, a.topic,
                   CASE WHEN a.topic IS NULL THEN 'unknown'
                        WHEN \(d.suffix("a.topic", 23)) = '.push-type.liveactivity' AND length(a.topic) >= 23
                            THEN substr(a.topic, 1, length(a.topic) - 23)
                        ELSE a.topic END AS app,
                   a.priority, a.push_type, a.environment, a.latency_ms, coalesce(a.provider, 'apns') AS provider,
                   a.channel_id,
                   a.status = 200 AS accepted,
                   CASE WHEN a.status = 200 THEN NULL
                        WHEN a.reason IS NOT NULL AND a.reason <> '' THEN a.reason
                        WHEN a.status = 0 THEN 'NoResponse'
                        ELSE 'HTTP' || a.status END AS reject_reason
            FROM apns AS a
            LEFT JOIN token_owner AS t ON a.activity_id IS NULL AND t.push_token = a.push_token;

            -- The updates that requests sent to a token make (the rule of `updates`
            -- below), from which an activity's start and end are first computed
            -- without any broadcast (contract 3.0).
            CREATE VIEW direct_updates AS
            SELECT activity_id, seq, accepted, sent_at AS at, event
            FROM (
                SELECT r.*, row_number() OVER (PARTITION BY activity_id, seq
                                               ORDER BY accepted DESC, sent_at, \(d.text("apns_id")), aps_timestamp,
                                                        \(d.text("event")), \(d.text("app")), \(d.nullable("priority")),
                                                        \(d.text("provider")), \(d.text("push_token")),
                                                        \(d.nullable("payload_bytes")), \(d.text("topic")),
                                                        \(d.text("push_type")), \(d.text("environment")),
                                                        \(d.nullable("latency_ms")), \(d.text("reason"))) AS pick
                FROM direct_requests AS r
                WHERE channel_id IS NULL AND activity_id IS NOT NULL AND seq IS NOT NULL
            )\(d.alias("picked")) WHERE pick = 1;

            -- What the device told of an activity (contract 3.0): its dismissal (the
            -- earliest `dismissed` callback), its earliest and latest `ended`
            -- callbacks, the first and last time anything came from it, and its
            -- earliest `push_token` callback.
            CREATE VIEW activity_device_story AS
            SELECT activity_id,
                   min(CASE WHEN kind = 'dismissed' THEN t END) AS dismissed_at,
                   min(CASE WHEN kind = 'ended' THEN t END) AS first_ended_callback_at,
                   max(CASE WHEN kind = 'ended' THEN t END) AS last_ended_callback_at,
                   min(t) AS first_device_at,
                   max(t) AS last_device_at,
                   min(CASE WHEN kind = 'push_token' THEN t END) AS first_token_at
            FROM (
                SELECT activity_id, rendered_at AS t, 'render' AS kind FROM renders
                UNION ALL
                SELECT activity_id, received_at,
                       CASE WHEN callback = 'activity_state' AND state IN ('ended', 'dismissed') THEN state
                            WHEN callback = 'push_token' THEN 'push_token'
                            ELSE 'other' END
                FROM callbacks WHERE activity_id IS NOT NULL
            )\(d.alias("evidence")) GROUP BY activity_id;

            -- Contract 3.0: the channels an activity follows, from every render or
            -- callback of it that carries one, whenever it came.
            CREATE VIEW channel_subscriptions AS
            SELECT activity_id, channel_id FROM renders WHERE channel_id IS NOT NULL
            UNION
            SELECT activity_id, channel_id FROM callbacks WHERE channel_id IS NOT NULL AND activity_id IS NOT NULL;

            -- Contract 3.0: a broadcast stands for one request per activity subscribed
            -- to its channel that is open at its sent_at, by the start, end and
            -- dismissal computed without broadcasts: started at or before it, at most
            -- 8 hours before it, neither ended nor dismissed at or before it.
            CREATE VIEW broadcast_requests AS
            WITH direct_bounds AS (
                SELECT d.activity_id,
                       \(d.least)(coalesce(d.first_device_at, u.started_at), coalesce(u.started_at, d.first_device_at))
                           AS started_at,
                       \(d.least)(coalesce(d.first_ended_callback_at, u.ended_at), coalesce(u.ended_at, d.first_ended_callback_at))
                           AS ended_at,
                       d.dismissed_at
                FROM activity_device_story AS d
                LEFT JOIN (
                    SELECT activity_id, min(CASE WHEN event = 'start' THEN at END) AS started_at,
                           min(CASE WHEN event = 'end' THEN at END) AS ended_at
                    FROM direct_updates WHERE accepted GROUP BY activity_id
                ) AS u USING (activity_id)
            )
            SELECT b.id, b.apns_id, b.sent_at, b.status, b.reason, b.push_token, s.activity_id, \(d.false) AS activity_from_token,
                   b.seq, b.event, b.aps_timestamp, b.payload_bytes, b.topic, b.app, b.priority, b.push_type,
                   b.environment, b.latency_ms, b.provider, b.channel_id, b.accepted, b.reject_reason
            FROM direct_requests AS b
            JOIN channel_subscriptions AS s ON s.channel_id = b.channel_id
            JOIN direct_bounds AS o ON o.activity_id = s.activity_id
            WHERE b.channel_id IS NOT NULL AND o.started_at <= b.sent_at
              AND b.sent_at - o.started_at <= \(Contract.activityLifetimeMS)
              AND (o.ended_at IS NULL OR o.ended_at > b.sent_at) AND (o.dismissed_at IS NULL OR o.dismissed_at > b.sent_at);

            -- Every request with its activity resolved, its app, and its reject reason:
            -- those sent to a token, and each broadcast once per activity it stands for
            -- (a broadcast that stands for none is not here).
            CREATE VIEW resolved_requests AS
            SELECT * FROM direct_requests WHERE channel_id IS NULL
            UNION ALL
            SELECT * FROM broadcast_requests;

            -- One row per logical update (activity_id, seq). `at` is the accept time
            -- when accepted, else the earliest request's sent_at; aps_timestamp,
            -- event, app, priority, provider, channel_id and push_token come from
            -- that same request (ties in the contract's full order, NULLs first).
            CREATE VIEW updates AS
            SELECT activity_id, seq, accepted, sent_at AS at, aps_timestamp, event, app, priority, provider, channel_id,
                   push_token, requests
            FROM (
                SELECT r.*, count(*) OVER (PARTITION BY activity_id, seq) AS requests,
                       row_number() OVER (PARTITION BY activity_id, seq
                                          ORDER BY accepted DESC, sent_at, \(d.text("apns_id")), aps_timestamp,
                                                   \(d.text("event")), \(d.text("app")), \(d.nullable("priority")),
                                                   \(d.text("provider")), \(d.text("channel_id")),
                                                   \(d.text("push_token")), \(d.nullable("payload_bytes")),
                                                   \(d.text("topic")), \(d.text("push_type")), \(d.text("environment")),
                                                   \(d.nullable("latency_ms")), \(d.text("reason"))) AS pick
                FROM resolved_requests AS r
                WHERE activity_id IS NOT NULL AND seq IS NOT NULL
            )\(d.alias("picked")) WHERE pick = 1;

            CREATE VIEW render_firsts AS
            SELECT activity_id, seq, min(rendered_at) AS first_rendered_at, count(*) AS renders
            FROM renders GROUP BY activity_id, seq;

            -- Activity start: the earliest accepted `start` update, render or callback.
            CREATE VIEW activity_starts AS
            SELECT activity_id, min(t) AS started_at FROM (
                SELECT activity_id, at AS t FROM updates WHERE accepted AND event = 'start'
                UNION ALL SELECT activity_id, rendered_at FROM renders
                UNION ALL SELECT activity_id, received_at FROM callbacks WHERE activity_id IS NOT NULL
            )\(d.alias("evidence")) GROUP BY activity_id;

            -- Activity end: the earlier of the accept time of its earliest accepted
            -- `end` update and its earliest `activity_state` `ended` callback.
            CREATE VIEW activity_ends AS
            SELECT activity_id, min(t) AS ended_at FROM (
                SELECT activity_id, at AS t FROM updates WHERE accepted AND event = 'end'
                UNION ALL
                SELECT activity_id, received_at FROM callbacks
                WHERE callback = 'activity_state' AND state = 'ended' AND activity_id IS NOT NULL
            )\(d.alias("evidence")) GROUP BY activity_id;

            \(activityDevicesSQL(d))
            -- Every update with its outcome (Documentation/Outcomes.md); `outcome` is NULL for an
            -- update APNs never accepted, `loss_cause` NULL for any but a lost one.
            CREATE VIEW update_outcomes AS
            WITH joined AS (
                SELECT u.*, f.first_rendered_at, f.activity_id IS NOT NULL AS has_render,
                       s.started_at, e.ended_at, d.dismissed_at, d.last_ended_callback_at, d.last_device_at
                FROM updates AS u
                LEFT JOIN render_firsts AS f ON f.activity_id = u.activity_id AND f.seq = u.seq
                LEFT JOIN activity_starts AS s ON s.activity_id = u.activity_id
                LEFT JOIN activity_ends AS e ON e.activity_id = u.activity_id
                LEFT JOIN activity_device_story AS d ON d.activity_id = u.activity_id
            ),
            ordered AS (
                SELECT joined.*,
                       max(CASE WHEN accepted THEN aps_timestamp END) OVER (
                           PARTITION BY activity_id ORDER BY accepted DESC, at, seq
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_max_timestamp,
                       max(CASE WHEN accepted AND has_render THEN 1 ELSE 0 END) OVER (
                           PARTITION BY activity_id ORDER BY accepted DESC, at, seq
                           ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS later_rendered
                FROM joined
            ),
            decided AS (
                SELECT ordered.*,
                       CASE WHEN NOT accepted THEN NULL
                            WHEN has_render THEN 'rendered'
                            WHEN dismissed_at IS NOT NULL AND (ended_at IS NULL OR dismissed_at < ended_at)
                                 AND at > dismissed_at THEN 'dismissed'
                            WHEN ended_at IS NOT NULL AND at > ended_at THEN 'ended'
                            WHEN started_at IS NOT NULL AND at - started_at > \(Contract.activityLifetimeMS) THEN 'expired'
                            WHEN event <> 'end' AND earlier_max_timestamp IS NOT NULL
                                 AND aps_timestamp <= earlier_max_timestamp THEN 'stale_timestamp'
                            WHEN later_rendered = 1 THEN 'superseded'
                            ELSE 'lost' END AS outcome
                FROM ordered
            ),
            -- For each lost update, its activity's newest push_token callback at or before
            -- the accept time (ties: the greatest token): callbacks and lost updates in one
            -- stream per activity, callbacks first at equal times and by token, each lost
            -- update numbered with the count of callbacks before it.
            token_events AS (
                SELECT activity_id, received_at AS t, 0 AS is_update, push_token AS token, NULL AS seq
                FROM callbacks WHERE callback = 'push_token' AND activity_id IS NOT NULL
                UNION ALL
                SELECT activity_id, at, 1, NULL, seq FROM decided WHERE outcome = 'lost'
            ),
            numbered AS (
                SELECT token_events.*,
                       sum(1 - is_update) OVER (PARTITION BY activity_id ORDER BY t, is_update, \(d.text("token"))
                                                ROWS UNBOUNDED PRECEDING) AS tokens_before
                FROM token_events
            ),
            newest_tokens AS (
                SELECT u.activity_id, u.seq, c.token AS newest_token
                FROM numbered AS u JOIN numbered AS c
                  ON c.activity_id = u.activity_id AND c.is_update = 0 AND c.tokens_before = u.tokens_before
                WHERE u.is_update = 1 AND u.tokens_before > 0
            ),
            content_updates AS (
                SELECT DISTINCT activity_id, seq FROM callbacks WHERE callback = 'content_update' AND activity_id IS NOT NULL
            ),
            -- Contract 3.1: for each accepted priority-10 update sent to a token (no
            -- channel), the other such updates of its activity accepted in the hour
            -- before its accept time (at − 3,600,000 ≤ t′ < at, times in whole ms).
            priority_10 AS (
                SELECT activity_id, seq,
                       count(*) OVER (PARTITION BY activity_id ORDER BY at
                                      RANGE BETWEEN \(Contract.priority10WindowMS) PRECEDING AND 1 PRECEDING)
                           AS last_hour
                FROM updates WHERE accepted AND priority = 10 AND channel_id IS NULL
            )
            SELECT d.activity_id, d.seq, d.accepted, d.at, d.aps_timestamp, d.event, d.app, d.priority, d.provider,
                   d.channel_id, d.push_token, d.requests, d.first_rendered_at, d.started_at, d.ended_at, d.dismissed_at, d.outcome,
                   CASE WHEN d.outcome \(d.isDistinctFrom) 'lost' THEN NULL
                        WHEN c.activity_id IS NOT NULL THEN 'not_rendered'
                        WHEN d.push_token <> '' AND n.newest_token <> d.push_token THEN 'old_token'
                        WHEN d.dismissed_at > d.at OR d.last_ended_callback_at > d.at THEN 'closed_later'
                        WHEN d.last_device_at IS NULL OR d.last_device_at <= d.at THEN 'device_silent'
                        ELSE 'unexplained' END AS loss_cause,
                   p.last_hour AS priority_10_last_hour, a.frequent_pushes,
                   CASE WHEN EXISTS (SELECT 1 FROM channel_subscriptions AS s WHERE s.activity_id = d.activity_id)
                        THEN 1 ELSE 0 END AS subscribed,
                   a.device_id
            FROM decided AS d
            LEFT JOIN content_updates AS c ON c.activity_id = d.activity_id AND c.seq = d.seq
            LEFT JOIN newest_tokens AS n ON n.activity_id = d.activity_id AND n.seq = d.seq
            LEFT JOIN priority_10 AS p ON p.activity_id = d.activity_id AND p.seq = d.seq
            LEFT JOIN activity_devices AS a ON a.activity_id = d.activity_id;

            -- (Contract 3.2) Each device's updates over all data, and the deliverable and rendered
            -- ones `outliers` tests (an activity's device from its device evidence, as os_version).
            -- A window filters update_outcomes by `at` and groups the same way.
            CREATE VIEW device_arrivals AS
            SELECT device_id, count(*) AS updates,
                   sum(CASE WHEN outcome IN ('rendered', 'superseded', 'lost') THEN 1 ELSE 0 END) AS deliverable,
                   sum(CASE WHEN outcome = 'rendered' THEN 1 ELSE 0 END) AS rendered
            FROM update_outcomes WHERE device_id IS NOT NULL GROUP BY device_id;
            """
    }

    /// The view `activity_devices` of ``viewSQL(for:)``, in `dialect`.
    private static func activityDevicesSQL(_ d: SQLDialect) -> String {
        """
        -- An activity's device evidence: its earliest render or callback carrying
        -- each value (ties: the smallest value); contract 3.1 adds the user's
        -- "More Frequent Updates" switch, 3.2 the device itself.
        CREATE VIEW activity_devices AS
        WITH evidence AS (
            SELECT activity_id, rendered_at AS t, os_version, app_version, frequent_pushes, device_id FROM renders
            UNION ALL
            SELECT activity_id, received_at, os_version, app_version, frequent_pushes, device_id
            FROM callbacks WHERE activity_id IS NOT NULL
        ),
        os AS (
            SELECT activity_id, os_version FROM (
                SELECT activity_id, os_version, row_number() OVER (PARTITION BY activity_id ORDER BY t, \(d.text("os_version"))) AS pick
                FROM evidence WHERE os_version IS NOT NULL)\(d.alias("picked")) WHERE pick = 1
        ),
        app AS (
            SELECT activity_id, app_version FROM (
                SELECT activity_id, app_version, row_number() OVER (PARTITION BY activity_id ORDER BY t, \(d.text("app_version"))) AS pick
                FROM evidence WHERE app_version IS NOT NULL)\(d.alias("picked")) WHERE pick = 1
        ),
        frequent AS (
            SELECT activity_id, frequent_pushes FROM (
                SELECT activity_id, frequent_pushes, row_number() OVER (PARTITION BY activity_id ORDER BY t, \(d.text("frequent_pushes"))) AS pick
                FROM evidence WHERE frequent_pushes IS NOT NULL)\(d.alias("picked")) WHERE pick = 1
        ),
        device AS (
            SELECT activity_id, device_id FROM (
                SELECT activity_id, device_id, row_number() OVER (PARTITION BY activity_id ORDER BY t, \(d.text("device_id"))) AS pick
                FROM evidence WHERE device_id IS NOT NULL)\(d.alias("picked")) WHERE pick = 1
        ),
        ids AS (SELECT activity_id FROM os UNION SELECT activity_id FROM app UNION SELECT activity_id FROM frequent
                UNION SELECT activity_id FROM device)
        SELECT ids.activity_id, os.os_version, app.app_version, frequent.frequent_pushes, device.device_id
        FROM ids LEFT JOIN os USING (activity_id) LEFT JOIN app USING (activity_id)
             LEFT JOIN frequent USING (activity_id) LEFT JOIN device USING (activity_id);
        """
    }
}

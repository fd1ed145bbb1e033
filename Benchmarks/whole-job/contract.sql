-- The contract's outcomes and loss causes (contract 3.0, Documentation/Outcomes.md) in DuckDB SQL, from the raw tree
-- `arrival simulate` writes: the reference side of Benchmarks/whole-job/run.sh.
-- ${SENDER} and ${DEVICES} are replaced by the tree's two globs before it runs.
-- It does what a team would write to get the same numbers with a general-purpose engine:
-- load every line, keep the well-typed records of each kind once (times as instants),
-- resolve activities through push-token callbacks, pick each update's deciding request,
-- and apply the rules of Outcomes.md with window functions (the device's ends and dismissals,
-- the outcome dismissed, the five loss causes); then count the outcomes and the causes.

CREATE TABLE raw_apns AS
SELECT * FROM read_json('${SENDER}', format = 'newline_delimited', ignore_errors = true,
    maximum_object_size = 1048576, union_by_name = true,
    columns = {v: 'BIGINT', kind: 'VARCHAR', apns_id: 'VARCHAR', sent_at: 'VARCHAR', status: 'BIGINT',
               reason: 'VARCHAR', push_token: 'VARCHAR', activity_id: 'VARCHAR', seq: 'BIGINT', event: 'VARCHAR',
               aps_timestamp: 'BIGINT', payload_bytes: 'BIGINT', topic: 'VARCHAR', push_type: 'VARCHAR',
               priority: 'BIGINT', environment: 'VARCHAR', latency_ms: 'BIGINT', provider: 'VARCHAR'});

CREATE TABLE raw_device AS
SELECT * FROM read_json('${DEVICES}', format = 'newline_delimited', ignore_errors = true,
    maximum_object_size = 1048576, union_by_name = true,
    columns = {v: 'BIGINT', kind: 'VARCHAR', activity_id: 'VARCHAR', seq: 'BIGINT', rendered_at: 'VARCHAR',
               surface: 'VARCHAR', device_id: 'VARCHAR', os_version: 'VARCHAR', device_model: 'VARCHAR',
               app_version: 'VARCHAR', callback: 'VARCHAR', push_token: 'VARCHAR', state: 'VARCHAR',
               received_at: 'VARCHAR'});

-- Times as integer milliseconds of the instant (an offset changes the text, not the record).
CREATE MACRO ms(t) AS epoch_ms(TRY_CAST(replace(t, 't', 'T') AS TIMESTAMPTZ));

CREATE TABLE apns AS
SELECT DISTINCT apns_id, ms(sent_at) AS sent_at, status, reason, push_token, activity_id, seq, event,
       aps_timestamp, payload_bytes, topic, push_type, priority, environment, latency_ms, provider
FROM raw_apns
WHERE coalesce(v, 1) = 1 AND kind = 'apns' AND apns_id IS NOT NULL AND ms(sent_at) IS NOT NULL
  AND status IS NOT NULL AND push_token IS NOT NULL AND aps_timestamp IS NOT NULL
  AND (event IS NULL OR event IN ('start', 'update', 'end'));

CREATE TABLE renders AS
SELECT DISTINCT activity_id, seq, ms(rendered_at) AS rendered_at, surface, device_id, os_version, device_model,
       app_version
FROM raw_device
WHERE coalesce(v, 1) = 1 AND kind = 'render' AND activity_id IS NOT NULL AND seq IS NOT NULL
  AND ms(rendered_at) IS NOT NULL;

CREATE TABLE callbacks AS
SELECT DISTINCT callback, activity_id, push_token, seq, state, ms(received_at) AS received_at, device_id,
       os_version, device_model, app_version
FROM raw_device
WHERE coalesce(v, 1) = 1 AND kind = 'callback' AND ms(received_at) IS NOT NULL
  AND callback IN ('push_token', 'push_to_start_token', 'content_update', 'activity_state');

CREATE TABLE token_owner AS
SELECT push_token, activity_id FROM (
    SELECT push_token, activity_id,
           row_number() OVER (PARTITION BY push_token ORDER BY received_at, activity_id) AS pick
    FROM callbacks WHERE callback = 'push_token' AND activity_id IS NOT NULL AND push_token IS NOT NULL
) WHERE pick = 1;

CREATE TABLE updates AS
SELECT activity_id, seq, accepted, sent_at AS at_ms, aps_timestamp, event, push_token FROM (
    SELECT coalesce(a.activity_id, t.activity_id) AS activity_id, a.seq, a.status = 200 AS accepted, a.sent_at,
           a.apns_id, a.aps_timestamp, coalesce(a.event, 'update') AS event, a.push_token,
           row_number() OVER (PARTITION BY coalesce(a.activity_id, t.activity_id), a.seq
                              ORDER BY a.status = 200 DESC, a.sent_at, a.apns_id, a.aps_timestamp,
                                       coalesce(a.event, 'update'), a.topic, a.priority NULLS FIRST, a.provider,
                                       a.push_token, a.payload_bytes NULLS FIRST) AS pick
    FROM apns AS a LEFT JOIN token_owner AS t ON a.activity_id IS NULL AND t.push_token = a.push_token
    WHERE coalesce(a.activity_id, t.activity_id) IS NOT NULL AND a.seq IS NOT NULL
) WHERE pick = 1;

CREATE TABLE render_firsts AS
SELECT activity_id, seq, min(rendered_at) AS first_rendered_at FROM renders GROUP BY activity_id, seq;

CREATE TABLE activity_starts AS
SELECT activity_id, min(t) AS started_at FROM (
    SELECT activity_id, at_ms AS t FROM updates WHERE accepted AND event = 'start'
    UNION ALL SELECT activity_id, rendered_at FROM renders
    UNION ALL SELECT activity_id, received_at FROM callbacks WHERE activity_id IS NOT NULL
) GROUP BY activity_id;

-- 3.0: an end is also the device's (an activity_state ended callback), whichever is earlier.
CREATE TABLE activity_ends AS
SELECT activity_id, min(t) AS ended_at FROM (
    SELECT activity_id, at_ms AS t FROM updates WHERE accepted AND event = 'end'
    UNION ALL SELECT activity_id, received_at FROM callbacks
    WHERE callback = 'activity_state' AND state = 'ended' AND activity_id IS NOT NULL
) GROUP BY activity_id;

-- 3.0: what the device told: the dismissal, the last ended callback, the last record of any kind.
CREATE TABLE activity_story AS
SELECT activity_id,
       min(CASE WHEN kind = 'dismissed' THEN t END) AS dismissed_at,
       max(CASE WHEN kind = 'ended' THEN t END) AS last_ended_at,
       max(t) AS last_device_at
FROM (
    SELECT activity_id, rendered_at AS t, 'render' AS kind FROM renders
    UNION ALL
    SELECT activity_id, received_at,
           CASE WHEN callback = 'activity_state' AND state IN ('ended', 'dismissed') THEN state ELSE 'other' END
    FROM callbacks WHERE activity_id IS NOT NULL
) GROUP BY activity_id;

CREATE TABLE content_updates AS
SELECT DISTINCT activity_id, seq FROM callbacks WHERE callback = 'content_update' AND activity_id IS NOT NULL;

-- Token callbacks, one per activity and instant (the greatest token: the newest among equals).
CREATE TABLE token_callbacks AS
SELECT activity_id, received_at, max(push_token) AS push_token FROM callbacks
WHERE callback = 'push_token' AND activity_id IS NOT NULL AND push_token IS NOT NULL
GROUP BY activity_id, received_at;

CREATE TABLE update_outcomes AS
WITH joined AS (
    SELECT u.*, f.first_rendered_at, f.activity_id IS NOT NULL AS has_render, s.started_at, e.ended_at,
           d.dismissed_at, d.last_ended_at, d.last_device_at
    FROM updates AS u
    LEFT JOIN render_firsts AS f ON f.activity_id = u.activity_id AND f.seq = u.seq
    LEFT JOIN activity_starts AS s ON s.activity_id = u.activity_id
    LEFT JOIN activity_ends AS e ON e.activity_id = u.activity_id
    LEFT JOIN activity_story AS d ON d.activity_id = u.activity_id
),
ordered AS (
    SELECT joined.*,
           max(CASE WHEN accepted THEN aps_timestamp END) OVER (
               PARTITION BY activity_id ORDER BY accepted DESC, at_ms, seq
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_max_timestamp,
           max(CASE WHEN accepted AND has_render THEN 1 ELSE 0 END) OVER (
               PARTITION BY activity_id ORDER BY accepted DESC, at_ms, seq
               ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS later_rendered
    FROM joined
),
decided AS (
    SELECT ordered.*,
           CASE WHEN NOT accepted THEN NULL
                WHEN has_render THEN 'rendered'
                WHEN dismissed_at IS NOT NULL AND (ended_at IS NULL OR dismissed_at < ended_at)
                     AND at_ms > dismissed_at THEN 'dismissed'
                WHEN ended_at IS NOT NULL AND at_ms > ended_at THEN 'ended'
                WHEN started_at IS NOT NULL AND at_ms - started_at > 28800000 THEN 'expired'
                WHEN event <> 'end' AND earlier_max_timestamp IS NOT NULL AND aps_timestamp <= earlier_max_timestamp
                    THEN 'stale_timestamp'
                WHEN later_rendered = 1 THEN 'superseded'
                ELSE 'lost' END AS outcome
    FROM ordered
)
SELECT d.activity_id, d.seq, d.accepted, d.outcome,
       CASE WHEN d.outcome IS DISTINCT FROM 'lost' THEN NULL
            WHEN c.activity_id IS NOT NULL THEN 'not_rendered'
            WHEN d.push_token <> '' AND t.push_token IS NOT NULL AND t.push_token <> d.push_token THEN 'old_token'
            WHEN d.dismissed_at > d.at_ms OR d.last_ended_at > d.at_ms THEN 'closed_later'
            WHEN d.last_device_at IS NULL OR d.last_device_at <= d.at_ms THEN 'device_silent'
            ELSE 'unexplained' END AS loss_cause
FROM decided AS d
LEFT JOIN content_updates AS c ON c.activity_id = d.activity_id AND c.seq = d.seq
ASOF LEFT JOIN token_callbacks AS t ON t.activity_id = d.activity_id AND t.received_at <= d.at_ms;

SELECT coalesce(outcome, 'not_accepted') AS outcome, count(*) AS updates
FROM update_outcomes GROUP BY ALL
UNION ALL
SELECT 'lost_by_cause.' || loss_cause, count(*) FROM update_outcomes WHERE loss_cause IS NOT NULL GROUP BY ALL
ORDER BY outcome;

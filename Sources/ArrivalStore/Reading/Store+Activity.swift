import ArrivalModel

/// Every stored record of one activity, with the fields a timeline shows:
/// its requests (those naming it, and those without an activity whose push
/// token it owns), its renders and its callbacks, each in row order, and the
/// broadcasts to the channels its renders and callbacks name (contract 3.0:
/// which of them it stood for is the analysis' to decide).
package struct ActivityRecords: Sendable {
    package struct Request: Sendable {
        package var rowID: Int64
        package var apnsID: String
        package var sentAt: Int64
        package var status: Int64
        package var reason: String?
        package var pushToken: String
        /// Whether the request named no activity and was attributed through its token.
        package var attributedByToken: Bool
        package var seq: Int64?
        package var event: String?
        package var apsTimestamp: Int64
        package var payloadBytes: Int64?
        package var topic: String?
        package var priority: Int64?
        /// `apns`, `fcm` or `tencent_chat`.
        package var provider: String

        package init(
            rowID: Int64, apnsID: String, sentAt: Int64, status: Int64, reason: String?, pushToken: String,
            attributedByToken: Bool, seq: Int64?, event: String?, apsTimestamp: Int64, payloadBytes: Int64?,
            topic: String?, priority: Int64?, provider: String
        ) {
            self.rowID = rowID
            self.apnsID = apnsID
            self.sentAt = sentAt
            self.status = status
            self.reason = reason
            self.pushToken = pushToken
            self.attributedByToken = attributedByToken
            self.seq = seq
            self.event = event
            self.apsTimestamp = apsTimestamp
            self.payloadBytes = payloadBytes
            self.topic = topic
            self.priority = priority
            self.provider = provider
        }
    }

    package struct Render: Sendable {
        package var rowID: Int64
        package var seq: Int64
        package var renderedAt: Int64
        package var surface: String?
        package var deviceID: String?
        package var osVersion: String?
        package var appVersion: String?
        package var channelID: String?
        /// The user's "More Frequent Updates" switch (contract 3.1).
        package var frequentPushes: String?

        package init(
            rowID: Int64, seq: Int64, renderedAt: Int64, surface: String?, deviceID: String?, osVersion: String?,
            appVersion: String?, channelID: String?, frequentPushes: String?
        ) {
            self.rowID = rowID
            self.seq = seq
            self.renderedAt = renderedAt
            self.surface = surface
            self.deviceID = deviceID
            self.osVersion = osVersion
            self.appVersion = appVersion
            self.channelID = channelID
            self.frequentPushes = frequentPushes
        }
    }

    package struct Callback: Sendable {
        package var rowID: Int64
        package var callback: String
        package var seq: Int64?
        package var state: String?
        package var pushToken: String?
        package var receivedAt: Int64
        package var deviceID: String?
        package var osVersion: String?
        package var appVersion: String?
        package var channelID: String?
        /// The user's "More Frequent Updates" switch (contract 3.1).
        package var frequentPushes: String?

        package init(
            rowID: Int64, callback: String, seq: Int64?, state: String?, pushToken: String?, receivedAt: Int64,
            deviceID: String?, osVersion: String?, appVersion: String?, channelID: String?, frequentPushes: String?
        ) {
            self.rowID = rowID
            self.callback = callback
            self.seq = seq
            self.state = state
            self.pushToken = pushToken
            self.receivedAt = receivedAt
            self.deviceID = deviceID
            self.osVersion = osVersion
            self.appVersion = appVersion
            self.channelID = channelID
            self.frequentPushes = frequentPushes
        }
    }

    package var activityID: String
    package var requests: [Request] = []
    package var renders: [Render] = []
    package var callbacks: [Callback] = []
    /// The broadcasts to the activity's channels (which of them stood for it is the analysis' to decide).
    package var broadcasts: [BroadcastRow] = []

    package var isEmpty: Bool { requests.isEmpty && renders.isEmpty && callbacks.isEmpty }

    package init(activityID: String) {
        self.activityID = activityID
    }
}

extension SQLiteSnapshot {
    /// The records of activity `id` (``ActivityRecords``). A request
    /// without an activity belongs to it when it owns the request's token:
    /// the token's `push_token` callback with the earliest received_at, then
    /// the smallest activity id, is this activity's. One pass over each
    /// table (the store keeps no index by activity).
    package func activityRecords(_ id: String) throws -> ActivityRecords {
        var records = ActivityRecords(activityID: id)
        let callbacks = try connection.prepare(
            """
            SELECT id, callback, seq, state, push_token, received_at, device_id, os_version, app_version, channel_id,
                   frequent_pushes
            FROM callbacks WHERE activity_id = ?1 ORDER BY id
            """)
        callbacks.bind(1, id)
        try callbacks.forEachRow { row in
            records.callbacks.append(
                ActivityRecords.Callback(
                    rowID: row.int(0), callback: row.string(1) ?? "", seq: row.optionalInt(2), state: row.string(3),
                    pushToken: row.string(4), receivedAt: row.int(5), deviceID: row.string(6),
                    osVersion: row.string(7), appVersion: row.string(8), channelID: row.string(9),
                    frequentPushes: row.string(10)))
        }

        // The tokens it reported, and which of them it owns.
        let reported = Set(records.callbacks.filter { $0.callback == "push_token" }.compactMap(\.pushToken))
        var owned: [String] = []
        if !reported.isEmpty {
            var owners: [String: (receivedAt: Int64, activity: String)] = [:]
            let claims = try connection.prepare(
                """
                SELECT push_token, activity_id, received_at FROM callbacks
                WHERE callback = 'push_token' AND activity_id IS NOT NULL
                  AND push_token IN (SELECT value FROM json_each(?1))
                """)
            claims.bind(1, Self.jsonArray(reported.sorted()))
            try claims.forEachRow { row in
                guard let token = row.string(0), let activity = row.string(1) else { return }
                let claim = (receivedAt: row.int(2), activity: activity)
                if let current = owners[token],
                    !(claim.receivedAt < current.receivedAt
                        || (claim.receivedAt == current.receivedAt && codePointOrder(claim.activity, current.activity)))
                {
                    return
                }
                owners[token] = claim
            }
            owned = owners.filter { $0.value.activity.utf8.elementsEqual(id.utf8) }.map(\.key).sorted()
        }

        let requests = try connection.prepare(
            """
            SELECT id, apns_id, sent_at, status, reason, push_token, activity_id IS NULL, seq, event, aps_timestamp,
                   payload_bytes, topic, priority, coalesce(provider, 'apns')
            FROM apns
            WHERE activity_id = ?1 OR (activity_id IS NULL AND push_token IN (SELECT value FROM json_each(?2)))
            ORDER BY id
            """)
        requests.bind(1, id)
        requests.bind(2, Self.jsonArray(owned))
        try requests.forEachRow { row in
            records.requests.append(
                ActivityRecords.Request(
                    rowID: row.int(0), apnsID: row.string(1) ?? "", sentAt: row.int(2), status: row.int(3),
                    reason: row.string(4), pushToken: row.string(5) ?? "", attributedByToken: row.int(6) != 0,
                    seq: row.optionalInt(7), event: row.string(8), apsTimestamp: row.int(9),
                    payloadBytes: row.optionalInt(10), topic: row.string(11), priority: row.optionalInt(12),
                    provider: row.string(13) ?? "apns"))
        }

        let renders = try connection.prepare(
            """
            SELECT id, seq, rendered_at, surface, device_id, os_version, app_version, channel_id, frequent_pushes
            FROM renders WHERE activity_id = ?1 ORDER BY id
            """)
        renders.bind(1, id)
        try renders.forEachRow { row in
            records.renders.append(
                ActivityRecords.Render(
                    rowID: row.int(0), seq: row.int(1), renderedAt: row.int(2), surface: row.string(3),
                    deviceID: row.string(4), osVersion: row.string(5), appVersion: row.string(6),
                    channelID: row.string(7), frequentPushes: row.string(8)))
        }

        let channels = Set(records.renders.compactMap(\.channelID) + records.callbacks.compactMap(\.channelID))
        if !channels.isEmpty {
            try forEachBroadcast(channels: channels.sorted()) { records.broadcasts.append($0) }
        }
        return records
    }

    /// A JSON array of strings, for `json_each` (a list bound as one parameter).
    static func jsonArray(_ values: [String]) -> String {
        "[" + values.map(jsonStringLiteral).joined(separator: ",") + "]"
    }
}

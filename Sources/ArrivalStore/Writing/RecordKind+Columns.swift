package import ArrivalModel

extension RecordKind {
    /// The table that stores records of this kind.
    package var table: String {
        switch self {
        case .apns: "apns"
        case .render: "renders"
        case .callback: "callbacks"
        }
    }

    /// The contract fields of a record of this kind: the columns of its
    /// table, the cells of its rows and what its hash covers, in this order.
    package var columns: [String] {
        switch self {
        case .apns:
            [
                "apns_id", "sent_at", "status", "reason", "push_token", "activity_id", "seq", "event",
                "aps_timestamp", "payload_bytes", "topic", "push_type", "priority", "environment", "latency_ms",
                "provider", "channel_id",
            ]
        case .render:
            [
                "activity_id", "seq", "rendered_at", "surface", "device_id", "os_version", "device_model",
                "app_version", "channel_id", "frequent_pushes",
            ]
        case .callback:
            [
                "callback", "activity_id", "push_token", "seq", "state", "received_at", "device_id", "os_version",
                "device_model", "app_version", "channel_id", "frequent_pushes",
            ]
        }
    }
}

extension RecordKind {
    /// The indexes in ``columns`` of the integer fields (the others are
    /// text): what a row read back from the store is hashed as, where a
    /// NULL integer and a NULL text hash apart (``RowBatch``).
    package var integerColumns: Set<Int> {
        switch self {
        case .apns: [1, 2, 6, 8, 9, 12, 14]
        case .render: [1, 2]
        case .callback: [3, 5]
        }
    }
}

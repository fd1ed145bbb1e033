import Foundation

/// Every top-level key the contract gives a meaning to, across the three kinds.
enum RecordField: Int, CaseIterable {
    case v, kind
    case apnsID, sentAt, status, reason, pushToken, activityID, seq, event, apsTimestamp
    case payloadBytes, topic, pushType, priority, environment, latencyMS
    case renderedAt, surface, deviceID, osVersion, deviceModel, appVersion
    case callback, state, receivedAt

    var key: String { staticKey.description }

    /// The field a key names, or -1 for an unknown key: dispatched on the
    /// key's length, then compared byte for byte.
    static func lookup(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        @inline(__always) func equals(_ field: RecordField) -> Int {
            let expected = field.staticKey
            guard expected.utf8CodeUnitCount == key.count, let base = key.baseAddress else { return -1 }
            return memcmp(expected.utf8Start, base, key.count) == 0 ? field.rawValue : -1
        }
        switch key.count {
        case 1: return equals(.v)
        case 3: return equals(.seq)
        case 4: return equals(.kind)
        case 5: return max(equals(.event), equals(.topic), equals(.state))
        case 6: return max(equals(.status), equals(.reason))
        case 7: return max(equals(.apnsID), equals(.sentAt), equals(.surface))
        case 8: return max(equals(.priority), equals(.callback))
        case 9: return max(equals(.pushType), equals(.deviceID))
        case 10: return max(equals(.pushToken), equals(.latencyMS), equals(.osVersion))
        case 11:
            return max(equals(.activityID), equals(.appVersion), equals(.renderedAt), equals(.receivedAt),
                       equals(.environment))
        case 12: return equals(.deviceModel)
        case 13: return max(equals(.apsTimestamp), equals(.payloadBytes))
        default: return -1
        }
    }

    var staticKey: StaticString {
        switch self {
        case .v: "v"
        case .kind: "kind"
        case .apnsID: "apns_id"
        case .sentAt: "sent_at"
        case .status: "status"
        case .reason: "reason"
        case .pushToken: "push_token"
        case .activityID: "activity_id"
        case .seq: "seq"
        case .event: "event"
        case .apsTimestamp: "aps_timestamp"
        case .payloadBytes: "payload_bytes"
        case .topic: "topic"
        case .pushType: "push_type"
        case .priority: "priority"
        case .environment: "environment"
        case .latencyMS: "latency_ms"
        case .renderedAt: "rendered_at"
        case .surface: "surface"
        case .deviceID: "device_id"
        case .osVersion: "os_version"
        case .deviceModel: "device_model"
        case .appVersion: "app_version"
        case .callback: "callback"
        case .state: "state"
        case .receivedAt: "received_at"
        }
    }
}

/// A deterministic 64-bit hash (FNV-1a over bytes, finished with a
/// murmur-style mix). Swift's `Hasher` is seeded per process, and these
/// hashes are stored in the database, so they must not change between runs.
struct StableHash {
    private(set) var state: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    mutating func combine(_ bytes: UnsafeBufferPointer<UInt8>) {
        var h = state
        for b in bytes {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3
        }
        state = h
    }

    @inline(__always)
    mutating func combine(_ value: UInt64) {
        var h = state ^ value
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        state = h &* 0x0000_0100_0000_01B3
    }

    mutating func combine(_ text: String?) {
        guard var text else {
            combine(0x6e75_6c6c as UInt64)  // a tag for null, never the result of hashing a string
            return
        }
        text.withUTF8 { combine($0) }
        combine(UInt64(text.utf8.count) | 1 << 63)
    }

    mutating func combine(_ value: Int64?) {
        guard let value else {
            combine(0x6e75_6c6c as UInt64)
            combine(0x6e75_6c6c as UInt64)
            return
        }
        combine(1 as UInt64)
        combine(UInt64(bitPattern: value))
    }

    func finish() -> UInt64 {
        var h = state
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }
}

import ArrivalModel
import ArrivalStore
import Foundation

/// Every top-level key the contract gives a meaning to, across the four kinds.
enum RecordField: Int, CaseIterable {
    case v, kind
    case apnsID, sentAt, status, reason, pushToken, activityID, seq, event, apsTimestamp
    case payloadBytes, topic, pushType, priority, environment, latencyMS, provider
    case renderedAt, surface, deviceID, osVersion, deviceModel, appVersion
    case callback, state, receivedAt
    case request, response, error

    var key: String { staticKey.description }

    /// The field a key names, or -1 for an unknown key. The key's bytes are
    /// packed little-endian into two words (never reading past `available`
    /// bytes from `key`) and compared with the packed names of the fields of
    /// that length; a test checks every name against ``staticKey``.
    @inline(__always)
    static func lookup(_ key: UnsafePointer<UInt8>, count: Int, available: Int) -> Int {
        guard count >= 1 && count <= 16 else { return -1 }
        var lo: UInt64 = 0
        var hi: UInt64 = 0
        if available >= 16 {
            let raw = UnsafeRawPointer(key)
            lo = raw.loadUnaligned(as: UInt64.self)
            hi = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            if count < 8 {
                lo &= (1 &<< UInt64(8 * count)) &- 1
                hi = 0
            } else if count < 16 {
                hi &= (1 &<< UInt64(8 * (count - 8))) &- 1
            }
        } else {
            for k in 0..<min(count, 8) { lo |= UInt64(key[k]) &<< UInt64(8 * k) }
            if count > 8 { for k in 8..<count { hi |= UInt64(key[k]) &<< UInt64(8 * (k - 8)) } }
        }
        switch count {
        case 1:
            if lo == 0x0076 { return RecordField.v.rawValue }  // v
            return -1
        case 3:
            if lo == 0x0071_6573 { return RecordField.seq.rawValue }  // seq
            return -1
        case 4:
            if lo == 0x646e_696b { return RecordField.kind.rawValue }  // kind
            return -1
        case 5:
            if lo == 0x0074_6e65_7665 { return RecordField.event.rawValue }  // event
            if lo == 0x0063_6970_6f74 { return RecordField.topic.rawValue }  // topic
            if lo == 0x0065_7461_7473 { return RecordField.state.rawValue }  // state
            if lo == 0x0072_6f72_7265 { return RecordField.error.rawValue }  // error
            return -1
        case 6:
            if lo == 0x7375_7461_7473 { return RecordField.status.rawValue }  // status
            if lo == 0x6e6f_7361_6572 { return RecordField.reason.rawValue }  // reason
            return -1
        case 7:
            if lo == 0x0064_695f_736e_7061 { return RecordField.apnsID.rawValue }  // apns_id
            if lo == 0x0074_615f_746e_6573 { return RecordField.sentAt.rawValue }  // sent_at
            if lo == 0x0065_6361_6672_7573 { return RecordField.surface.rawValue }  // surface
            if lo == 0x0074_7365_7571_6572 { return RecordField.request.rawValue }  // request
            return -1
        case 8:
            if lo == 0x7974_6972_6f69_7270 { return RecordField.priority.rawValue }  // priority
            if lo == 0x6b63_6162_6c6c_6163 { return RecordField.callback.rawValue }  // callback
            if lo == 0x7265_6469_766f_7270 { return RecordField.provider.rawValue }  // provider
            if lo == 0x6573_6e6f_7073_6572 { return RecordField.response.rawValue }  // response
            return -1
        case 9:
            if lo == 0x7079_745f_6873_7570 && hi == 0x0065 { return RecordField.pushType.rawValue }  // push_type
            if lo == 0x695f_6563_6976_6564 && hi == 0x0064 { return RecordField.deviceID.rawValue }  // device_id
            return -1
        case 10:
            if lo == 0x6b6f_745f_6873_7570 && hi == 0x6e65 { return RecordField.pushToken.rawValue }  // push_token
            if lo == 0x5f79_636e_6574_616c && hi == 0x736d { return RecordField.latencyMS.rawValue }  // latency_ms
            if lo == 0x6973_7265_765f_736f && hi == 0x6e6f { return RecordField.osVersion.rawValue }  // os_version
            return -1
        case 11:
            // activity_id
            if lo == 0x7974_6976_6974_6361 && hi == 0x0064_695f { return RecordField.activityID.rawValue }
            // environment
            if lo == 0x6d6e_6f72_6976_6e65 && hi == 0x0074_6e65 { return RecordField.environment.rawValue }
            // rendered_at
            if lo == 0x6465_7265_646e_6572 && hi == 0x0074_615f { return RecordField.renderedAt.rawValue }
            // app_version
            if lo == 0x7372_6576_5f70_7061 && hi == 0x006e_6f69 { return RecordField.appVersion.rawValue }
            // received_at
            if lo == 0x6465_7669_6563_6572 && hi == 0x0074_615f { return RecordField.receivedAt.rawValue }
            return -1
        case 12:
            // device_model
            if lo == 0x6d5f_6563_6976_6564 && hi == 0x6c65_646f { return RecordField.deviceModel.rawValue }
            return -1
        case 13:
            // aps_timestamp
            if lo == 0x656d_6974_5f73_7061 && hi == 0x0070_6d61_7473 { return RecordField.apsTimestamp.rawValue }
            // payload_bytes
            if lo == 0x5f64_616f_6c79_6170 && hi == 0x0073_6574_7962 { return RecordField.payloadBytes.rawValue }
            return -1
        default:
            return -1
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
        case .provider: "provider"
        case .renderedAt: "rendered_at"
        case .surface: "surface"
        case .deviceID: "device_id"
        case .osVersion: "os_version"
        case .deviceModel: "device_model"
        case .appVersion: "app_version"
        case .callback: "callback"
        case .state: "state"
        case .receivedAt: "received_at"
        case .request: "request"
        case .response: "response"
        case .error: "error"
        }
    }
}

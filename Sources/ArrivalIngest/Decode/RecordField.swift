import ArrivalModel
import ArrivalStore
import Foundation

/// Every top-level key the contract gives a meaning to, across the four kinds.
/// (`channel_id`, contract 3.0, and `frequent_pushes`, 3.1, are last: the scanner's slots follow this order.)
enum RecordField: Int, CaseIterable {
    case v, kind
    case apnsID, sentAt, status, reason, pushToken, activityID, seq, event, apsTimestamp
    case payloadBytes, topic, pushType, priority, environment, latencyMS, provider
    case renderedAt, surface, deviceID, osVersion, deviceModel, appVersion
    case callback, state, receivedAt
    case request, response, error
    case channelID
    case frequentPushes

    var key: String { staticKey.description }

    /// The field a key names, or -1 for an unknown key. The key's bytes are
    /// packed little-endian into two words (never reading past `available`
    /// bytes from `key`) and compared with the packed names of the fields of
    /// that length (``PackedKeys``, made from ``staticKey``).
    @inline(__always)
    static func lookup(_ key: UnsafePointer<UInt8>, count: Int, available: Int) -> Int {
        guard count >= 1 && count <= PackedKeys.maxLength else { return -1 }
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
        return packedKeys.find(lo: lo, hi: hi, count: count)
    }

    /// Made once, on first use.
    private static let packedKeys = PackedKeys()

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
        case .channelID: "channel_id"
        case .frequentPushes: "frequent_pushes"
        }
    }
}

/// Every field name packed as ``RecordField/lookup(_:count:available:)``
/// packs a key, grouped by length so a lookup compares a key with the two
/// or three names of its length at most.
struct PackedKeys: Sendable {
    static let maxLength = 16

    private struct Entry {
        var lo: UInt64
        var hi: UInt64
        var field: Int
    }

    /// Entries of names of length `n` are `entries[starts[n]..<starts[n + 1]]`.
    private let entries: [Entry]
    private let starts: [Int]

    init() {
        var byLength = [[Entry]](repeating: [], count: Self.maxLength + 1)
        for field in RecordField.allCases {
            let name = field.staticKey
            let bytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            precondition(bytes.count <= Self.maxLength, "a field name longer than a packed key")
            var lo: UInt64 = 0
            var hi: UInt64 = 0
            for (k, byte) in bytes.enumerated() {
                if k < 8 { lo |= UInt64(byte) << UInt64(8 * k) } else { hi |= UInt64(byte) << UInt64(8 * (k - 8)) }
            }
            byLength[bytes.count].append(Entry(lo: lo, hi: hi, field: field.rawValue))
        }
        var starts = [0]
        for group in byLength { starts.append(starts.last! + group.count) }
        self.entries = byLength.flatMap { $0 }
        self.starts = starts
    }

    @inline(__always)
    func find(lo: UInt64, hi: UInt64, count: Int) -> Int {
        entries.withUnsafeBufferPointer { entries in
            for index in starts[count]..<starts[count + 1] where entries[index].lo == lo && entries[index].hi == hi {
                return entries[index].field
            }
            return -1
        }
    }
}

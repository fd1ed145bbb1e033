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
    /// bytes from `key`) and looked up among the packed names of the fields
    /// (``PackedKeys``, made from ``staticKey``).
    @inline(__always)
    static func lookup(_ key: UnsafePointer<UInt8>, count: Int, available: Int) -> Int {
        lookup(key, count: count, available: available, in: packedKeys)
    }

    /// ``lookup(_:count:available:)`` in a table the caller keeps (the
    /// scanner does, so that no key waits on the shared table's first-use check).
    @inline(__always)
    static func lookup(_ key: UnsafePointer<UInt8>, count: Int, available: Int, in names: PackedKeys) -> Int {
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
        return names.find(lo: lo, hi: hi, count: count)
    }

    /// Made once, on first use.
    static let packedKeys = PackedKeys()

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
/// packs a key, in a perfect hash table: a key's two words and length pick
/// one slot, and the key is a field's name exactly when that slot holds
/// it: one comparison per key and no loop over the names of its length
/// (1.4 % fewer instructions for the ingest of a sender's log, issue 51).
struct PackedKeys: Sendable {
    static let maxLength = 16
    /// log2 of the slots: 128 for 32 names, where a multiplier that gives
    /// each name a slot of its own is found in a few dozen tries (66 for
    /// today's names, once per process).
    private static let slotBits = 7

    private struct Entry {
        var lo: UInt64 = 0
        var hi: UInt64 = 0
        /// 0 in an empty slot (no key is empty).
        var count: Int32 = 0
        var field: Int32 = -1
    }

    private let entries: [Entry]
    private let multiplier: UInt64

    @inline(__always)
    private static func slot(lo: UInt64, hi: UInt64, count: Int, multiplier: UInt64) -> Int {
        let mixed = (lo ^ (hi &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(truncatingIfNeeded: count)) &* multiplier
        return Int(truncatingIfNeeded: mixed >> UInt64(64 - slotBits))
    }

    init() {
        var names: [(lo: UInt64, hi: UInt64, count: Int, field: Int)] = []
        for field in RecordField.allCases {
            let name = field.staticKey
            let bytes = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            precondition(bytes.count <= Self.maxLength, "a field name longer than a packed key")
            var lo: UInt64 = 0
            var hi: UInt64 = 0
            for (k, byte) in bytes.enumerated() {
                if k < 8 { lo |= UInt64(byte) << UInt64(8 * k) } else { hi |= UInt64(byte) << UInt64(8 * (k - 8)) }
            }
            names.append((lo, hi, bytes.count, field.rawValue))
        }
        // Odd multipliers from a fixed sequence, the first that separates every name.
        var state: UInt64 = 0x5851_F42D_4C95_7F2D
        while true {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            let multiplier = (z ^ (z >> 31)) | 1
            var table = [Entry](repeating: Entry(), count: 1 << Self.slotBits)
            var separate = true
            for name in names {
                let slot = Self.slot(lo: name.lo, hi: name.hi, count: name.count, multiplier: multiplier)
                if table[slot].count != 0 {
                    separate = false
                    break
                }
                table[slot] = Entry(lo: name.lo, hi: name.hi, count: Int32(name.count), field: Int32(name.field))
            }
            if separate {
                entries = table
                self.multiplier = multiplier
                return
            }
        }
    }

    @inline(__always)
    func find(lo: UInt64, hi: UInt64, count: Int) -> Int {
        let slot = Self.slot(lo: lo, hi: hi, count: count, multiplier: multiplier)
        return entries.withUnsafeBufferPointer { entries in
            let entry = entries[slot]
            return entry.lo == lo && entry.hi == hi && Int(entry.count) == count ? Int(entry.field) : -1
        }
    }
}

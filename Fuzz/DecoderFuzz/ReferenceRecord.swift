import ArrivalModel

/// What a line is by the rules of Documentation/InputRecords.md, worked out
/// on the reference parser's tree, field by field in the order of the
/// document's tables. Written from the document, not from `RecordDecoder`.
enum ReferenceOutcome {
    case blank
    /// `field`: the key at fault for causes 7–12 (the decoder's problem text starts with it).
    case malformed(MalformedCause, field: String?)
    /// `invalid_exchange`, with every path the reference found at fault (`request.url`,
    /// `request.body: message.apns.live_activity_token`, …): the decoder names the first
    /// it meets, in an order the documents leave open, so its problem starts with one of them.
    case invalidExchange(paths: [String])
    case record(Record)
}

/// One field of a record, for comparing records byte for byte (`String`'s
/// `==` holds canonically equivalent strings equal; the contract does not).
enum FieldValue: Equatable {
    case none
    case int(Int64)
    case text([UInt8])
}

func fieldValues(_ record: Record) -> [FieldValue] {
    func text(_ value: String?) -> FieldValue { value.map { .text(Array($0.utf8)) } ?? .none }
    func int(_ value: Int64?) -> FieldValue { value.map(FieldValue.int) ?? .none }
    switch record {
    case .apns(let r):
        return [
            text(r.apnsID), int(r.sentAt), int(r.status), text(r.reason), text(r.pushToken), text(r.activityID),
            int(r.seq), text(r.event), int(r.apsTimestamp), int(r.payloadBytes), text(r.topic), text(r.pushType),
            int(r.priority), text(r.environment), int(r.latencyMS), text(r.provider?.rawValue), text(r.channelID),
        ]
    case .render(let r):
        return [
            text(r.activityID), int(r.seq), int(r.renderedAt), text(r.surface), text(r.deviceID),
            text(r.osVersion), text(r.deviceModel), text(r.appVersion), text(r.channelID), text(r.frequentPushes),
        ]
    case .callback(let r):
        return [
            text(r.callback.rawValue), text(r.activityID), text(r.pushToken), int(r.seq), text(r.state),
            int(r.receivedAt), text(r.deviceID), text(r.osVersion), text(r.deviceModel), text(r.appVersion),
            text(r.channelID), text(r.frequentPushes),
        ]
    }
}

/// The contract keys of a record's kind, in the order of ``fieldValues(_:)``.
func fieldKeys(_ kind: RecordKind) -> [String] {
    switch kind {
    case .apns:
        [
            "apns_id", "sent_at", "status", "reason", "push_token", "activity_id", "seq", "event", "aps_timestamp",
            "payload_bytes", "topic", "push_type", "priority", "environment", "latency_ms", "provider", "channel_id",
        ]
    case .render:
        [
            "activity_id", "seq", "rendered_at", "surface", "device_id", "os_version", "device_model", "app_version",
            "channel_id", "frequent_pushes",
        ]
    case .callback:
        [
            "callback", "activity_id", "push_token", "seq", "state", "received_at", "device_id", "os_version",
            "device_model", "app_version", "channel_id", "frequent_pushes",
        ]
    }
}

enum ReferenceDecoder {
    static func decode(_ line: [UInt8]) -> ReferenceOutcome {
        // Blank: empty, or nothing but spaces, tabs and `\r`.
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
        switch ReferenceParser.parse(line) {
        case .invalidUTF8: return .malformed(.invalidUTF8, field: nil)
        case .invalidJSON: return .malformed(.invalidJSON, field: nil)
        case .json(let value, let depth, let duplicate):
            if depth > 64 { return .malformed(.tooDeep, field: nil) }
            if duplicate { return .malformed(.duplicateKey, field: nil) }
            guard case .object(let members) = value else { return .malformed(.notAnObject, field: nil) }
            var fields = Fields()
            for (key, value) in members { fields.values[key] = value }
            do {
                let record = try fields.record()
                // Contract 3.2: U+0000 in a text the record keeps (an exchange's: its derived record's).
                for (index, value) in fieldValues(record).enumerated() {
                    if case .text(let bytes) = value, bytes.contains(0) {
                        return .malformed(.nulCharacter, field: fieldKeys(record.kind)[index])
                    }
                }
                return .record(record)
            } catch {
                if error.cause == .invalidExchange { return .invalidExchange(paths: error.paths) }
                return .malformed(error.cause, field: error.field)
            }
        }
    }

    struct Fault: Error {
        var cause: MalformedCause
        var field: String
        /// For `invalid_exchange`: every path found at fault (`field` is the first).
        var paths: [String] = []
    }

    /// The top-level members of a line's object (no key repeats: checked before).
    struct Fields {
        var values: [[UInt8]: ReferenceJSON] = [:]

        /// Present and not `null`.
        func value(_ key: String) -> ReferenceJSON? {
            switch values[Array(key.utf8)] {
            case nil, .null?: nil
            case let value?: value
            }
        }

        func string(_ key: String, required: Bool = false) throws(Fault) -> String? {
            guard let value = value(key) else {
                if required { throw Fault(cause: .missingField, field: key) }
                return nil
            }
            guard case .string(let bytes) = value else { throw Fault(cause: .wrongType, field: key) }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// An int: an integer literal (no fraction, no exponent) within the signed 64-bit range.
        func int(_ key: String, required: Bool = false) throws(Fault) -> Int64? {
            guard let value = value(key) else {
                if required { throw Fault(cause: .missingField, field: key) }
                return nil
            }
            guard case .number(let literal) = value, let int = ReferenceDecoder.int(literal) else {
                throw Fault(cause: .wrongType, field: key)
            }
            return int
        }

        func time(_ key: String) throws(Fault) -> Int64 {
            guard let value = value(key) else { throw Fault(cause: .missingField, field: key) }
            guard case .string(let bytes) = value else { throw Fault(cause: .wrongType, field: key) }
            guard let millis = ReferenceTime.milliseconds(bytes) else { throw Fault(cause: .invalidTime, field: key) }
            return millis
        }

        /// Contract 3.0: a `channel_id` that is present and not null must be a non-empty string.
        func channel(required: Bool = false) throws(Fault) -> String? {
            guard let value = try string("channel_id", required: required) else { return nil }
            guard !value.utf8.isEmpty else { throw Fault(cause: .wrongType, field: "channel_id") }
            return value
        }

        /// Contract 3.0: a broadcast's `push_token` and `activity_id` must be absent or null.
        func absent(_ key: String) throws(Fault) {
            if value(key) != nil { throw Fault(cause: .wrongType, field: key) }
        }

        func oneOf(_ key: String, _ allowed: [String], required: Bool = false) throws(Fault) -> String? {
            guard let value = try string(key, required: required) else { return nil }
            guard allowed.contains(where: { Array($0.utf8) == Array(value.utf8) }) else {
                throw Fault(cause: .invalidEnum, field: key)
            }
            return value
        }

        func record() throws(Fault) -> Record {
            if let v = value("v") {
                guard case .number(let literal) = v, literal == [UInt8(ascii: "1")] else {
                    throw Fault(cause: .unsupportedVersion, field: "v")
                }
            }
            guard let kindValue = value("kind") else { throw Fault(cause: .missingField, field: "kind") }
            guard case .string(let kind) = kindValue else { throw Fault(cause: .wrongType, field: "kind") }
            // Then the kind's fields, in the order of the document's table for it.
            if kind == Array("apns".utf8) {
                let apnsID = try string("apns_id", required: true)!
                let sentAt = try time("sent_at")
                let status = try int("status", required: true)!
                let reason = try string("reason")
                // Contract 3.0: a non-empty string channel_id makes a broadcast, read before the fields.
                var broadcast = false
                if case .string(let bytes)? = value("channel_id"), !bytes.isEmpty { broadcast = true }
                var pushToken: String?
                var activityID: String?
                if broadcast {
                    try absent("push_token")
                    try absent("activity_id")
                } else {
                    pushToken = try string("push_token", required: true)!
                    activityID = try string("activity_id")
                }
                let seq = try int("seq")
                let event = try oneOf("event", ["start", "update", "end"])
                let apsTimestamp = try int("aps_timestamp", required: true)!
                let payloadBytes = try int("payload_bytes")
                let topic = try string("topic")
                let pushType = try string("push_type")
                let priority = try int("priority")
                let environment = try string("environment")
                let latencyMS = try int("latency_ms")
                // Absent, null and "apns" are one provider, stored as none.
                let provider = try oneOf("provider", ["apns", "fcm", "tencent_chat"]).flatMap(PushProvider.init)
                let channelID = try channel()
                return .apns(
                    APNSRecord(
                        apnsID: apnsID, sentAt: sentAt, status: status, reason: reason, pushToken: pushToken,
                        activityID: activityID, seq: seq, event: event, apsTimestamp: apsTimestamp,
                        payloadBytes: payloadBytes, topic: topic, pushType: pushType, priority: priority,
                        environment: environment, latencyMS: latencyMS, provider: provider, channelID: channelID))
            }
            if kind == Array("exchange".utf8) {
                return .apns(try ReferenceExchange.record(self))
            }
            if kind == Array("render".utf8) {
                let activityID = try string("activity_id", required: true)!
                let seq = try int("seq", required: true)!
                let renderedAt = try time("rendered_at")
                let surface = try string("surface")
                let channelID = try channel()  // after surface in the table of contract 3.0
                let deviceID = try string("device_id")
                let osVersion = try string("os_version")
                let deviceModel = try string("device_model")
                let appVersion = try string("app_version")
                let frequentPushes = try string("frequent_pushes")  // contract 3.1, last in the table
                return .render(
                    RenderRecord(
                        activityID: activityID, seq: seq, renderedAt: renderedAt, surface: surface,
                        deviceID: deviceID, osVersion: osVersion, deviceModel: deviceModel, appVersion: appVersion,
                        channelID: channelID, frequentPushes: frequentPushes))
            }
            if kind == Array("callback".utf8) {
                let names = [
                    "push_token", "push_to_start_token", "content_update", "activity_state", "channel_subscription",
                ]
                let callback = try oneOf("callback", names, required: true)!
                let activityID = try string("activity_id", required: callback != "push_to_start_token")
                let pushToken = try string(
                    "push_token", required: callback == "push_token" || callback == "push_to_start_token")
                let seq = try int("seq", required: callback == "content_update")
                // Contract 3.0: read on activity_state only (ignored elsewhere, whatever it holds); pending is a state.
                let state =
                    callback == "activity_state"
                    ? try oneOf("state", ["active", "ended", "dismissed", "stale", "pending"], required: true) : nil
                // Contract 3.0: after state, required on channel_subscription.
                let channelID = try channel(required: callback == "channel_subscription")
                let receivedAt = try time("received_at")
                let deviceID = try string("device_id")
                let osVersion = try string("os_version")
                let deviceModel = try string("device_model")
                let appVersion = try string("app_version")
                let frequentPushes = try string("frequent_pushes")  // contract 3.1, last in the table
                return .callback(
                    CallbackRecord(
                        callback: CallbackRecord.Kind(rawValue: callback)!, activityID: activityID,
                        pushToken: pushToken, seq: seq, state: state, receivedAt: receivedAt, deviceID: deviceID,
                        osVersion: osVersion, deviceModel: deviceModel, appVersion: appVersion, channelID: channelID,
                        frequentPushes: frequentPushes))
            }
            throw Fault(cause: .unknownKind, field: "kind")
        }
    }

    /// An integer literal within the signed 64-bit range, by the standard library.
    static func int(_ literal: [UInt8]) -> Int64? {
        let notInteger: Set<UInt8> = [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")]
        guard !literal.contains(where: notInteger.contains) else { return nil }
        return Int64(String(decoding: literal, as: UTF8.self))
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)` (T and Z in either case,
/// fraction digits past the millisecond truncated), by counting days from
/// year 0 rather than by the civil-from-days formula `RFC3339` uses.
enum ReferenceTime {
    static func milliseconds(_ s: [UInt8]) -> Int64? {
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= s.count else { return nil }
            var value = 0
            for k in range {
                guard (0x30...0x39).contains(s[k]) else { return nil }
                value = value * 10 + Int(s[k] - 0x30)
            }
            return value
        }
        func at(_ k: Int, _ allowed: String) -> Bool { k < s.count && allowed.utf8.contains(s[k]) }
        guard let year = number(0..<4), at(4, "-"), let month = number(5..<7), at(7, "-"), let day = number(8..<10),
            at(10, "Tt"), let hour = number(11..<13), at(13, ":"), let minute = number(14..<16), at(16, ":"),
            let second = number(17..<19)
        else { return nil }
        var i = 19
        var millis = 0
        if at(i, ".") {
            i += 1
            let start = i
            while at(i, "0123456789") { i += 1 }
            guard i > start else { return nil }
            let kept = Array(s[start..<min(i, start + 3)]) + Array(repeating: UInt8(ascii: "0"), count: 3)
            millis = Int(String(decoding: kept[0..<3], as: UTF8.self))!
        }
        var offset = 0
        if at(i, "Zz") && i + 1 == s.count {
        } else if at(i, "+-") && i + 6 == s.count, let h = number(i + 1..<i + 3), at(i + 3, ":"),
            let m = number(i + 4..<i + 6), h <= 23, m <= 59
        {
            offset = (h * 60 + m) * (s[i] == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard year >= 1 else { return nil }  // contract 3.0: years 0001-9999
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...monthDays[month - 1]).contains(day), hour <= 23, minute <= 59,
            second <= 59
        else { return nil }
        // Days from 0000-01-01: the leap years among 0..<year are the multiples of 4, but not of 100, or of 400.
        func daysBefore(year y: Int) -> Int { 365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400 }
        let days = daysBefore(year: year) - daysBefore(year: 1970) + monthDays[0..<month - 1].reduce(0, +) + day - 1
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset * 60
        return Int64(seconds) * 1000 + Int64(millis)
    }
}

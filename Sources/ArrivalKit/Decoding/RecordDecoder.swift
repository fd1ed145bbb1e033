/// Turns one line of bytes into a ``Record`` or the ``MalformedCause`` that
/// keeps it out (contract 2 and 2.4). Not thread-safe: use one per thread.
public struct RecordDecoder {
    private var scanner = JSONLineScanner()

    public init() {}

    public enum Outcome: Equatable {
        case record(Record)
        /// Empty, or only spaces, tabs and carriage returns: skipped, not counted.
        case blank
        case malformed(MalformedCause)
    }

    public mutating func decode(_ line: UnsafeBufferPointer<UInt8>) -> Outcome {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
        if let cause = scanner.scan(line) { return .malformed(cause) }
        do {
            return .record(try makeRecord())
        } catch {
            return .malformed(error)
        }
    }

    public mutating func decode(_ line: String) -> Outcome {
        var copy = line
        return copy.withUTF8 { decode($0) }
    }

    // MARK: - Fields

    private mutating func makeRecord() throws(MalformedCause) -> Record {
        if let v = value(.v), !(v.kind == .int && v.int == 1) { throw .unsupportedVersion }
        let kind = try requiredString(.kind)
        switch kind {
        case "apns":
            return .apns(APNSRecord(
                apnsID: try requiredString(.apnsID),
                sentAt: try requiredTime(.sentAt),
                status: try requiredInt(.status),
                reason: try optionalString(.reason),
                pushToken: try requiredString(.pushToken),
                activityID: try optionalString(.activityID),
                seq: try optionalInt(.seq),
                event: try optionalEnum(.event, ["start", "update", "end"]),
                apsTimestamp: try requiredInt(.apsTimestamp),
                payloadBytes: try optionalInt(.payloadBytes),
                topic: try optionalString(.topic),
                pushType: try optionalString(.pushType),
                priority: try optionalInt(.priority),
                environment: try optionalString(.environment),
                latencyMS: try optionalInt(.latencyMS)
            ))
        case "render":
            return .render(RenderRecord(
                activityID: try requiredString(.activityID),
                seq: try requiredInt(.seq),
                renderedAt: try requiredTime(.renderedAt),
                surface: try optionalString(.surface),
                deviceID: try optionalString(.deviceID),
                osVersion: try optionalString(.osVersion),
                deviceModel: try optionalString(.deviceModel),
                appVersion: try optionalString(.appVersion)
            ))
        case "callback":
            guard let name = try optionalEnum(.callback, CallbackRecord.Kind.allCases.map(\.rawValue)),
                  let callback = CallbackRecord.Kind(rawValue: name)
            else { throw .missingField }
            let activityID = try optionalString(.activityID)
            if activityID == nil && callback != .pushToStartToken { throw .missingField }
            let pushToken = try optionalString(.pushToken)
            if pushToken == nil && (callback == .pushToken || callback == .pushToStartToken) { throw .missingField }
            let seq = try optionalInt(.seq)
            if seq == nil && callback == .contentUpdate { throw .missingField }
            let state = try optionalEnum(.state, ["active", "ended", "dismissed", "stale"])
            if state == nil && callback == .activityState { throw .missingField }
            return .callback(CallbackRecord(
                callback: callback,
                activityID: activityID,
                pushToken: pushToken,
                seq: seq,
                state: state,
                receivedAt: try requiredTime(.receivedAt),
                deviceID: try optionalString(.deviceID),
                osVersion: try optionalString(.osVersion),
                deviceModel: try optionalString(.deviceModel),
                appVersion: try optionalString(.appVersion)
            ))
        default:
            throw .unknownKind
        }
    }

    /// A present, non-null value; `nil` for absent or `null`.
    @inline(__always)
    private func value(_ field: RecordField) -> JSONLineScanner.ValueRef? {
        guard let ref = scanner.slots[field.rawValue], ref.kind != .null else { return nil }
        return ref
    }

    private mutating func optionalString(_ field: RecordField) throws(MalformedCause) -> String? {
        guard let ref = value(field) else { return nil }
        guard ref.kind == .string else { throw .wrongType }
        return scanner.string(ref)
    }

    private mutating func requiredString(_ field: RecordField) throws(MalformedCause) -> String {
        guard let text = try optionalString(field) else { throw .missingField }
        return text
    }

    private func optionalInt(_ field: RecordField) throws(MalformedCause) -> Int64? {
        guard let ref = value(field) else { return nil }
        guard ref.kind == .int else { throw .wrongType }
        return ref.int
    }

    private func requiredInt(_ field: RecordField) throws(MalformedCause) -> Int64 {
        guard let number = try optionalInt(field) else { throw .missingField }
        return number
    }

    private mutating func requiredTime(_ field: RecordField) throws(MalformedCause) -> Int64 {
        guard let ref = value(field) else { throw .missingField }
        guard ref.kind == .string else { throw .wrongType }
        guard let millis = scanner.withStringBytes(ref, { RFC3339.parseMilliseconds($0) }) else { throw .invalidTime }
        return millis
    }

    private mutating func optionalEnum(_ field: RecordField, _ allowed: [String]) throws(MalformedCause) -> String? {
        guard let text = try optionalString(field) else { return nil }
        guard allowed.contains(text) else { throw .invalidEnum }
        return text
    }
}

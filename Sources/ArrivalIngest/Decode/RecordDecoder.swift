package import ArrivalHandOff
package import ArrivalModel
import ArrivalStore

/// Turns one line of bytes into a record or the ``MalformedCause`` that
/// keeps it out (Documentation/InputRecords.md). Not thread-safe: use one per thread.
///
/// The ingest appends records straight into a ``RowBatch``
/// (``decode(_:line:into:)``); ``decode(_:)`` gives a ``Record`` value and
/// goes through the same checks.
package struct RecordDecoder {
    private var scanner = JSONLineScanner()
    private var scratch = RowBatch(capacity: 1)
    private let exchanges = ExchangeDeriver()
    /// Which field made the last malformed line malformed, and why
    /// (`sent_at: expected an RFC 3339 string, got 1795248000`); nil for a
    /// cause that concerns the whole line (`invalid_json`, `not_an_object`).
    /// A value it quotes is shown with U+0000 written `\u0000`, so the problem
    /// is the same text on every engine (PostgreSQL's `text` cannot hold U+0000).
    package private(set) var lastProblem: String? {
        didSet {
            guard let problem = lastProblem, problem.utf8.contains(0) else { return }
            var shown = ""
            for scalar in problem.unicodeScalars {
                if scalar == "\u{0}" { shown += "\\u0000" } else { shown.unicodeScalars.append(scalar) }
            }
            lastProblem = shown
        }
    }

    package init() {}

    package enum Outcome: Equatable {
        case record(Record)
        /// Empty, or only spaces, tabs and carriage returns: skipped, not counted.
        case blank
        case malformed(MalformedCause)
    }

    /// What ``decode(_:line:into:)`` did with a line.
    package enum Appended: Equatable {
        case record
        case blank
        case malformed(MalformedCause)
    }

    package mutating func decode(_ line: UnsafeBufferPointer<UInt8>) -> Outcome {
        var batch = scratch
        scratch = RowBatch()  // keeps `batch` the only owner of its buffers
        defer { scratch = batch }
        batch.removeAll()
        switch decode(line, line: 0, into: &batch) {
        case .record: return .record(batch.record(batch.rows[0]))
        case .blank: return .blank
        case .malformed(let cause): return .malformed(cause)
        }
    }

    package mutating func decode(_ line: String) -> Outcome {
        var copy = line
        return copy.withUTF8 { decode($0) }
    }

    /// Decodes `bytes` and appends the record to `batch` as a row numbered
    /// `line`; a malformed line appends nothing (the caller records it).
    /// The ingest's hot path, one line at a time through ``BatchFiller``.
    package mutating func decode(
        _ bytes: UnsafeBufferPointer<UInt8>, line: Int, into batch: inout RowBatch
    ) -> Appended {
        lastProblem = nil
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
        if let cause = scanner.scan(bytes) { return .malformed(cause) }
        let mark = batch.mark
        do throws(MalformedCause) {
            let (kind, exchange) = try appendFields(to: &batch)
            // Contract 3.2: U+0000 in a text the record keeps makes the line malformed, on every engine.
            if exchange || scanner.appendedEscapedText, let column = batch.columnHoldingNul(since: mark) {
                let field = column < kind.columns.count ? kind.columns[column] : "a text field"
                lastProblem =
                    field + ": holds U+0000 (\\u0000), which a record's text may not (contract 3.2)"
                    + (exchange ? "; in the apns record derived from this exchange" : "")
                throw MalformedCause.nulCharacter
            }
            batch.finishRow(mark, kind: kind, line: line)
            return .record
        } catch {
            batch.abandon(mark)
            return .malformed(error)
        }
    }

    // MARK: - Fields

    /// Appends the record's fields in column order, checking each in that
    /// order, so the first field at fault names the cause.
    /// Returns the record's kind, and whether the line was an `exchange` (its texts come from its bodies).
    private mutating func appendFields(to batch: inout RowBatch) throws(MalformedCause) -> (RecordKind, Bool) {
        if let v = value(.v), !(v.kind == .int && v.int == 1) {
            throw problem(.unsupportedVersion, .v, "expected 1, got \(scanner.shown(v))")
        }
        guard let kindRef = value(.kind) else { throw missing(.kind) }
        guard kindRef.kind == .string else { throw wrongType(.kind, kindRef, expected: "a string") }
        let kind: RecordKind? = scanner.withStringBytes(kindRef) { bytes in
            if Self.equals(bytes, "apns") { return .apns }
            if Self.equals(bytes, "render") { return .render }
            if Self.equals(bytes, "callback") { return .callback }
            return nil
        }
        if kind == nil, scanner.withStringBytes(kindRef, { Self.equals($0, "exchange") }) {
            try appendExchange(to: &batch)
            return (.apns, true)
        }
        guard let kind else {
            throw problem(
                .unknownKind, .kind, "\(scanner.shown(kindRef)) is not one of apns, render, callback, exchange")
        }
        switch kind {
        case .apns: try appendAPNs(to: &batch)
        case .render: try appendRender(to: &batch)
        case .callback: try appendCallback(to: &batch)
        }
        return (kind, false)
    }

    private mutating func appendAPNs(to batch: inout RowBatch) throws(MalformedCause) {
        // A non-empty `channel_id` makes a broadcast (contract 3.0), which
        // decides whether `push_token` is required before the fields are
        // checked in table order.
        let broadcast = value(.channelID).map { $0.kind == .string && !scanner.isEmptyString($0) } ?? false
        try append(Self.apnsColumns, broadcast: broadcast, to: &batch)
        // Stored as null for APNs itself, so `"provider":"apns"` and no provider are one record.
        if let provider = try enumIndex(.provider, Self.providers), provider != 0 {
            let name = Self.providers[provider]
            batch.appendText(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        } else {
            batch.append(.noText)
        }
        appendChannel(try channel(), to: &batch)
    }

    private mutating func appendRender(to batch: inout RowBatch) throws(MalformedCause) {
        // `channel_id` is checked where the contract's table lists it,
        // after `surface`, and stored last (the column came later).
        try append(Self.renderColumns, to: &batch)
        let channel = try channel()
        try append(Self.deviceColumns, to: &batch)
        appendChannel(channel, to: &batch)
        // Contract 3.1, last in the table and stored last.
        _ = try optionalString(.frequentPushes, &batch)
    }

    private mutating func appendCallback(to batch: inout RowBatch) throws(MalformedCause) {
        guard let index = try optionalEnum(.callback, Self.callbacks, &batch) else { throw missing(.callback) }
        let callback = CallbackRecord.Kind.allCases[index]
        let name = "\(Self.callbacks[index])"
        if !(try optionalString(.activityID, &batch)) && callback != .pushToStartToken {
            throw missing(.activityID, because: "a \(name) callback")
        }
        if !(try optionalString(.pushToken, &batch)) && (callback == .pushToken || callback == .pushToStartToken) {
            throw missing(.pushToken, because: "a \(name) callback")
        }
        if !(try optionalInt(.seq, &batch)) && callback == .contentUpdate {
            throw missing(.seq, because: "a \(name) callback")
        }
        // `state` is read on activity_state callbacks only; on any other it is ignored,
        // as an unknown field is (contract 3.0).
        if callback == .activityState {
            if try optionalEnum(.state, Self.states, &batch) == nil {
                throw missing(.state, because: "an \(name) callback")
            }
        } else {
            batch.append(.noText)
        }
        // After `state` in the contract's table; stored last.
        let channel = try channel()
        if channel == nil && callback == .channelSubscription {
            throw missing(.channelID, because: "a \(name) callback")
        }
        try requiredTime(.receivedAt, &batch)
        try append(Self.deviceColumns, to: &batch)
        appendChannel(channel, to: &batch)
        _ = try optionalString(.frequentPushes, &batch)
    }

    /// How a field is read into its column.
    private enum Read {
        case string, requiredString, int, requiredInt, requiredTime
        /// One of ``events``, or absent.
        case event
        /// Required, except on a broadcast, where it must be absent or null (contract 3.0).
        case tokenUnlessBroadcast
        /// Optional, except on a broadcast, where it must be absent or null (contract 3.0).
        case stringUnlessBroadcast
    }

    /// The fields of an `apns` record before `provider`, in column order
    /// (``RecordKind/columns``).
    private static let apnsColumns: [(RecordField, Read)] = [
        (.apnsID, .requiredString), (.sentAt, .requiredTime), (.status, .requiredInt), (.reason, .string),
        (.pushToken, .tokenUnlessBroadcast), (.activityID, .stringUnlessBroadcast), (.seq, .int), (.event, .event),
        (.apsTimestamp, .requiredInt), (.payloadBytes, .int), (.topic, .string), (.pushType, .string),
        (.priority, .int), (.environment, .string), (.latencyMS, .int),
    ]
    /// The device fields that `render` and `callback` records end with.
    private static let deviceColumns: [(RecordField, Read)] = [
        (.deviceID, .string), (.osVersion, .string), (.deviceModel, .string), (.appVersion, .string),
    ]
    /// The fields of a `render` record before its `channel_id` and device fields, in column order.
    private static let renderColumns: [(RecordField, Read)] = [
        (.activityID, .requiredString), (.seq, .requiredInt), (.renderedAt, .requiredTime), (.surface, .string),
    ]

    /// Reads `columns` in order and appends their cells; the first field at
    /// fault throws. `broadcast`: the line is a broadcast (contract 3.0).
    private mutating func append(
        _ columns: [(RecordField, Read)], broadcast: Bool = false, to batch: inout RowBatch
    ) throws(MalformedCause) {
        for (field, read) in columns {
            switch read {
            case .tokenUnlessBroadcast where !broadcast: try requiredString(field, &batch)
            case .stringUnlessBroadcast where !broadcast: try optionalString(field, &batch)
            case .tokenUnlessBroadcast, .stringUnlessBroadcast:
                if let ref = value(field) {
                    throw wrongType(field, ref, expected: "absent or null on a broadcast (a line with a channel_id)")
                }
                batch.append(.noText)
            case .string: try optionalString(field, &batch)
            case .requiredString: try requiredString(field, &batch)
            case .int: try optionalInt(field, &batch)
            case .requiredInt: try requiredInt(field, &batch)
            case .requiredTime: try requiredTime(field, &batch)
            case .event: try optionalEnum(field, Self.events, &batch)
            }
        }
    }

    /// An `exchange` line: checks its own fields, then appends the `apns`
    /// record derived from it (``ExchangeDeriver``).
    private mutating func appendExchange(to batch: inout RowBatch) throws(MalformedCause) {
        guard let provider = try enumIndex(.provider, Self.providers) else { throw missing(.provider) }
        guard let sentAt = try time(.sentAt) else { throw missing(.sentAt) }
        guard let request = value(.request) else { throw missing(.request) }
        guard request.kind == .object else { throw wrongType(.request, request, expected: "an object") }
        let response = value(.response)
        if let response, response.kind != .object {
            throw wrongType(.response, response, expected: "an object (or null when no answer came)")
        }
        let exchange = ExchangeDeriver.Exchange(
            provider: PushProvider.allCases[provider], sentAt: sentAt, request: request, response: response,
            error: try string(.error), latency: try int(.latencyMS), activityID: try string(.activityID),
            environment: try string(.environment))
        do {
            try exchanges.derive(exchange, line: JSONText(bytes: scanner.line), into: &batch)
        } catch {
            lastProblem = error.field + ": " + error.why
            throw .invalidExchange
        }
    }

    /// The line's `channel_id` (contract 3.0): nil when absent or null;
    /// any other value must be a non-empty string.
    private mutating func channel() throws(MalformedCause) -> JSONLineScanner.ValueRef? {
        guard let ref = value(.channelID) else { return nil }
        guard ref.kind == .string, !scanner.isEmptyString(ref) else {
            throw wrongType(.channelID, ref, expected: "a non-empty string")
        }
        return ref
    }

    /// Appends the channel cell (`.noText` for none).
    private mutating func appendChannel(_ ref: JSONLineScanner.ValueRef?, to batch: inout RowBatch) {
        if let ref { scanner.appendString(ref, to: &batch) } else { batch.append(.noText) }
    }

    // MARK: - Problems

    /// Notes why the line is malformed and returns the cause to throw.
    private mutating func problem(_ cause: MalformedCause, _ field: RecordField, _ why: String) -> MalformedCause {
        lastProblem = field.key + ": " + why
        return cause
    }

    private mutating func missing(_ field: RecordField, because condition: String? = nil) -> MalformedCause {
        let absent = scanner.slot(field) == nil ? "absent" : "null"
        return problem(.missingField, field, "required" + (condition.map { " for " + $0 } ?? "") + ", but \(absent)")
    }

    private mutating func wrongType(_ field: RecordField, _ ref: JSONLineScanner.ValueRef, expected: String)
        -> MalformedCause
    {
        let got =
            switch ref.kind {
            case .string: "a string (\(scanner.shown(ref)))"
            case .number: scanner.shown(ref) + " (an integer is written without fraction or exponent, within 64 bits)"
            case .int: "an integer (\(scanner.shown(ref)))"
            default: scanner.shown(ref)
            }
        return problem(.wrongType, field, "expected \(expected), got \(got)")
    }

    @inline(__always)
    private static func equals(_ text: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard text.count == name.utf8CodeUnitCount else { return false }
        guard let base = text.baseAddress else { return true }
        return spells(base, name)
    }

    private static let events: [StaticString] = ["start", "update", "end"]
    /// In the order of ``CallbackRecord/Kind/allCases``.
    private static let callbacks: [StaticString] = [
        "push_token", "push_to_start_token", "content_update", "activity_state", "channel_subscription",
    ]
    private static let states: [StaticString] = ["active", "ended", "dismissed", "stale", "pending"]
    /// In the order of ``PushProvider/allCases``.
    private static let providers: [StaticString] = ["apns", "fcm", "tencent_chat"]

    /// A present, non-null value; `nil` for absent or `null`.
    @inline(__always)
    private mutating func value(_ field: RecordField) -> JSONLineScanner.ValueRef? {
        guard let ref = scanner.slot(field), ref.kind != .null else { return nil }
        return ref
    }

    /// The string value of `field`; nil when absent or null.
    private mutating func string(_ field: RecordField) throws(MalformedCause) -> JSONLineScanner.ValueRef? {
        guard let ref = value(field) else { return nil }
        guard ref.kind == .string else { throw wrongType(field, ref, expected: "a string") }
        return ref
    }

    /// The integer value of `field`; nil when absent or null.
    private mutating func int(_ field: RecordField) throws(MalformedCause) -> Int64? {
        guard let ref = value(field) else { return nil }
        guard ref.kind == .int else { throw wrongType(field, ref, expected: "an integer") }
        return ref.int
    }

    /// The time `field` names, in milliseconds; nil when absent or null.
    private mutating func time(_ field: RecordField) throws(MalformedCause) -> Int64? {
        guard let ref = value(field) else { return nil }
        guard ref.kind == .string else { throw wrongType(field, ref, expected: "an RFC 3339 time string") }
        guard let millis = scanner.withStringBytes(ref, { RFC3339.parseMilliseconds($0) }) else {
            throw problem(
                .invalidTime, field,
                "\(scanner.shown(ref)) is not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM))")
        }
        return millis
    }

    /// The index in `allowed` of the value of `field`; nil when absent or null.
    private mutating func enumIndex(_ field: RecordField, _ allowed: [StaticString]) throws(MalformedCause) -> Int? {
        guard let ref = try string(field) else { return nil }
        let index = scanner.withStringBytes(ref) { bytes in
            allowed.firstIndex { Self.equals(bytes, $0) }
        }
        guard let index else {
            throw problem(
                .invalidEnum, field,
                "\(scanner.shown(ref)) is not one of " + allowed.map { "\($0)" }.joined(separator: ", "))
        }
        return index
    }

    /// Appends the string, or `.noText` when absent or null; returns whether it was present.
    @discardableResult
    private mutating func optionalString(_ field: RecordField, _ batch: inout RowBatch) throws(MalformedCause) -> Bool {
        guard let ref = try string(field) else {
            batch.append(.noText)
            return false
        }
        scanner.appendString(ref, to: &batch)
        return true
    }

    private mutating func requiredString(_ field: RecordField, _ batch: inout RowBatch) throws(MalformedCause) {
        guard try optionalString(field, &batch) else { throw missing(field) }
    }

    @discardableResult
    private mutating func optionalInt(_ field: RecordField, _ batch: inout RowBatch) throws(MalformedCause) -> Bool {
        let value = try int(field)
        batch.append(value.map(RowBatch.Cell.int) ?? .noInt)
        return value != nil
    }

    private mutating func requiredInt(_ field: RecordField, _ batch: inout RowBatch) throws(MalformedCause) {
        guard try optionalInt(field, &batch) else { throw missing(field) }
    }

    private mutating func requiredTime(_ field: RecordField, _ batch: inout RowBatch) throws(MalformedCause) {
        guard let millis = try time(field) else { throw missing(field) }
        batch.append(.int(millis))
    }

    /// Appends one of `allowed`, or `.noText` when absent or null; returns
    /// the index of the value in `allowed`.
    @discardableResult
    private mutating func optionalEnum(
        _ field: RecordField, _ allowed: [StaticString], _ batch: inout RowBatch
    ) throws(MalformedCause) -> Int? {
        guard let index = try enumIndex(field, allowed) else {
            batch.append(.noText)
            return nil
        }
        let name = allowed[index]
        batch.appendText(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        return index
    }
}

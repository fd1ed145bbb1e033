import ArrivalHandOff
import ArrivalModel
import ArrivalStore

/// Derives the `apns` record an `exchange` line stands for
/// (Documentation/InputRecords.md, "exchange"): the raw HTTP exchange of a
/// sender with APNs, FCM HTTP v1 or Tencent Cloud Chat, read with the same
/// strict scanner as every line. The request body, a JSON document inside a
/// JSON string, is unescaped once and scanned with the limits of a line; a
/// response body is read only where a rule needs it, and counts as absent
/// when it is not a JSON object.
///
/// Not thread-safe: one per ``RecordDecoder``. A class so that the body
/// texts it scans stay put while their scanners point into them.
final class ExchangeDeriver {
    /// Why no record could be derived: the field (a path such as
    /// `request.body: message.apns.live_activity_token`) and the reason.
    struct Problem: Error {
        var field: String
        var why: String
    }

    /// The exchange's top-level fields, checked by the decoder.
    struct Exchange {
        var provider: PushProvider
        var sentAt: Int64
        var request: JSONLineScanner.ValueRef
        var response: JSONLineScanner.ValueRef?
        var error: JSONLineScanner.ValueRef?
        var latency: Int64?
        var activityID: JSONLineScanner.ValueRef?
        var environment: JSONLineScanner.ValueRef?
    }

    private var requestBody: [UInt8] = []
    private var responseBody: [UInt8] = []
    private var requestScanner = JSONLineScanner()
    private var responseScanner = JSONLineScanner()

    /// Where a derived text comes from.
    private enum Text {
        case null
        case literal(StaticString)
        /// A string value of one of the three texts.
        case value(JSONLineScanner.ValueRef, in: Source)
        /// `prefix` and then a string value (`FCM:UNREGISTERED`).
        case prefixed(StaticString, JSONLineScanner.ValueRef, in: Source)
        /// `prefix` and then an integer in decimal (`Tencent:70107`).
        case prefixedInt(StaticString, Int64)
        case bytes([UInt8])
    }

    private enum Source { case line, request, response }

    /// The derived record's fields, in the store's column order where it matters.
    private struct Derived {
        var apnsID = Text.literal("")
        var status: Int64 = 0
        var reason = Text.null
        var pushToken = Text.literal("")
        var activityID = Text.null
        var seq: Int64?
        var event = Text.null
        var apsTimestamp: Int64 = 0
        var payloadBytes: Int64?
        var topic = Text.null
        var pushType = Text.null
        var priority: Int64?
        var environment = Text.null
        /// A broadcast's channel (contract 3.0); null for a push to a token.
        var channelID = Text.null
    }

    /// The headers a derivation reads, by name without regard to case (the first match wins).
    private struct Headers {
        var apnsID: JSONLineScanner.ValueRef?
        var topic: JSONLineScanner.ValueRef?
        var pushType: JSONLineScanner.ValueRef?
        var priority: JSONLineScanner.ValueRef?
        /// Read on broadcasts only (contract 3.0).
        var requestID: JSONLineScanner.ValueRef?
        var channelID: JSONLineScanner.ValueRef?
    }

    /// Appends the 17 cells of the `apns` record `exchange` stands for to
    /// `batch`, or throws the first thing that keeps one from being derived
    /// (then nothing has been appended).
    func derive(_ exchange: Exchange, line: JSONText, into batch: inout RowBatch) throws(Problem) {
        guard let url = line.member("url", of: exchange.request) else {
            throw Problem(field: "request.url", why: "required, but absent")
        }
        guard url.kind == .string else {
            throw Problem(field: "request.url", why: "expected a string, got \(Self.kindName(url))")
        }
        let requestHeaders = try headers(line.member("headers", of: exchange.request), in: line, at: "request.headers")
        guard let body = line.member("body", of: exchange.request), body.kind != .null else {
            throw Problem(field: "request.body", why: "required, but absent")
        }
        guard body.kind == .string else {
            throw Problem(field: "request.body", why: "expected the body as a string, got \(Self.kindName(body))")
        }
        let (status, responseHeaders, answerBody) = try response(exchange, line: line)

        requestBody.removeAll(keepingCapacity: true)
        line.appendContent(of: body, to: &requestBody)
        responseBody.removeAll(keepingCapacity: true)
        if let answerBody { line.appendContent(of: answerBody, to: &responseBody) }

        try requestBody.withUnsafeBufferPointer { (requestText) throws(Problem) in
            if let cause = requestScanner.scan(requestText) {
                throw Problem(field: "request.body", why: "not a JSON object (\(cause.rawValue))")
            }
            let request = JSONText(bytes: requestText)
            let root = request.shallowValue(
                at: JSONLineScanner.skipSpace(requestText.baseAddress!, 0, requestText.count))
            try responseBody.withUnsafeBufferPointer { (responseText) throws(Problem) in
                // A response body that is not a JSON object counts as absent.
                var answer: (text: JSONText, root: JSONLineScanner.ValueRef)?
                if answerBody != nil, responseScanner.scan(responseText) == nil {
                    let text = JSONText(bytes: responseText)
                    answer = (
                        text,
                        text.shallowValue(
                            at: JSONLineScanner.skipSpace(responseText.baseAddress!, 0, responseText.count))
                    )
                }
                var derived = Derived()
                switch exchange.provider {
                case .apns:
                    try deriveAPNs(
                        &derived, exchange: exchange, url: url, line: line, requestHeaders: requestHeaders,
                        request: request, root: root, status: status, responseHeaders: responseHeaders,
                        answer: answer)
                case .fcm:
                    try deriveFCM(
                        &derived, exchange: exchange, line: line, request: request, root: root, status: status,
                        answer: answer)
                case .tencentChat:
                    try deriveTencent(
                        &derived, exchange: exchange, request: request, root: root, status: status, answer: answer)
                }
                append(derived, exchange: exchange, line: line, request: request, answer: answer?.text, to: &batch)
            }
        }
    }

    /// The response's status (nil when the exchange has none: the request
    /// failed before an answer), headers and body (when it is a string).
    private func response(_ exchange: Exchange, line: JSONText) throws(Problem) -> (
        status: JSONLineScanner.ValueRef?, headers: Headers, body: JSONLineScanner.ValueRef?
    ) {
        guard let response = exchange.response else { return (nil, Headers(), nil) }
        guard let status = line.member("status", of: response), status.kind != .null else {
            throw Problem(field: "response.status", why: "required, but absent")
        }
        guard status.kind == .int else {
            throw Problem(field: "response.status", why: "expected an integer, got \(Self.kindName(status))")
        }
        let headers = try headers(line.member("headers", of: response), in: line, at: "response.headers")
        guard let body = line.member("body", of: response), body.kind != .null else { return (status, headers, nil) }
        guard body.kind == .string else {
            throw Problem(field: "response.body", why: "expected a string, got \(Self.kindName(body))")
        }
        return (status, headers, body)
    }

    // MARK: - Providers

    private func deriveAPNs(
        _ d: inout Derived, exchange: Exchange, url: JSONLineScanner.ValueRef, line: JSONText,
        requestHeaders: Headers, request: JSONText, root: JSONLineScanner.ValueRef,
        status: JSONLineScanner.ValueRef?, responseHeaders: Headers,
        answer: (text: JSONText, root: JSONLineScanner.ValueRef)?
    ) throws(Problem) {
        let (parts, fromPath) = try pathParts(url, line: line)
        let broadcast = parts.bundle != nil
        if broadcast {
            // Contract 3.0: the channel is the `apns-channel-id` header; the sender names no activity.
            guard let channel = requestHeaders.channelID, channel.end > channel.start else {
                throw Problem(
                    field: "request.headers: apns-channel-id",
                    why: "a broadcast (/4/broadcasts/apps/…) needs a non-empty apns-channel-id header")
            }
            if exchange.activityID != nil {
                throw Problem(
                    field: "activity_id", why: "a broadcast reaches a channel, not one activity: must be null")
            }
            d.channelID = .value(channel, in: .line)
            d.pushToken = .null
        } else {
            d.pushToken = fromPath
        }
        try payload(&d, aps: request.member("aps", of: root), in: request, at: "request.body: aps")
        d.payloadBytes = Int64(request.bytes.count)
        d.topic = requestHeaders.topic.map { .value($0, in: .line) } ?? (broadcast ? fromPath : .null)
        d.pushType = requestHeaders.pushType.map { .value($0, in: .line) } ?? .null
        d.priority = requestHeaders.priority.flatMap { Self.priority($0, in: line) }
        if let environment = exchange.environment {
            d.environment = .value(environment, in: .line)
        } else {
            d.environment = parts.environment.map(Text.literal) ?? .null
        }
        d.activityID = exchange.activityID.map { .value($0, in: .line) } ?? .null
        let id =
            broadcast
            ? responseHeaders.requestID ?? responseHeaders.apnsID ?? requestHeaders.requestID ?? requestHeaders.apnsID
            : responseHeaders.apnsID ?? requestHeaders.apnsID
        if let id { d.apnsID = .value(id, in: .line) }
        guard let status else {
            d.reason = exchange.error.map { .value($0, in: .line) } ?? .null
            return
        }
        d.status = status.int
        if status.int != 200, let answer, let reason = answer.text.member("reason", of: answer.root),
            reason.kind == .string
        {
            d.reason = .value(reason, in: .response)
        }
    }

    /// The URL's parts, and the token or a broadcast's bundle id as written in its path.
    private func pathParts(_ url: JSONLineScanner.ValueRef, line: JSONText) throws(Problem) -> (URLParts, Text) {
        let parts = line.withContent(url) { URLParts($0) }
        guard let parts, let pathText = parts.token ?? parts.bundle else {
            throw Problem(
                field: "request.url",
                why: "expected https://HOST[:PORT]/3/device/TOKEN or /4/broadcasts/apps/BUNDLE_ID, or the path"
                    + " alone, got \(Self.shown(url, in: line))")
        }
        if url.hasEscapes {
            // The offsets are in the unescaped text (rare: a URL needs no escapes).
            return (parts, .bytes(line.withContent(url) { Array($0[pathText]) }))
        }
        let ref = JSONLineScanner.ValueRef(
            kind: .string, start: url.start + pathText.lowerBound, end: url.start + pathText.upperBound,
            hasEscapes: false, int: 0)
        return (parts, .value(ref, in: .line))
    }

    private func deriveFCM(
        _ d: inout Derived, exchange: Exchange, line: JSONText, request: JSONText, root: JSONLineScanner.ValueRef,
        status: JSONLineScanner.ValueRef?, answer: (text: JSONText, root: JSONLineScanner.ValueRef)?
    ) throws(Problem) {
        guard let apns = request.member("message", "apns", of: root), apns.kind == .object else {
            throw Problem(field: "request.body: message.apns", why: "required: an object")
        }
        guard let token = request.member("live_activity_token", of: apns), token.kind == .string,
            token.end > token.start
        else {
            throw Problem(
                field: "request.body: message.apns.live_activity_token", why: "required: a non-empty string")
        }
        d.pushToken = .value(token, in: .request)
        try payload(
            &d, aps: request.member("payload", "aps", of: apns), in: request,
            at: "request.body: message.apns.payload.aps")
        let headers = try headers(
            request.member("headers", of: apns), in: request, at: "request.body: message.apns.headers")
        d.topic = headers.topic.map { .value($0, in: .request) } ?? .null
        d.pushType = headers.pushType.map { .value($0, in: .request) } ?? .null
        d.priority = headers.priority.flatMap { Self.priority($0, in: request) }
        d.environment = exchange.environment.map { .value($0, in: .line) } ?? .null
        d.activityID = exchange.activityID.map { .value($0, in: .line) } ?? .null
        guard let status else {
            d.reason = exchange.error.map { .value($0, in: .line) } ?? .null
            return
        }
        d.status = status.int
        if status.int == 200 {
            if let answer, let name = answer.text.member("name", of: answer.root), name.kind == .string {
                d.apnsID = .value(name, in: .response)
            }
            return
        }
        if let answer { fcmFailure(&d, answer: answer) }
    }

    /// What an FCM answer other than 200 says went wrong: APNs's own status
    /// and reason when FCM relays them, else FCM's error code.
    private func fcmFailure(_ d: inout Derived, answer: (text: JSONText, root: JSONLineScanner.ValueRef)) {
        let error = answer.text.member("error", of: answer.root)
        var apnsError: JSONLineScanner.ValueRef?
        var fcmError: JSONLineScanner.ValueRef?
        answer.text.forEachElement(of: answer.text.member("details", of: error) ?? Self.none) { detail in
            guard let type = answer.text.member("@type", of: detail) else { return true }
            if apnsError == nil, answer.text.stringHasSuffix(type, "google.firebase.fcm.v1.ApnsError"),
                answer.text.member("statusCode", of: detail)?.kind == .int
            {
                apnsError = detail
                return false
            }
            if fcmError == nil, answer.text.stringHasSuffix(type, "google.firebase.fcm.v1.FcmError") {
                fcmError = detail
            }
            return true
        }
        if let apnsError, let code = answer.text.member("statusCode", of: apnsError) {
            // APNs's own answer, relayed by FCM.
            d.status = code.int
            if let reason = answer.text.member("reason", of: apnsError), reason.kind == .string {
                d.reason = .value(reason, in: .response)
            }
        } else if let code = answer.text.member("errorCode", of: fcmError), code.kind == .string {
            d.reason = .prefixed("FCM:", code, in: .response)
        } else if let code = answer.text.member("status", of: error), code.kind == .string {
            d.reason = .prefixed("FCM:", code, in: .response)
        }
    }

    private func deriveTencent(
        _ d: inout Derived, exchange: Exchange, request: JSONText, root: JSONLineScanner.ValueRef,
        status: JSONLineScanner.ValueRef?, answer: (text: JSONText, root: JSONLineScanner.ValueRef)?
    ) throws(Problem) {
        guard let activity = request.member("OfflinePushInfo", "ApnsInfo", "LiveActivity", of: root),
            activity.kind == .object
        else {
            throw Problem(field: "request.body: OfflinePushInfo.ApnsInfo.LiveActivity", why: "required: an object")
        }
        guard let id = request.member("LaId", of: activity), id.kind == .string, id.end > id.start else {
            throw Problem(
                field: "request.body: OfflinePushInfo.ApnsInfo.LiveActivity.LaId", why: "required: a non-empty string")
        }
        d.activityID = .value(id, in: .request)
        d.event = Self.event(request.member("Event", of: activity), in: request)
        d.seq = Self.integer(request.member("ContentState", "seq", of: activity))
        // The provider stamps the payload itself: whole seconds of sent_at, rounded down.
        d.apsTimestamp = exchange.sentAt >= 0 ? exchange.sentAt / 1000 : -((-exchange.sentAt + 999) / 1000)
        d.pushType = .literal("liveactivity")
        d.environment = exchange.environment.map { .value($0, in: .line) } ?? .null
        if let answer {
            if let key = answer.text.member("MsgKey", of: answer.root), key.kind == .string {
                d.apnsID = .value(key, in: .response)
            } else if let task = answer.text.member("TaskId", of: answer.root), task.kind == .string {
                d.apnsID = .value(task, in: .response)
            }
        }
        guard let status else {
            d.reason = exchange.error.map { .value($0, in: .line) } ?? .null
            return
        }
        d.status = status.int
        guard status.int == 200 else { return }
        let code = answer.flatMap { Self.integer($0.text.member("ErrorCode", of: $0.root)) }
        let ok =
            answer.map { $0.text.stringEquals($0.text.member("ActionStatus", of: $0.root) ?? Self.none, "OK") } ?? false
        if ok && code == 0 { return }
        d.status = 400
        d.reason = code.map { .prefixedInt("Tencent:", $0) } ?? .literal("Tencent:unknown")
    }

    // MARK: - Shared rules

    /// `aps.timestamp` (required), `aps.event` and `aps.content-state.seq`.
    private func payload(
        _ d: inout Derived, aps: JSONLineScanner.ValueRef?, in text: JSONText, at path: String
    ) throws(Problem) {
        guard let timestamp = text.member("timestamp", of: aps), timestamp.kind == .int else {
            let got = text.member("timestamp", of: aps).map { Self.kindName($0) } ?? "nothing"
            throw Problem(field: path + ".timestamp", why: "required: an integer of Unix seconds, got \(got)")
        }
        d.apsTimestamp = timestamp.int
        d.event = Self.event(text.member("event", of: aps), in: text)
        d.seq = Self.integer(text.member("content-state", "seq", of: aps))
    }

    /// Checks that every value of a header object is a string and picks the headers read.
    private func headers(_ object: JSONLineScanner.ValueRef?, in text: JSONText, at path: String) throws(Problem)
        -> Headers
    {
        var found = Headers()
        guard let object, object.kind != .null else { return found }
        guard object.kind == .object else {
            throw Problem(field: path, why: "expected an object of string values, got \(Self.kindName(object))")
        }
        var problem: Problem?
        text.forEachMember(of: object) { key, value in
            guard value.kind == .string else {
                problem = Problem(
                    field: path + "." + Self.clipped(text.withContent(key) { String(decoding: $0, as: UTF8.self) }),
                    why: "a header value must be a string, got \(Self.kindName(value))")
                return false
            }
            if found.apnsID == nil, text.stringEquals(key, "apns-id", ignoringCase: true) {
                found.apnsID = value
            } else if found.topic == nil, text.stringEquals(key, "apns-topic", ignoringCase: true) {
                found.topic = value
            } else if found.pushType == nil, text.stringEquals(key, "apns-push-type", ignoringCase: true) {
                found.pushType = value
            } else if found.priority == nil, text.stringEquals(key, "apns-priority", ignoringCase: true) {
                found.priority = value
            } else if found.requestID == nil, text.stringEquals(key, "apns-request-id", ignoringCase: true) {
                found.requestID = value
            } else if found.channelID == nil, text.stringEquals(key, "apns-channel-id", ignoringCase: true) {
                found.channelID = value
            }
            return true
        }
        if let problem { throw problem }
        return found
    }

    /// `apns-priority` read as decimal when it is 1 to 18 ASCII digits.
    private static func priority(_ ref: JSONLineScanner.ValueRef, in text: JSONText) -> Int64? {
        text.withContent(ref) { digits in
            guard (1...18).contains(digits.count), digits.allSatisfy({ $0 &- 0x30 < 10 }) else { return nil }
            return digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        }
    }

    private static func event(_ ref: JSONLineScanner.ValueRef?, in text: JSONText) -> Text {
        guard let ref else { return .null }
        for name: StaticString in ["start", "update", "end"] where text.stringEquals(ref, name) {
            return .literal(name)
        }
        return .null
    }

    /// A JSON integer in the signed 64-bit range, else nil.
    private static func integer(_ ref: JSONLineScanner.ValueRef?) -> Int64? {
        guard let ref, ref.kind == .int else { return nil }
        return ref.int
    }

    private static let none = JSONLineScanner.ValueRef(kind: .null, start: 0, end: 0, hasEscapes: false, int: 0)

    private static func kindName(_ ref: JSONLineScanner.ValueRef) -> String {
        switch ref.kind {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .object: "an object"
        case .array: "an array"
        }
    }

    private static func shown(_ ref: JSONLineScanner.ValueRef, in text: JSONText) -> String {
        "\"" + clipped(text.withContent(ref) { String(decoding: $0, as: UTF8.self) }, to: 60) + "\""
    }

    /// At most `limit` Unicode scalars of `text` (a problem names what it
    /// shows, never repeats a hostile line at length), with `…` when cut.
    private static func clipped(_ text: String, to limit: Int = 40) -> String {
        guard text.unicodeScalars.count > limit else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit))) + "…"
    }

    // MARK: - Cells

    private func append(
        _ d: Derived, exchange: Exchange, line: JSONText, request: JSONText, answer: JSONText?,
        to batch: inout RowBatch
    ) {
        func text(_ t: Text) {
            switch t {
            case .null: batch.append(.noText)
            case .literal(let s): batch.appendText(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
            case .value(let ref, let source):
                let from = source == .line ? line : source == .request ? request : answer!
                batch.appendText { from.appendContent(of: ref, to: &$0) }
            case .prefixed(let prefix, let ref, let source):
                let from = source == .line ? line : source == .request ? request : answer!
                batch.appendText {
                    $0.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
                    from.appendContent(of: ref, to: &$0)
                }
            case .bytes(let bytes): bytes.withUnsafeBufferPointer { batch.appendText($0) }
            case .prefixedInt(let prefix, let value):
                batch.appendText {
                    $0.append(contentsOf: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
                    $0.append(contentsOf: String(value).utf8)
                }
            }
        }
        func int(_ value: Int64?) { batch.append(value.map(RowBatch.Cell.int) ?? .noInt) }
        text(d.apnsID)
        int(exchange.sentAt)
        int(d.status)
        text(d.reason)
        text(d.pushToken)
        text(d.activityID)
        int(d.seq)
        text(d.event)
        int(d.apsTimestamp)
        int(d.payloadBytes)
        text(d.topic)
        text(d.pushType)
        int(d.priority)
        text(d.environment)
        int(exchange.latency)
        // A null provider is APNs itself (RowBatch hashes it as a record without one).
        if exchange.provider == .apns {
            batch.append(.noText)
        } else {
            text(.literal(exchange.provider == .fcm ? "fcm" : "tencent_chat"))
        }
        text(d.channelID)
    }
}

/// What an APNs request URL says: the token after `/3/device/`, or the
/// bundle id after `/4/broadcasts/apps/` (a broadcast, contract 3.0), and
/// the environment its host names.
struct URLParts {
    /// The byte range of the token in the URL text; nil when the path is not `/3/device/TOKEN`.
    var token: Range<Int>?
    /// The byte range of the bundle id; nil when the path is not `/4/broadcasts/apps/BUNDLE_ID`.
    var bundle: Range<Int>?
    var environment: StaticString?

    /// nil when the text has no `scheme://` and is not a path alone.
    init?(_ url: UnsafeBufferPointer<UInt8>) {
        let n = url.count
        // A path alone (`/3/device/TOKEN`, as HTTP/2's `:path` carries it): no host, so no
        // environment to tell (contract 3.0).
        if n > 0, url[0] == 0x2F {
            (token, bundle) = Self.path(of: url, from: 0)
            return
        }
        var i = 0
        while i + 2 < n, !(url[i] == 0x3A && url[i + 1] == 0x2F && url[i + 2] == 0x2F) {
            if url[i] == 0x2F || url[i] == 0x3F || url[i] == 0x23 { return nil }
            i += 1
        }
        guard i + 2 < n, i > 0 else { return nil }
        let authorityStart = i + 3
        var authorityEnd = authorityStart
        while authorityEnd < n, url[authorityEnd] != 0x2F, url[authorityEnd] != 0x3F, url[authorityEnd] != 0x23 {
            authorityEnd += 1
        }
        // host: after any userinfo@, before any :port
        var hostStart = authorityStart
        for k in authorityStart..<authorityEnd where url[k] == 0x40 { hostStart = k + 1 }
        var hostEnd = hostStart
        while hostEnd < authorityEnd, url[hostEnd] != 0x3A { hostEnd += 1 }
        let host = UnsafeBufferPointer(rebasing: url[hostStart..<hostEnd])
        // The broadcast hosts (contract 3.0) name an environment for either path.
        if Self.equalsIgnoringCase(host, "api.push.apple.com")
            || Self.equalsIgnoringCase(host, "api-broadcast.push.apple.com")
        {
            environment = "production"
        } else if Self.equalsIgnoringCase(host, "api.sandbox.push.apple.com")
            || Self.equalsIgnoringCase(host, "api.development.push.apple.com")
            || Self.equalsIgnoringCase(host, "api-broadcast.sandbox.push.apple.com")
        {
            environment = "sandbox"
        }
        (token, bundle) = Self.path(of: url, from: authorityEnd)
    }

    /// The token's range when the path from `pathStart` (to any `?` or
    /// `#`) is `/3/device/TOKEN`, or the bundle id's when it is
    /// `/4/broadcasts/apps/BUNDLE_ID` (each non-empty, without `/`).
    private static func path(of url: UnsafeBufferPointer<UInt8>, from pathStart: Int) -> (Range<Int>?, Range<Int>?) {
        var pathEnd = pathStart
        while pathEnd < url.count, url[pathEnd] != 0x3F, url[pathEnd] != 0x23 { pathEnd += 1 }
        func after(_ prefix: StaticString) -> Range<Int>? {
            let start = pathStart + prefix.utf8CodeUnitCount
            guard start < pathEnd, let base = url.baseAddress, spells(base + pathStart, prefix),
                !url[start..<pathEnd].contains(0x2F)
            else { return nil }
            return start..<pathEnd
        }
        if let token = after("/3/device/") { return (token, nil) }
        return (nil, after("/4/broadcasts/apps/"))
    }

    private static func equalsIgnoringCase(_ text: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard text.count == name.utf8CodeUnitCount else { return false }
        for k in 0..<text.count {
            var a = text[k]
            if a &- 0x41 < 26 { a |= 0x20 }
            if a != name.utf8Start[k] { return false }
        }
        return true
    }
}

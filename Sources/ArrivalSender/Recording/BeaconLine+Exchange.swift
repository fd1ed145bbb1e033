import ArrivalBeacons
package import ArrivalModel

extension BeaconLine {
    /// An `exchange` record's fields in the contract's order: the one encoder
    /// of `exchange` lines, which ``PushExchange`` and the fleet simulator
    /// both write through. Headers are written sorted by name (by UTF-8
    /// bytes, so `APNs-Priority` before `apns-topic`): a dictionary has no
    /// order of its own, and the same exchange must give the same line. A
    /// response body of nil is left out; an error, latency, activity id or
    /// environment of nil too (absent equals null in the contract).
    package mutating func exchange(
        provider: PushProvider, sentAt: Int64, url: String, requestHeaders: [String: String], requestBody: String,
        response: (status: Int, headers: [String: String], body: String?)?, error: String?, latencyMS: Int?,
        activityID: String?, environment: String?
    ) {
        int("v", 1)
        string("kind", "exchange")
        string("provider", provider.rawValue)
        time("sent_at", milliseconds: sentAt)
        var request = BeaconLine(capacity: 200 + requestBody.utf8.count)
        request.string("url", url)
        request.verbatim("headers", bytes: BeaconLine.headerObject(requestHeaders))
        request.string("body", requestBody)
        verbatim("request", bytes: request.finish())
        if let response {
            var answer = BeaconLine(capacity: 100 + (response.body?.utf8.count ?? 0))
            answer.int("status", response.status)
            answer.verbatim("headers", bytes: BeaconLine.headerObject(response.headers))
            answer.optionalString("body", response.body)
            verbatim("response", bytes: answer.finish())
        }
        optionalString("error", error)
        optionalInt("latency_ms", latencyMS)
        optionalString("activity_id", activityID)
        optionalString("environment", environment)
    }

    /// `{"name":"value",…}` with the names sorted by their UTF-8 bytes.
    private static func headerObject(_ headers: [String: String]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        let sorted = headers.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for (index, header) in sorted.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendQuoted(header.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendQuoted(header.value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

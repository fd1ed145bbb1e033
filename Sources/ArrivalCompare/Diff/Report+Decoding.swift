package import ArrivalModel
package import Foundation

/// Why a report JSON could not be read back.
package struct ReportDecodingError: Error, CustomStringConvertible, Sendable {
    package var description: String
}

extension Report {
    /// The appeared starts expected to get an update token (contract 3.1:
    /// those not subscribed to a channel), which the JSON does not hold:
    /// `received / rate` when the rate says (the division is exact for any
    /// count a report holds), else every appeared start (a report of
    /// contract 3.0, or none received: the rate is then 0 or undefined either way).
    static func updateTokenExpected(received: Int, appeared: Int, rate: Double?) -> Int {
        guard let rate, rate > 0, received > 0 else { return rate == nil && received == 0 ? 0 : appeared }
        return Int((Double(received) / rate).rounded())
    }

    /// Reads back the object `arrival report --format json` writes (contract
    /// section 5), so a saved report can be one side of `diff` or `gate`.
    /// Every field of the contract must be present with its type; rates
    /// are recomputed from the counts rather than trusted.
    package init(jsonData data: Data) throws(ReportDecodingError) {
        let root: [String: Any]
        do {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ReportDecodingError(description: "the top level is not a JSON object")
            }
            root = object
        } catch let error as ReportDecodingError {
            throw error
        } catch {
            throw ReportDecodingError(
                description:
                    "not valid JSON (\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error.localizedDescription))"
            )
        }
        guard let schema = root["schema"] as? String else {
            throw ReportDecodingError(description: "no \"schema\" field")
        }
        let version: Int
        switch schema {
        case "arrival.report/1": version = 1
        case "arrival.report/2": version = 2
        default:
            throw ReportDecodingError(
                description: "schema \"\(schema)\" is neither arrival.report/1 nor arrival.report/2")
        }
        var window: ReportWindow?
        if let object = root["window"], !(object is NSNull) {
            guard let object = object as? [String: Any],
                let from = (object["from"] as? String).flatMap(RFC3339.parseMilliseconds),
                let to = (object["to"] as? String).flatMap(RFC3339.parseMilliseconds)
            else {
                throw ReportDecodingError(description: "\"window\" is neither null nor {from, to} with RFC 3339 times")
            }
            window = ReportWindow(from: from, to: to)
        }
        self.init(window: window)
        self.schema = version
        let reader = FieldReader(root: root, schema: version)

        requests.total = try reader.int("requests", "total")
        requests.accepted = try reader.int("requests", "accepted")
        requests.rejected = try reader.int("requests", "rejected")
        requests.byReason = try reader.counts("requests", "by_reason")
        requests.oversizeFailures = try reader.int("requests", "oversize_failures")
        requests.oversizeRisk = try reader.int("requests", "oversize_risk")
        if version >= 2 {
            requests.broadcasts = try reader.int("requests", "broadcasts")
            requests.toDeadTokens = try reader.int("requests", "to_dead_tokens")
            starts.sent = try reader.int("starts", "sent")
            starts.accepted = try reader.int("starts", "accepted")
            starts.appeared = try reader.int("starts", "appeared")
            starts.updateTokenReceived = try reader.int("starts", "update_token_received")
            starts.updateTokenExpected = Self.updateTokenExpected(
                received: starts.updateTokenReceived, appeared: starts.appeared,
                rate: (try reader.object("starts")["update_token_rate"] as? NSNumber)?.doubleValue)
            let latency = try reader.object("starts")["update_token_latency_ms"]
            guard let latency = latency as? [String: Any] else {
                throw ReportDecodingError(description: "\"starts.update_token_latency_ms\" is missing or not an object")
            }
            let nested = FieldReader(root: ["starts.update_token_latency_ms": latency], schema: version)
            starts.updateTokenLatency.count = try nested.int("starts.update_token_latency_ms", "count")
            starts.updateTokenLatency.p50 = try nested.optionalInt("starts.update_token_latency_ms", "p50")
            starts.updateTokenLatency.p90 = try nested.optionalInt("starts.update_token_latency_ms", "p90")
            starts.updateTokenLatency.p99 = try nested.optionalInt("starts.update_token_latency_ms", "p99")
            dataQuality.broadcastsWithoutSubscribers = try reader.int("data_quality", "broadcasts_without_subscribers")
        }
        updates = try reader.updates(try reader.object("updates"), at: "updates")
        callbacks.contentUpdateExpected = try reader.int("callbacks", "content_update_expected")
        callbacks.contentUpdateReceived = try reader.int("callbacks", "content_update_received")
        callbacks.tokenExpected = try reader.int("callbacks", "token_expected")
        callbacks.tokenReceived = try reader.int("callbacks", "token_received")
        latency = try reader.latency("latency_ms")
        if let object = reader.root["outliers"], version >= 2 { outliers = try reader.outliers(object) }
        dataQuality.malformedByCause = try reader.counts("data_quality", "malformed_by_cause")
        dataQuality.duplicateRecords = try reader.int("data_quality", "duplicate_records")
        dataQuality.filesSkippedAsDuplicate = try reader.int("data_quality", "files_skipped_as_duplicate")
        dataQuality.apnsWithoutSeq = try reader.int("data_quality", "apns_without_seq")
        dataQuality.unattributed = try reader.int("data_quality", "unattributed")
        dataQuality.clockSkewNegative = try reader.int("data_quality", "clock_skew_negative")
        let breakdownObject = try reader.object("breakdowns")
        // Contract 3.1's breakdowns are read when the report has them (an earlier arrival's has not).
        let later = Report.laterDimensions.dropFirst().filter { breakdownObject[$0] != nil }
        for dimension in Report.breakdownDimensions + (version >= 2 ? ["channel"] + later : []) {
            // Reports of arrival 0.9 and earlier have no `provider` breakdown: the
            // dimension is then unknown, and the diff leaves it out.
            if dimension == "provider" && breakdownObject[dimension] == nil { continue }
            guard let rows = breakdownObject[dimension] as? [String: Any] else {
                throw ReportDecodingError(description: "\"breakdowns.\(dimension)\" is missing or not an object")
            }
            var table: [ExactString: UpdateCounts] = [:]
            for (key, value) in rows {
                guard let row = value as? [String: Any] else {
                    throw ReportDecodingError(description: "\"breakdowns.\(dimension).\(key)\" is not an object")
                }
                table[ExactString(key)] = try reader.updates(row, at: "breakdowns.\(dimension).\(key)")
            }
            breakdowns[dimension] = table
        }
    }
}

/// Typed access to the fields of a decoded report object, with messages
/// that name the missing or mistyped field.
private struct FieldReader {
    let root: [String: Any]
    /// The report schema: 2 adds `dismissed` and `lost_by_cause` to every updates block.
    var schema = 1

    func object(_ key: String) throws(ReportDecodingError) -> [String: Any] {
        guard let object = root[key] as? [String: Any] else {
            throw ReportDecodingError(description: "\"\(key)\" is missing or not an object")
        }
        return object
    }

    func int(_ group: String, _ key: String) throws(ReportDecodingError) -> Int {
        try Self.int(try object(group)[key], at: "\(group).\(key)")
    }

    func optionalInt(_ group: String, _ key: String) throws(ReportDecodingError) -> Int64? {
        let value = try object(group)[key]
        if value is NSNull { return nil }
        return Int64(try Self.int(value, at: "\(group).\(key)"))
    }

    func counts(_ group: String, _ key: String) throws(ReportDecodingError) -> [ExactString: Int] {
        guard let object = try object(group)[key] as? [String: Any] else {
            throw ReportDecodingError(description: "\"\(group).\(key)\" is missing or not an object")
        }
        var counts: [ExactString: Int] = [:]
        for (name, value) in object {
            counts[ExactString(name)] = try Self.int(value, at: "\(group).\(key).\(name)")
        }
        return counts
    }

    func updates(_ object: [String: Any], at path: String) throws(ReportDecodingError) -> UpdateCounts {
        var counts = UpdateCounts()
        counts.sent = try Self.int(object["sent"], at: path + ".sent")
        counts.accepted = try Self.int(object["accepted"], at: path + ".accepted")
        counts.rendered = try Self.int(object["rendered"], at: path + ".rendered")
        counts.ended = try Self.int(object["ended"], at: path + ".ended")
        counts.expired = try Self.int(object["expired"], at: path + ".expired")
        counts.staleTimestamp = try Self.int(object["stale_timestamp"], at: path + ".stale_timestamp")
        counts.superseded = try Self.int(object["superseded"], at: path + ".superseded")
        counts.lost = try Self.int(object["lost"], at: path + ".lost")
        if schema >= 2 {
            counts.dismissed = try Self.int(object["dismissed"], at: path + ".dismissed")
            guard let causes = object["lost_by_cause"] as? [String: Any] else {
                throw ReportDecodingError(description: "\"\(path).lost_by_cause\" is missing or not an object")
            }
            for (key, keyPath) in zip(LossCauses.keys, LossCauses.paths) {
                counts.lostByCause[keyPath: keyPath] = try Self.int(causes[key], at: "\(path).lost_by_cause.\(key)")
            }
        }
        return counts
    }

    /// The `latency_ms` object under `key`.
    func latency(_ key: String) throws(ReportDecodingError) -> Report.Latency {
        Report.Latency(
            count: try int(key, "count"), p50: try optionalInt(key, "p50"), p90: try optionalInt(key, "p90"),
            p99: try optionalInt(key, "p99"))
    }

    /// The `outliers` object (contract 3.2), read when the report has it: a
    /// report of an earlier arrival has none (absent, never empty).
    func outliers(_ value: Any) throws(ReportDecodingError) -> Outliers {
        guard let object = value as? [String: Any], let devices = object["devices"] as? [Any] else {
            throw ReportDecodingError(description: "\"outliers\" is not an object with a \"devices\" list")
        }
        var outliers = Outliers()
        if let rate = object["fleet_arrival_rate"], !(rate is NSNull) {
            guard let number = rate as? NSNumber, type(of: rate) != Bool.self else {
                throw ReportDecodingError(description: "\"outliers.fleet_arrival_rate\" is not a number")
            }
            outliers.fleetArrivalRate = Self.double(number)
        }
        outliers.devicesTested = try Self.int(object["devices_tested"], at: "outliers.devices_tested")
        for (index, entry) in devices.enumerated() {
            let path = "outliers.devices[\(index)]"
            guard let device = entry as? [String: Any], let id = device["device_id"] as? String,
                let updates = device["updates"] as? [String: Any], let p = device["p_value"] as? NSNumber,
                type(of: device["p_value"]!) != Bool.self
            else {
                throw ReportDecodingError(
                    description: "\"\(path)\" is not an object with device_id, updates and p_value")
            }
            outliers.devices.append(
                Outliers.Device(
                    deviceID: ExactString(id), updates: try self.updates(updates, at: path + ".updates"),
                    pValue: Self.double(p)))
        }
        return outliers
    }

    /// The double a JSON number was written as: from its decimal text, which
    /// Foundation's parser keeps (its `doubleValue` can be an ulp off).
    static func double(_ number: NSNumber) -> Double {
        Double(number.description) ?? number.doubleValue
    }

    static func int(_ value: Any?, at path: String) throws(ReportDecodingError) -> Int {
        // JSON true/false read back as Bool, never as a count.
        if let value, type(of: value) == Bool.self {
            throw ReportDecodingError(description: "\"\(path)\" is a boolean, not a count")
        }
        guard let number = value as? NSNumber else {
            throw ReportDecodingError(description: "\"\(path)\" is missing or not a number")
        }
        let double = number.doubleValue
        guard double >= 0, double.rounded() == double, double < 9e15 else {
            throw ReportDecodingError(description: "\"\(path)\" is \(number), not a whole count")
        }
        return number.intValue
    }
}

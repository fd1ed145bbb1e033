package import ArrivalModel

extension Report: JSONWritableObject {
    /// The report object of Documentation/ReportSchema.md, keys in the contract's order,
    /// keys inside `by_reason`, `malformed_by_cause` and `breakdowns` sorted
    /// by code point, rates as the shortest text that reads back as the same
    /// IEEE double. Byte-identical for identical stores.
    package func jsonText() -> String { JSONWriter.document(self) }

    /// Always `arrival.report/2` (contract 3.0): arrival writes no other.
    package var jsonFields: JSONFields {
        // Contract 3.1's breakdowns only when the report has them (one read back from an earlier arrival's JSON has not).
        let dimensions =
            (Report.breakdownDimensions + ["channel"]
            + Report.laterDimensions.dropFirst().filter {
                breakdowns[$0] != nil
            }).sorted(by: codePointOrder)
        // Contract 3.2's outliers only when the report has them (one read back from an earlier arrival's JSON has not).
        let head: JSONFields = [
            "schema": "arrival.report/2", "window": window, "requests": requests, "updates": updates,
            "starts": starts, "callbacks": callbacks, "latency_ms": latency,
        ]
        let tail: JSONFields = [
            "data_quality": dataQuality, "breakdowns": JSONFields(dimensions.map { ($0, breakdowns[$0] ?? [:]) }),
        ]
        // Apple's numbers only when they were imported for a day of the window (issue 54).
        return head + (outliers.map { ["outliers": $0] } ?? [:]) + tail + (apple.map { ["apple": $0] } ?? [:])
    }
}

extension Outliers: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["fleet_arrival_rate": fleetArrivalRate, "devices_tested": devicesTested, "devices": devices]
    }
}

extension Outliers.Device: JSONWritableObject {
    package var jsonFields: JSONFields { ["device_id": deviceID.text, "updates": updates, "p_value": pValue] }
}

extension ReportWindow: JSONWritableObject {
    package var jsonFields: JSONFields {
        ["from": RFC3339.format(milliseconds: from), "to": RFC3339.format(milliseconds: to)]
    }
}

extension Report.Requests: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "total": total, "accepted": accepted, "rejected": rejected, "acceptance_rate": acceptanceRate,
            "by_reason": byReason, "oversize_failures": oversizeFailures, "oversize_risk": oversizeRisk,
            "broadcasts": broadcasts, "to_dead_tokens": toDeadTokens,
        ]
    }
}

extension UpdateCounts: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "sent": sent, "accepted": accepted, "rendered": rendered, "dismissed": dismissed, "ended": ended,
            "expired": expired, "stale_timestamp": staleTimestamp, "superseded": superseded, "lost": lost,
            "lost_by_cause": lostByCause, "arrival_rate": arrivalRate, "effective_arrival_rate": effectiveArrivalRate,
        ]
    }
}

extension LossCauses: JSONWritableObject {
    package var jsonFields: JSONFields {
        JSONFields(LossCause.allCases.map { ($0.name, self[$0]) })
    }
}

extension Report.Starts: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "sent": sent, "accepted": accepted, "appeared": appeared, "appearance_rate": appearanceRate,
            "update_token_received": updateTokenReceived, "update_token_rate": updateTokenRate,
            "update_token_latency_ms": updateTokenLatency,
        ]
    }
}

extension Report.Callbacks: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "content_update_expected": contentUpdateExpected, "content_update_received": contentUpdateReceived,
            "callback_loss_rate": callbackLossRate, "token_expected": tokenExpected, "token_received": tokenReceived,
            "token_callback_loss_rate": tokenCallbackLossRate,
        ]
    }
}

extension Report.Latency: JSONWritableObject {
    package var jsonFields: JSONFields { ["count": count, "p50": p50, "p90": p90, "p99": p99] }
}

extension Report.DataQuality: JSONWritableObject {
    package var jsonFields: JSONFields {
        [
            "malformed_lines": malformedLines, "malformed_by_cause": malformedByCause,
            "duplicate_records": duplicateRecords, "files_skipped_as_duplicate": filesSkippedAsDuplicate,
            "apns_without_seq": apnsWithoutSeq, "unattributed": unattributed, "clock_skew_negative": clockSkewNegative,
            "broadcasts_without_subscribers": broadcastsWithoutSubscribers,
        ]
    }
}

/// Keys sorted by code point. (Here, beside the report that uses it, rather
/// than with the writer: a conformance constrained on ``ExactString`` needs
/// ArrivalModel imported at the conformance's access level.)
extension Dictionary: JSONWritable where Key == ExactString, Value: JSONWritable {
    package func write(to w: JSONWriter) {
        w.object {
            for (key, value) in sorted(by: { $0.key < $1.key }) { w.field(key.text) { value.write(to: w) } }
        }
    }
}

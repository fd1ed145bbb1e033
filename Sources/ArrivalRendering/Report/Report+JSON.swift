import ArrivalAnalysis
import ArrivalModel

extension Report {
    /// The report object of Documentation/ReportSchema.md, keys in the contract's order,
    /// keys inside `by_reason`, `malformed_by_cause` and `breakdowns` sorted
    /// by code point, rates as the shortest text that reads back as the same
    /// IEEE double. Byte-identical for identical stores.
    public func jsonText() -> String {
        let w = JSONWriter()
        w.object {
            w.field("schema") { w.string("arrival.report/1") }
            w.field("window") {
                if let window {
                    w.object {
                        w.field("from") { w.string(RFC3339.format(milliseconds: window.from)) }
                        w.field("to") { w.string(RFC3339.format(milliseconds: window.to)) }
                    }
                } else {
                    w.null()
                }
            }
            w.field("requests") {
                w.object {
                    w.field("total") { w.int(requests.total) }
                    w.field("accepted") { w.int(requests.accepted) }
                    w.field("rejected") { w.int(requests.rejected) }
                    w.field("acceptance_rate") { w.rate(requests.acceptanceRate) }
                    w.field("by_reason") { w.counts(requests.byReason) }
                    w.field("oversize_failures") { w.int(requests.oversizeFailures) }
                    w.field("oversize_risk") { w.int(requests.oversizeRisk) }
                }
            }
            w.field("updates") { w.updates(updates) }
            w.field("callbacks") {
                w.object {
                    w.field("content_update_expected") { w.int(callbacks.contentUpdateExpected) }
                    w.field("content_update_received") { w.int(callbacks.contentUpdateReceived) }
                    w.field("callback_loss_rate") { w.rate(callbacks.callbackLossRate) }
                    w.field("token_expected") { w.int(callbacks.tokenExpected) }
                    w.field("token_received") { w.int(callbacks.tokenReceived) }
                    w.field("token_callback_loss_rate") { w.rate(callbacks.tokenCallbackLossRate) }
                }
            }
            w.field("latency_ms") {
                w.object {
                    w.field("count") { w.int(latency.count) }
                    w.field("p50") { w.optionalInt(latency.p50) }
                    w.field("p90") { w.optionalInt(latency.p90) }
                    w.field("p99") { w.optionalInt(latency.p99) }
                }
            }
            w.field("data_quality") {
                w.object {
                    w.field("malformed_lines") { w.int(dataQuality.malformedLines) }
                    w.field("malformed_by_cause") { w.counts(dataQuality.malformedByCause) }
                    w.field("duplicate_records") { w.int(dataQuality.duplicateRecords) }
                    w.field("files_skipped_as_duplicate") { w.int(dataQuality.filesSkippedAsDuplicate) }
                    w.field("apns_without_seq") { w.int(dataQuality.apnsWithoutSeq) }
                    w.field("unattributed") { w.int(dataQuality.unattributed) }
                    w.field("clock_skew_negative") { w.int(dataQuality.clockSkewNegative) }
                }
            }
            w.field("breakdowns") {
                w.object {
                    for dimension in Report.breakdownDimensions.sorted(by: codePointOrder) {
                        w.field(dimension) {
                            w.object {
                                let rows = breakdowns[dimension] ?? [:]
                                for key in rows.keys.sorted() {
                                    if let counts = rows[key] { w.field(key.text) { w.updates(counts) } }
                                }
                            }
                        }
                    }
                }
            }
        }
        return w.text + "\n"
    }
}

/// A small JSON writer that keeps key order and indents by two spaces.
package final class JSONWriter {
    package private(set) var text = ""
    private var depth = 0
    private var first = true

    package init() {}

    package func object(_ body: () -> Void) {
        text += "{"
        depth += 1
        first = true
        body()
        depth -= 1
        if !first { newline() }
        text += "}"
        first = false
    }

    package func field(_ key: String, _ value: () -> Void) {
        if !first { text += "," }
        first = false
        newline()
        appendString(key)
        text += ": "
        value()
        first = false
    }

    package func array(_ body: () -> Void) {
        text += "["
        depth += 1
        first = true
        body()
        depth -= 1
        if !first { newline() }
        text += "]"
        first = false
    }

    /// One element of the enclosing array.
    package func element(_ value: () -> Void) {
        if !first { text += "," }
        first = false
        newline()
        value()
        first = false
    }

    package func bool(_ value: Bool) { text += value ? "true" : "false" }
    package func optionalString(_ value: String?) { if let value { appendString(value) } else { null() } }

    package func null() { text += "null" }
    package func int(_ value: Int) { text += String(value) }
    package func optionalInt(_ value: Int64?) { text += value.map { String($0) } ?? "null" }
    package func string(_ value: String) { appendString(value) }

    package func rate(_ value: Double?) {
        guard let value else {
            text += "null"
            return
        }
        // Swift prints the shortest digits that round-trip, e.g. 0.1, 1.0, 1e-05.
        text += "\(value)"
    }

    func counts(_ counts: [ExactString: Int]) {
        object {
            for key in counts.keys.sorted() {
                field(key.text) { int(counts[key] ?? 0) }
            }
        }
    }

    package func updates(_ u: UpdateCounts) {
        object {
            field("sent") { int(u.sent) }
            field("accepted") { int(u.accepted) }
            field("rendered") { int(u.rendered) }
            field("ended") { int(u.ended) }
            field("expired") { int(u.expired) }
            field("stale_timestamp") { int(u.staleTimestamp) }
            field("superseded") { int(u.superseded) }
            field("lost") { int(u.lost) }
            field("arrival_rate") { rate(u.arrivalRate) }
            field("effective_arrival_rate") { rate(u.effectiveArrivalRate) }
        }
    }

    private func newline() {
        text += "\n" + String(repeating: "  ", count: depth)
    }

    private func appendString(_ value: String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case let s where s.value < 0x20:
                let hex = String(s.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

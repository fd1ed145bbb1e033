import ArrivalAnalysis
import ArrivalModel
import ArrivalStore

/// A record-level diff of two batches that cover the same pushes (a re-run,
/// a re-upload, a sender change): `apns` records only in A, only in B, and
/// the same `apns_id` answered differently; updates only on one side and
/// updates whose outcome changed.
///
/// `apns` records are matched by `apns_id`. A sender that reuses an id for
/// a retry logs several records under it; those are paired in `sent_at`
/// order, and the unpaired rest counts as only-in-A or only-in-B. Updates are
/// matched by `(activity_id, seq)` and compared within each side's window.
package struct RecordDiff: Sendable {
    package struct ApnsRecord: Sendable, Equatable {
        package var apnsID: String
        package var sentAt: Int64
        package var status: Int64
        package var reason: String?
        package var activityID: String?
        package var seq: Int64?
    }

    package struct ApnsChange: Sendable, Equatable {
        package var a: ApnsRecord
        package var b: ApnsRecord
    }

    package struct UpdateChange: Sendable, Equatable {
        package var activityID: String
        package var seq: Int64
        /// The outcome on each side; `not_accepted` for an update APNs never
        /// accepted; nil when the side has no such update.
        package var a: String?
        package var b: String?
    }

    /// Things matched across the sides: how many are the same on both,
    /// matched but different, and on one side only.
    package struct Tally: Sendable, Equatable {
        package var same = 0
        package var changed = 0
        package var onlyInA = 0
        package var onlyInB = 0

        /// Everything that is not the same on both sides.
        package var differences: Int { changed + onlyInA + onlyInB }
    }

    package var limit: Int
    /// `apns` records by `apns_id`; changed: answered differently.
    package var apns = Tally()
    /// Updates by (activity_id, seq); changed: a different outcome.
    package var updates = Tally()
    /// "rendered → lost" and its count, for every pair of outcomes seen.
    package var transitions: [String: Int] = [:]
    /// The first ``limit`` rows of each kind, in `apns_id` / update order.
    package var apnsOnlyInARows: [ApnsRecord] = []
    package var apnsOnlyInBRows: [ApnsRecord] = []
    package var apnsChangedRows: [ApnsChange] = []
    package var updateRows: [UpdateChange] = []

    package var isEmpty: Bool {
        apns.differences == 0 && updates.differences == 0
    }

    /// Compares the records of two sides read with `detail: true`.
    package init(_ a: ComparisonSide, _ b: ComparisonSide, limit: Int = 20) throws(ComparisonError) {
        self.limit = limit
        guard let storeA = a.store else { throw .noDetail(a.path) }
        guard let storeB = b.store else { throw .noDetail(b.path) }
        do {
            try compareApns(storeA, a.report.window, storeB, b.report.window)
        } catch {
            throw .unreadable(a.path + " / " + b.path, reason: "\(error)")
        }
        var comparison = UpdateComparison(limit: limit)
        if let analysisA = a.analysis, let analysisB = b.analysis {
            comparison.add(analysisA, a.report.window, analysisB, b.report.window)
        } else {
            // A store too large to analyse at once: matched partition by partition.
            do {
                try PartitionedAnalyses.forEachPair(storeA, a.report.window, storeB, b.report.window) {
                    comparison.add($0, a.report.window, $1, b.report.window)
                }
            } catch {
                throw .unreadable(a.path + " / " + b.path, reason: "\(error)")
            }
        }
        updates = comparison.tally
        for (pair, count) in comparison.pairs { transitions["\(pair.a) → \(pair.b)"] = count }
        updateRows = comparison.first.rows.map {
            UpdateChange(activityID: $0.key.activity.text, seq: $0.key.seq, a: $0.a, b: $0.b)
        }
    }

    // MARK: - apns records

    private mutating func compareApns(
        _ storeA: any StoreReader, _ windowA: ReportWindow?, _ storeB: any StoreReader, _ windowB: ReportWindow?
    ) throws {
        let cursorA = try ApnsCursor(store: storeA, window: windowA)
        let cursorB = try ApnsCursor(store: storeB, window: windowB)
        var groupA = try cursorA.nextGroup()
        var groupB = try cursorB.nextGroup()
        while !groupA.isEmpty || !groupB.isEmpty {
            let idA = groupA.first?.apnsID
            let idB = groupB.first?.apnsID
            let order: Int
            switch (idA, idB) {
            case (let x?, let y?):
                order = x.utf8.elementsEqual(y.utf8) ? 0 : (x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : 1)
            case (_?, nil): order = -1
            default: order = 1
            }
            if order < 0 {
                for record in groupA { onlyInA(record) }
                groupA = try cursorA.nextGroup()
            } else if order > 0 {
                for record in groupB { onlyInB(record) }
                groupB = try cursorB.nextGroup()
            } else {
                for index in 0..<max(groupA.count, groupB.count) {
                    switch (index < groupA.count ? groupA[index] : nil, index < groupB.count ? groupB[index] : nil) {
                    case (let x?, let y?):
                        if x.status == y.status && x.reason == y.reason {
                            apns.same += 1
                        } else {
                            apns.changed += 1
                            if apnsChangedRows.count < limit { apnsChangedRows.append(ApnsChange(a: x, b: y)) }
                        }
                    case (let x?, nil): onlyInA(x)
                    case (nil, let y?): onlyInB(y)
                    case (nil, nil): break
                    }
                }
                groupA = try cursorA.nextGroup()
                groupB = try cursorB.nextGroup()
            }
        }
    }

    private mutating func onlyInA(_ record: ApnsRecord) {
        apns.onlyInA += 1
        if apnsOnlyInARows.count < limit { apnsOnlyInARows.append(record) }
    }

    private mutating func onlyInB(_ record: ApnsRecord) {
        apns.onlyInB += 1
        if apnsOnlyInBRows.count < limit { apnsOnlyInBRows.append(record) }
    }

    // MARK: - Updates

    private struct UpdateKey: Hashable {
        var activity: ExactString
        var seq: Int64
    }

    private static func outcomes(_ analysis: DeliveryAnalysis, _ window: ReportWindow?) -> [UpdateKey: String] {
        let from = window?.from ?? Int64.min
        let to = window?.to ?? Int64.max
        var outcomes: [UpdateKey: String] = [:]
        outcomes.reserveCapacity(analysis.updates.count)
        for update in analysis.updates where update.at >= from && update.at < to {
            let key = UpdateKey(activity: analysis.activityNames[Int(update.activity)], seq: update.seq)
            outcomes[key] = update.accepted ? (update.outcome?.name ?? "not_accepted") : "not_accepted"
        }
        return outcomes
    }

    /// Updates matched so far, over any number of pairs of analyses of
    /// disjoint sets of activities.
    private struct UpdateComparison {
        var tally = Tally()
        var first: FirstRows
        var pairs: [Pair: Int] = [:]

        init(limit: Int) { first = FirstRows(limit: limit) }

        mutating func add(
            _ analysisA: DeliveryAnalysis, _ windowA: ReportWindow?, _ analysisB: DeliveryAnalysis,
            _ windowB: ReportWindow?
        ) {
            var remaining = RecordDiff.outcomes(analysisA, windowA)
            let from = windowB?.from ?? Int64.min
            let to = windowB?.to ?? Int64.max
            for update in analysisB.updates where update.at >= from && update.at < to {
                let key = UpdateKey(activity: analysisB.activityNames[Int(update.activity)], seq: update.seq)
                let outcomeB = update.accepted ? (update.outcome?.name ?? "not_accepted") : "not_accepted"
                guard let outcomeA = remaining.removeValue(forKey: key) else {
                    tally.onlyInB += 1
                    first.offer(key, nil, outcomeB)
                    continue
                }
                if outcomeA == outcomeB {
                    tally.same += 1
                } else {
                    tally.changed += 1
                    pairs[Pair(a: outcomeA, b: outcomeB), default: 0] += 1
                    first.offer(key, outcomeA, outcomeB)
                }
            }
            for (key, outcomeA) in remaining {
                tally.onlyInA += 1
                first.offer(key, outcomeA, nil)
            }
        }
    }

    private struct Pair: Hashable {
        var a: String
        var b: String
    }

    /// The `limit` smallest rows in (activity_id, seq) order, whatever the
    /// order they are offered in, without sorting every row.
    private struct FirstRows {
        let limit: Int
        private(set) var rows: [(key: UpdateKey, a: String?, b: String?)] = []

        init(limit: Int) { self.limit = limit }

        static func precedes(_ x: UpdateKey, _ y: UpdateKey) -> Bool {
            x.activity == y.activity ? x.seq < y.seq : x.activity < y.activity
        }

        mutating func offer(_ key: UpdateKey, _ a: String?, _ b: String?) {
            guard limit > 0 else { return }
            if rows.count == limit, let last = rows.last, !Self.precedes(key, last.key) { return }
            var low = 0
            var high = rows.count
            while low < high {
                let middle = (low + high) / 2
                if Self.precedes(rows[middle].key, key) { low = middle + 1 } else { high = middle }
            }
            rows.insert((key, a, b), at: low)
            if rows.count > limit { rows.removeLast() }
        }
    }
}

/// `apns` records of a window in `apns_id` order (byte order), read in
/// groups that share an id.
private final class ApnsCursor {
    private let rows: any RequestCursor
    private var pending: RecordDiff.ApnsRecord?

    init(store: any StoreReader, window: ReportWindow?) throws {
        rows = try store.requestsByApnsID(window: window)
    }

    private func next() throws -> RecordDiff.ApnsRecord? {
        if let pending {
            self.pending = nil
            return pending
        }
        guard let row = try rows.next() else { return nil }
        return RecordDiff.ApnsRecord(
            apnsID: row.apnsID, sentAt: row.sentAt, status: row.status, reason: row.reason,
            activityID: row.activityID, seq: row.seq)
    }

    /// The next records sharing one `apns_id`; empty at the end.
    func nextGroup() throws -> [RecordDiff.ApnsRecord] {
        guard let first = try next() else { return [] }
        var group = [first]
        while let record = try next() {
            if record.apnsID.utf8.elementsEqual(first.apnsID.utf8) {
                group.append(record)
            } else {
                pending = record
                break
            }
        }
        return group
    }
}

package import ArrivalModel
package import ArrivalStore
import Foundation

/// Analyses of two stores side by side, partition by partition: an activity
/// falls in the same partition on both sides, so the updates of the two can
/// be matched one partition at a time (`diff --records`).
package enum PartitionedAnalyses {
    /// Calls `body` with the analyses of each partition of `a` and `b` (one
    /// pair when both are small enough to analyse at once).
    package static func forEachPair(
        _ a: any StoreReader, _ windowA: ReportWindow?, _ b: any StoreReader, _ windowB: ReportWindow?,
        partitioning: PartitionPolicy = .standard,
        _ body: (DeliveryAnalysis, DeliveryAnalysis) throws -> Void
    ) throws {
        try a.read { snapshotA in
            try b.read { snapshotB in
                let count = max(
                    partitioning.count(requests: try snapshotA.analysisRowEstimate()),
                    partitioning.count(requests: try snapshotB.analysisRowEstimate()))
                guard count > 1 else {
                    return try body(
                        try DeliveryAnalysis(snapshot: snapshotA, window: windowA),
                        try DeliveryAnalysis(snapshot: snapshotB, window: windowB))
                }
                let partitionsA = try AnalysisPartitions(
                    snapshot: snapshotA, window: windowA, count: count, tallyByDayAndHour: false,
                    samplingRequests: false)
                defer { partitionsA.close() }
                let partitionsB = try AnalysisPartitions(
                    snapshot: snapshotB, window: windowB, count: count, tallyByDayAndHour: false,
                    samplingRequests: false)
                defer { partitionsB.close() }
                for partition in 0..<count {
                    try body(try partitionsA.analysis(partition), try partitionsB.analysis(partition))
                }
            }
        }
    }
}

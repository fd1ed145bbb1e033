import Foundation

/// When a store is analysed in partitions, and how large they are.
package struct PartitionPolicy: Sendable {
    /// Requests per partition: two partitions are analysed at once, so a
    /// report's memory is bounded by the partition's size, whatever the
    /// store's (Benchmarks/report-scale/README.md measures it).
    package var rowsPerPartition: Int
    /// Stores of up to this many requests are analysed at once, which is
    /// faster and, this small, needs about as much memory as partitions.
    package var analysedWholeUpTo: Int

    /// Partitions of `rowsPerPartition` requests for any store larger than one.
    package init(rowsPerPartition: Int) {
        self.rowsPerPartition = max(1, rowsPerPartition)
        analysedWholeUpTo = self.rowsPerPartition
    }

    /// 150,000 requests a partition, stores up to 1,000,000 requests at
    /// once. `ARRIVAL_PARTITION_ROWS=N` sets both to N (tests and benchmarks
    /// compare partitioned reports with whole ones).
    package static let standard: PartitionPolicy = {
        if let text = ProcessInfo.processInfo.environment["ARRIVAL_PARTITION_ROWS"], let rows = Int(text), rows > 0 {
            return PartitionPolicy(rowsPerPartition: rows)
        }
        var policy = PartitionPolicy(rowsPerPartition: 150_000)
        policy.analysedWholeUpTo = 1_000_000
        return policy
    }()

    /// How many partitions a store of `requests` rows is analysed in (1: all
    /// at once, no files). Past ``AnalysisPartitions/maximumCount`` partitions grow instead.
    func count(requests: Int) -> Int {
        guard requests > analysedWholeUpTo else { return 1 }
        return min((requests - 1) / rowsPerPartition + 1, AnalysisPartitions.maximumCount)
    }
}

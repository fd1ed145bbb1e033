/// Sums over clusters (activities) of one rate's numerator `y` and
/// denominator `n`, enough for the variance of the ratio estimator
/// `r = Σy / Σn` with the cluster as the sampling unit.
///
/// Updates of one activity are not independent: one offline phone loses a
/// run of them together, one buggy sender build makes all its timestamps
/// stale. Treating each update as an independent coin flip would make small
/// fleets look far more certain than they are, so the variance is computed
/// between activities (a cluster-robust, "linearised" variance):
/// `V(r) = m / (m − 1) · Σ (yᵢ − r·nᵢ)² / (Σn)²`.
public struct ClusterSums: Sendable, Equatable {
    public private(set) var clusters = 0
    public private(set) var y = 0.0
    public private(set) var n = 0.0
    private var yy = 0.0, nn = 0.0, yn = 0.0

    public init() {}

    /// Adds one activity; activities with `n == 0` carry no information
    /// about the rate and are left out.
    public mutating func add(_ numerator: Int, of denominator: Int) {
        guard denominator > 0 else { return }
        let yi = Double(numerator)
        let ni = Double(denominator)
        clusters += 1
        y += yi
        n += ni
        yy += yi * yi
        nn += ni * ni
        yn += yi * ni
    }

    /// Adds the sums of other clusters (integer-valued, so exact in any order).
    package mutating func merge(_ other: ClusterSums) {
        clusters += other.clusters
        y += other.y
        n += other.n
        yy += other.yy
        nn += other.nn
        yn += other.yn
    }

    public var rate: Double? { n > 0 ? y / n : nil }

    /// The cluster-robust variance of the rate; nil with fewer than two clusters.
    public var variance: Double? {
        guard clusters >= 2, n > 0 else { return nil }
        let r = y / n
        let residual = max(0, yy - 2 * r * yn + r * r * nn)
        return Double(clusters) / Double(clusters - 1) * residual / (n * n)
    }
}

/// Per-activity sums of every rate metric, computed with a report from a
/// store (a report JSON does not carry them).
public struct ActivitySamples: Sendable, Equatable {
    public var byMetric: [String: ClusterSums] = [:]

    public init() {}

    public subscript(metric: Metric) -> ClusterSums? { byMetric[metric.id] }

    package mutating func add(_ metric: Metric, _ numerator: Int, of denominator: Int) {
        byMetric[metric.id, default: ClusterSums()].add(numerator, of: denominator)
    }

    /// Adds the sums of other clusters of `metric`.
    package mutating func merge(_ metric: Metric, _ sums: ClusterSums) {
        byMetric[metric.id, default: ClusterSums()].merge(sums)
    }

    /// Adds the samples of other clusters (another partition's activities).
    package mutating func merge(_ other: ActivitySamples) {
        for (id, sums) in other.byMetric { byMetric[id, default: ClusterSums()].merge(sums) }
    }
}

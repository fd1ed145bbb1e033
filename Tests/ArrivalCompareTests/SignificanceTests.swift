import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import Foundation
import Testing

@testable import ArrivalCompare

@Suite("Significance")
struct SignificanceTests {
    @Test("The normal quantile matches published values")
    func quantile() {
        #expect(abs(normalQuantile(0.975) - 1.959963984540054) < 1e-9)
        #expect(abs(normalQuantile(0.995) - 2.5758293035489) < 1e-9)
        #expect(abs(normalQuantile(0.5)) < 1e-12)
        #expect(abs(normalQuantile(0.001) + 3.090232306167813) < 1e-9)
    }

    @Test("A move of a whole update on 40 is noise; 0.3 points on 400,000 is significant")
    func sampleSizeMatters() throws {
        // 90.0% → 87.5%: one update fewer out of 40, eight times the 0.3-point move.
        let small = try #require(
            Significance.test(a: (36, 40), b: (35, 40), clustersA: nil, clustersB: nil, confidence: 0.95))
        #expect(!small.isSignificant)
        // 90.0% → 89.7%.
        let large = try #require(
            Significance.test(
                a: (360_000, 400_000), b: (358_800, 400_000), clustersA: nil, clustersB: nil, confidence: 0.95))
        #expect(large.isSignificant)
        #expect(large.method == .binomial)
        // Worked by hand: p = 0.9 and 0.897, variances p(1-p)/n.
        let se = (0.9 * 0.1 / 400_000 + 0.897 * 0.103 / 400_000).squareRoot()
        #expect(abs(large.z - (-0.003 / se)) < 1e-6)
    }

    @Test("Activities as clusters: correlated updates widen the interval")
    func clustersWiden() throws {
        // 20 activities of 10 updates each; each activity renders all or none.
        var allOrNothing = ClusterSums()
        for index in 0..<20 { allOrNothing.add(index < 18 ? 10 : 0, of: 10) }
        // Same totals (180 of 200) spread evenly: 9 of 10 everywhere.
        var even = ClusterSums()
        for _ in 0..<20 { even.add(9, of: 10) }
        #expect(allOrNothing.rate == 0.9 && even.rate == 0.9)
        // Hand-worked: Σ(yᵢ − 0.9·nᵢ)² = 18·1² + 2·9² = 180; V = 20/19 · 180 / 200².
        let expected = 20.0 / 19.0 * 180.0 / 40_000.0
        #expect(abs((allOrNothing.variance ?? 0) - expected) < 1e-15)
        #expect(even.variance == 0)
        // Against a baseline of 150 of 200 (10 activities of 20, evenly), the
        // all-or-nothing fleet is far less certain than a binomial model says.
        var baseline = ClusterSums()
        for _ in 0..<10 { baseline.add(15, of: 20) }
        let clustered = try #require(
            Significance.test(
                a: (150, 200), b: (180, 200), clustersA: baseline, clustersB: allOrNothing, confidence: 0.95))
        let binomial = try #require(
            Significance.test(a: (150, 200), b: (180, 200), clustersA: nil, clustersB: nil, confidence: 0.95))
        #expect(clustered.method == .activityClusters)
        #expect(clustered.margin > binomial.margin)
    }
}

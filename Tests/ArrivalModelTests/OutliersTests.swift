import ArrivalModel
import Foundation
import Testing

/// Contract 3.2's `outliers` (issue 53): the binomial tail, the test and its order.
@Suite("Devices far below the fleet")
struct OutliersTests {
    /// P(X ≤ k), X ~ Binomial(n, p), computed exactly (Python, `fractions`: the sum of
    /// C(n, i) pⁱ (1 − p)ⁿ⁻ⁱ over integers, p read as the exact value of the double), then rounded once.
    @Test(
        "The tail agrees with the exact sum within a relative 1e-9",
        arguments: [
            (19, 33, 0.9068348774096949, 5.43601801049907e-07),
            (0, 20, 0.9, 9.999999999999956e-21),
            (5, 20, 0.9, 9.481303719999969e-12),
            (20, 25, 0.9, 0.09799362119546465),
            (900, 1000, 0.93, 0.00026019868232607276),
            (2650, 3000, 0.91, 5.295970912480002e-07),
            (0, 40, 1e-12, 0.99999999996),
            (39, 40, 0.999999999999, 3.999911513041517e-11),
            (10, 40, 0.5, 0.0011107168866146822),
            (1, 2000, 0.001, 0.40587044671381534),
            (1990, 2000, 0.999, 4.583307274236952e-05),
            (3, 100, 0.9, 1.1828115099999746e-92),
        ] as [(Int, Int, Double, Double)])
    func exact(_ k: Int, _ n: Int, _ p: Double, _ expected: Double) {
        let tail = BinomialTail.atMost(k, of: n, probability: p)
        #expect(abs(tail - expected) <= 1e-9 * expected, "P(X ≤ \(k)), n \(n), p \(p): \(tail) against \(expected)")
    }

    @Test("The contract's edges: p0 of 0 and 1, k = n")
    func edges() {
        #expect(BinomialTail.atMost(0, of: 50, probability: 0) == 1)
        #expect(BinomialTail.atMost(50, of: 50, probability: 1) == 1)
        #expect(BinomialTail.atMost(49, of: 50, probability: 1) == 0)
        #expect(BinomialTail.atMost(20, of: 20, probability: 0.3) == 1)
    }

    @Test("n in the millions: finite, within [0, 1], and the two tails add up to 1")
    func large() {
        let n = 3_000_000
        for p in [0.5, 0.9, 1 - 1e-12, 1e-12, 0.999_999] {
            for k in [0, n / 1000, Int(Double(n) * p) - 2000, Int(Double(n) * p), n - 1] where k >= 0 && k < n {
                let lower = BinomialTail.atMost(k, of: n, probability: p)
                #expect(lower.isFinite && lower >= 0 && lower <= 1, "k \(k), p \(p): \(lower)")
                // P(X ≤ k) + P(Y ≤ n − k − 1) = 1 for Y = n − X ~ Binomial(n, 1 − p).
                let upper = BinomialTail.atMost(n - k - 1, of: n, probability: 1 - p)
                #expect(abs(lower + upper - 1) < 1e-9, "k \(k), p \(p): \(lower) + \(upper)")
            }
        }
        // Far below the mean the tail is below the smallest double: 0, never NaN.
        #expect(BinomialTail.atMost(10, of: n, probability: 0.9) == 0)
    }

    static func counts(rendered: Int, lost: Int, superseded: Int = 0) -> UpdateCounts {
        var counts = UpdateCounts()
        counts.sent = rendered + lost + superseded
        counts.accepted = counts.sent
        counts.rendered = rendered
        counts.lost = lost
        counts.lostByCause.notRendered = lost
        counts.superseded = superseded
        return counts
    }

    @Test("Tested from 20 deliverable updates; Bonferroni over those tested; the contract's order")
    func find() {
        var fleet = Self.counts(rendered: 9_000, lost: 1_000)
        var devices: [ExactString: UpdateCounts] = [:]
        // 100 devices like the fleet, one with 19 deliverable updates none rendered (never tested),
        // and four far below: two at 2/40 (the one with more updates first at an equal rate: 4/80).
        for i in 0..<100 { devices[ExactString("like-\(i)")] = Self.counts(rendered: 90, lost: 10) }
        devices["few"] = Self.counts(rendered: 0, lost: 19)
        devices["b"] = Self.counts(rendered: 2, lost: 38)
        devices["a"] = Self.counts(rendered: 2, lost: 38)
        devices["c"] = Self.counts(rendered: 4, lost: 76)
        devices["d"] = Self.counts(rendered: 10, lost: 20, superseded: 5)
        fleet.add(Self.counts(rendered: 18, lost: 247))
        let outliers = Outliers.find(fleet: fleet, devices: devices)
        #expect(outliers.fleetArrivalRate == fleet.arrivalRate)
        #expect(outliers.devicesTested == 104)
        #expect(outliers.devices.map(\.deviceID.text) == ["c", "a", "b", "d"])
        for device in outliers.devices { #expect(device.pValue <= 0.001 / 104) }
        // Without a deliverable update there is no rate and nothing is tested.
        let none = Outliers.find(fleet: UpdateCounts(), devices: devices)
        #expect(none == Outliers(fleetArrivalRate: nil, devicesTested: 0, devices: []))
    }
}

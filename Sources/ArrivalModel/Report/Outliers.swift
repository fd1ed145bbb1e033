import Foundation

/// Contract 3.2's `outliers`: the devices whose updates arrive far less
/// often than the fleet's, found by a one-sided binomial test of each
/// device's rendered updates against the window's arrival rate, Bonferroni
/// over the devices tested (Documentation/Metrics.md, "Devices far below the fleet").
public struct Outliers: Sendable, Equatable {
    /// The window's `updates.arrival_rate` (p0); nil without a deliverable update.
    public var fleetArrivalRate: Double?
    /// Devices with at least ``minimumDeliverable`` deliverable updates, when p0 is known (m).
    public var devicesTested = 0
    /// The devices far below the fleet, in the contract's order.
    public var devices: [Device] = []

    public init(fleetArrivalRate: Double? = nil, devicesTested: Int = 0, devices: [Device] = []) {
        self.fleetArrivalRate = fleetArrivalRate
        self.devicesTested = devicesTested
        self.devices = devices
    }

    /// One device far below the fleet: its `updates` block and the test's p-value.
    public struct Device: Sendable, Equatable {
        public var deviceID: ExactString
        public var updates: UpdateCounts
        public var pValue: Double

        public init(deviceID: ExactString, updates: UpdateCounts, pValue: Double) {
            self.deviceID = deviceID
            self.updates = updates
            self.pValue = pValue
        }
    }

    /// A device is tested from this many deliverable updates on.
    public static let minimumDeliverable = 20
    /// The family-wise chance of listing a device that is like the rest (Bonferroni: divided by m).
    public static let familyLevel = 0.001

    /// The outliers of a window whose updates came to `fleet`, from each
    /// device's `updates` block (a device's activities' updates of the window).
    package static func find(fleet: UpdateCounts, devices: [ExactString: UpdateCounts]) -> Outliers {
        let entries = Array(devices)
        return find(
            fleet: fleet, deviceCount: entries.count,
            pair: { (entries[$0].value.deliverable, entries[$0].value.rendered) }, id: { entries[$0].key },
            blocks: { $0.map { entries[$0].value } })
    }

    /// The outliers of a window whose updates came to `fleet`, of `deviceCount`
    /// devices numbered from 0: `pair(i)` is device i's deliverable and
    /// rendered updates (all the test needs); `id` and `blocks` (their
    /// `updates` blocks, in the order asked, in one call) are asked only of
    /// the devices listed.
    package static func find<Failure: Error>(
        fleet: UpdateCounts, deviceCount: Int, pair: (Int) -> (deliverable: Int, rendered: Int),
        id: (Int) -> ExactString, blocks: ([Int]) throws(Failure) -> [UpdateCounts]
    ) throws(Failure) -> Outliers {
        guard let p0 = fleet.arrivalRate else { return Outliers() }
        var tested = 0
        for index in 0..<deviceCount where pair(index).deliverable >= minimumDeliverable { tested += 1 }
        let threshold = familyLevel / Double(tested)
        var listed: [(index: Int, pValue: Double)] = []
        for index in 0..<deviceCount {
            let (n, k) = pair(index)
            guard n >= minimumDeliverable else { continue }
            let p = BinomialTail.atMost(k, of: n, probability: p0)
            if p <= threshold { listed.append((index, p)) }
        }
        let counts = try blocks(listed.map(\.index))
        var devices = zip(listed, counts).map { Device(deviceID: id($0.index), updates: $1, pValue: $0.pValue) }
        devices.sort(by: ordered)
        return Outliers(fleetArrivalRate: p0, devicesTested: tested, devices: devices)
    }

    /// The contract's order: k / n ascending (compared exactly), then n descending, then the device id.
    static func ordered(_ a: Device, _ b: Device) -> Bool {
        let (ka, na) = (a.updates.rendered, a.updates.deliverable)
        let (kb, nb) = (b.updates.rendered, b.updates.deliverable)
        let left = ka.multipliedFullWidth(by: nb)
        let right = kb.multipliedFullWidth(by: na)
        if left.high != right.high || left.low != right.low {
            return left.high < right.high || (left.high == right.high && left.low < right.low)
        }
        if na != nb { return na > nb }
        return a.deviceID < b.deviceID
    }
}

/// P(X ≤ k) for X ~ Binomial(n, p), stable for any n: each term by Loader's
/// saddle-point form (Catherine Loader, "Fast and Accurate Computation of
/// Binomial Probabilities", 2000), the one R's `pbinom` family rests on, so no
/// factorial or power is formed; the terms below k by their ratio. Never NaN
/// nor above 1; 0 when the true value is below the smallest double.
package enum BinomialTail {
    package static func atMost(_ k: Int, of n: Int, probability p: Double) -> Double {
        precondition(n >= 0 && k >= 0 && k <= n && p >= 0 && p <= 1)
        if p == 0 || k == n { return 1 }
        if p == 1 { return 0 }
        let q = 1 - p
        if Double(k) >= Double(n) * p {
            // At or above the mean the sum is near 1: one minus the upper tail, summed up from k + 1.
            var term = probability(k + 1, of: n, p: p, q: q)
            var upper = term
            let odds = p / q
            var i = k + 1
            while i < n && term > 0 {
                term *= Double(n - i) / Double(i + 1) * odds
                let next = upper + term
                if next == upper { break }
                upper = next
                i += 1
            }
            return max(0, min(1, 1 - upper))
        }
        // Below the mean each term is smaller than the one above it: from P(X = k) down, by the
        // ratio P(X = i − 1) = P(X = i) · i / (n − i + 1) · q / p, until a term adds nothing.
        var term = probability(k, of: n, p: p, q: q)
        var sum = term
        let odds = q / p
        var i = k
        while i > 0 && term > 0 {
            term *= Double(i) / Double(n - i + 1) * odds
            let next = sum + term
            if next == sum { break }
            sum = next
            i -= 1
        }
        return min(sum, 1)
    }

    /// P(X = x), by Loader's form: exp of −(the deviances of x and n − x from
    /// their expectations) with Stirling's corrections, over √(2π x (n − x) / n).
    static func probability(_ x: Int, of n: Int, p: Double, q: Double) -> Double {
        let (x, n) = (Double(x), Double(n))
        if x == 0 {
            return exp(p < 0.1 ? -deviance(n, n * q) - n * p : n * log(q))
        }
        if x == n {
            return exp(q < 0.1 ? -deviance(n, n * p) - n * q : n * log(p))
        }
        let lc =
            stirlingError(n) - stirlingError(x) - stirlingError(n - x) - deviance(x, n * p)
            - deviance(n - x, n * q)
        let lf = log(2 * Double.pi) + log(x) + log1p(-x / n)
        return exp(lc - 0.5 * lf)
    }

    /// log(n!) − log(√(2πn) (n/e)ⁿ): by the log-gamma function for small n,
    /// where it is exact enough, else by Stirling's series.
    static func stirlingError(_ n: Double) -> Double {
        if n <= 15 { return lgamma(n + 1) - (n + 0.5) * log(n) + n - 0.5 * log(2 * Double.pi) }
        let (s0, s1, s2, s3, s4) = (1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188)
        let nn = n * n
        if n > 500 { return (s0 - s1 / nn) / n }
        if n > 80 { return (s0 - (s1 - s2 / nn) / nn) / n }
        if n > 35 { return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n }
        return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n
    }

    /// x log(x / m) + m − x, by its series when x is near m (where the plain form cancels).
    static func deviance(_ x: Double, _ m: Double) -> Double {
        if abs(x - m) < 0.1 * (x + m) {
            var v = (x - m) / (x + m)
            var sum = (x - m) * v
            var term = 2 * x * v
            v *= v
            for j in 1..<1000 {
                term *= v
                let next = sum + term / Double(2 * j + 1)
                if next == sum { return next }
                sum = next
            }
            return sum
        }
        return x * log(x / m) + m - x
    }
}

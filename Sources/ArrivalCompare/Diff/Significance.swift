import ArrivalModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the change of a rate between two sides is more than noise.
package struct Significance: Sendable, Equatable {
    /// How the variance of each side was estimated.
    package enum Method: String, Sendable {
        /// Activities as the sampling unit (both sides came from records).
        case activityClusters = "activity-clusters"
        /// Each update or request as an independent trial (a side was a
        /// report JSON, which has no per-activity counts).
        case binomial
    }

    package var method: Method
    package var confidence: Double
    /// (B − A) / standard error of the difference.
    package var z: Double
    /// Two-sided p-value.
    package var pValue: Double
    /// Half-width of the confidence interval of B − A.
    package var margin: Double

    package var isSignificant: Bool { pValue < 1 - confidence }

    /// The two-proportion z-test of `b − a`, with cluster-robust variances
    /// when both sides have them, else binomial ones.
    static func test(
        a: (numerator: Int, denominator: Int), b: (numerator: Int, denominator: Int),
        clustersA: ClusterSums?, clustersB: ClusterSums?, confidence: Double
    ) -> Significance? {
        guard a.denominator > 0, b.denominator > 0 else { return nil }
        let ra = Double(a.numerator) / Double(a.denominator)
        let rb = Double(b.numerator) / Double(b.denominator)
        let method: Method
        var va: Double
        var vb: Double
        if let ca = clustersA?.variance, let cb = clustersB?.variance {
            method = .activityClusters
            va = ca
            vb = cb
        } else {
            method = .binomial
            va = ra * (1 - ra) / Double(a.denominator)
            vb = rb * (1 - rb) / Double(b.denominator)
        }
        // A side with no spread at all (every trial the same) still has
        // sampling error; the Wilson-style floor of one event keeps a
        // 0-of-40 against 1-of-40 from looking certain.
        va = max(va, 0.25 / (Double(a.denominator) * Double(a.denominator)))
        vb = max(vb, 0.25 / (Double(b.denominator) * Double(b.denominator)))
        let standardError = (va + vb).squareRoot()
        let z = (rb - ra) / standardError
        let pValue = erfc(abs(z) / 2.0.squareRoot())
        let margin = normalQuantile(0.5 + confidence / 2) * standardError
        return Significance(method: method, confidence: confidence, z: z, pValue: pValue, margin: margin)
    }
}

/// The standard normal quantile (inverse CDF), by Acklam's rational
/// approximation refined with one Halley step (relative error below 1e-12).
package func normalQuantile(_ p: Double) -> Double {
    guard p > 0 else { return -.infinity }
    guard p < 1 else { return .infinity }
    let a = [
        -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
        1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00,
    ]
    let b = [
        -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
        6.680131188771972e+01, -1.328068155288572e+01,
    ]
    let c = [
        -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
        -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00,
    ]
    let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
    let low = 0.02425
    var x: Double
    if p < low {
        let q = (-2 * log(p)).squareRoot()
        x =
            (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    } else if p <= 1 - low {
        let q = p - 0.5
        let r = q * q
        x =
            (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    } else {
        let q = (-2 * log(1 - p)).squareRoot()
        x =
            -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    }
    // One Halley step against the exact CDF.
    let e = 0.5 * erfc(-x / 2.0.squareRoot()) - p
    let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
    x -= u / (1 + x * u / 2)
    return x
}

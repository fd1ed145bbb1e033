/// Lengths of time in milliseconds, the unit of every time the records and
/// reports hold (`sent_at`, windows, latencies). Written once here instead
/// of as literals such as `86_400_000` where they are used.
///
/// Computed and `@inlinable` rather than stored: `utcDay(of:)` and the
/// analysis' loops inline them to the literal across modules, as they did
/// the literal itself, with no lazy global to initialize or check.
public enum Milliseconds {
    @inlinable public static var second: Int64 { 1000 }
    @inlinable public static var minute: Int64 { 60 * second }
    @inlinable public static var hour: Int64 { 60 * minute }
    /// A UTC day: RFC 3339 times and the contract have no leap seconds.
    @inlinable public static var day: Int64 { 24 * hour }
}

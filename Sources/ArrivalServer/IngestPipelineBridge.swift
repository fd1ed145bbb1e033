package import ArrivalIngest

extension LineReader.Limits {
    /// What one upload made with a device token may cost the worker once
    /// read (`arrival serve --max-inflated-bytes-device`, `--max-lines-device`):
    /// the token is public, and a phone's batch is kilobytes. Past either,
    /// the rest of the upload is not decoded and one malformed line,
    /// `too_large`, names the limit (Documentation/Collector.md).
    package static let device = LineReader.Limits(inflatedBytes: 64 << 20, lines: 200_000)
    /// …and one made with a sender token: senders' logs may be large.
    package static let sender = LineReader.Limits(inflatedBytes: 4 << 30, lines: 20_000_000)
}

extension StoreEngine {
    /// The pipeline options of one of the worker's runs: `stop` is asked
    /// before each file and batch (true: the run stops, rolls back the file
    /// it is in, commits what it finished and names the rest in
    /// ``IngestSummary/interrupted``), and `limits` bounds each upload of the
    /// run's role.
    static func runOptions(limits: LineReader.Limits, stop: @escaping @Sendable () -> Bool) -> IngestPipeline.Options {
        var options = IngestPipeline.Options()
        options.stop = stop
        options.limits = limits
        return options
    }
}

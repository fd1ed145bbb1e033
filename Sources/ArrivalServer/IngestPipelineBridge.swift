import ArrivalIngest

/// What one upload of a role may cost the worker once read: its bytes
/// inflated and its lines (`arrival serve --max-inflated-bytes-device` and
/// the others). Past either, the pipeline keeps the upload as malformed with
/// its cause (`too_large`) instead of reading on (Documentation/Collector.md).
package struct UploadCostLimits: Sendable, Equatable {
    package var maxInflatedBytes: Int
    package var maxLines: Int

    package init(maxInflatedBytes: Int, maxLines: Int) {
        self.maxInflatedBytes = maxInflatedBytes
        self.maxLines = maxLines
    }

    /// A device token is public: its uploads get a small allowance (a
    /// phone's batch is kilobytes).
    package static let device = UploadCostLimits(maxInflatedBytes: 64 << 20, maxLines: 200_000)
    /// Senders' logs may be large.
    package static let sender = UploadCostLimits(maxInflatedBytes: 4 << 30, maxLines: 20_000_000)
}

/// Where the collector meets two pieces of ``IngestPipeline`` (issue 39): a
/// way to stop a run between batches, and bounds on what one file may
/// inflate to. The worker builds its runs' options here and reads what a
/// stopped run left unfinished.
extension StoreEngine {
    /// The pipeline options of one of the worker's runs: `stop` is asked
    /// before each file and batch (true: the run stops, rolls back the file
    /// it is in, commits what it finished and names the rest in the
    /// summary), and `limits` bounds each upload of the run's role (past
    /// either, the rest of the upload is not decoded and one malformed line,
    /// `too_large`, names the limit).
    static func runOptions(limits: UploadCostLimits, stop: @escaping @Sendable () -> Bool)
        -> IngestPipeline.Options
    {
        var options = IngestPipeline.Options()
        options.stop = stop
        options.limits = LineReader.Limits(inflatedBytes: limits.maxInflatedBytes, lines: limits.maxLines)
        return options
    }

    /// The names of the uploads a stopped run did not finish (not stored: they stay queued).
    static func interrupted(_ summary: IngestSummary) -> [String] { summary.interrupted }
}

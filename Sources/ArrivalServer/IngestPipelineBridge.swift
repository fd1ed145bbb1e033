import ArrivalIngest

/// What one upload of a role may cost the worker once read: its bytes
/// inflated and its lines (`arrival serve --max-inflated-bytes-device` and
/// the others). Past either, the pipeline keeps the upload as malformed with
/// its cause instead of reading on (Documentation/Collector.md).
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

/// Where the collector meets two pieces of ``IngestPipeline`` that the
/// ingest side adds (issue 39): a way to stop a run between batches, and
/// bounds on what one file may inflate to. Everything else of the worker is
/// written against them; until they are in, a run cannot be stopped or
/// bounded this way, and these two functions are the only places to change
/// when they land.
extension StoreEngine {
    /// The pipeline options of one of the worker's runs: `stop` is asked
    /// between batches (true: the run stops, rolls back the file it is in,
    /// commits what it finished and names the rest in the summary), and
    /// `limits` bounds each upload of the run's role.
    static func runOptions(limits: UploadCostLimits, stop: @escaping @Sendable () -> Bool)
        -> IngestPipeline.Options
    {
        let options = IngestPipeline.Options()
        // When main has them:
        //     options.stop = stop
        //     options.limits = .init(maxInflatedBytes: limits.maxInflatedBytes, maxLines: limits.maxLines)
        return options
    }

    /// The names of the uploads a stopped run did not finish (not stored: they stay queued).
    static func interrupted(_ summary: IngestSummary) -> [String] {
        // When main has it: summary.interrupted
        []
    }
}

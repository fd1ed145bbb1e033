import ArrivalHandOff
import ArrivalModel
package import ArrivalStore
import Foundation

/// Ingest: files and directories of the three streams into a ``SQLiteStore``
/// (Documentation/InputRecords.md), each file all or nothing, de-duplicated
/// files and records, malformed lines counted by cause and never stopping
/// the run (unless ``Options/strict``). The one way in for every caller:
/// `arrival ingest`, `demo`, each side of `diff`, the collector's worker and
/// the tests.
///
/// Three stages, joined by typed hand-offs:
///
/// 1. **Admission** (``Admission``, `Admission/`) decides what each file is
///    to the run (stored, a copy met earlier, a grown version, new), asking
///    for the hashing that needs;
/// 2. **decode** (``FileDecoder``, `Decode/`) turns a file's bytes into
///    ``RowBatch``es;
/// 3. **write** (``BatchWriter``, `Write/`) stores each file all or nothing.
///
/// Admission and decode run on a reading thread (``ReadingStage``), the
/// writer on the calling thread, which owns the store; they are joined by a
/// bounded channel of ``FileMessage``s, so memory stays bounded by the batch
/// size whatever the input size. A walk of the paths runs on a thread of its
/// own (``FileListing``).
package struct IngestPipeline {
    package struct Options: Sendable {
        package var strict = false
        package var batchSize = 4096
        /// A batch also goes to the writer once its strings hold this many
        /// bytes, so lines with long fields cannot make a batch large (up to
        /// 4,096 lines of 1 MiB each): memory stays bounded by these two
        /// limits plus one line.
        package var batchBytes = 8 << 20
        package var reader = LineReader()
        /// Whole files are committed together until a batch holds this many records…
        package var recordsPerCommit = 200_000
        /// …or this many files.
        package var filesPerCommit = 2_000
        /// In a bulk load (``bulkLoadWhenNew``), whole files are committed
        /// together for this long instead, however many they are: a commit
        /// there syncs the store, and every page the next batch changes
        /// again is journaled first, so commits by count would cost a
        /// large load more than they protect. A run killed
        /// meanwhile loses at most this much work: the next run ingests the
        /// files it had not committed.
        package var bulkCommitInterval: Duration = .seconds(10)
        /// Into a store that holds no file yet and that no other connection
        /// has open, write with the store held alone when its writer can
        /// (``StoreWriter/beginBulkLoad()``; SQLite's ``SQLiteStore``: a rollback
        /// journal, so every page is written once instead of to the log and
        /// then again by the checkpoint). `arrival ingest` sets it; the
        /// collector, whose store is read while it ingests, does not.
        package var bulkLoadWhenNew = false
        /// Asked between batches of rows and between files: once it says
        /// true, the file being read is left unstored, what was finished
        /// is committed, and the run returns with the files it did not
        /// finish in ``IngestSummary/interrupted`` (the collector's worker on
        /// SIGTERM: a run ends within a batch's time, not an upload's).
        package var stop: (@Sendable () -> Bool)?
        /// How much of each file is decoded at most (``LineReader/Limits``).
        package var limits: LineReader.Limits {
            get { reader.limits }
            set { reader.limits = newValue }
        }
        package init(strict: Bool = false) {
            self.strict = strict
        }
    }

    package var options: Options
    /// The store written: a SQLite ``SQLiteStore`` or any other ``StoreWriter``.
    private let writer: any StoreWriter
    /// A read-only look at the registry for the reading thread (nil: none;
    /// every file is decoded and the writer decides).
    private let registry: @Sendable () -> (any StoredFiles)?

    package init(store: SQLiteStore, options: Options = Options()) {
        self.writer = store
        let path = store.path
        self.registry = { FileRegistryLookup(storePath: path) }
        self.options = options
    }

    /// Ingest into another engine's store: `registry` makes the reading
    /// thread's look at its file registry (on a connection of its own).
    package init(
        writer: some StoreWriter, registry: @escaping @Sendable () -> (any StoredFiles)?, options: Options = Options()
    ) {
        self.writer = writer
        self.registry = registry
        self.options = options
    }

    /// Ingests every file under `paths`.
    ///
    /// A reading thread reads, inflates and decodes each file and hashes the
    /// very bytes it decodes in the same pass; the calling thread owns the
    /// store and writes. The two are joined by a bounded channel, so memory
    /// stays bounded by the batch size whatever the input size.
    ///
    /// A file's records go into the batch transaction as a unit that can be
    /// rolled back alone (``SQLiteStore/beginFile(path:now:replaces:)``), and only once the
    /// file was read to its end does the writer decide, by the hash of what
    /// was read and inside its write transaction, whether the bytes are new:
    /// a file ingested before (here, or by another process meanwhile) is
    /// rolled back and counted as skipped, a file that changed while it was
    /// read is rolled back and named in ``IngestSummary/unreadable``, and
    /// only a file read whole and still is registered. Before decoding a
    /// file whose size equals a stored file's, the reader hashes it alone:
    /// a re-run over files already ingested reads each once and decodes none.
    ///
    /// A file or directory that cannot be read is named in
    /// ``IngestSummary/unreadable`` and the run goes on.
    ///
    /// The paths are walked on a thread of their own while the first files
    /// are read (listing a large tree of device files takes a while of its
    /// own); what the walk skipped or could not read comes first in the
    /// summary, as if it had been listed before. A throwaway store, which
    /// must stop at the first path it cannot read, lists everything first.
    package func ingest(
        paths: [String], progress: ((IngestProgress) -> Void)? = nil
    ) throws -> IngestSummary {
        guard !writer.isThrowaway else {
            let walker = InputWalker(paths: paths)
            var summary = IngestSummary()
            summary.skippedEntries = walker.skipped
            // A throwaway store's run is incomplete without every path: it ends at the first it cannot read.
            if let first = walker.unreadable.first {
                throw InputError.readFailed(path: first.path, reason: first.reason)
            }
            return try ingest(
                .list(walker.files.map { NamedFile(path: $0, name: $0) }), into: summary, progress: progress)
        }
        let listing = FileListing()
        let walk = Thread {
            var chunk: [String] = []
            let walker = InputWalker.walk(paths: paths) { path in
                chunk.append(path)
                guard chunk.count == FileListing.chunkSize else { return true }
                defer { chunk.removeAll(keepingCapacity: true) }
                return listing.send(chunk)
            }
            if !chunk.isEmpty { _ = listing.send(chunk) }
            listing.finish(walker)
        }
        // The walk recurses once per directory level: as deep as a path can go (PATH_MAX) fits.
        walk.stackSize = 8 << 20
        walk.start()
        defer { listing.cancel() }
        var summary = try ingest(.listing(listing), into: IngestSummary(), progress: progress)
        guard let walker = listing.result() else { return summary }
        summary.skippedEntries = walker.skipped
        summary.unreadable.insert(contentsOf: walker.unreadable, at: 0)
        return summary
    }

    /// Ingests files read from one path and registered under another name:
    /// the name is what the store's file table shows and what "the same
    /// bytes under another name" compares.
    package func ingest(_ files: [NamedFile], progress: ((IngestProgress) -> Void)? = nil) throws -> IngestSummary {
        try ingest(.list(files), into: IngestSummary(), progress: progress)
    }

    private func ingest(
        _ source: FileSource, into start: IngestSummary, progress: ((IngestProgress) -> Void)?
    ) throws -> IngestSummary {
        let channel = BatchChannel<FileMessage>(capacity: 32, weight: FileMessage.weight)
        // Written batches go back to the reading thread to be refilled: their
        // buffers are allocated once per ingest, never per record.
        let recycle = BatchChannel<RowBatch>(capacity: 8)
        let options = self.options
        let registry = self.registry
        let throwaway = writer.isThrowaway
        // A store loaded alone holds no file admission could skip, and a
        // connection of the reader's own could not read it meanwhile.
        let bulk = options.bulkLoadWhenNew && writer.beginBulkLoad()
        defer { if bulk { writer.endBulkLoad() } }
        let reading = Thread {
            do {
                let stored = throwaway || bulk ? nil : registry()
                var stage = ReadingStage(
                    admission: Admission(
                        stored: stored, hashEveryFile: throwaway, chunkSize: options.reader.chunkSize),
                    decoder: FileDecoder(
                        reader: options.reader, batchSize: options.batchSize, batchBytes: options.batchBytes,
                        recycle: recycle),
                    channel: channel, stop: options.stop)
                stage.run(source)
            }
            // Only now, with admission's registry connection closed, may the writer end.
            channel.close()
        }
        reading.stackSize = 1 << 20
        reading.start()
        defer { channel.cancel() }
        return try Self.write(
            into: writer, options: options, bulk: bulk, summary: start, channel: channel, recycle: recycle,
            source: source, progress: progress)
    }

    /// The writer stage on `store`, whichever engine's it is.
    private static func write<Writer: StoreWriter>(
        into store: Writer, options: Options, bulk: Bool, summary: IngestSummary,
        channel: BatchChannel<FileMessage>, recycle: BatchChannel<RowBatch>, source: FileSource,
        progress: ((IngestProgress) -> Void)?
    ) throws -> IngestSummary {
        var writer = BatchWriter(store: store, options: options, bulk: bulk, summary: summary)
        try writer.write(from: channel, recycle: recycle, source: source, progress: progress)
        return writer.summary
    }
}

import ArrivalHandOff

/// The second stage of ingest: one file's bytes (plain or gzip) into
/// batches of rows, and nothing else. Lines come from ``LineReader``, each
/// line is decoded by ``RecordDecoder`` into the batch, a line that is no
/// record is kept in the batch by number and cause, and a batch goes out
/// once it holds ``batchSize`` lines or ``batchBytes`` bytes of strings, so
/// memory is bounded by these two limits plus one line whatever the file's
/// size.
///
/// What the bytes are to the run (``Admission``) and where the rows go
/// (the writer) are not its business: the caller sees every byte read
/// (`raw`, for hashing), answers once whether to go on after the first
/// chunk, and takes each batch (`deliver`).
struct FileDecoder {
    /// Reads the file's bytes into lines.
    var reader: LineReader
    /// A batch goes out once it holds this many lines…
    var batchSize: Int
    /// …or this many bytes of strings.
    var batchBytes: Int
    /// Batches the writer emptied, to be refilled: their buffers are
    /// allocated once per ingest, never per record.
    let recycle: BatchChannel<RowBatch>

    /// How a file's decoding ended.
    enum Outcome {
        /// Read to its end: what the reader found, and how many `apns` and
        /// `exchange` lines were refused for a device token.
        case read(ReadSummary, refusedLines: Int)
        /// `firstChunk` said not to go on: nothing was delivered.
        case declined
        /// `deliver` or `restart` said to stop (the writer is gone).
        case stopped
    }

    /// Decodes the file at `path` (only the bytes of `range` when given, an
    /// upload in one of the collector's spool segments).
    ///
    /// - Parameters:
    ///   - senderRecordsAllowed: false for an upload made with a device
    ///     token: its `apns` and `exchange` lines are malformed,
    ///     `kind_not_allowed`.
    ///   - raw: every byte read, before it is decoded.
    ///   - firstChunk: asked once, after the first chunk was read and before
    ///     a line is decoded, with whether that chunk is the whole file;
    ///     false declines the file.
    ///   - deliver: each batch; false stops.
    ///   - restart: a damaged gzip stream that ISA-L read further than zlib
    ///     would is read again from its start with zlib
    ///     (``LineReader/ReadAgainWithZlib``), so that the same bytes always
    ///     give the same rows: what was delivered of the file is void.
    ///     Called before the second read (where the caller resets what it
    ///     made of `raw`); false stops.
    func decode(
        path: String, range: Range<Int>?, senderRecordsAllowed: Bool,
        raw: (UnsafeRawBufferPointer) -> Void,
        firstChunk: (_ wholeFile: Bool) -> Bool,
        deliver: (RowBatch) -> Bool,
        restart: () -> Bool
    ) throws(InputError) -> Outcome {
        var reader = self.reader
        var asked = false
        while true {
            do {
                var refusedLines = 0
                let summary = try decodeOnce(
                    path: path, range: range, senderRecordsAllowed: senderRecordsAllowed, reader: reader,
                    refusedLines: &refusedLines, raw: raw,
                    firstChunk: { wholeFile in
                        // Asked once: a second read of the same bytes gets the same answer.
                        guard !asked else { return }
                        asked = true
                        if !firstChunk(wholeFile) { throw Declined() }
                    },
                    deliver: deliver)
                return .read(summary, refusedLines: refusedLines)
            } catch is LineReader.ReadAgainWithZlib where reader.fastInflate {
                reader.fastInflate = false
                guard restart() else { return .stopped }
            } catch is Declined {
                return .declined
            } catch is Stopped {
                return .stopped
            } catch let error as InputError {
                throw error
            } catch {
                throw .readFailed(path: path, reason: "\(error)")
            }
        }
    }

    private struct Declined: Error {}
    private struct Stopped: Error {}

    /// One read of the file, with `reader` as it is set.
    private func decodeOnce(
        path: String, range: Range<Int>?, senderRecordsAllowed: Bool, reader: LineReader, refusedLines: inout Int,
        raw: (UnsafeRawBufferPointer) -> Void,
        firstChunk: (_ wholeFile: Bool) throws -> Void,
        deliver: (RowBatch) -> Bool
    ) throws -> ReadSummary {
        var filling = BatchFiller(
            batch: recycle.poll() ?? RowBatch(capacity: batchSize), senderRecordsAllowed: senderRecordsAllowed,
            maxLineBytes: reader.maxLineBytes, batchSize: batchSize, batchBytes: batchBytes)
        filling.batch.removeAll()
        defer { refusedLines = filling.refusedLines }
        let summary = try reader.read(path: path, range: range, raw: raw, afterFirstChunk: firstChunk) { line in
            guard filling.add(line) else { return }
            filling.batch.computeKeys()
            guard deliver(filling.batch) else { throw Stopped() }
            filling.batch = recycle.poll() ?? RowBatch(capacity: batchSize)
            filling.batch.removeAll()
        }
        if !filling.batch.isEmpty {
            filling.batch.computeKeys()
            guard deliver(filling.batch) else { throw Stopped() }
        }
        return summary
    }
}

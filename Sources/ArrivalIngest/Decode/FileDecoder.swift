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
/// (the writer) are not its business: its ``DecodeSink`` sees every byte
/// read (for hashing), answers once whether to go on after the first chunk,
/// and takes each batch.
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
        /// The sink's `firstChunk` said not to go on: nothing was delivered.
        case declined
        /// The sink's `deliver` or `restart` said to stop.
        case stopped
    }

    /// Decodes the file at `path` (only the bytes of `range` when given, an
    /// upload in one of the collector's spool segments) into `sink`: what
    /// the caller makes of the bytes, the first chunk and each batch.
    ///
    /// - Parameter senderRecordsAllowed: false for an upload made with a
    ///   device token: its `apns` and `exchange` lines are malformed,
    ///   `kind_not_allowed`.
    func decode<Sink: DecodeSink>(
        path: String, range: Range<Int>?, senderRecordsAllowed: Bool, into sink: inout Sink
    ) throws(InputError) -> Outcome {
        var reader = self.reader
        // Asked once: a second read of the same bytes (with zlib) gets the same answer.
        var goOn: Bool?
        while true {
            var refusedLines = 0
            let ending = try decodeOnce(
                path: path, range: range, senderRecordsAllowed: senderRecordsAllowed, reader: reader,
                refusedLines: &refusedLines, sink: &sink, goOn: &goOn)
            switch ending {
            case .read(let summary):
                return .read(summary, refusedLines: refusedLines)
            case .stopped:
                return goOn == false ? .declined : .stopped
            case .readAgainWithZlib:
                // Only ISA-L's reading differs from zlib's: a second read is with zlib, and ends otherwise.
                reader.fastInflate = false
                guard sink.restart() else { return .stopped }
            }
        }
    }

    /// One read of the file, with `reader` as it is set.
    private func decodeOnce<Sink: DecodeSink>(
        path: String, range: Range<Int>?, senderRecordsAllowed: Bool, reader: LineReader, refusedLines: inout Int,
        sink: inout Sink, goOn: inout Bool?
    ) throws(InputError) -> LineReader.Ending {
        var filling = BatchFiller(
            batch: recycle.poll() ?? RowBatch(capacity: batchSize), senderRecordsAllowed: senderRecordsAllowed,
            maxLineBytes: reader.maxLineBytes, batchSize: batchSize, batchBytes: batchBytes)
        filling.batch.removeAll()
        defer { refusedLines = filling.refusedLines }
        let ending = try reader.scan(
            path: path, range: range, raw: { sink.raw($0) },
            afterFirstChunk: { wholeFile in
                if goOn == nil { goOn = sink.firstChunk(wholeFile: wholeFile) }
                return goOn == true
            },
            body: { line in
                guard filling.add(line) else { return true }
                filling.batch.computeKeys()
                guard sink.deliver(filling.batch) else { return false }
                filling.batch = recycle.poll() ?? RowBatch(capacity: batchSize)
                filling.batch.removeAll()
                return true
            })
        guard case .read = ending, !filling.batch.isEmpty else { return ending }
        filling.batch.computeKeys()
        return sink.deliver(filling.batch) ? ending : .stopped
    }
}

/// What ``FileDecoder/decode(path:range:senderRecordsAllowed:into:)`` hands
/// its caller, in order: every byte read, the first chunk (once), each
/// batch, and a restart when the file is read again.
protocol DecodeSink {
    /// Every byte read, before it is decoded.
    mutating func raw(_ bytes: UnsafeRawBufferPointer)
    /// Asked once, after the first chunk was read and before a line is
    /// decoded, with whether that chunk is the whole file; false declines
    /// the file (``FileDecoder/Outcome/declined``).
    mutating func firstChunk(wholeFile: Bool) -> Bool
    /// Each batch; false stops (``FileDecoder/Outcome/stopped``).
    mutating func deliver(_ batch: RowBatch) -> Bool
    /// A damaged gzip stream that ISA-L read further than zlib would is read
    /// again from its start with zlib, so that the same bytes always give
    /// the same rows: what was delivered of the file is void. Called before
    /// the second read (the sink resets what it made of `raw`); false stops.
    mutating func restart() -> Bool
}

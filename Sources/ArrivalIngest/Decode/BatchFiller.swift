package import ArrivalHandOff
import ArrivalModel

/// One line at a time into a row batch: the line decoded by
/// ``RecordDecoder``, a line too long or malformed kept by number and
/// cause, an `apns` or `exchange` line refused for a device token. What
/// ``FileDecoder`` does per line, and what the decode benchmark measures.
///
/// The batch and the decoder are changed only through ``add(_:)``: the
/// per-line closure that calls it mutates them in place, where reading a
/// captured batch through a getter would copy it (a retain and a release of
/// each of its buffers per line: 9 % of an ingest's samples once).
package struct BatchFiller {
    /// The batch being filled; the caller takes it when ``add(_:)`` says it
    /// is full, and puts an empty one in its place.
    package var batch: RowBatch
    private var decoder = RecordDecoder()
    private let senderRecordsAllowed: Bool
    private let maxLineBytes: Int
    private let batchSize: Int
    private let batchBytes: Int
    /// The `apns` and `exchange` lines refused so far for a device token.
    package private(set) var refusedLines = 0

    /// - Parameters:
    ///   - senderRecordsAllowed: false for an upload made with a device token.
    ///   - maxLineBytes: the reader's limit, named in a too-long line's problem.
    ///   - batchSize, batchBytes: a batch is full at this many lines or bytes of strings.
    package init(batch: RowBatch, senderRecordsAllowed: Bool, maxLineBytes: Int, batchSize: Int, batchBytes: Int) {
        self.batch = batch
        self.senderRecordsAllowed = senderRecordsAllowed
        self.maxLineBytes = maxLineBytes
        self.batchSize = batchSize
        self.batchBytes = batchBytes
    }

    /// Decodes one line into the batch; true when the batch is full.
    package mutating func add(_ line: LineSlice) -> Bool {
        guard let bytes = line.bytes else {
            batch.appendMalformed(line: line.number, cause: .lineTooLong, problem: "longer than \(maxLineBytes) bytes")
            return batch.count >= batchSize
        }
        let mark = batch.mark
        switch decoder.decode(bytes, line: line.number, into: &batch) {
        case .record:
            if !senderRecordsAllowed, batch.lastRowKind == .apns {
                refusedLines += 1
                batch.removeLastRow(since: mark)
                batch.appendMalformed(
                    line: line.number, cause: .kindNotAllowed,
                    problem: "kind: a device token may upload render and callback records only; "
                        + "send apns and exchange lines with a sender token")
            }
        case .blank: break
        case .malformed(let cause):
            batch.appendMalformed(line: line.number, cause: cause, problem: decoder.lastProblem)
        }
        return batch.count >= batchSize || batch.byteCount >= batchBytes
    }
}

import ArrivalHandOff
import ArrivalStore

/// The reading thread of an ingest: for each file in order, ``Admission``
/// decides what it is, with the hashing it asks for, and ``FileDecoder``
/// decodes what is to be stored; everything goes to the writer as
/// ``FileMessage``s.
struct ReadingStage {
    var admission: Admission
    let decoder: FileDecoder
    let channel: BatchChannel<FileMessage>
    /// Asked before each file and each batch (``IngestPipeline/Options/stop``).
    let stop: (@Sendable () -> Bool)?

    /// Runs until the files end, the writer stops listening or the run is
    /// asked to stop; then the file being read and every file not begun go
    /// to the writer as `.interrupted`. The caller closes the channel once
    /// the stage is gone: the registry connection admission holds must be
    /// closed before the writer can close the store, or a store in WAL mode
    /// may be left with its log not checkpointed.
    mutating func run(_ source: FileSource) {
        // Stopped early (the writer cancelled): the walk stops too.
        defer { source.cancel() }
        var files = source.makeIterator()
        var stopping = false
        while let file = files.next(listed: { admission.lookAhead($0) }) {
            stopping = stopping || stop?() == true
            if stopping {
                guard channel.send(.interrupted(name: file.name)) else { return }
                continue
            }
            switch read(file) {
            case .done: continue
            case .writerGone: return
            case .interrupted: stopping = true
            }
        }
    }

    private enum Outcome {
        case done, writerGone, interrupted
    }

    /// One file.
    private mutating func read(_ file: NamedFile) -> Outcome {
        let (outcome, read) = readOrStop(file)
        // Remembered once the file's sink is gone: a copy of admission alive while it changes would
        // copy its tables, which grow with the run, once a file.
        if let read { admission.remember(sha256: read.sha256, byteCount: read.byteCount, refusedLines: read.refused) }
        guard outcome == .interrupted else { return outcome }
        return channel.send(.interrupted(name: file.name)) ? .interrupted : .writerGone
    }

    /// The bytes of a file read to its end, for admission to remember.
    private struct Remembered {
        var sha256: String
        var byteCount: Int
        var refused: Bool
    }

    /// One file; `.interrupted` when asked to stop before its end (nothing
    /// of it sent since says so: the caller does). With a file read to its
    /// end, what admission is to remember of it.
    private func readOrStop(_ file: NamedFile) -> (Outcome, Remembered?) {
        let size = file.range?.count ?? ContentHash.fileSize(file.path)
        let decision: Decision
        switch decide(file, size: size) {
        case .send(let message): return (sent(channel.send(message)), nil)
        case .decode(let decided): decision = decided
        }
        var sink = FileSink(
            name: file.name, channel: channel, stop: stop, admission: admission, decision: decision,
            earlier: earlierVersions(of: file, size: size), vouched: file.sha256 != nil,
            senderRecordsAllowed: file.senderRecordsAllowed)
        let outcome: FileDecoder.Outcome
        do throws(InputError) {
            outcome = try decoder.decode(
                path: file.path, range: file.range, senderRecordsAllowed: file.senderRecordsAllowed, into: &sink)
        } catch {
            return (sent(sink.announce() && channel.send(.end(.failure(error)))), nil)
        }
        switch outcome {
        case .stopped:
            return (sink.interrupted ? .interrupted : .writerGone, nil)
        case .declined:
            // Nothing of it was sent: it is skipped as a file whose bytes are known (the first
            // chunk, all the hasher saw, is the whole file).
            return (sent(channel.send(.known(name: file.name, sha256: sink.hasher.finalize()))), nil)
        case .read(var summary, let refusedLines):
            let sha256 = file.sha256 ?? sink.hasher.finalize()
            if summary.changedWhileRead == nil { summary.changedWhileRead = sink.change(sha256: sha256) }
            let delivered = sink.announce() && channel.send(.end(.success(ReadFile(summary: summary, sha256: sha256))))
            return (
                sent(delivered), Remembered(sha256: sha256, byteCount: summary.bytesOnDisk, refused: refusedLines > 0)
            )
        }
    }

    private func sent(_ delivered: Bool) -> Outcome { delivered ? .done : .writerGone }

    /// What admission decided before a byte was decoded: a message that says
    /// all there is of the file (known, or unreadable while hashed), or to
    /// decode it.
    private enum FirstDecision {
        case send(FileMessage)
        case decode(Decision)
    }

    /// What the decoding of a file starts from.
    struct Decision {
        /// The hash the bytes must have (hashed before, or vouched for by the caller).
        var expected: String?
        /// A copy of these bytes stored with lines refused for a device token, which this file replaces.
        var upgrading: String?
        /// Admission decides from the first chunk, when it is the whole file.
        var decideAfterFirstChunk = false
    }

    private func decide(_ file: NamedFile, size: Int?) -> FirstDecision {
        var sha256: String
        let verdict: Admission.Verdict
        switch admission.firstStep(for: file, size: size) {
        case .decided(let decided, let hash):
            (verdict, sha256) = (decided, hash)
        case .hashFirst:
            do throws(InputError) {
                (sha256, _) = try ContentHash.sha256(of: file.path, range: file.range)
            } catch {
                return .send(.unreadable(name: file.name, error))
            }
            verdict = admission.verdict(sha256: sha256, senderRecordsAllowed: file.senderRecordsAllowed)
        case .decode(let decideAfterFirstChunk):
            return .decode(Decision(decideAfterFirstChunk: decideAfterFirstChunk))
        }
        switch verdict {
        case .stored, .copyInRun: return .send(.known(name: file.name, sha256: sha256))
        case .new(let copy): return .decode(Decision(expected: sha256, upgrading: copy))
        }
    }

    /// The stored versions this file grew from: those whose bytes are the start of its bytes.
    private func earlierVersions(of file: NamedFile, size: Int?) -> [StoredVersion] {
        let candidates = admission.candidateVersions(named: file.name, size: size)
        guard let last = candidates.last,
            let prefixes = try? ContentHash.hash(
                of: file.path, range: file.range, upTo: last.byteCount, checkpoints: candidates.map(\.byteCount)
            ).prefixes
        else { return [] }
        return Admission.grown(from: candidates, prefixes: prefixes)
    }
}

/// One file's decoding as the reading stage sees it (``DecodeSink``): the
/// bytes hashed, admission asked after the first chunk, the rows sent on,
/// `.file` announced before the first of them.
private struct FileSink: DecodeSink {
    let name: String
    let channel: BatchChannel<FileMessage>
    let stop: (@Sendable () -> Bool)?
    let admission: Admission
    var decision: ReadingStage.Decision
    /// The stored versions the file begins with.
    let earlier: [StoredVersion]
    /// Bytes whose hash the caller vouches for are hashed only as far as a stored version goes.
    let hashedUpTo: Int
    let senderRecordsAllowed: Bool
    var hasher: PrefixHasher
    /// Whether `.file` went to the writer (with the first rows, or the end).
    private(set) var announced = false
    /// Whether the run was asked to stop while the file was read.
    private(set) var interrupted = false

    init(
        name: String, channel: BatchChannel<FileMessage>, stop: (@Sendable () -> Bool)?, admission: Admission,
        decision: ReadingStage.Decision, earlier: [StoredVersion], vouched: Bool, senderRecordsAllowed: Bool
    ) {
        (self.name, self.channel, self.stop, self.admission) = (name, channel, stop, admission)
        (self.decision, self.earlier, self.senderRecordsAllowed) = (decision, earlier, senderRecordsAllowed)
        hashedUpTo = vouched ? (earlier.last?.byteCount ?? 0) : Int.max
        hasher = PrefixHasher(checkpoints: earlier.map(\.byteCount))
    }

    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        let wanted = hashedUpTo - hasher.byteCount
        if wanted >= bytes.count {
            hasher.update(bytes)
        } else if wanted > 0 {
            hasher.update(UnsafeRawBufferPointer(rebasing: bytes[..<wanted]))
        }
    }

    mutating func firstChunk(wholeFile: Bool) -> Bool {
        guard decision.decideAfterFirstChunk, wholeFile else { return true }
        switch admission.verdictAfterFirstChunk(sha256: hasher.finalize(), senderRecordsAllowed: senderRecordsAllowed) {
        case .stored, .copyInRun:
            return false
        case .new(let copy):
            if copy != nil { decision.upgrading = copy }
            return true
        }
    }

    mutating func deliver(_ batch: RowBatch) -> Bool {
        if stop?() == true {
            interrupted = true
            return false
        }
        return announce() && channel.send(.rows(batch))
    }

    mutating func restart() -> Bool {
        hasher = PrefixHasher(checkpoints: earlier.map(\.byteCount))
        return !announced || channel.send(.restart)
    }

    /// Sends `.file` once; false when the writer is gone.
    mutating func announce() -> Bool {
        guard !announced else { return true }
        announced = true
        return channel.send(.file(name: name, replacing: earlier.map(\.id), upgrading: decision.upgrading))
    }

    /// Why the bytes read are not the ones admission decided on, if they are not.
    func change(sha256: String) -> String? {
        if let expected = decision.expected, expected != sha256 { return "its bytes changed between two reads" }
        if earlier.contains(where: { hasher.prefixes[$0.byteCount] != $0.sha256 }) {
            return "its first bytes changed between two reads"
        }
        return nil
    }
}

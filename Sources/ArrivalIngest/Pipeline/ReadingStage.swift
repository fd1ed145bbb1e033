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
        while let file = files.next() {
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
        let outcome = readOrStop(file)
        guard outcome == .interrupted else { return outcome }
        return channel.send(.interrupted(name: file.name)) ? .interrupted : .writerGone
    }

    /// One file; `.interrupted` when asked to stop before its end (nothing
    /// of it sent since says so: the caller does).
    private mutating func readOrStop(_ file: NamedFile) -> Outcome {
        func sent(_ delivered: Bool) -> Outcome { delivered ? .done : .writerGone }
        let name = file.name
        let size = file.range?.count ?? ContentHash.fileSize(file.path)
        // A verdict from the hash of the whole file, when admission asks for it before decoding.
        var decided: (verdict: Admission.Verdict, sha256: String)?
        var decideAfterFirstChunk = false
        switch admission.firstStep(for: file, size: size) {
        case .decided(let verdict, let sha256):
            decided = (verdict, sha256)
        case .hashFirst:
            do throws(InputError) {
                let (sha256, _) = try ContentHash.sha256(of: file.path, range: file.range)
                decided = (admission.verdict(sha256: sha256, senderRecordsAllowed: file.senderRecordsAllowed), sha256)
            } catch {
                return sent(channel.send(.unreadable(name: name, error)))
            }
        case .decode(let decide):
            decideAfterFirstChunk = decide
        }
        if let decided, decided.verdict.isKnown {
            return sent(channel.send(.known(name: name, sha256: decided.sha256)))
        }
        // The hash the bytes must have (hashed before, or vouched for by the caller).
        let expected = decided?.sha256
        var upgrading: String?
        if case .new(let copy) = decided?.verdict { upgrading = copy }

        // A file that grew since a version of it was stored: that version is
        // replaced when its bytes are the start of this file's.
        var earlier: [StoredVersion] = []
        let candidates = admission.candidateVersions(named: name, size: size)
        if let last = candidates.last,
            let prefixes = try? ContentHash.hash(
                of: file.path, range: file.range, upTo: last.byteCount, checkpoints: candidates.map(\.byteCount)
            ).prefixes
        {
            earlier = Admission.grown(from: candidates, prefixes: prefixes)
        }

        // `.file` goes to the writer with the file's first rows or its end, so that a copy found
        // from its first chunk is sent as `.known` instead.
        var announced = false
        func announce() -> Bool {
            guard !announced else { return true }
            announced = true
            return channel.send(.file(name: name, replacing: earlier.map(\.id), upgrading: upgrading))
        }
        var hasher = PrefixHasher(checkpoints: earlier.map(\.byteCount))
        // Bytes whose hash the caller vouches for are hashed only as far as a stored version goes.
        let hashed = file.sha256 == nil ? Int.max : (earlier.last?.byteCount ?? 0)
        let outcome: FileDecoder.Outcome
        var interrupted = false
        let stop = self.stop
        do throws(InputError) {
            outcome = try decoder.decode(
                path: file.path, range: file.range, senderRecordsAllowed: file.senderRecordsAllowed,
                raw: { bytes in
                    let wanted = hashed - hasher.byteCount
                    if wanted >= bytes.count {
                        hasher.update(bytes)
                    } else if wanted > 0 {
                        hasher.update(UnsafeRawBufferPointer(rebasing: bytes[..<wanted]))
                    }
                },
                firstChunk: { [admission] wholeFile in
                    guard decideAfterFirstChunk, wholeFile else { return true }
                    let sha256 = hasher.finalize()
                    switch admission.verdictAfterFirstChunk(
                        sha256: sha256, senderRecordsAllowed: file.senderRecordsAllowed)
                    {
                    case .stored, .copyInRun:
                        return false
                    case .new(let copy):
                        if copy != nil { upgrading = copy }
                        return true
                    }
                },
                deliver: { batch in
                    if stop?() == true {
                        interrupted = true
                        return false
                    }
                    return announce() && channel.send(.rows(batch))
                },
                restart: {
                    hasher = PrefixHasher(checkpoints: earlier.map(\.byteCount))
                    return !announced || channel.send(.restart)
                })
        } catch {
            return sent(announce() && channel.send(.end(.failure(error))))
        }
        switch outcome {
        case .stopped:
            return interrupted ? .interrupted : .writerGone
        case .declined:
            // Nothing of it was sent: it is skipped as a file whose bytes are known (the first
            // chunk, all the hasher saw, is the whole file).
            return sent(channel.send(.known(name: name, sha256: hasher.finalize())))
        case .read(var summary, let refusedLines):
            let sha256 = file.sha256 ?? hasher.finalize()
            if let expected, expected != sha256, summary.changedWhileRead == nil {
                summary.changedWhileRead = "its bytes changed between two reads"
            }
            if earlier.contains(where: { hasher.prefixes[$0.byteCount] != $0.sha256 }), summary.changedWhileRead == nil
            {
                summary.changedWhileRead = "its first bytes changed between two reads"
            }
            admission.remember(sha256: sha256, byteCount: summary.bytesOnDisk, refusedLines: refusedLines > 0)
            return sent(announce() && channel.send(.end(.success(ReadFile(summary: summary, sha256: sha256)))))
        }
    }
}

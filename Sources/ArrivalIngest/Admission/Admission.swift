package import ArrivalStore

/// The first stage of ingest: what a file is to this run, decided before
/// and while it is read. A file's bytes are either
///
/// - **stored** already (here or under another name): skipped, never decoded;
/// - a **copy met earlier in this run**: skipped, never decoded;
/// - a **grown version** of a file stored at the same name (the stored
///   version's bytes are the start of this file's): decoded, and the stored
///   version is replaced inside the file's transaction;
/// - **new**: decoded and stored (possibly in place of a copy stored with
///   lines refused for the device token that uploaded it).
///
/// `Admission` is a pure policy: it reads no file and writes nothing. It
/// owns the questions to the store's registry (``StoredFiles``, a read-only
/// look) and what this run met (the hashes and sizes of the files read),
/// and it tells the reading stage which hashing a file needs
/// (``FirstStep``); the reading stage hashes and reports back. Hashing a
/// file alone costs a pass over its bytes, so it is asked for only when the
/// bytes may be known: the file's size matches a stored file's, or one read
/// earlier in the run that its first chunk cannot decide.
///
/// Its verdicts on the reading thread save decoding. A file it calls new is
/// confirmed by the writer inside the write transaction
/// (``confirm(sha256:name:in:)``): another process may have stored the same
/// bytes meanwhile, and only the transaction can say so without a race.
package struct Admission {
    /// What a file's bytes are to this run.
    package enum Verdict: Equatable, Sendable {
        /// The store holds these bytes: skip the file without decoding it.
        case stored
        /// A file read earlier in this run had these bytes: skip it.
        case copyInRun
        /// New bytes: decode and store them. `upgrading`: the hash of a copy
        /// stored, or read earlier in this run, with lines refused for the
        /// device token that uploaded it (``NamedFile/senderRecordsAllowed``);
        /// this file, allowed those lines, takes that copy's place.
        case new(upgrading: String?)

        /// Whether the file is skipped without decoding.
        package var isKnown: Bool {
            switch self {
            case .stored, .copyInRun: true
            case .new: false
            }
        }
    }

    /// What to do with a file before a byte of it is read.
    package enum FirstStep: Equatable, Sendable {
        /// The caller vouched for the file's hash (the collector checked it):
        /// the verdict is in before the file is opened.
        case decided(Verdict, sha256: String)
        /// Hash the file alone first, then ask ``verdict(sha256:senderRecordsAllowed:)``.
        case hashFirst
        /// Decode the file, hashing it in the same pass. With
        /// `decideAfterFirstChunk`, a file read earlier in this run has its
        /// size and the first chunk holds it whole: ask
        /// ``verdictAfterFirstChunk(sha256:senderRecordsAllowed:)`` with that
        /// chunk's hash before a line is decoded.
        case decode(decideAfterFirstChunk: Bool)
    }

    private let stored: (any StoredFiles)?
    private let hashEveryFile: Bool
    private let chunkSize: Int
    /// Hashes of files read in this run.
    private var seen: Set<String> = []
    /// Hashes of files read in this run with lines refused for the token
    /// that sent them: a copy from a token allowed those lines is new.
    private var refused: Set<String> = []
    /// Sizes of files read in this run.
    private var sizes: Set<Int> = []
    /// Whether the registry was told of files of this run (``lookAhead(_:)``).
    private var lookedAhead = false

    /// - Parameters:
    ///   - stored: the store's registry, or nil when there is none to ask (a
    ///     store loaded alone, or a new one).
    ///   - hashEveryFile: hash every file before decoding it (a throwaway
    ///     store, which keeps no journal, must never roll a file back and go
    ///     on, so copies within the run are found before decoding).
    ///   - chunkSize: the reader's chunk size (``LineReader/chunkSize``): a
    ///     file smaller than it is decided from its first chunk.
    package init(stored: (any StoredFiles)?, hashEveryFile: Bool, chunkSize: Int) {
        self.stored = stored
        self.hashEveryFile = hashEveryFile
        self.chunkSize = chunkSize
    }

    /// The first step for `file`, whose size is `size` (nil when it cannot be
    /// told: the file is then decoded and fails there, with its reason).
    package func firstStep(for file: NamedFile, size: Int?) -> FirstStep {
        if let sha256 = file.sha256 {
            return .decided(verdict(sha256: sha256, senderRecordsAllowed: file.senderRecordsAllowed), sha256: sha256)
        }
        if hashEveryFile { return .hashFirst }
        guard let size else { return .decode(decideAfterFirstChunk: false) }
        if stored?.contains(byteCount: size) == true { return .hashFirst }
        guard sizes.contains(size) else { return .decode(decideAfterFirstChunk: false) }
        // In a tree of small device files many share their size with an earlier one and
        // nearly none are copies: one read both decides and decodes.
        return size < chunkSize ? .decode(decideAfterFirstChunk: true) : .hashFirst
    }

    /// The verdict on bytes whose hash is known before decoding.
    package func verdict(sha256: String, senderRecordsAllowed: Bool) -> Verdict {
        if let inRun = verdictInRun(sha256: sha256, senderRecordsAllowed: senderRecordsAllowed) { return inRun }
        guard let stored, stored.contains(sha256: sha256) else { return .new(upgrading: nil) }
        if senderRecordsAllowed, stored.hasRefusedLines(sha256: sha256) { return .new(upgrading: sha256) }
        return .stored
    }

    /// The verdict on a file whose first chunk holds it whole, from that
    /// chunk's hash (``FirstStep/decode(decideAfterFirstChunk:)``): only a
    /// copy met in this run is possible, since no stored file has its size.
    package func verdictAfterFirstChunk(sha256: String, senderRecordsAllowed: Bool) -> Verdict {
        verdictInRun(sha256: sha256, senderRecordsAllowed: senderRecordsAllowed) ?? .new(upgrading: nil)
    }

    private func verdictInRun(sha256: String, senderRecordsAllowed: Bool) -> Verdict? {
        if seen.contains(sha256) { return .copyInRun }
        if refused.contains(sha256) { return senderRecordsAllowed ? .new(upgrading: sha256) : .copyInRun }
        return nil
    }

    /// The stored versions at `name` that `file` may have grown from
    /// (smaller than it, not empty, smallest first). The reading stage
    /// hashes the file's first bytes up to each of their sizes and passes
    /// the hashes to ``grown(from:prefixes:)``.
    package func candidateVersions(named name: String, size: Int?) -> [StoredVersion] {
        guard let stored, let size else { return [] }
        return stored.earlierVersions(atPath: name, smallerThan: size)
    }

    /// Tells the store's registry of the files about to be read, with their
    /// sizes as ``firstStep(for:size:)`` will be given them, so that it can
    /// answer their questions together (``StoredFiles/lookAhead(_:)``).
    package mutating func lookAhead(_ files: ArraySlice<NamedFile>) {
        guard let stored, stored.looksAhead, !files.isEmpty else { return }
        stored.lookAhead(
            files.map {
                UpcomingFile(
                    name: $0.name, byteCount: $0.range?.count ?? ContentHash.fileSize($0.path), sha256: $0.sha256)
            }, fresh: !lookedAhead)
        lookedAhead = true
    }

    /// The candidates whose bytes are the start of the file: `prefixes`
    /// maps a length to the hash of the file's first bytes of that length.
    package static func grown(from candidates: [StoredVersion], prefixes: [Int: String]) -> [StoredVersion] {
        candidates.filter { prefixes[$0.byteCount] == $0.sha256 }
    }

    /// Remembers a file read to its end in this run, by the hash and size
    /// of the bytes decoded, and whether lines of it were refused for the
    /// token that sent it.
    package mutating func remember(sha256: String, byteCount: Int, refusedLines: Bool) {
        if refusedLines {
            refused.insert(sha256)
        } else {
            seen.insert(sha256)
        }
        sizes.insert(byteCount)
    }

    /// The writer's half of admission, inside its write transaction: the
    /// stored copy, if any, of bytes with lines refused that a file
    /// ``Verdict/new(upgrading:)`` replaces (it may have been read earlier
    /// in this run, before it was stored).
    package static func copyToReplace(upgrading sha256: String?, in store: some StoreWriter) throws -> Int64? {
        guard let sha256 else { return nil }
        return try store.restrictedCopy(ofContent: sha256)
    }

    /// The writer's half of admission, inside its write transaction, once a
    /// file was read whole: whether its bytes are new, stored from this
    /// very name, or stored from another. The reading stage's verdict only
    /// saved decoding; this one decides, where no other writer can register
    /// the same bytes meanwhile.
    package static func confirm(sha256: String, name: String, in store: some StoreWriter) throws -> ContentStatus {
        try store.status(ofContent: sha256, at: name)
    }
}

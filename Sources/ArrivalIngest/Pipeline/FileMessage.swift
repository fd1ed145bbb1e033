import ArrivalHandOff

/// What the reading stage hands the writer, per file, in order: `.known`
/// (admission found its bytes stored or read earlier in this run: not
/// decoded), `.unreadable`, or `.file` followed by any number of `.rows`
/// (and `.restart`) and one `.end` or `.interrupted`. Once the run is asked
/// to stop, every file not finished is sent as `.interrupted`.
enum FileMessage: Sendable {
    /// `name`: what the store registers the file by. `sha256`: its bytes' hash.
    case known(name: String, sha256: String)
    case unreadable(name: String, InputError)
    /// A file to store. `replacing`: the stored versions it begins with (it
    /// grew since they were ingested). `upgrading`: the hash of a copy of
    /// these very bytes stored with lines refused for a device token
    /// (``Admission/Verdict/new(upgrading:)``): this file takes its place.
    case file(name: String, replacing: [Int64], upgrading: String?)
    case rows(RowBatch)
    /// What was sent of the file so far is void: it is read again from its
    /// start (``FileDecoder``'s `restart`).
    case restart
    case end(Result<ReadFile, InputError>)
    /// The run was asked to stop: the file (begun or not) is left unstored.
    case interrupted(name: String)

    /// The file a message begins or names whole (nil for `.rows`, `.restart` and `.end`).
    var fileName: String? {
        switch self {
        case .known(let name, _), .unreadable(let name, _), .file(let name, _, _), .interrupted(let name): name
        case .rows, .restart, .end: nil
        }
    }

    /// How much a message weighs in the channel: 1, and a batch of rows 1
    /// more per 256 KiB of its strings. A device file is three light
    /// messages (`.file`, `.rows`, `.end`), so many small files can queue
    /// and neither thread waits on the other every few files, while a
    /// sender's large batches weigh several each, so that few of them are
    /// held in memory at once.
    static func weight(_ message: FileMessage) -> Int {
        guard case .rows(let batch) = message else { return 1 }
        return 1 + batch.byteCount >> 18
    }
}

/// A file read to its end: what the reader found, and the SHA-256 of the bytes it decoded.
struct ReadFile: Sendable {
    var summary: ReadSummary
    var sha256: String
}

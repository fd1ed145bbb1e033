/// The collector's questions of a store's file registry before it queues an
/// upload, on a connection of their own: whether the bytes are stored, and
/// whether the stored copy had lines refused for the device token that sent
/// it. Read errors are thrown, never guessed. ``UploadRegistry`` is SQLite's;
/// `ArrivalPostgres` has PostgreSQL's.
package protocol UploadLookup: AnyObject {
    /// The file the bytes with this SHA-256 (lower-case hex) were first stored as, if any.
    func ingestedFile(sha256: String) throws -> IngestedFile?
    /// Whether the stored copy of these bytes had lines refused for the
    /// device token that uploaded it: a sender's upload of them is no duplicate.
    func refusedLines(sha256: String) throws -> Bool
}

extension UploadRegistry: UploadLookup {
    package func refusedLines(sha256: String) throws -> Bool {
        try hasRefusedLines(sha256: sha256)
    }
}

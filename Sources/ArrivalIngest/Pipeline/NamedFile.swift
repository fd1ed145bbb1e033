/// A file to read, and the name the store registers it by (its path,
/// or for an upload to the collector the name the client gave it).
package struct NamedFile: Sendable {
    package var path: String
    package var name: String
    /// False for an upload made with a device token (the collector):
    /// its `apns` and `exchange` lines are malformed, `kind_not_allowed`,
    /// because a token that ships inside an app may speak only for the
    /// app's renders and callbacks.
    package var senderRecordsAllowed: Bool
    /// The bytes of `path` that make up the file, when it is a part of
    /// `path` (an upload in one of the collector's spool segments);
    /// nil for the whole file.
    package var range: Range<Int>?
    /// The SHA-256 (lower-case hex) of the file's bytes, when the caller
    /// already checked it (the collector hashes an upload as it arrives
    /// and again when it reopens its spool): the bytes are then not
    /// hashed again, and whether they are stored is asked before they
    /// are read.
    package var sha256: String?

    package init(
        path: String, name: String, senderRecordsAllowed: Bool = true, range: Range<Int>? = nil,
        sha256: String? = nil
    ) {
        self.path = path
        self.name = name
        self.senderRecordsAllowed = senderRecordsAllowed
        self.range = range
        self.sha256 = sha256
    }
}

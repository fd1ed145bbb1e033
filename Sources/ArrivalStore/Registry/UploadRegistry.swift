/// The collector's read-only look at the file registry: whether the bytes
/// with a content hash were ingested, and with what counts. One connection
/// of its own, not thread-safe (the collector guards it with a lock).
package final class UploadRegistry {
    private let connection: Connection
    private let byHash: Statement
    private let refused: Statement

    /// Opens the store at `path` for reading (it must exist: the collector creates it first).
    package init(storePath path: String) throws(DatabaseError) {
        connection = try Connection(path: path, readOnly: true, create: false)
        byHash = try connection.prepare(
            """
            SELECT id, path, content_sha256, byte_count, gzip, line_count, record_count, duplicate_count,
                   malformed_count, ingested_at
            FROM files WHERE content_sha256 = ? ORDER BY id LIMIT 1
            """)
        refused = try connection.prepare(SQLiteStore.restrictedCopySQL)
    }

    /// The file the bytes with this SHA-256 (lower-case hex) were first ingested as, if any.
    package func ingestedFile(sha256: String) throws(DatabaseError) -> IngestedFile? {
        byHash.bind(1, sha256)
        defer { byHash.reset() }
        guard try byHash.step() else { return nil }
        return IngestedFile(
            id: byHash.int(0), path: byHash.string(1) ?? "", sha256: byHash.string(2) ?? "",
            byteCount: byHash.int(3), gzip: byHash.int(4) != 0, lines: Int(byHash.int(5)),
            records: Int(byHash.int(6)), duplicates: Int(byHash.int(7)), malformed: Int(byHash.int(8)),
            ingestedAt: byHash.int(9))
    }

    /// Whether the stored copy of these bytes had lines refused for the
    /// device token that uploaded it: a sender's upload of them is no duplicate.
    package func hasRefusedLines(sha256: String) throws(DatabaseError) -> Bool {
        refused.bind(1, sha256)
        defer { refused.reset() }
        return try refused.step()
    }
}

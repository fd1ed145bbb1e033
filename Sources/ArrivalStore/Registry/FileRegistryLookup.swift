/// A read-only look at a store's file registry on a connection of its own,
/// for a thread other than the writer's: the ingest's reading thread asks it
/// whether the store already has a file's bytes before decoding them.
package final class FileRegistryLookup {
    private let connection: Connection
    private let statement: Statement
    private let sizeQuery: Statement
    private let pathQuery: Statement
    private let refusedQuery: Statement

    /// A registered file: a version of the bytes at its path.
    package struct Version: Sendable {
        package var id: Int64
        package var byteCount: Int
        package var sha256: String

        package init(id: Int64, byteCount: Int, sha256: String) {
            self.id = id
            self.byteCount = byteCount
            self.sha256 = sha256
        }
    }

    /// Nil for an in-memory store or one that cannot be opened yet (a new
    /// store). Each question is one indexed query on a read-only connection
    /// (migration 0006), whatever the registry holds; what a query cannot
    /// answer counts as not registered, and the writer, which decides inside
    /// its transaction, has the last word.
    package init?(storePath: String) {
        guard storePath != ":memory:", !storePath.isEmpty,
            let connection = try? Connection(path: storePath, readOnly: true),
            let statement = try? connection.prepare("SELECT 1 FROM files WHERE content_sha256 = ?"),
            let sizeQuery = try? connection.prepare("SELECT 1 FROM files WHERE byte_count = ? LIMIT 1"),
            let pathQuery = try? connection.prepare(
                """
                SELECT id, byte_count, content_sha256 FROM files
                WHERE path = ? AND byte_count > 0 AND byte_count < ? ORDER BY byte_count, id
                """),
            let refusedQuery = try? connection.prepare(SQLiteStore.restrictedCopySQL)
        else { return nil }
        self.connection = connection
        self.statement = statement
        self.sizeQuery = sizeQuery
        self.pathQuery = pathQuery
        self.refusedQuery = refusedQuery
    }

    /// The files registered at `path` that are smaller than `byteCount`
    /// (and not empty), smallest first: the versions a file that grew may
    /// begin with.
    package func earlierVersions(atPath path: String, smallerThan byteCount: Int) -> [Version] {
        pathQuery.bind(1, path)
        pathQuery.bind(2, Int64(byteCount))
        defer { pathQuery.reset() }
        var versions: [Version] = []
        try? pathQuery.forEachRow { row in
            versions.append(Version(id: row.int(0), byteCount: Int(row.int(1)), sha256: row.string(2) ?? ""))
        }
        return versions
    }

    /// Whether a file of this size is registered: only such a file can
    /// hold bytes the store has.
    package func contains(byteCount: Int) -> Bool {
        sizeQuery.bind(1, Int64(byteCount))
        defer { sizeQuery.reset() }
        return (try? sizeQuery.step()) ?? false
    }

    /// Whether a file with this content hash was ingested (false when the store cannot say).
    package func contains(sha256: String) -> Bool {
        statement.bind(1, sha256)
        defer { statement.reset() }
        return (try? statement.step()) ?? false
    }

    /// Whether the stored copy of these bytes was uploaded with a device
    /// token and had lines refused for it (`SQLiteStore.restrictedCopy(ofContent:)`).
    package func hasRefusedLines(sha256: String) -> Bool {
        refusedQuery.bind(1, sha256)
        defer { refusedQuery.reset() }
        return (try? refusedQuery.step()) ?? false
    }
}

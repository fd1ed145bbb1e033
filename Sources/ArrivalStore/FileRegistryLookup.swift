/// A read-only look at a store's file registry on a connection of its own,
/// for a thread other than the writer's: the ingest's reading thread asks it
/// whether the store already has a file's bytes before decoding them.
package final class FileRegistryLookup {
    private let connection: Connection
    private let statement: Statement
    /// The sizes of the files registered when the lookup was made.
    private let byteCounts: Set<Int>

    /// Nil for an in-memory store or one that cannot be opened yet (a new store).
    package init?(storePath: String) {
        guard storePath != ":memory:", !storePath.isEmpty,
            let connection = try? Connection(path: storePath, readOnly: true),
            let statement = try? connection.prepare("SELECT 1 FROM files WHERE content_sha256 = ?")
        else { return nil }
        var sizes: Set<Int> = []
        if let query = try? connection.prepare("SELECT DISTINCT byte_count FROM files") {
            try? query.forEachRow { sizes.insert(Int($0.int(0))) }
        }
        self.connection = connection
        self.statement = statement
        self.byteCounts = sizes
    }

    /// Whether a file of this size was registered when the lookup was made:
    /// only such a file can hold bytes the store has.
    package func contains(byteCount: Int) -> Bool {
        byteCounts.contains(byteCount)
    }

    /// Whether a file with this content hash was ingested (false when the store cannot say).
    package func contains(sha256: String) -> Bool {
        statement.bind(1, sha256)
        defer { statement.reset() }
        return (try? statement.step()) ?? false
    }
}

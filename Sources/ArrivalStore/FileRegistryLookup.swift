/// A read-only look at a store's file registry on a connection of its own,
/// for a thread other than the writer's: the ingest's reading thread asks it
/// whether the store already has a file's bytes before decoding them.
package final class FileRegistryLookup {
    private let connection: Connection
    private let statement: Statement
    /// The sizes of the files registered when the lookup was made.
    private let byteCounts: Set<Int>
    /// The registered files by path, when the lookup was made.
    private let byPath: [String: [Version]]

    /// A registered file: a version of the bytes at its path.
    package struct Version: Sendable {
        package var id: Int64
        package var byteCount: Int
        package var sha256: String
    }

    /// Nil for an in-memory store or one that cannot be opened yet (a new store).
    package init?(storePath: String) {
        guard storePath != ":memory:", !storePath.isEmpty,
            let connection = try? Connection(path: storePath, readOnly: true),
            let statement = try? connection.prepare("SELECT 1 FROM files WHERE content_sha256 = ?")
        else { return nil }
        var sizes: Set<Int> = []
        var byPath: [String: [Version]] = [:]
        if let query = try? connection.prepare("SELECT id, path, byte_count, content_sha256 FROM files") {
            try? query.forEachRow { row in
                let version = Version(id: row.int(0), byteCount: Int(row.int(2)), sha256: row.string(3) ?? "")
                sizes.insert(version.byteCount)
                byPath[row.string(1) ?? "", default: []].append(version)
            }
        }
        self.connection = connection
        self.statement = statement
        self.byteCounts = sizes
        self.byPath = byPath
    }

    /// The files registered at `path` that are smaller than `byteCount`
    /// (and not empty), smallest first: the versions a file that grew may
    /// begin with.
    package func earlierVersions(atPath path: String, smallerThan byteCount: Int) -> [Version] {
        (byPath[path] ?? []).filter { $0.byteCount > 0 && $0.byteCount < byteCount }.sorted {
            $0.byteCount < $1.byteCount
        }
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

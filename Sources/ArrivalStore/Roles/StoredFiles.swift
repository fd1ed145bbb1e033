/// A version of a file the store holds, by its registry id, size and hash.
package typealias StoredVersion = FileRegistryLookup.Version

/// The reading side of the file registry: what ingest's admission asks of
/// the files a store holds before it decodes a file, on a connection of its
/// own. What a question cannot answer counts as not registered (the
/// writer's `Admission.confirm`, inside its transaction, has the last word).
/// ``FileRegistryLookup`` is SQLite's; `ArrivalPostgres` has PostgreSQL's.
package protocol StoredFiles {
    /// Whether a file of this many bytes is registered: only such a file can
    /// hold bytes the store has.
    func contains(byteCount: Int) -> Bool
    /// Whether a file with these bytes is registered.
    func contains(sha256: String) -> Bool
    /// Whether the stored copy of these bytes had lines refused for the
    /// device token that uploaded it.
    func hasRefusedLines(sha256: String) -> Bool
    /// The files registered at `path` smaller than `byteCount` and not
    /// empty, smallest first.
    func earlierVersions(atPath path: String, smallerThan byteCount: Int) -> [StoredVersion]
}

extension FileRegistryLookup: StoredFiles {}

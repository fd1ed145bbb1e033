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
    /// Told of the files about to be read, in order, before the questions
    /// above are asked of each: a registry a round trip away answers them
    /// for all these files at once. An answer it keeps is never wrong in a
    /// way the writer does not catch: what the writer decides in its
    /// transaction is the last word, as with any answer here. `fresh`: the
    /// first files of an ingest run, when what was kept from an earlier run
    /// is let go.
    func lookAhead(_ files: [UpcomingFile], fresh: Bool)
    /// Whether ``lookAhead(_:)`` does anything (the caller then spares the sizes it would pass).
    var looksAhead: Bool { get }
}

/// A file ingest is about to read, as ``StoredFiles/lookAhead(_:)`` is told of it.
package struct UpcomingFile: Sendable {
    /// The name it is registered under (its path in the registry).
    package var name: String
    /// Its size, when known.
    package var byteCount: Int?
    /// The hash its bytes were vouched for with (a collector's upload), if any.
    package var sha256: String?

    package init(name: String, byteCount: Int?, sha256: String?) {
        self.name = name
        self.byteCount = byteCount
        self.sha256 = sha256
    }
}

extension StoredFiles {
    /// Nothing to gain for a registry on this machine (SQLite's): each question is one indexed read.
    package func lookAhead(_ files: [UpcomingFile], fresh: Bool) {}
    package var looksAhead: Bool { false }
}

extension FileRegistryLookup: StoredFiles {}

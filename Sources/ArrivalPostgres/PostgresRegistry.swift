package import ArrivalStore
import Foundation
import PostgresNIO

/// The reading side of a PostgreSQL store's file registry (``StoredFiles``),
/// on a connection of its own for ingest's reading thread: whether bytes
/// are stored before they are decoded, and which versions of a path are.
/// What a question cannot answer counts as not registered; the writer, in
/// its transaction, has the last word.
package final class PostgresRegistry: StoredFiles {
    private let session: PostgresSession

    package init(_ location: PostgresLocation, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws
    {
        session = try PostgresSession(location, environment: environment)
    }

    deinit { session.close() }

    // What ``lookAhead(_:)`` learnt of the files about to be read. Each
    // answer is the store's at the time it was asked, as a question asked
    // per file would be a moment later; the writer decides in its
    // transaction whatever the answer.
    /// Sizes asked: whether a stored file has that many bytes.
    private var sizes: [Int: Bool] = [:]
    /// Hashes asked: whether bytes with that hash are stored, and whether the stored copy had lines refused.
    private var hashes: [String: (stored: Bool, refused: Bool)] = [:]
    /// Names asked: the stored versions at that path (not empty), smallest first; answered once, then
    /// asked again (a run may store a version of a name and then read a larger one).
    private var versions: [String: [StoredVersion]] = [:]
    /// The most answers kept: past it they are let go and asked again.
    static let keptAnswers = 65_536

    package var looksAhead: Bool { true }

    /// Asks about all `files` at once: three queries sent together, one
    /// round trip, where asking file by file is two or three round trips a
    /// file (a fleet's 6,434 device files took 13,500 of them, issue 52).
    package func lookAhead(_ files: [UpcomingFile], fresh: Bool) {
        if fresh || sizes.count + hashes.count + versions.count > Self.keptAnswers {
            sizes = [:]
            hashes = [:]
            versions = [:]
        }
        var askedSizes = ColumnArray(.int8)
        var askedHashes = ColumnArray(.text)
        var askedNames = ColumnArray(.text)
        var newSizes: [Int] = []
        var newHashes: [String] = []
        var newNames: [String] = []
        for file in files {
            if let sha256 = file.sha256 {
                if hashes[sha256] == nil {
                    askedHashes.append(sha256)
                    newHashes.append(sha256)
                }
            } else if let size = file.byteCount, sizes[size] == nil {
                askedSizes.append(Int64(size))
                newSizes.append(size)
                sizes[size] = false  // asked once per look, whatever the answer
            }
            if file.byteCount != nil, versions[file.name] == nil {
                askedNames.append(file.name)
                newNames.append(file.name)
                versions[file.name] = []
            }
        }
        do {
            let sent = (
                sizes: newSizes.isEmpty
                    ? nil
                    : try session.send(
                        PostgresQuery(
                            unsafeSQL: "SELECT DISTINCT byte_count FROM arrival.files WHERE byte_count = ANY($1)",
                            binds: PostgresStore.binds(askedSizes))),
                hashes: newHashes.isEmpty
                    ? nil
                    : try session.send(
                        PostgresQuery(
                            unsafeSQL: """
                                SELECT f.content_sha256, EXISTS (SELECT 1 FROM arrival.malformed_lines AS m
                                                                 WHERE m.file_id = f.id AND m.cause = 'kind_not_allowed')
                                FROM arrival.files AS f WHERE f.content_sha256 = ANY($1)
                                """, binds: PostgresStore.binds(askedHashes))),
                names: newNames.isEmpty
                    ? nil
                    : try session.send(
                        PostgresQuery(
                            unsafeSQL: """
                                SELECT path, id, byte_count, content_sha256 FROM arrival.files
                                WHERE path = ANY($1) AND byte_count > 0 ORDER BY path, byte_count, id
                                """, binds: PostgresStore.binds(askedNames)))
            )
            if let pending = sent.sizes {
                for row in try session.answer(to: pending) { sizes[Int(try row.decode(Int64.self))] = true }
            }
            if let pending = sent.hashes {
                for hash in newHashes { hashes[hash] = (false, false) }
                for row in try session.answer(to: pending) {
                    let (hash, refused) = try row.decode((String, Bool).self)
                    hashes[hash] = (true, refused)
                }
            }
            if let pending = sent.names {
                for row in try session.answer(to: pending) {
                    let (path, id, size, hash) = try row.decode((String, Int64, Int64, String).self)
                    versions[path, default: []].append(StoredVersion(id: id, byteCount: Int(size), sha256: hash))
                }
            }
        } catch {
            // Not answered: each file is asked on its own, as without a look ahead.
            for size in newSizes { sizes[size] = nil }
            for hash in newHashes { hashes[hash] = nil }
            for name in newNames { versions[name] = nil }
        }
    }

    package func contains(byteCount: Int) -> Bool {
        if let known = sizes[byteCount] { return known }
        return (try? session.run("SELECT 1 FROM arrival.files WHERE byte_count = \(Int64(byteCount)) LIMIT 1").count)
            ?? 0 > 0
    }

    package func contains(sha256: String) -> Bool {
        if let known = hashes[sha256] { return known.stored }
        return (try? session.run("SELECT 1 FROM arrival.files WHERE content_sha256 = \(sha256)").count) ?? 0 > 0
    }

    package func hasRefusedLines(sha256: String) -> Bool {
        if let known = hashes[sha256] { return known.refused }
        return (try? session.run(PostgresStore.restrictedCopySQL(sha256)).count) ?? 0 > 0
    }

    package func earlierVersions(atPath path: String, smallerThan byteCount: Int) -> [StoredVersion] {
        if let known = versions.removeValue(forKey: path) { return known.filter { $0.byteCount < byteCount } }
        guard
            let rows = try? session.run(
                """
                SELECT id, byte_count, content_sha256 FROM arrival.files
                WHERE path = \(path) AND byte_count > 0 AND byte_count < \(Int64(byteCount)) ORDER BY byte_count, id
                """)
        else { return [] }
        return rows.compactMap { row in
            guard let (id, size, sha) = try? row.decode((Int64, Int64, String).self) else { return nil }
            return StoredVersion(id: id, byteCount: Int(size), sha256: sha)
        }
    }
}

extension PostgresRegistry {
    /// The file the bytes with this SHA-256 were stored as, if any (the
    /// collector's question before it queues an upload; read errors are thrown, not guessed).
    package func ingestedFile(sha256: String) throws -> IngestedFile? {
        let rows = try session.run(
            """
            SELECT id, path, content_sha256, byte_count, gzip, line_count, record_count, duplicate_count,
                   malformed_count, ingested_at
            FROM arrival.files WHERE content_sha256 = \(sha256)
            """)
        guard let row = rows.first else { return nil }
        let cells = row.makeRandomAccess()
        return IngestedFile(
            id: try cells[0].decode(Int64.self), path: try cells[1].decode(String.self),
            sha256: try cells[2].decode(String.self), byteCount: try cells[3].decode(Int64.self),
            gzip: try cells[4].decode(Bool.self), lines: Int(try cells[5].decode(Int64.self)),
            records: Int(try cells[6].decode(Int64.self)), duplicates: Int(try cells[7].decode(Int64.self)),
            malformed: Int(try cells[8].decode(Int64.self)), ingestedAt: try cells[9].decode(Int64.self))
    }

    /// ``hasRefusedLines(sha256:)``, with a read error thrown.
    package func refusedLines(sha256: String) throws -> Bool {
        try !session.run(PostgresStore.restrictedCopySQL(sha256)).isEmpty
    }
}

extension PostgresRegistry: UploadLookup {}

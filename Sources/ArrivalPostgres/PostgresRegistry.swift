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

    package func contains(byteCount: Int) -> Bool {
        (try? session.run("SELECT 1 FROM arrival.files WHERE byte_count = \(Int64(byteCount)) LIMIT 1").count) ?? 0 > 0
    }

    package func contains(sha256: String) -> Bool {
        (try? session.run("SELECT 1 FROM arrival.files WHERE content_sha256 = \(sha256)").count) ?? 0 > 0
    }

    package func hasRefusedLines(sha256: String) -> Bool {
        (try? session.run(PostgresStore.restrictedCopySQL(sha256)).count) ?? 0 > 0
    }

    package func earlierVersions(atPath path: String, smallerThan byteCount: Int) -> [StoredVersion] {
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

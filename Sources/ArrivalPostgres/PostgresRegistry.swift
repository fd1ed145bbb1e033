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

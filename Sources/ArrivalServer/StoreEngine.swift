import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import Foundation
import Logging
import ServiceLifecycle

/// The collector's access to the store, off the request threads: one
/// writer (the ingest worker's serial queue, one connection), readers on a
/// concurrent queue (a read-only snapshot each), and the upload registry
/// (one read-only connection behind a lock).
final class StoreEngine: @unchecked Sendable {
    let storePath: String
    private let writer = DispatchQueue(label: "arrival.ingest")
    private let readers = DispatchQueue(label: "arrival.read", attributes: .concurrent)
    /// Used only on `writer`.
    private let store: Store
    private let registryLock = NSLock()
    private let registry: UploadRegistry

    init(storePath: String) throws {
        self.storePath = storePath
        // Creates the store (or brings it to this arrival's schema) before anything reads it.
        store = try Store(path: storePath)
        registry = try UploadRegistry(storePath: storePath)
    }

    /// Whether the store answers a read (what `/readyz` asks).
    var isReadable: Bool {
        do {
            _ = try ingestedFile(sha256: String(repeating: "0", count: 64))
            return true
        } catch {
            return false
        }
    }

    /// Ingests uploads on the writer's queue, in one run of `arrival ingest`:
    /// each upload is one all-or-nothing file of it, and all are committed
    /// when it returns.
    func ingest(_ uploads: [(entry: Spool.Entry, path: String, range: Range<Int>)]) async -> Result<
        IngestSummary, any Error
    > {
        await withCheckedContinuation { continuation in
            writer.async {
                continuation.resume(
                    returning: Result {
                        try IngestPipeline(store: self.store).ingest(
                            uploads.map {
                                NamedFile(
                                    path: $0.path, name: $0.entry.name,
                                    senderRecordsAllowed: $0.entry.role.mayUploadSenderRecords, range: $0.range,
                                    sha256: $0.entry.sha256)
                            })
                    })
            }
        }
    }

    /// Runs `body` on a read-only snapshot of the store, off the request's thread.
    func read<T: Sendable>(_ body: @escaping @Sendable (Store) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            readers.async { [storePath] in
                continuation.resume(with: Result { try body(try Store(readingAt: storePath)) })
            }
        }
    }

    func ingestedFile(sha256: String) throws -> IngestedFile? {
        try registryLock.withLock { try registry.ingestedFile(sha256: sha256) }
    }

    /// Whether the stored copy of these bytes had lines refused for the device token that sent it.
    func hasRefusedLines(sha256: String) throws -> Bool {
        try registryLock.withLock { try registry.hasRefusedLines(sha256: sha256) }
    }
}

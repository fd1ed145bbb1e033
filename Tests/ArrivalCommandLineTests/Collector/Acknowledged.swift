import Foundation

/// File names (and content hashes) of the uploads a collector acknowledged so far, shared by
/// the client tasks of LiveCollectorTests and CollectorOnPostgresTests.
final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var names: Set<String> = []
    private var hashes: Set<String> = []

    /// Adds a name, with its content hash when known; returns how many are acknowledged now.
    func add(_ name: String, sha: String? = nil) -> Int {
        lock.withLock {
            names.insert(name)
            if let sha { hashes.insert(sha) }
            return names.count
        }
    }

    func contains(_ name: String) -> Bool { lock.withLock { names.contains(name) } }
    var count: Int { lock.withLock { names.count } }
    var shas: Set<String> { lock.withLock { hashes } }
}

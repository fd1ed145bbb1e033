import ArrivalModel
import Crypto

/// SHA-256 of a stream of bytes, and of its first N bytes for chosen N on the
/// way: how ingest tells that a file begins with the bytes of a version of it
/// stored before (it grew since), in the same pass that decodes it.
struct PrefixHasher {
    private var hasher = SHA256()
    private var checkpoints: [Int]
    private(set) var byteCount = 0
    /// The hex SHA-256 of the first N bytes, for each checkpoint N reached.
    private(set) var prefixes: [Int: String] = [:]

    /// `checkpoints`: the prefix lengths to hash on the way.
    init(checkpoints: [Int] = []) {
        self.checkpoints = checkpoints.filter { $0 > 0 }.sorted()
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while let next = checkpoints.first, byteCount + rest.count >= next {
            let take = next - byteCount
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: rest[..<take]))
            byteCount += take
            rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            prefixes[next] = Self.hex(hasher.finalize())
            checkpoints.removeFirst()
        }
        hasher.update(bufferPointer: rest)
        byteCount += rest.count
    }

    /// The hex SHA-256 of every byte so far.
    func finalize() -> String {
        Self.hex(hasher.finalize())
    }

    /// Whether every checkpoint still to come lies past the bytes hashed.
    var isPastCheckpoints: Bool { checkpoints.isEmpty }

    static func hex(_ digest: SHA256.Digest) -> String {
        LowercaseHex.string(digest)
    }
}

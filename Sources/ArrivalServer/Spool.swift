import Crypto
import Foundation
import Hummingbird

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Uploads received and not yet ingested, as files that survive a crash.
///
/// An upload's bytes go to `incoming/` while they arrive (hashed on the
/// way), are fsynced, and move to `queued/<sequence>.data`; then its
/// description (`<sequence>.json`: content hash, name, role) is written,
/// fsynced and moved beside it, and `queued/` itself is fsynced. Only then
/// is the upload acknowledged. An upload is in the spool exactly when both
/// of its files are in `queued/`: on start, anything else (a half-received
/// body, a description without its bytes) is an upload that was never
/// acknowledged, and is removed. The ingest worker takes uploads in
/// sequence order and removes them only after their ingest committed.
final class Spool: @unchecked Sendable {
    struct Entry: Sendable, Equatable {
        var sequence: UInt64
        var sha256: String
        var name: String
        var role: Role
        var byteCount: Int
        /// Milliseconds since the Unix epoch.
        var receivedAt: Int64
    }

    enum Failure: Error, Equatable {
        case empty
        case tooLarge(limit: Int)
        case full(retryAfterSeconds: Int)
        case io(String)
    }

    let root: URL
    private let incoming: URL
    private let queued: URL
    let maxBytes: Int

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
    private var order: [UInt64] = []
    private var queuedBytes = 0
    private var reservedBytes = 0
    private var nextSequence: UInt64 = 1
    private var nextPart: UInt64 = 1
    private let durability = DispatchQueue(label: "arrival.spool.durability", attributes: .concurrent)

    /// Signals the ingest worker that an upload was queued.
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    /// Opens (creating) the spool at `directory` and recovers what a crash left.
    init(directory: String, maxBytes: Int) throws(Failure) {
        root = URL(fileURLWithPath: directory, isDirectory: true)
        incoming = root.appendingPathComponent("incoming", isDirectory: true)
        queued = root.appendingPathComponent("queued", isDirectory: true)
        self.maxBytes = maxBytes
        (arrivals, arrived) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let files = FileManager.default
        do {
            try files.createDirectory(at: incoming, withIntermediateDirectories: true)
            try files.createDirectory(at: queued, withIntermediateDirectories: true)
            for name in try files.contentsOfDirectory(atPath: incoming.path) {
                try files.removeItem(at: incoming.appendingPathComponent(name))
            }
            let names = Set(try files.contentsOfDirectory(atPath: queued.path))
            for name in names {
                let url = queued.appendingPathComponent(name)
                if name.hasSuffix(".json"), let sequence = UInt64(name.dropLast(5)) {
                    if names.contains(Self.dataName(sequence)), let entry = Self.entry(from: url, sequence: sequence) {
                        add(entry)
                        continue
                    }
                } else if name.hasSuffix(".data"), let sequence = UInt64(name.dropLast(5)),
                    names.contains(Self.metaName(sequence))
                {
                    continue
                }
                try files.removeItem(at: url)  // never acknowledged
            }
        } catch {
            throw .io("cannot open the spool '\(directory)': \(error.localizedDescription)")
        }
        order.sort()
        nextSequence = (order.last ?? 0) + 1
        if !order.isEmpty { arrived.yield() }
    }

    // MARK: - Receiving

    /// Receives one upload: its bytes, hashed on the way, made durable in
    /// the spool. `declaredLength` (the request's Content-Length) lets an
    /// upload over the limit, or one the spool has no room for, be refused
    /// before its body is read. Returns the entry and whether these bytes
    /// were already in the spool.
    func receive<Body: AsyncSequence>(
        _ body: Body, declaredLength: Int?, name: String?, role: Role, maxUploadBytes: Int
    ) async throws(Failure) -> (entry: Entry, alreadyQueued: Bool) where Body.Element == ByteBuffer {
        if let declaredLength, declaredLength > maxUploadBytes { throw .tooLarge(limit: maxUploadBytes) }
        let reservation = max(declaredLength ?? 0, 0)
        let part = try reserve(reservation)
        var reserved = reservation
        defer { release(reserved) }
        let partURL = incoming.appendingPathComponent("\(part).part")
        let fd = open(partURL.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot create a file in the spool: \(String(cString: strerror(errno)))") }
        var closed = false
        var kept = false
        defer {
            if !closed { close(fd) }
            if !kept { unlink(partURL.path) }
        }
        var hasher = SHA256()
        var count = 0
        do {
            for try await buffer in body {
                count += buffer.readableBytes
                if count > maxUploadBytes { throw Failure.tooLarge(limit: maxUploadBytes) }
                if count > reserved {
                    try reserveMore(count - reserved)
                    reserved = count
                }
                try buffer.withUnsafeReadableBytes { (bytes) throws(Failure) in
                    hasher.update(bufferPointer: bytes)
                    try Self.writeAll(fd, bytes)
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .io("the upload broke off: \(error)")
        }
        guard count > 0 else { throw .empty }
        let sha256 = hasher.finalize().map { Self.hex[Int($0 >> 4)] + Self.hex[Int($0 & 15)] }.joined()
        let sequence = takeSequence()
        let entry = Entry(
            sequence: sequence, sha256: sha256, name: name ?? sha256, role: role, byteCount: count,
            receivedAt: Int64(Date().timeIntervalSince1970 * 1000))
        // fsync and the renames block: off the request's thread, several at once.
        let result: Result<Void, Failure> = await withCheckedContinuation { continuation in
            durability.async { [incoming, queued] in
                continuation.resume(
                    returning: Result { () throws(Failure) in
                        guard fsync(fd) == 0 else {
                            throw .io("cannot sync the upload: \(String(cString: strerror(errno)))")
                        }
                        close(fd)
                        let data = queued.appendingPathComponent(Self.dataName(sequence))
                        guard rename(partURL.path, data.path) == 0 else {
                            throw .io("cannot queue the upload: \(String(cString: strerror(errno)))")
                        }
                        let metaPart = incoming.appendingPathComponent("\(sequence).json.part")
                        try Self.writeDurably(Self.description(of: entry), to: metaPart)
                        guard rename(metaPart.path, queued.appendingPathComponent(Self.metaName(sequence)).path) == 0
                        else {
                            unlink(data.path)
                            throw .io("cannot queue the upload: \(String(cString: strerror(errno)))")
                        }
                        try Self.syncDirectory(queued)
                    })
            }
        }
        closed = true
        kept = true
        if case .failure(let failure) = result {
            unlink(partURL.path)
            throw failure
        }
        let alreadyQueued = lock.withLock { entries.values.contains { $0.sha256 == sha256 } }
        lock.withLock { add(entry) }
        arrived.yield()
        return (entry, alreadyQueued)
    }

    // MARK: - The worker's side

    /// The oldest queued uploads, at most `limit`, in arrival order.
    func next(_ limit: Int) -> [Entry] {
        lock.withLock { order.prefix(limit).compactMap { entries[$0] } }
    }

    func dataPath(of entry: Entry) -> String {
        queued.appendingPathComponent(Self.dataName(entry.sequence)).path
    }

    /// Removes an upload whose ingest committed: its description first
    /// (from then on it is not in the spool), then its bytes.
    func remove(_ entry: Entry) throws(Failure) {
        let meta = queued.appendingPathComponent(Self.metaName(entry.sequence))
        guard unlink(meta.path) == 0 || errno == ENOENT else {
            throw .io("cannot remove an ingested upload from the spool: \(String(cString: strerror(errno)))")
        }
        try Self.syncDirectory(queued)
        unlink(dataPath(of: entry))
        lock.withLock {
            if entries.removeValue(forKey: entry.sequence) != nil {
                order.removeAll { $0 == entry.sequence }
                queuedBytes -= entry.byteCount
            }
        }
    }

    // MARK: - State

    /// The queued upload with these bytes, if any.
    func queuedEntry(sha256: String) -> Entry? {
        lock.withLock { order.lazy.compactMap { self.entries[$0] }.first { $0.sha256 == sha256 } }
    }

    /// Uploads and bytes queued, and when the oldest of them arrived.
    var depth: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?) {
        lock.withLock { (order.count, queuedBytes, order.first.flatMap { entries[$0]?.receivedAt }) }
    }

    // MARK: - Internals

    private func add(_ entry: Entry) {
        entries[entry.sequence] = entry
        let index = order.firstIndex { $0 > entry.sequence } ?? order.count
        order.insert(entry.sequence, at: index)
        queuedBytes += entry.byteCount
    }

    private func takeSequence() -> UInt64 {
        lock.withLock {
            defer { nextSequence += 1 }
            return nextSequence
        }
    }

    /// Reserves room for an upload about to arrive; the spool refuses it when
    /// what is queued and arriving would pass ``maxBytes``.
    private func reserve(_ bytes: Int) throws(Failure) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        // An empty spool takes any upload the size limit allows.
        guard queuedBytes + reservedBytes + bytes <= maxBytes || (queuedBytes == 0 && reservedBytes == 0) else {
            throw .full(retryAfterSeconds: 30)
        }
        reservedBytes += bytes
        defer { nextPart += 1 }
        return nextPart
    }

    private func reserveMore(_ bytes: Int) throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        guard queuedBytes + reservedBytes + bytes <= maxBytes else { throw .full(retryAfterSeconds: 30) }
        reservedBytes += bytes
    }

    private func release(_ bytes: Int) {
        lock.withLock { reservedBytes -= bytes }
    }

    private static let hex = (0..<16).map { String($0, radix: 16) }

    static func dataName(_ sequence: UInt64) -> String { padded(sequence) + ".data" }
    static func metaName(_ sequence: UInt64) -> String { padded(sequence) + ".json" }

    private static func padded(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    private static func description(of entry: Entry) -> [UInt8] {
        let object: [String: Any] = [
            "sha256": entry.sha256, "name": entry.name, "role": entry.role.rawValue, "bytes": entry.byteCount,
            "received_at": entry.receivedAt,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    private static func entry(from url: URL, sequence: UInt64) -> Entry? {
        guard let data = FileManager.default.contents(atPath: url.path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let sha256 = object["sha256"] as? String, let name = object["name"] as? String,
            let role = (object["role"] as? String).flatMap(Role.init(rawValue:)),
            let bytes = object["bytes"] as? Int, let receivedAt = object["received_at"] as? Int64
        else { return nil }
        return Entry(
            sequence: sequence, sha256: sha256, name: name, role: role, byteCount: bytes, receivedAt: receivedAt)
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw .io("cannot write the upload to the spool: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    private static func writeDurably(_ bytes: [UInt8], to url: URL) throws(Failure) {
        let fd = open(url.path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot write to the spool: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written: Failure? = bytes.withUnsafeBytes { raw in
            do throws(Failure) {
                try writeAll(fd, raw)
                return nil
            } catch {
                return error
            }
        }
        if let written { throw written }
        guard fsync(fd) == 0 else { throw .io("cannot sync the spool: \(String(cString: strerror(errno)))") }
    }

    private static func syncDirectory(_ url: URL) throws(Failure) {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open the spool directory: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io("cannot sync the spool directory: \(String(cString: strerror(errno)))") }
    }
}

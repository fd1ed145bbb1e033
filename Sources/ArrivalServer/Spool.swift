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
/// way) and move to `queued/<sequence>.data`; then its description
/// (`<sequence>.json`: content hash, name, role) is written beside it.
/// Uploads are made durable together (group commit): one `syncfs` of the
/// spool's file system covers every upload that finished arriving while
/// the previous one ran, and only after it returned is any of them
/// acknowledged. On start, an upload counts as in the spool when both of
/// its files are in `queued/` and its bytes still have the hash its
/// description names; anything else (a half-received body, a description
/// without its bytes, bytes a crash cut short) was never acknowledged and is
/// removed. The ingest worker takes uploads in sequence order and removes
/// them after their ingest committed (a removal a crash undoes only makes
/// the next start ingest those bytes again, which stores nothing twice).
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
    /// Files of ingested uploads kept for reuse: creating a file costs ext4
    /// an inode search that, with thousands created and deleted a second,
    /// took a third of the collector's time; renaming one back costs nothing.
    private let free: URL
    private var freeFiles: [String] = []
    private var freeCounter: UInt64 = 0
    static let maxFreeFiles = 4096
    let maxBytes: Int

    private let lock = NSLock()
    private var entries: [UInt64: Entry] = [:]
    private var order: [UInt64] = []
    private var queuedBytes = 0
    /// How many queued uploads have each content hash.
    private var queuedByHash: [String: Int] = [:]
    private var reservedBytes = 0
    private var nextSequence: UInt64 = 1
    private var nextPart: UInt64 = 1
    private let syncer: GroupSync

    /// Signals the ingest worker that an upload was queued.
    let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    /// Opens (creating) the spool at `directory` and recovers what a crash left.
    init(directory: String, maxBytes: Int) throws(Failure) {
        root = URL(fileURLWithPath: directory, isDirectory: true)
        incoming = root.appendingPathComponent("incoming", isDirectory: true)
        queued = root.appendingPathComponent("queued", isDirectory: true)
        free = root.appendingPathComponent("free", isDirectory: true)
        self.maxBytes = maxBytes
        (arrivals, arrived) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        syncer = GroupSync(directory: root.path)
        let files = FileManager.default
        do {
            try files.createDirectory(at: incoming, withIntermediateDirectories: true)
            try files.createDirectory(at: queued, withIntermediateDirectories: true)
            try files.createDirectory(at: free, withIntermediateDirectories: true)
            for name in try files.contentsOfDirectory(atPath: free.path) {
                freeFiles.append(free.appendingPathComponent(name).path)
                freeCounter = max(freeCounter, UInt64(name) ?? 0)
            }
            for name in try files.contentsOfDirectory(atPath: incoming.path) {
                recycle(incoming.appendingPathComponent(name).path)
            }
            let names = Set(try files.contentsOfDirectory(atPath: queued.path))
            for name in names {
                let url = queued.appendingPathComponent(name)
                if name.hasSuffix(".json"), let sequence = UInt64(name.dropLast(5)) {
                    let data = queued.appendingPathComponent(Self.dataName(sequence))
                    if names.contains(Self.dataName(sequence)), let entry = Self.entry(from: url, sequence: sequence),
                        Self.hash(of: data.path) == entry.sha256
                    {
                        add(entry)
                        continue
                    }
                } else if name.hasSuffix(".data"), let sequence = UInt64(name.dropLast(5)),
                    names.contains(Self.metaName(sequence))
                {
                    continue
                }
                recycle(url.path)  // never acknowledged
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
        let fd = newFile(partURL.path)
        guard fd >= 0 else { throw .io("cannot create a file in the spool: \(String(cString: strerror(errno)))") }
        var closed = false
        var kept = false
        defer {
            if !closed { close(fd) }
            if !kept { recycle(partURL.path) }
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
        close(fd)
        closed = true
        let data = queued.appendingPathComponent(Self.dataName(sequence))
        guard rename(partURL.path, data.path) == 0 else {
            throw .io("cannot queue the upload: \(String(cString: strerror(errno)))")
        }
        kept = true
        let metaPart = incoming.appendingPathComponent("\(sequence).json.part")
        let meta = queued.appendingPathComponent(Self.metaName(sequence))
        do throws(Failure) {
            try writeFile(Self.description(of: entry), to: metaPart)
            guard rename(metaPart.path, meta.path) == 0 else {
                throw .io("cannot queue the upload: \(String(cString: strerror(errno)))")
            }
            // Durable together with every upload that finished meanwhile.
            if let failure = await syncer.sync() { throw failure }
        } catch {
            recycle(meta.path)
            recycle(data.path)
            throw error
        }
        let alreadyQueued = lock.withLock { (queuedByHash[sha256] ?? 0) > 0 }
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
    /// (from then on it is not in the spool), then its bytes. Not synced: if
    /// a crash undoes it, the next start ingests these bytes again under the
    /// same name, which stores nothing.
    func remove(_ entry: Entry) throws(Failure) {
        let meta = queued.appendingPathComponent(Self.metaName(entry.sequence))
        guard recycle(meta.path) || errno == ENOENT else {
            throw .io("cannot remove an ingested upload from the spool: \(String(cString: strerror(errno)))")
        }
        recycle(dataPath(of: entry))
        lock.withLock {
            if entries.removeValue(forKey: entry.sequence) != nil {
                // The worker removes in arrival order: the entry is almost always the first.
                if order.first == entry.sequence {
                    order.removeFirst()
                } else if let index = order.firstIndex(of: entry.sequence) {
                    order.remove(at: index)
                }
                queuedBytes -= entry.byteCount
                queuedByHash[entry.sha256, default: 1] -= 1
                if queuedByHash[entry.sha256] == 0 { queuedByHash[entry.sha256] = nil }
            }
        }
    }

    // MARK: - State

    /// The queued upload with these bytes, if any.
    func queuedEntry(sha256: String) -> Entry? {
        lock.withLock {
            guard queuedByHash[sha256] != nil else { return nil }
            return order.lazy.compactMap { self.entries[$0] }.first { $0.sha256 == sha256 }
        }
    }

    /// Uploads and bytes queued, and when the oldest of them arrived.
    var depth: (uploads: Int, bytes: Int, oldestReceivedAt: Int64?) {
        lock.withLock { (order.count, queuedBytes, order.first.flatMap { entries[$0]?.receivedAt }) }
    }

    // MARK: - Internals

    private func add(_ entry: Entry) {
        queuedByHash[entry.sha256, default: 0] += 1
        entries[entry.sequence] = entry
        // Sequences are taken in increasing order: an upload almost always goes last.
        if let last = order.last, last > entry.sequence {
            order.insert(entry.sequence, at: order.firstIndex { $0 > entry.sequence } ?? order.count)
        } else {
            order.append(entry.sequence)
        }
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

    /// The SHA-256 (hex) of a file's bytes; nil when it cannot be read.
    private static func hash(of path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return SHA256.hash(data: data).map { hex[Int($0 >> 4)] + hex[Int($0 & 15)] }.joined()
    }

    /// Opens a new, empty file at `path` for writing: a recycled one when
    /// there is one, else a created one.
    private func newFile(_ path: String) -> Int32 {
        if let recycled = lock.withLock({ freeFiles.popLast() }), rename(recycled, path) == 0 {
            let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
            if fd >= 0 { return fd }
        }
        return open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
    }

    /// Takes a file out of the way: into `free/` for reuse, or, when enough
    /// are kept, deleted. Returns whether it was moved or deleted.
    @discardableResult
    private func recycle(_ path: String) -> Bool {
        let target: String? = lock.withLock {
            guard freeFiles.count < Self.maxFreeFiles else { return nil }
            freeCounter += 1
            return free.appendingPathComponent(String(freeCounter)).path
        }
        guard let target else { return unlink(path) == 0 }
        guard rename(path, target) == 0 else { return false }
        lock.withLock { freeFiles.append(target) }
        return true
    }

    private func writeFile(_ bytes: [UInt8], to url: URL) throws(Failure) {
        let fd = newFile(url.path)
        guard fd >= 0 else { throw .io("cannot write to the spool: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written: Failure? = bytes.withUnsafeBytes { raw in
            do throws(Failure) {
                try Self.writeAll(fd, raw)
                return nil
            } catch {
                return error
            }
        }
        if let written { throw written }
    }
}

/// Group commit: makes everything written to the spool's file system so far
/// durable with one `syncfs`, for every caller waiting at the time. A caller
/// that arrives while a sync runs waits for the next one, which then covers
/// all who came meanwhile: under load one sync acknowledges many uploads.
final class GroupSync: @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [CheckedContinuation<Spool.Failure?, Never>] = []
    private var running = false
    private let directory: String
    private let queue = DispatchQueue(label: "arrival.spool.sync")

    init(directory: String) {
        self.directory = directory
    }

    /// Returns once everything written before the call is on disk (nil), or the failure.
    func sync() async -> Spool.Failure? {
        await withCheckedContinuation { continuation in
            let start = lock.withLock {
                waiting.append(continuation)
                if running { return false }
                running = true
                return true
            }
            if start { queue.async { self.loop() } }
        }
    }

    private func loop() {
        while true {
            let batch: [CheckedContinuation<Spool.Failure?, Never>] = lock.withLock {
                let batch = waiting
                waiting = []
                if batch.isEmpty { running = false }
                return batch
            }
            if batch.isEmpty { return }
            let failure = Self.syncFileSystem(of: directory)
            for continuation in batch { continuation.resume(returning: failure) }
        }
    }

    #if os(Linux)
        /// glibc's `syncfs(2)`, which Swift's Glibc module does not export (it is a GNU extension).
        private static let syncfs: (@convention(c) (Int32) -> Int32)? = {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
        }()
    #endif

    private static func syncFileSystem(of directory: String) -> Spool.Failure? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return .io("cannot open the spool directory: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        #if os(Linux)
            guard let syncfs = Self.syncfs else {
                Glibc.sync()  // a libc without syncfs: everything, everywhere
                return nil
            }
            guard syncfs(fd) == 0 else { return .io("cannot sync the spool: \(String(cString: strerror(errno)))") }
        #else
            // No syncfs: F_FULLFSYNC flushes the drive's cache with everything written before it.
            guard fcntl(fd, F_FULLFSYNC) == 0 else {
                return .io("cannot sync the spool: \(String(cString: strerror(errno)))")
            }
        #endif
        return nil
    }
}

import ArrivalTestSupport
import Crypto
import Foundation
import Hummingbird
import Testing

@testable import ArrivalServer

/// The spool's segments: what a restart finds after a clean stop, a crash
/// that cut a record short or damaged one, and after uploads were ingested.
@Suite("Spool segments")
struct SpoolTests {
    static func body(_ text: String) -> AsyncStream<ByteBuffer> {
        body(Array(text.utf8), chunk: 1000)
    }

    /// `bytes` in chunks, as a request body arrives.
    static func body(_ bytes: [UInt8], chunk: Int) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            var start = 0
            while start < bytes.count {
                continuation.yield(ByteBuffer(bytes: bytes[start..<min(bytes.count, start + chunk)]))
                start += chunk
            }
            continuation.finish()
        }
    }

    static func upload(_ n: Int, bytes: Int = 300) -> [UInt8] {
        var text = ""
        var line = 0
        while text.utf8.count < bytes {
            line += 1
            text += "{\"v\":1,\"kind\":\"render\",\"activity_id\":\"a-\(n)\",\"seq\":\(line)}\n"
        }
        return Array(text.utf8)
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @discardableResult
    static func receive(_ spool: Spool, _ bytes: [UInt8], name: String?, role: Role = .device) async throws
        -> Spool.Entry
    {
        try await spool.receive(
            body(bytes, chunk: 4096), declaredLength: bytes.count, name: name, role: role, maxUploadBytes: 1 << 30
        ).entry
    }

    /// The bytes a queued entry points at.
    static func stored(_ spool: Spool, _ entry: Spool.Entry) throws -> [UInt8] {
        let location = spool.location(of: entry)
        let data = try Data(contentsOf: URL(fileURLWithPath: location.path))
        return Array(data[location.range])
    }

    static func segments(_ directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(
            at: directory.appendingPathComponent("spool/segments"), includingPropertiesForKeys: nil
        ).sorted { $0.path < $1.path }
    }

    @Test("Small and large uploads come back after a restart, in order, with their bytes, names and roles")
    func roundTrip() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        var sent: [(bytes: [UInt8], name: String?, role: Role)] = []
        do {
            let spool = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 8192, inlineBytes: 2048)
            for n in 0..<12 {
                // Every fourth upload is over the inline limit: a segment of its own.
                let bytes = Self.upload(n, bytes: n % 4 == 3 ? 5000 : 400)
                let name: String? = n == 5 ? nil : "devices/d\(n)/batch-\(n).jsonl"
                let role: Role = n % 2 == 0 ? .device : .sender
                let entry = try await Self.receive(spool, bytes, name: name, role: role)
                #expect(try Self.stored(spool, entry) == bytes)
                sent.append((bytes, name, role))
            }
            // The small ones share a segment; each large one has its own.
            #expect(try Self.segments(directory).count == 4)
            spool.releaseLock()
        }
        let reopened = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 8192, inlineBytes: 2048)
        #expect(reopened.recoveryNotes.isEmpty)
        let entries = reopened.next(100)
        #expect(entries.count == sent.count)
        #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted())
        for (entry, upload) in zip(entries, sent) {
            #expect(try Self.stored(reopened, entry) == upload.bytes)
            #expect(entry.sha256 == Self.sha256(upload.bytes))
            #expect(entry.name == upload.name ?? entry.sha256)
            #expect(entry.role == upload.role)
            #expect(entry.byteCount == upload.bytes.count)
        }
        #expect(reopened.depth.uploads == sent.count)
        // A run of the worker takes uploads up to a byte budget, always at least one.
        #expect(reopened.next(100, maxBytes: 1).count == 1)
        let budget = sent.prefix(3).map(\.bytes.count).reduce(0, +)
        #expect(reopened.next(100, maxBytes: budget).map(\.sequence) == entries.prefix(3).map(\.sequence))
        #expect(reopened.depth.bytes == sent.map(\.bytes.count).reduce(0, +))
    }

    @Test("A record a crash cut short is dropped with a note; the records before it are kept")
    func tornTail() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        do {
            let spool = try Spool(directory: path, maxBytes: 1 << 30)
            for n in 0..<3 { try await Self.receive(spool, Self.upload(n), name: "f\(n)") }
            spool.releaseLock()
        }
        let segment = try #require(try Self.segments(directory).first)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: segment.path)[.size] as? Int)
        for cut in [1, 200, size / 3 - 10] {
            let handle = try FileHandle(forUpdating: segment)
            try handle.truncate(atOffset: UInt64(size - cut))
            try handle.close()
            let reopened = try Spool(directory: path, maxBytes: 1 << 30)
            let names = reopened.next(10).map(\.name)
            #expect(names == ["f0", "f1"], "cut \(cut)")
            #expect(reopened.recoveryNotes.count == 1)
            #expect(reopened.recoveryNotes.first?.contains("not a whole record") == true)
            #expect(reopened.recoveryNotes.first?.contains(segment.lastPathComponent) == true)
            reopened.releaseLock()
        }
    }

    @Test("A damaged body drops that upload only; a damaged header ends its segment's reading")
    func damage() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        var entries: [Spool.Entry] = []
        do {
            let spool = try Spool(directory: path, maxBytes: 1 << 30)
            for n in 0..<4 { entries.append(try await Self.receive(spool, Self.upload(n), name: "f\(n)")) }
            spool.releaseLock()
        }
        let segment = try #require(try Self.segments(directory).first)
        func flip(at offset: Int) throws {
            let handle = try FileHandle(forUpdating: segment)
            try handle.seek(toOffset: UInt64(offset))
            let byte = try #require(try handle.read(upToCount: 1)).first!
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: [byte ^ 0x20])
            try handle.close()
        }
        // A byte of the second upload's body.
        try flip(at: entries[1].offset + 10)
        do {
            let reopened = try Spool(directory: path, maxBytes: 1 << 30)
            #expect(reopened.next(10).map(\.name) == ["f0", "f2", "f3"])
            #expect(reopened.recoveryNotes.count == 1)
            #expect(reopened.recoveryNotes.first?.contains("'f1'") == true)
            reopened.releaseLock()
        }
        // A byte of the third upload's name, in its header.
        try flip(at: entries[2].offset - 9)
        let reopened = try Spool(directory: path, maxBytes: 1 << 30)
        #expect(reopened.next(10).map(\.name) == ["f0"])
        #expect(reopened.recoveryNotes.count == 2)
    }

    @Test("Ingested uploads leave: their segments are deleted, the checkpoint spares a restart from reading them")
    func removalAndCheckpoint() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        do {
            let spool = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 1000, inlineBytes: 500)
            for n in 0..<20 { try await Self.receive(spool, Self.upload(n), name: "f\(n)") }
            // Two uploads to a segment.
            #expect(try Self.segments(directory).count == 10)
            // The worker ingests the first 9 and checkpoints: four segments are done with.
            for entry in spool.next(9) { spool.remove(entry) }
            spool.checkpoint()
            #expect(spool.depth.uploads == 11)
            #expect(try Self.segments(directory).count == 6)
            spool.releaseLock()
        }

        // The segments still on disk hold ingested records next to queued ones; the checkpoint skips those.
        do {
            let reopened = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 1000, inlineBytes: 500)
            #expect(reopened.next(100).map(\.name) == (9..<20).map { "f\($0)" })
            #expect(reopened.recoveryNotes.isEmpty)
            reopened.releaseLock()
        }

        // Without a checkpoint (lost in a crash), the ingested records of those segments come back:
        // ingesting them again stores nothing (the collector's live test), and nothing queued is lost.
        let checkpoint = directory.appendingPathComponent("spool/checkpoint")
        let saved = try Data(contentsOf: checkpoint)
        try Data(count: 16).write(to: checkpoint)
        do {
            let withoutCheckpoint = try Spool(
                directory: path, maxBytes: 1 << 30, segmentBytes: 1000, inlineBytes: 500)
            #expect(withoutCheckpoint.next(100).map(\.name) == (8..<20).map { "f\($0)" })
            withoutCheckpoint.releaseLock()
        }
        try saved.write(to: checkpoint)

        // Everything ingested: no segment left but the open one, which goes when the next one opens.
        do {
            let reopened = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 1000, inlineBytes: 500)
            for entry in reopened.next(100) { reopened.remove(entry) }
            reopened.checkpoint()
            #expect(try Self.segments(directory).count == 0)
            reopened.releaseLock()
        }
        let last = try Spool(directory: path, maxBytes: 1 << 30)
        #expect(last.depth.uploads == 0)
        // Sequences go on after the checkpoint: a new upload sorts after every earlier one.
        let entry = try await Self.receive(last, Self.upload(99), name: "f99")
        #expect(entry.sequence > 20)
    }

    @Test("Uploads received at once get distinct sequences and all survive a restart")
    func concurrent() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        let entries: [Spool.Entry]
        do {
            let spool = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 64 << 10, inlineBytes: 4096)
            entries = try await withThrowingTaskGroup(of: Spool.Entry.self) { group in
                for n in 0..<200 {
                    group.addTask {
                        try await Self.receive(spool, Self.upload(n, bytes: n % 10 == 0 ? 6000 : 500), name: "f\(n)")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            spool.releaseLock()
        }
        #expect(Set(entries.map(\.sequence)).count == 200)
        let reopened = try Spool(directory: path, maxBytes: 1 << 30, segmentBytes: 64 << 10, inlineBytes: 4096)
        let recovered = reopened.next(1000)
        #expect(Set(recovered.map(\.name)) == Set((0..<200).map { "f\($0)" }))
        for entry in recovered {
            let n = Int(entry.name.dropFirst())!
            #expect(try Self.stored(reopened, entry) == Self.upload(n, bytes: n % 10 == 0 ? 6000 : 500))
        }
    }

    @Test("Half-received uploads in incoming/ are removed; a spool of the earlier layout is not opened")
    func leftovers() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        try Spool(directory: path, maxBytes: 1 << 30).releaseLock()
        let part = directory.appendingPathComponent("spool/incoming/7.part")
        try Data("half an upload".utf8).write(to: part)
        try Spool(directory: path, maxBytes: 1 << 30).releaseLock()
        #expect(!FileManager.default.fileExists(atPath: part.path))

        let queued = directory.appendingPathComponent("spool/queued")
        try FileManager.default.createDirectory(at: queued, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: queued.appendingPathComponent("0000000000000001.json"))
        #expect {
            _ = try Spool(directory: path, maxBytes: 1 << 30)
        } throws: { error in
            guard case .io(let message) = error as? Spool.Failure else { return false }
            return message.contains("queued/")
        }
    }

    @Test("One process per spool: a second opening is refused, naming the holder, until the first closes")
    func exclusive() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        let first = try Spool(directory: path, maxBytes: 1 << 30)
        try await Self.receive(first, Self.upload(1), name: "kept")
        let part = directory.appendingPathComponent("spool/incoming/1.part")
        try Data("arriving".utf8).write(to: part)
        #expect {
            _ = try Spool(directory: path, maxBytes: 1 << 30)
        } throws: { error in
            guard case .inUse(let message) = error as? Spool.Failure else { return false }
            return message.contains("process \(getpid())")
        }
        // The refused opening touched nothing: what the first is receiving is still there.
        #expect(FileManager.default.fileExists(atPath: part.path))
        #expect(first.depth.uploads == 1)
        first.releaseLock()
        let second = try Spool(directory: path, maxBytes: 1 << 30)
        #expect(second.next(10).map(\.name) == ["kept"])
    }

    /// The first `bytes`, then the error.
    static func failing(_ bytes: [UInt8], with error: any Error) -> AsyncThrowingStream<ByteBuffer, any Error> {
        AsyncThrowingStream { continuation in
            continuation.yield(ByteBuffer(bytes: bytes))
            continuation.finish(throwing: error)
        }
    }

    struct HungUp: Error {}

    @Test("A body that breaks off, or ends short of its Content-Length, is the client's abort; a deadline is a timeout")
    func brokenBodies() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spool = try Spool(directory: directory.appendingPathComponent("spool").path, maxBytes: 1 << 30)
        let bytes = Self.upload(1, bytes: 4000)
        func failure(_ run: () async throws -> Void) async -> Spool.Failure? {
            do {
                try await run()
                return nil
            } catch {
                return error as? Spool.Failure
            }
        }
        let hungUp = await failure {
            _ = try await spool.receive(
                Self.failing(bytes, with: HungUp()), declaredLength: nil, name: nil, role: .device,
                maxUploadBytes: 1 << 20)
        }
        guard case .aborted(let message) = hungUp else {
            Issue.record("a hang-up is \(String(describing: hungUp))")
            return
        }
        #expect(message.contains("4"))
        let short = await failure {
            _ = try await spool.receive(
                Self.body(bytes, chunk: 512), declaredLength: bytes.count + 1, name: nil, role: .device,
                maxUploadBytes: 1 << 20)
        }
        #expect(
            short
                == .aborted(
                    "the body ended after \(bytes.count) of the \(bytes.count + 1) bytes its Content-Length declared"))
        let late = await failure {
            _ = try await spool.receive(
                Self.failing(bytes, with: DeadlineExceeded(message: "idle")), declaredLength: nil, name: nil,
                role: .device, maxUploadBytes: 1 << 20)
        }
        #expect(late == .timedOut("idle"))
        // None of them was queued, and nothing of them is left in the spool's accounts.
        #expect(spool.depth.uploads == 0)
        #expect(spool.depth.bytes == 0)
        let entry = try await Self.receive(spool, bytes, name: "whole")
        #expect(entry.byteCount == bytes.count)
    }

    @Test("Room is reserved as bytes arrive: uploads that only declare a large length do not fill the spool")
    func reservationAsBytesArrive() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spool = try Spool(directory: directory.appendingPathComponent("spool").path, maxBytes: 64 << 10)
        // Eight uploads each declare the whole spool and send a little, then stall.
        var stalled: [AsyncStream<ByteBuffer>.Continuation] = []
        var tasks: [Task<Spool.Failure?, Never>] = []
        for _ in 0..<8 {
            let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
            continuation.yield(ByteBuffer(bytes: [0x7B]))
            stalled.append(continuation)
            tasks.append(
                Task {
                    do {
                        _ = try await spool.receive(
                            stream, declaredLength: 60 << 10, name: nil, role: .device, maxUploadBytes: 1 << 20)
                        return nil
                    } catch {
                        return error as? Spool.Failure
                    }
                })
        }
        try await Task.sleep(for: .milliseconds(100))
        // A small upload still fits.
        let entry = try await Self.receive(spool, Self.upload(2, bytes: 2000), name: "small")
        #expect(entry.name == "small")
        for continuation in stalled { continuation.finish() }
        for task in tasks {
            let result = await task.value
            guard case .aborted = result else {
                Issue.record("a stalled upload ended as \(String(describing: result))")
                continue
            }
        }
    }
}

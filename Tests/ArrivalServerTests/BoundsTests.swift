import ArrivalIngest
import ArrivalStore
import ArrivalStores
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalServer

/// Issue 39: what one holder of the public device token can cost everyone
/// else — the worker's turns between roles, the report cache, the
/// per-address key of IPv6 clients, upload names, and the duplicate count.
@Suite("Bounds of a public token")
struct BoundsTests {
    // MARK: - The worker's turns

    @Test("Runs alternate between roles, sender first when both wait; one waiting role runs alone")
    func turns() {
        let now = ContinuousClock.now
        var scheduler = RunScheduler()
        #expect(scheduler.next(waiting: [], now: now) == .idle)
        #expect(scheduler.next(waiting: [.device, .sender], now: now) == .run(.sender))
        #expect(scheduler.next(waiting: [.device, .sender], now: now) == .run(.device))
        #expect(scheduler.next(waiting: [.device, .sender], now: now) == .run(.sender))
        #expect(scheduler.next(waiting: [.sender], now: now) == .run(.sender))
        #expect(scheduler.next(waiting: [.device], now: now) == .run(.device))
        #expect(scheduler.next(waiting: [.device], now: now) == .run(.device))
        #expect(scheduler.next(waiting: [.device, .sender], now: now) == .run(.sender))
    }

    @Test("A failing role backs off alone: the other role's runs go on meanwhile")
    func backOff() {
        let now = ContinuousClock.now
        var scheduler = RunScheduler()
        #expect(scheduler.next(waiting: [.device], now: now) == .run(.device))
        #expect(scheduler.failed(.device, now: now) == 1)
        #expect(scheduler.next(waiting: [.device, .sender], now: now) == .run(.sender))
        #expect(scheduler.next(waiting: [.device, .sender], now: now) == .run(.sender))
        #expect(scheduler.next(waiting: [.device], now: now) == .wait(until: now + .seconds(1)))
        #expect(scheduler.next(waiting: [.device], now: now + .seconds(1)) == .run(.device))
        #expect(scheduler.failed(.device, now: now) == 2)
        #expect(scheduler.next(waiting: [.device], now: now) == .wait(until: now + .seconds(2)))
        scheduler.succeeded(.device)
        #expect(scheduler.next(waiting: [.device], now: now) == .run(.device))
        #expect((1...10).map(RunScheduler.backOffSeconds) == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60])
    }

    @Test("A device run stopped for senders gets twice the slice next time; one that ends resets it")
    func slices() {
        var scheduler = RunScheduler(deviceSlice: .seconds(2))
        scheduler.deviceRunEnded(preempted: true)
        #expect(scheduler.deviceSlice == .seconds(4))
        scheduler.deviceRunEnded(preempted: true)
        #expect(scheduler.deviceSlice == .seconds(8))
        scheduler.deviceRunEnded(preempted: false)
        #expect(scheduler.deviceSlice == .seconds(2))
    }

    @Test("The spool hands out each role's uploads in their own arrival order, and counts them per role")
    func perRoleQueues() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("spool").path
        do {
            let spool = try Spool(directory: path, maxBytes: 1 << 30)
            for n in 0..<6 {
                try await SpoolTests.receive(
                    spool, SpoolTests.upload(n, bytes: 100 * (n + 1)), name: "u\(n)",
                    role: n % 3 == 0 ? .sender : .device)
            }
            #expect(spool.next(10, role: .sender).map(\.name) == ["u0", "u3"])
            #expect(spool.next(10, role: .device).map(\.name) == ["u1", "u2", "u4", "u5"])
            #expect(spool.next(10).map(\.name) == ["u0", "u1", "u2", "u3", "u4", "u5"])
            #expect(spool.hasQueued(.sender) && spool.hasQueued(.device))
            let depth = spool.depthByRole
            #expect(depth[.sender]?.uploads == 2 && depth[.device]?.uploads == 4)
            #expect(depth[.sender]?.bytes == spool.next(10, role: .sender).map(\.byteCount).reduce(0, +))
            for entry in spool.next(10, role: .sender) { spool.remove(entry) }
            #expect(!spool.hasQueued(.sender))
            #expect(spool.depthByRole[.sender]?.uploads == 0)
            #expect(spool.depth.uploads == 4)
            spool.releaseLock()
        }
        // A spool's records have always carried their role: one written before the queues per role recovers
        // into them. (The sender uploads come back too: removals are not synced, and ingesting again stores nothing.)
        let reopened = try Spool(directory: path, maxBytes: 1 << 30)
        #expect(reopened.next(10, role: .device).map(\.name) == ["u1", "u2", "u4", "u5"])
        #expect(reopened.next(10, role: .sender).map(\.name) == ["u0", "u3"])
    }

    // MARK: - Runs

    @Test("A run told to stop stores none of its uploads and names them unfinished; per-role limits cut an upload")
    func stoppedRun() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = try StoreEngine(location: .sqlite(path: directory.appendingPathComponent("store.sqlite").path))
        let spool = try Spool(directory: directory.appendingPathComponent("spool").path, maxBytes: 1 << 30)
        for n in 0..<3 {
            let lines = (1...5).map {
                #"{"v":1,"kind":"render","activity_id":"a\#(n)","seq":\#($0),"rendered_at":"2026-11-21T08:00:0\#($0)Z"}"#
            }
            try await SpoolTests.receive(spool, Array((lines.joined(separator: "\n") + "\n").utf8), name: "u\(n)")
        }
        let entries = spool.next(10)
        let uploads = entries.map { entry in
            let location = spool.location(of: entry)
            return (entry, location.path, location.range)
        }
        let stopped = try await engine.ingest(uploads, options: StoreEngine.runOptions(limits: .device) { true }).get()
        #expect(Set(stopped.interrupted) == ["u0", "u1", "u2"])
        for entry in entries { #expect(try await engine.ingestedFile(sha256: entry.sha256) == nil) }
        // Then run again, each upload bounded to 2 lines: all are stored, each with one line naming the limit.
        let limits = LineReader.Limits(inflatedBytes: 1 << 20, lines: 2)
        let run = try await engine.ingest(uploads, options: StoreEngine.runOptions(limits: limits) { false }).get()
        #expect(run.interrupted.isEmpty)
        for entry in entries {
            let stored = try await engine.ingestedFile(sha256: entry.sha256)
            #expect(stored?.records == 2 && stored?.malformed == 1, "\(String(describing: stored))")
        }
    }

    // MARK: - New or duplicate

    @Test("An upload is new or a duplicate by what was queued or stored before it was queued")
    func seenBeforeQueued() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let spool = try Spool(directory: directory.appendingPathComponent("spool").path, maxBytes: 1 << 30)
        let bytes = SpoolTests.upload(1)
        func receive(_ role: Role, stored: Bool = false) async throws -> Spool.Seen {
            try await spool.receive(
                SpoolTests.body(bytes, chunk: 64), declaredLength: bytes.count, name: nil, role: role,
                maxUploadBytes: 1 << 20, storedBefore: { _ in stored }
            ).seen
        }
        #expect(try await receive(.device) == .new)
        #expect(try await receive(.device) == .queued)
        // A device copy is not a duplicate for a sender; a sender copy is one for both.
        #expect(try await receive(.sender) == .new)
        #expect(try await receive(.sender) == .queued)
        for entry in spool.next(10) { spool.remove(entry) }
        #expect(try await receive(.device, stored: true) == .stored)
        for entry in spool.next(10) { spool.remove(entry) }
        #expect(try await receive(.device, stored: false) == .new)
        // Uploads of the same bytes at once: exactly one is new, whenever the store is asked.
        for entry in spool.next(10) { spool.remove(entry) }
        let other = SpoolTests.upload(2)
        let seen = try await withThrowingTaskGroup(of: Spool.Seen.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await spool.receive(
                        SpoolTests.body(other, chunk: 64), declaredLength: other.count, name: nil, role: .device,
                        maxUploadBytes: 1 << 20,
                        storedBefore: { _ in
                            try? await Task.sleep(for: .milliseconds(20))
                            return false
                        }
                    ).seen
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(seen.filter { $0 == .new }.count == 1)
        #expect(seen.filter { $0 == .queued }.count == 7)
    }

    // MARK: - Reports

    @Test("A report is served from the cache while the store's state is the same, computed again once it changes")
    func cacheInvalidation() async throws {
        let cache = ReportCache(maxConcurrent: 2)
        let computed = SharedCounter()
        let compute: @Sendable () async throws -> String = { "report \(computed.next())" }
        let first = try await cache.report(.init(request: "html all -", state: "runs 1"), compute: compute)
        #expect(first.text == "report 1" && first.source == .computed)
        let again = try await cache.report(.init(request: "html all -", state: "runs 1"), compute: compute)
        #expect(again.text == "report 1" && again.source == .cached)
        let other = try await cache.report(.init(request: "json all -", state: "runs 1"), compute: compute)
        #expect(other.text == "report 2" && other.source == .computed)
        let changed = try await cache.report(.init(request: "html all -", state: "runs 2"), compute: compute)
        #expect(changed.text == "report 3" && changed.source == .computed)
        // Reports of the earlier state are gone once one of the new state is kept.
        #expect(cache.size.entries == 1)
        #expect(computed.count == 3)
    }

    @Test("Past the cap a report is refused; identical requests at once share one computation")
    func cap() async throws {
        let cache = ReportCache(maxConcurrent: 2)
        let computed = SharedCounter()
        let released = StopFlag()
        let slow: @Sendable () async throws -> String = {
            _ = computed.next()
            while !released.isSet { try await Task.sleep(for: .milliseconds(5)) }
            return "slow"
        }
        let a = Task { try await cache.report(.init(request: "a", state: "s"), compute: slow) }
        let b = Task { try await cache.report(.init(request: "b", state: "s"), compute: slow) }
        while cache.inProgress < 2 { try await Task.sleep(for: .milliseconds(5)) }
        await #expect(throws: ReportCache.Busy.self) {
            try await cache.report(.init(request: "c", state: "s"), compute: slow)
        }
        let joined = Task { try await cache.report(.init(request: "a", state: "s"), compute: slow) }
        try await Task.sleep(for: .milliseconds(50))
        released.set()
        #expect(try await a.value.source == .computed)
        #expect(try await b.value.source == .computed)
        #expect(try await joined.value.source == .shared)
        #expect(computed.count == 2)
        #expect(cache.inProgress == 0)
    }

    @Test("The cache keeps at most its count and bytes of reports, the least recently used going first")
    func cacheBounds() async throws {
        let cache = ReportCache(maxConcurrent: 1, maxEntries: 3, maxBytes: 1000)
        for n in 0..<5 {
            _ = try await cache.report(.init(request: "r\(n)", state: "s")) { String(repeating: "x", count: 100) }
        }
        #expect(cache.size.entries == 3 && cache.size.bytes == 300)
        _ = try await cache.report(.init(request: "big", state: "s")) { String(repeating: "x", count: 900) }
        #expect(cache.size.bytes <= 1000)
        let hit = try await cache.report(.init(request: "big", state: "s")) { "" }
        #expect(hit.source == .cached)
    }

    // MARK: - Client addresses

    @Test("IPv6 clients count by their /64 (or the prefix length given); IPv4 ones by their address")
    func addressKeys() {
        #expect(ClientAddress.key("192.0.2.7", ipv6PrefixLength: 64) == "192.0.2.7")
        #expect(ClientAddress.key("2001:db8:0:7::1", ipv6PrefixLength: 64) == "2001:db8:0:7::/64")
        #expect(ClientAddress.key("2001:db8:0:7:ffff:1:2:3", ipv6PrefixLength: 64) == "2001:db8:0:7::/64")
        #expect(ClientAddress.key("2001:db8:0:8::1", ipv6PrefixLength: 64) == "2001:db8:0:8::/64")
        #expect(ClientAddress.key("[2001:db8:0:7::1]", ipv6PrefixLength: 64) == "2001:db8:0:7::/64")
        #expect(ClientAddress.key("fe80::1%eth0", ipv6PrefixLength: 64) == "fe80::/64")
        #expect(ClientAddress.key("2001:db8:0:7::1", ipv6PrefixLength: 128) == "2001:db8:0:7::1/128")
        #expect(ClientAddress.key("2001:db8:abcd:ef12::1", ipv6PrefixLength: 52) == "2001:db8:abcd:e000::/52")
        #expect(ClientAddress.key("::ffff:192.0.2.7", ipv6PrefixLength: 64) == "192.0.2.7")
        #expect(ClientAddress.key("::1", ipv6PrefixLength: 64) == "::/64")
        #expect(ClientAddress.key("not an address", ipv6PrefixLength: 64) == "not an address")
        #expect(ClientAddress.key("unknown", ipv6PrefixLength: 64) == "unknown")
    }

    // MARK: - Names

    @Test("Upload names: UTF-8 only, no . or .. segment")
    func names() throws {
        #expect(try UploadName.validated("./devices/a.jsonl") == "devices/a.jsonl")
        #expect(try UploadName.validated("devices/é/a.jsonl") == "devices/é/a.jsonl")
        for bad in [".", "..", "./", "a/./b", "a/../b", "a/.", "devices/\u{FFFD}.jsonl", "a//b", "/a"] {
            #expect(throws: UploadName.Invalid.self, "\(bad)") { try UploadName.validated(bad) }
        }
    }
}

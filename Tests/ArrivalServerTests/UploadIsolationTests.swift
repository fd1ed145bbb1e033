import ArrivalIngest
import ArrivalStore
import ArrivalStores
import Foundation
import Testing

@testable import ArrivalServer

/// Issue 56: which upload a failed run is pinned on, when it is tried again,
/// when it is set aside; which failures are the store's as a whole.
@Suite("Upload isolation")
struct UploadIsolationTests {
    static func entry(_ sequence: UInt64, role: Role = .device) -> Spool.Entry {
        Spool.Entry(
            sequence: sequence, sha256: String(repeating: "a", count: 64), name: "u\(sequence)", role: role,
            byteCount: 10, receivedAt: 0, segment: 1, offset: 0)
    }

    @Test("A failed run is halved, both halves at once, until a failing upload is alone")
    func halving() {
        let now = ContinuousClock.now
        var isolation = UploadIsolation()
        let entries = (1...5).map { Self.entry($0) }
        isolation.split(entries, now: now)
        #expect(isolation.held == Set(1...5))
        #expect(isolation.due(now: now)?.map(\.sequence) == [1, 2])
        // The first half failed again: its halves go before the other half.
        isolation.split([Self.entry(1), Self.entry(2)], now: now)
        #expect(isolation.due(now: now)?.map(\.sequence) == [1])
        #expect(isolation.due(now: now)?.map(\.sequence) == [2])
        #expect(isolation.due(now: now)?.map(\.sequence) == [3, 4, 5])
        #expect(isolation.due(now: now) == nil)
        #expect(isolation.held.isEmpty)
    }

    @Test("An upload that fails alone is tried again after 1 s and 2 s, and set aside at its third failure")
    func retriesThenSetAside() {
        let now = ContinuousClock.now
        var isolation = UploadIsolation()
        let upload = Self.entry(7)
        #expect(isolation.failed(upload, setAsideBefore: false, now: now) == .retry(after: .seconds(1), attempt: 1))
        #expect(isolation.held == [7])
        #expect(isolation.due(now: now) == nil, "not before its pause")
        #expect(isolation.due(now: now + .seconds(1))?.map(\.sequence) == [7])
        #expect(isolation.failed(upload, setAsideBefore: false, now: now) == .retry(after: .seconds(2), attempt: 2))
        #expect(isolation.nextDue == now + .seconds(2))
        _ = isolation.due(now: now + .seconds(2))
        #expect(isolation.failed(upload, setAsideBefore: false, now: now) == .setAside(attempts: 3))
        #expect(isolation.held.isEmpty)
        // Another upload's count is its own; success forgets the count.
        let other = Self.entry(8)
        _ = isolation.failed(other, setAsideBefore: false, now: now)
        isolation.succeeded(other)
        _ = isolation.due(now: now + .seconds(5))
        #expect(isolation.failed(other, setAsideBefore: false, now: now) == .retry(after: .seconds(1), attempt: 1))
    }

    @Test("An upload set aside before this start gets one more try: its first failure sets it aside again")
    func setAsideBefore() {
        var isolation = UploadIsolation()
        #expect(isolation.failed(Self.entry(3), setAsideBefore: true, now: .now) == .setAside(attempts: 1))
    }

    @Test("Failures of the store as a whole are told from a refusal of what an upload holds")
    func storeWide() {
        func sqlite(_ code: Int32) -> DatabaseError { DatabaseError(resultCode: code, message: "m", context: "c") }
        // SQLite: constraint (19), its trigger variant (19 | 7 << 8), mismatch (20), too big (18) are refusals.
        for code: Int32 in [19, 1811, 20, 18] { #expect(!StoreLocation.isStoreWide(sqlite(code)), "\(code)") }
        // Full (13), read-only (8), I/O (10), busy (5), an error of the store's own (1): the store's.
        for code: Int32 in [13, 8, 10, 5, 1, 266] { #expect(StoreLocation.isStoreWide(sqlite(code)), "\(code)") }
        // An error of neither engine (the run's own) is not the store's.
        #expect(!StoreLocation.isStoreWide(InputError.readFailed(path: "p", reason: "r")))
    }
}

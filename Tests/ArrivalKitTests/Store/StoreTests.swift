import Foundation
import Testing
@testable import ArrivalKit

@Suite("Store")
struct StoreTests {
    func withStore(_ body: (Store) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(try Store(path: directory.appendingPathComponent("s.sqlite").path))
    }

    @Test("Migrations are applied once, by name, in order")
    func migrations() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        let names = Migrations.all.map(\.name)
        #expect(try Store(path: path).appliedMigrations() == names)
        #expect(try Store(path: path).appliedMigrations() == names)  // reopening applies nothing again
    }

    @Test("Store uses WAL")
    func wal() throws {
        try withStore { store in
            let statement = try store.connection.prepare("PRAGMA journal_mode")
            #expect(try statement.step())
            #expect(statement.string(0) == "wal")
            statement.reset()
        }
    }

    @Test("A hash collision between different records keeps both; equal records stay one")
    func collision() throws {
        try withStore { store in
            let transaction = try store.beginFile(sha256: "x", path: "/x", byteCount: 0, gzip: false, now: 0)
            let statements = try store.recordStatements()
            let a = APNSRecord(apnsID: "a", sentAt: 1, status: 200, pushToken: "t", apsTimestamp: 1)
            let b = APNSRecord(apnsID: "b", sentAt: 1, status: 200, pushToken: "t", apsTimestamp: 1)
            #expect(try statements.insert(a, fileID: transaction.fileID, key: 42))
            #expect(try statements.insert(b, fileID: transaction.fileID, key: 42))  // moved to 43
            #expect(try !statements.insert(b, fileID: transaction.fileID, key: 42))  // found at 43
            #expect(try !statements.insert(a, fileID: transaction.fileID, key: 42))
            try transaction.commit(lines: 0, gzip: false)
            let count = try store.connection.prepare("SELECT count(*), min(record_key), max(record_key) FROM apns")
            #expect(try count.step())
            #expect(count.int(0) == 2 && count.int(1) == 42 && count.int(2) == 43)
            count.reset()
        }
    }

    @Test("The schema refuses rows the contract forbids")
    func constraints() throws {
        try withStore { store in
            #expect(throws: DatabaseError.self) {
                try store.connection.execute("""
                    INSERT INTO callbacks (record_key, file_id, callback, activity_id, received_at)
                    VALUES (1, 1, 'content_update', 'a', 0)
                    """)  // content_update without seq
            }
            #expect(throws: DatabaseError.self) {
                try store.connection.execute("""
                    INSERT INTO apns (record_key, file_id, apns_id, sent_at, status, push_token, aps_timestamp, event)
                    VALUES (1, 1, 'a', 0, 200, 't', 0, 'restart')
                    """)
            }
        }
    }
}

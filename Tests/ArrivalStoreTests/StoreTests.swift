import ArrivalAnalysis
import ArrivalHandOff
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

@Suite("Store")
struct StoreTests {
    func withStore(_ body: (SQLiteStore) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path))
    }

    @Test("Migrations are applied once, by name, in order")
    func migrations() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        let names = Migrations.all.map(\.name)
        #expect(try SQLiteStore(path: path).appliedMigrations() == names)
        #expect(try SQLiteStore(path: path).appliedMigrations() == names)  // reopening applies nothing again
    }

    @Test("Store uses WAL and, when new, 32 KiB pages")
    func wal() throws {
        try withStore { store in
            let statement = try store.connection.prepare("PRAGMA journal_mode")
            #expect(try statement.step())
            #expect(statement.string(0) == "wal")
            statement.reset()
            let pageSize = try store.connection.prepare("PRAGMA page_size")
            #expect(try pageSize.step())
            #expect(pageSize.int(0) == 32768)
            pageSize.reset()
        }
    }

    @Test("A hash collision between different records keeps both; equal records stay one")
    func collision() throws {
        try withStore { store in
            let transaction = try store.beginFile(path: "/x", now: 0)
            let statements = try store.recordStatements()
            let a = Record.apns(APNSRecord(apnsID: "a", sentAt: 1, status: 200, pushToken: "t", apsTimestamp: 1))
            let b = Record.apns(APNSRecord(apnsID: "b", sentAt: 1, status: 200, pushToken: "t", apsTimestamp: 1))
            #expect(try statements.insert(a, fileID: transaction.fileID, key: 42))
            #expect(try statements.insert(b, fileID: transaction.fileID, key: 42))  // moved on
            #expect(try !statements.insert(b, fileID: transaction.fileID, key: 42))  // found there
            #expect(try !statements.insert(a, fileID: transaction.fileID, key: 42))
            try transaction.commit(sha256: "x", byteCount: 0, lines: 0, gzip: false)
            let count = try store.connection.prepare("SELECT count(*), min(record_key), max(record_key) FROM apns")
            #expect(try count.step())
            // The next key is set by b's hash, in the window of key 42 (window 0), not the key next door.
            var batch = RowBatch(capacity: 1)
            batch.append(b)
            let moved = Int64(bitPattern: nextRecordKey(after: 42, hash: batch.rows[0].hash))
            #expect(moved != 43 && moved >> 42 == 0)
            #expect(count.int(0) == 2 && count.int(1) == min(42, moved) && count.int(2) == max(42, moved))
            count.reset()
        }
    }

    @Test("The schema refuses rows the contract forbids")
    func constraints() throws {
        try withStore { store in
            #expect(throws: DatabaseError.self) {
                try store.connection.execute(
                    """
                    INSERT INTO callbacks (record_key, file_id, callback, activity_id, received_at)
                    VALUES (1, 1, 'content_update', 'a', 0)
                    """)  // content_update without seq
            }
            #expect(throws: DatabaseError.self) {
                try store.connection.execute(
                    """
                    INSERT INTO apns (record_key, file_id, apns_id, sent_at, status, push_token, aps_timestamp, event)
                    VALUES (1, 1, 'a', 0, 200, 't', 0, 'restart')
                    """)
            }
        }
    }

    /// 150 rows go in as 64 + 64 + 8 + 8 + 6 single rows; the first chunk
    /// repeats rows, collides keys and meets rows already stored, so every
    /// branch of the multi-row path runs.
    @Test("Rows inserted 64 at a time keep duplicates out and move collisions on, as one at a time does")
    func multiRowInserts() throws {
        try withStore { store in
            let statements = try store.recordStatements()
            func record(_ i: Int) -> Record {
                .apns(APNSRecord(apnsID: "id-\(i)", sentAt: Int64(i), status: 200, pushToken: "t", apsTimestamp: 1))
            }
            let transaction = try store.beginFile(path: "/x", now: 0)
            // Stored before: records 0 and 1.
            #expect(try statements.insert(record(0), fileID: transaction.fileID))
            #expect(try statements.insert(record(1), fileID: transaction.fileID))

            var batch = RowBatch()
            var keys: [UInt64] = []
            var expectedNew: [Bool] = []
            for i in 0..<150 {
                switch i {
                case 0, 1:  // already stored
                    batch.append(record(i))
                    expectedNew.append(false)
                case 5:  // the same record as row 4, in the same chunk
                    batch.append(record(4))
                    expectedNew.append(false)
                default:
                    batch.append(record(i))
                    expectedNew.append(true)
                }
                keys.append(batch.rows.last!.key)
            }
            // Rows 10, 11 and 12 are different records forced onto one key: all three are kept.
            keys[11] = keys[10]
            keys[12] = keys[10]
            var seen: [Bool] = []
            try statements.insertRows(of: batch, fileID: transaction.fileID, keys: keys) { _, stored in
                seen.append(stored == nil)
            }
            #expect(seen == expectedNew)

            // Inserting the same batch again adds nothing: every row is found, the collided ones by probing.
            var again: [Bool] = []
            try statements.insertRows(of: batch, fileID: transaction.fileID, keys: keys) { _, stored in
                again.append(stored == nil)
            }
            #expect(again == Array(repeating: false, count: 150))
            try transaction.commit(sha256: "x", byteCount: 0, lines: 0, gzip: false)

            let count = try store.connection.prepare(
                "SELECT count(*), count(DISTINCT apns_id), count(DISTINCT record_key) FROM apns")
            #expect(try count.step())
            #expect(count.int(0) == 149 && count.int(1) == 149 && count.int(2) == 149)  // ids 0..<150 but 5
            count.reset()
        }
    }

    /// Every row of the tables a file writes to, in id order, as text.
    func contents(_ store: SQLiteStore) throws -> [String] {
        var rows: [String] = []
        for table in ["files", "apns", "renders", "callbacks", "record_repeats", "malformed_lines"] {
            let statement = try store.connection.prepare("SELECT * FROM \(table) ORDER BY 1, 2")
            try statement.forEachRow { row in
                rows.append(table + ": " + (0..<7).map { row.string(Int32($0)) ?? "null" }.joined(separator: "|"))
            }
        }
        return rows
    }

    @Test(
        "A file rolled back inside a batch leaves no row of its own; the file before it stays",
        arguments: [false, true])
    func rollbackInsideBatch(replaces: Bool) throws {
        try withStore { store in
            func apns(_ id: String) -> Record {
                .apns(APNSRecord(apnsID: id, sentAt: 1, status: 200, pushToken: "t", apsTimestamp: 1))
            }
            func render(_ seq: Int64) -> Record {
                .render(RenderRecord(activityID: "act", seq: seq, renderedAt: 5))
            }
            let kept = try store.beginFile(path: "/kept", now: 0)
            #expect(try kept.insert(apns("a")))
            #expect(try kept.insert(render(1)))
            try kept.addMalformed(line: 3, cause: .invalidJSON)
            try kept.commit(sha256: "k", byteCount: 1, lines: 3, gzip: false)
            let before = try contents(store)

            let dropped = try store.beginFile(path: "/dropped", now: 0, replaces: replaces)
            var batch = RowBatch()
            batch.append(apns("b"))
            batch.append(apns("a"))  // a repeat of the kept file's record
            batch.append(render(2))
            batch.append(.callback(CallbackRecord(callback: .contentUpdate, activityID: "act", seq: 2, receivedAt: 6)))
            #expect(try dropped.insertRows(of: batch) == [1, 1, 1])
            try dropped.addMalformed(line: 1, cause: .wrongType, problem: "seq: expected an integer")
            #expect(try contents(store).count == before.count + 6)
            dropped.rollback()
            #expect(try contents(store) == before)

            // What comes next gets the ids it would have had without the dropped file.
            let next = try store.beginFile(path: "/next", now: 0)
            #expect(try next.insert(apns("c")))
            try next.commit(sha256: "n", byteCount: 1, lines: 1, gzip: false)
            try store.commitBatch()
            let ids = try store.connection.prepare("SELECT (SELECT max(id) FROM files), (SELECT max(id) FROM apns)")
            #expect(try ids.step())
            #expect(ids.int(0) == 2 && ids.int(1) == 2)
            ids.reset()
            #expect(try contents(store).count == before.count + 2)
        }
    }

    @Test("A row the schema refuses fails the insert loudly, also when it comes 64 at a time")
    func multiRowConstraint() throws {
        try withStore { store in
            let statements = try store.recordStatements()
            let transaction = try store.beginFile(path: "/x", now: 0)
            var batch = RowBatch()
            for i in 0..<64 {
                batch.append(
                    .apns(
                        APNSRecord(
                            apnsID: "id-\(i)", sentAt: Int64(i), status: 200, pushToken: "t",
                            event: i == 30 ? "restart" : nil, apsTimestamp: 1)))
            }
            #expect(throws: DatabaseError.self) {
                try statements.insertRows(of: batch, fileID: transaction.fileID) { _, _ in }
            }
            transaction.rollback()
        }
    }

    @Test("A store whose views came from other rules gets today's views when it opens")
    func viewsRecreated() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("views.sqlite").path
        _ = try SQLiteStore(path: path)
        // Stand in for an older arrival: a different update_outcomes and no view version.
        let old = try SQLiteStore(path: path)
        try old.replaceViewForTesting("update_outcomes", sql: "CREATE VIEW update_outcomes AS SELECT 1 AS stale")
        #expect(try old.viewSQL("update_outcomes")?.contains("stale_timestamp") == false)
        let reopened = try SQLiteStore(path: path)
        let sql = try #require(try reopened.viewSQL("update_outcomes"))
        #expect(sql.contains("'stale_timestamp'") && sql.contains("\(Contract.activityLifetimeMS)"))
    }
}

@Suite("Store identity and read-only opening")
struct StoreIdentityTests {
    func applicationID(_ path: String) throws -> Int64 {
        let connection = try Connection(path: path, readOnly: true)
        let statement = try connection.prepare("PRAGMA application_id")
        #expect(try statement.step())
        defer { statement.reset() }
        return statement.int(0)
    }

    func tables(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, readOnly: true)
        let statement = try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        var names: [String] = []
        try statement.forEachRow { names.append($0.string(0) ?? "") }
        return names
    }

    @Test("A new store is marked with arrival's application_id")
    func marked() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        _ = try SQLiteStore(path: path)
        #expect(try applicationID(path) == 0x4152_5256)
        #expect(SQLiteStore.applicationID == 0x4152_5256)
    }

    @Test("Another program's database is refused by every opening, and left as it was")
    func foreign() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.db").path
        try Connection(path: path).execute("CREATE TABLE notes (body TEXT)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for open in [{ _ = try SQLiteStore(path: path) }, { _ = try SQLiteStore(readingAt: path) }]
            as [() throws -> Void]
        {
            do {
                try open()
                Issue.record("opened another program's database")
            } catch let error as DatabaseError {
                #expect(error.message.contains("no arrival store (it holds notes)"), "\(error)")
                #expect(error.diagnostic.category == .store)
                #expect(error.diagnostic.hint.contains("untouched"))
            }
        }
        #expect(try tables(path) == ["notes"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("A store of an older arrival (migrations, no mark) is read as it is and marked when next written")
    func olderStore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        _ = try SQLiteStore(path: path)
        try Connection(path: path).execute("PRAGMA application_id = 0")
        _ = try SQLiteStore(readingAt: path)
        #expect(try applicationID(path) == 0)  // reading changes nothing
        _ = try SQLiteStore(path: path)
        #expect(try applicationID(path) == Int64(SQLiteStore.applicationID))
    }

    @Test("Each kind's columns are its table's, in order, and as many as its rows' cells")
    func columnsMatchTables() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        _ = try SQLiteStore(path: path)
        let connection = try Connection(path: path)
        for kind in RecordKind.allCases {
            let info = try connection.prepare("SELECT name FROM pragma_table_info('\(kind.table)') ORDER BY cid")
            var names: [String] = []
            try info.forEachRow { names.append($0.string(0) ?? "") }
            #expect(Array(names.dropFirst(3)) == kind.columns, "\(kind)")
            #expect(names.prefix(3) == ["id", "record_key", "file_id"])
            #expect(kind.columnCount == kind.columns.count)
        }
    }

    @Test("An apns record without a provider keeps the hash arrival 0.8 stored it under; a provider changes it")
    func providerlessKeyIsStable() {
        var record = APNSRecord(
            apnsID: "1F0C6B52-7E0A-4C47-9B0E-3D2A55E0C1A9", sentAt: 1_795_252_443_412, status: 200, pushToken: "3f9c",
            activityID: "ride-4c1d", seq: 7, event: "update", apsTimestamp: 1_795_252_443, payloadBytes: 944,
            topic: "com.example.rides.push-type.liveactivity", pushType: "liveactivity", priority: 10,
            environment: "production", latencyMS: 41)
        func key(_ record: APNSRecord) -> UInt64 {
            var batch = RowBatch(capacity: 1)
            batch.append(.apns(record))
            return batch.rows[0].key
        }
        // `record_key` of this record in a store the arrival of commit 0ce893c wrote kept 20 bits of its hash
        // (1_882_458_626_104_214_764 & 0xFFFFF); keys now keep 42 (migration 0011 keyed such stores again).
        let old: UInt64 = 1_882_458_626_104_214_764 & 0xF_FFFF
        #expect(key(record) & 0xF_FFFF == old)
        #expect(key(record) == 7_529_835_065_448_056_044)
        record.provider = .apns
        #expect(key(record) == 7_529_835_065_448_056_044)
        record.provider = .fcm
        #expect(key(record) & 0xF_FFFF != old)
    }

    @Test("A store written before providers is upgraded in place: its malformed lines kept, its records still repeats")
    func upgradeToProviders() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        let old = try Connection(path: path)
        try old.execute("CREATE TABLE arrival_migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)")
        for (name, sql) in Migrations.all.prefix(4) {
            try old.execute(sql)
            try old.execute("INSERT INTO arrival_migrations VALUES ('\(name)', 0)")
        }
        try old.execute(
            """
            INSERT INTO files VALUES (1, 'abc', '/old.jsonl', 10, 0, 2, 1, 0, 1, 0);
            INSERT INTO malformed_lines (file_id, line, cause, problem) VALUES (1, 2, 'wrong_type', 'seq: expected an integer');
            INSERT INTO apns (record_key, file_id, apns_id, sent_at, status, push_token, aps_timestamp)
                VALUES (1882457741722325672, 1, 'a', 1795251600000, 200, 'ab', 1795251600);
            """)
        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations() == Migrations.all.map(\.name))
        let problems = try store.read { try $0.malformedProblems() }
        #expect(problems.count == 1 && problems.first?.problem == "seq: expected an integer")
        // The new cause and column are accepted.
        let file = try store.beginFile(path: "/new.jsonl", now: 0)
        try file.addMalformed(line: 1, cause: .invalidExchange, problem: "request.url: required, but absent")
        #expect(
            try file.insert(
                .apns(APNSRecord(apnsID: "a", sentAt: 1, status: 200, pushToken: "ab", apsTimestamp: 1, provider: .fcm))
            ))
        file.rollback()
    }

    @Test("Reading an empty or missing file refuses it and creates or changes nothing")
    func emptyAndMissing() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty.sqlite").path
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        #expect(throws: DatabaseError.self) { try SQLiteStore(readingAt: empty) }
        do {
            _ = try SQLiteStore(readingAt: empty)
        } catch {
            #expect(error.message == "'\(empty)' is empty, not an arrival store")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)

        let missing = directory.appendingPathComponent("none.sqlite").path
        do {
            _ = try SQLiteStore(readingAt: missing)
            Issue.record("opened a missing store")
        } catch {
            #expect(error.message == "no store at '\(missing)'")
            #expect(error.diagnostic.hint.hasPrefix("run 'arrival ingest PATH… --db \(missing)' first"))
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test("A store in a directory that does not exist is named as such, not as SQLite error 14")
    func missingDirectory() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("no/such/s.sqlite").path
        do {
            _ = try SQLiteStore(path: path)
            Issue.record("opened a store in a missing directory")
        } catch {
            let diagnostic = error.diagnostic
            #expect(
                diagnostic.message == "the directory '\(directory.path)/no/such' of the store '\(path)' does not exist")
            #expect(diagnostic.hint.hasPrefix("create it (mkdir -p"))
            #expect(!diagnostic.description.contains("SQLite error"))
        }
    }

    @Test("Reading a store leaves no -wal or -shm file beside it, and writes nothing")
    func readingLeavesNoFiles() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        _ = try SQLiteStore(path: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            let store = try SQLiteStore(readingAt: path)
            #expect(try store.appliedMigrations() == Migrations.all.map(\.name))
            #expect(throws: DatabaseError.self) { try store.connection.execute("CREATE TABLE mine (x)") }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["s.sqlite"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}

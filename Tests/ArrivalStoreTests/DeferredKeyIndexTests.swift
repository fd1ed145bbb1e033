import ArrivalHandOff
import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

/// A first load with its `record_key` indexes put off
/// (`RecordStatements+DeferredKeys.swift`) stores exactly what a load
/// with them stores, and the next write makes any it left off.
@Suite("Store: the key indexes of a first load")
struct DeferredKeyIndexTests {
    @Test("The key directory answers as a dictionary does, through growth and forgotten rows")
    func directoryAgreesWithDictionary() {
        var random = SplitMix(seed: 7)
        var directory = KeyDirectory(slots: 16)
        var model: [Int64: Int64] = [:]
        var nextID: Int64 = 1
        for round in 0..<6 {
            for _ in 0..<5_000 {
                // Keys in runs (as times with one hash apart) and anywhere; slots collide in both.
                let key =
                    random.next() % 2 == 0
                    ? Int64(bitPattern: random.next()) : Int64(random.next() % 64) << 20 | Int64(random.next() % 8)
                guard model[key] == nil else {
                    #expect(directory.id(of: key) == model[key])
                    continue
                }
                #expect(directory.id(of: key) == nil)
                directory.insert(key, id: nextID)
                model[key] = nextID
                nextID += 1
            }
            #expect(directory.count == model.count)
            // A rolled-back file: the last rows are forgotten, their ids given again.
            let last = nextID - Int64(100 * (round + 1))
            directory.removeIDs(after: last)
            model = model.filter { $0.value <= last }
            nextID = last + 1
            #expect(directory.count == model.count)
            for (key, id) in model { #expect(directory.id(of: key) == id) }
        }
        #expect(directory.slots * 7 >= directory.count * 10)
    }

    /// One step of a load: a file's records in batches, keys forced on some, committed or rolled back.
    struct File {
        var records: [Record]
        /// Records inserted one by one under a forced key (a hash collision made on purpose).
        var forced: [(Record, UInt64)] = []
        var rolledBack = false
    }

    /// Four files of renders (times out of order), apns records (times in
    /// order) and callbacks; repeats within a batch, across files and of a
    /// rolled-back file's records; two different records forced onto one key.
    static func files() -> [File] {
        var random = SplitMix(seed: 42)
        let day: Int64 = 1_795_219_200_000
        var sent = day
        func record(_ index: Int) -> Record {
            switch random.next() % 3 {
            case 0:
                sent += Int64(random.next() % 5_000)
                return .apns(
                    APNSRecord(
                        apnsID: "id-\(index)", sentAt: sent, status: 200, pushToken: "t\(index % 7)",
                        activityID: "a\(index % 40)", seq: Int64(index), event: "update", apsTimestamp: sent / 1000))
            case 1:
                return .render(
                    RenderRecord(
                        activityID: "a\(index % 40)", seq: Int64(index),
                        renderedAt: day + Int64(random.next() % 28_800_000),
                        surface: index % 2 == 0 ? "lock_screen" : nil))
            default:
                return .callback(
                    CallbackRecord(
                        callback: .contentUpdate, activityID: "a\(index % 40)", seq: Int64(index),
                        receivedAt: day + Int64(random.next() % 28_800_000)))
            }
        }
        var files: [File] = []
        var index = 0
        for (count, rolledBack) in [(700, false), (300, true), (500, false), (400, false)] {
            var records: [Record] = []
            for _ in 0..<count {
                index += 1
                let fresh = record(index)
                records.append(fresh)
                // Repeats: at once (often the same batch), and of earlier files, the rolled-back one too.
                if random.next() % 9 == 0 { records.append(fresh) }
                if let earlier = files.randomElement(using: &random)?.records, random.next() % 6 == 0 {
                    records.append(earlier[Int(random.next() % UInt64(earlier.count))])
                }
            }
            files.append(File(records: records, rolledBack: rolledBack))
        }
        let a = Record.render(RenderRecord(activityID: "x", seq: 1, renderedAt: day))
        let b = Record.render(RenderRecord(activityID: "y", seq: 1, renderedAt: day))
        files[2].forced = [(a, 4242), (b, 4242), (b, 4242), (a, 4242)]
        return files
    }

    enum Mode: CustomStringConvertible {
        case indexed
        case deferred(DeferredKeyIndex.Limits)
        var description: String {
            switch self {
            case .indexed: "indexed"
            case .deferred(let limits): "deferred \(limits.sampleRows) \(limits.byteLimit)"
            }
        }
    }

    /// Every row of the record tables, `record_repeats` and (unless left
    /// out: it holds the time of ingest) `files`, in id order, as JSON arrays;
    /// without `record_key` unless `keys` (a migration makes them again).
    static func dump(_ store: SQLiteStore, files: Bool = true, keys: Bool = true) throws -> [String] {
        var rows: [String] = []
        for table in ["apns", "renders", "callbacks", "record_repeats"] + (files ? ["files"] : []) {
            var columns: [String] = []
            try store.connection.prepare("SELECT name FROM pragma_table_info('\(table)')").forEachRow {
                columns.append($0.string(0) ?? "")
            }
            if !keys { columns.removeAll { $0 == "record_key" } }
            let query = try store.connection.prepare(
                "SELECT json_array(\(columns.joined(separator: ", "))) FROM \(table) ORDER BY \(columns.prefix(3).joined(separator: ", "))"
            )
            try query.forEachRow { rows.append(table + " " + ($0.string(0) ?? "")) }
        }
        return rows
    }

    static func indexNames(_ store: SQLiteStore) throws -> Set<String> {
        var names: Set<String> = []
        try store.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").forEachRow {
            names.insert($0.string(0) ?? "")
        }
        return names
    }

    /// Loads `files` into a new store; `check` sees the store after each
    /// file, `committed` the indexes it has once the load committed. Then
    /// another connection writes one more file, which repeats a record of
    /// each kind and adds one: that write has every index.
    static func load(
        _ files: [File], mode: Mode, in directory: URL, check: (Int, SQLiteStore) throws -> Void = { _, _ in },
        committed: (Set<String>) -> Void = { _ in }
    ) throws -> [String] {
        let path = directory.appendingPathComponent("\(UUID()).sqlite").path
        let store = try SQLiteStore(path: path)
        if case .deferred(let limits) = mode {
            store.deferredKeyLimits = limits
            #expect(store.beginBulkLoad())
        }
        for (number, file) in files.enumerated() {
            let transaction = try store.beginFile(path: "/f\(number)", now: 0)
            for start in stride(from: 0, to: file.records.count, by: 37) {
                var batch = RowBatch(capacity: 37)
                for record in file.records[start..<min(start + 37, file.records.count)] { batch.append(record) }
                batch.computeKeys()
                _ = try transaction.insertRows(of: batch)
            }
            for (record, key) in file.forced { try transaction.insert(record, key: key) }
            if file.rolledBack {
                transaction.rollback()
            } else {
                try transaction.commit(sha256: "sha-\(number)", byteCount: 1, lines: file.records.count, gzip: false)
            }
            try check(number, store)
        }
        try store.commitBatch()
        store.endBulkLoad()
        committed(try indexNames(store))

        let later = try SQLiteStore(path: path)
        var batch = RowBatch(capacity: 4)
        for kind in RecordKind.allCases {
            if let earlier = files[0].records.first(where: { $0.kind == kind }) { batch.append(earlier) }
        }
        batch.append(.render(RenderRecord(activityID: "later", seq: 1, renderedAt: 7)))
        batch.computeKeys()
        let transaction = try later.beginFile(path: "/later", now: 0)
        #expect(try transaction.insertRows(of: batch) == [0, 1, 0])
        try transaction.commit(sha256: "sha-later", byteCount: 1, lines: batch.rows.count, gzip: false)
        try later.commitBatch()
        #expect(try indexNames(later).isSuperset(of: Migrations.recordKeyIndexNames))
        let integrity = try later.connection.prepare("PRAGMA integrity_check")
        #expect(try integrity.step() && integrity.string(0) == "ok")
        integrity.reset()
        return try dump(later)
    }

    @Test("Put off, kept in order, or built when memory runs out: the same rows, keys, ids and repeats")
    func sameRowsEveryWay() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = Self.files()
        let expected = try Self.load(files, mode: .indexed, in: directory)
        #expect(expected.count > 1_500)
        #expect(expected.contains { $0.hasPrefix("record_repeats") })

        // Put off until the commit: nothing judged, every table in the directories.
        var whole = DeferredKeyIndex.Limits()
        whole.initialSlots = 16  // grows many times over
        let put = try Self.load(
            files, mode: .deferred(whole), in: directory,
            check: { _, store in
                #expect(store.cachedStatements?.deferred?.directories.allSatisfy { $0 != nil } == true)
            },
            committed: { #expect($0.isDisjoint(with: Migrations.recordKeyIndexNames)) })
        #expect(put == expected)

        // Judged on 64 rows: the apns records (in order) keep only their recent windows' keys, the renders (not)
        // all of theirs; neither gets its index back unless a row older than those windows comes.
        var judged = whole
        judged.sampleRows = 64
        let ordered = try Self.load(
            files, mode: .deferred(judged), in: directory,
            check: { _, store in
                let directories = store.cachedStatements?.deferred?.directories
                #expect(directories?[RecordKind.render.index] != nil)
            })
        #expect(ordered == expected)

        // Room for a few hundred keys: the indexes are built during the first file, and the load goes on.
        var small = whole
        small.byteLimit = 3 * 256 * KeyDirectory.bytesPerSlot
        let built = try Self.load(
            files, mode: .deferred(small), in: directory,
            check: { _, store in #expect(store.cachedStatements?.deferred == nil) },
            committed: { #expect($0.isSuperset(of: Migrations.recordKeyIndexNames)) })
        #expect(built == expected)
    }

    /// A sender's log over eleven time windows: apns records in order, some
    /// repeated at once, then late ones: repeats of the first records and a
    /// new record of the first window.
    static func senderLog() -> [File] {
        var random = SplitMix(seed: 51)
        let day: Int64 = 1_795_219_200_000
        var sent = day
        var records: [Record] = []
        for index in 0..<3_000 {
            sent += 1_000 + Int64(random.next() % 6_000)
            let record = Record.apns(
                APNSRecord(
                    apnsID: "s-\(index)", sentAt: sent, status: 200, pushToken: "t\(index % 11)",
                    activityID: "a\(index % 50)", seq: Int64(index), event: "update", apsTimestamp: sent / 1000))
            records.append(record)
            if random.next() % 13 == 0 { records.append(record) }
        }
        let late = [
            records[3], records[10],
            .apns(
                APNSRecord(
                    apnsID: "late", sentAt: day + 5, status: 200, pushToken: "t0", activityID: "a0", seq: 0,
                    event: "start", apsTimestamp: day / 1000)),
            records[2_000],
        ]
        return [File(records: records), File(records: late)]
    }

    @Test(
        "A sender's log keeps only its recent windows' keys; a row older than those has the index made, and the rows, keys and ids are the indexed load's"
    )
    func windowedSenderLog() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = Self.senderLog()
        let expected = try Self.load(files, mode: .indexed, in: directory)
        var limits = DeferredKeyIndex.Limits()
        limits.sampleRows = 64
        limits.windowedKeys = 128
        var largestDirectory = 0
        let windowed = try Self.load(
            files, mode: .deferred(limits), in: directory,
            check: { number, store in
                let directories = store.cachedStatements?.deferred?.directories
                if number == 0 {
                    // Eleven windows of about 270 keys each, but the directory holds three at most.
                    largestDirectory = directories?[RecordKind.apns.index]?.count ?? -1
                } else {
                    // The late rows are older than the directory's windows: the index was made for them.
                    #expect(directories?[RecordKind.apns.index] == nil)
                }
            },
            committed: { #expect($0.contains("apns_record_key")) })
        #expect(largestDirectory > 0 && largestDirectory < 1_200, "\(largestDirectory) keys held")
        #expect(windowed == expected)
        // Without late rows the index is left to the next write, and the rows are the same.
        let inOrder = try Self.load(
            [files[0]], mode: .deferred(limits), in: directory,
            committed: { #expect(!$0.contains("apns_record_key")) })
        #expect(inOrder == (try Self.load([files[0]], mode: .indexed, in: directory)))
    }

    @Test("A first load rolled back whole leaves an empty store with its key indexes")
    func rolledBackWhole() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.sqlite").path
        let store = try SQLiteStore(path: path)
        #expect(store.beginBulkLoad())
        let transaction = try store.beginFile(path: "/f", now: 0)
        _ = try transaction.insertRows(
            of: {
                var batch = RowBatch(capacity: 8)
                for seq in 0..<8 {
                    batch.append(.render(RenderRecord(activityID: "a", seq: Int64(seq), renderedAt: 1)))
                }
                batch.computeKeys()
                return batch
            }())
        #expect(!(try Self.indexNames(store)).contains("renders_record_key"))
        store.abandonBatch()  // what a killed run comes to
        #expect(store.cachedStatements?.deferred == nil)
        store.endBulkLoad()
        // Another connection, as the next run's, finds the indexes and no rows.
        let reopened = try SQLiteStore(path: path)
        #expect(try Self.indexNames(reopened).isSuperset(of: Migrations.recordKeyIndexNames))
        #expect(try Self.dump(reopened).isEmpty)
    }

    @Test("A row the store refuses fails its file with SQLite's message, put off or not, and the load goes on")
    func refusedRow() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A content_update without an activity breaks a CHECK (the decoder never makes one).
        let broken = Record.callback(CallbackRecord(callback: .contentUpdate, seq: 3, receivedAt: 5))
        func good(_ seq: Int) -> Record {
            .callback(
                CallbackRecord(callback: .contentUpdate, activityID: "a", seq: Int64(seq), receivedAt: Int64(seq)))
        }
        var dumps: [[String]] = []
        for mode in [Mode.indexed, .deferred(DeferredKeyIndex.Limits())] {
            let store = try SQLiteStore(path: directory.appendingPathComponent("\(dumps.count).sqlite").path)
            if case .deferred = mode { #expect(store.beginBulkLoad()) }
            for (number, brokenAt) in [(0, nil), (1, 12), (2, nil)] as [(Int, Int?)] {
                let transaction = try store.beginFile(path: "/f\(number)", now: 0)
                var batch = RowBatch(capacity: 30)
                for seq in 0..<30 { batch.append(seq == brokenAt ? broken : good(number * 20 + seq)) }
                batch.computeKeys()
                if brokenAt != nil {
                    let error = #expect(throws: DatabaseError.self) { try transaction.insertRows(of: batch) }
                    #expect(error?.message.contains("CHECK constraint failed") == true, "\(mode)")
                    transaction.rollback()
                    continue
                }
                _ = try transaction.insertRows(of: batch)
                try transaction.commit(sha256: "sha-\(number)", byteCount: 1, lines: 30, gzip: false)
            }
            try store.commitBatch()
            store.endBulkLoad()
            dumps.append(try Self.dump(store))
        }
        #expect(dumps[0] == dumps[1])
        // Files 0 and 2; file 1's records 40 to 49, rolled back with it, are file 2's.
        #expect(dumps[0].filter { $0.hasPrefix("callbacks") }.count == 60)
    }

    @Test("A store of the UNIQUE-column schema is copied to the indexed one: the same rows and ids, still unique")
    func upgradeToKeyIndexes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        let old = try Connection(path: path)
        try old.execute("CREATE TABLE arrival_migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let before = Migrations.all.firstIndex { $0.name == "0007_record_key_indexes" } ?? 0
        for (name, sql) in Migrations.all.prefix(before) {
            try old.execute(sql)
            try old.execute("INSERT INTO arrival_migrations VALUES ('\(name)', 0)")
        }
        try old.execute(
            """
            INSERT INTO files VALUES (1, 'abc', '/old.jsonl', 10, 0, 4, 3, 0, 0, 0);
            INSERT INTO apns (id, record_key, file_id, apns_id, sent_at, status, push_token, aps_timestamp, provider)
                VALUES (7, 1882457741722325672, 1, 'a', 1795251600000, 200, 'ab', 1795251600, 'fcm');
            INSERT INTO renders (id, record_key, file_id, activity_id, seq, rendered_at) VALUES (3, 99, 1, 'r', 1, 2);
            INSERT INTO callbacks (id, record_key, file_id, callback, push_token, received_at)
                VALUES (5, 12, 1, 'push_to_start_token', 'p', 4);
            INSERT INTO files VALUES (2, 'def', '/again.jsonl', 10, 0, 3, 0, 3, 0, 0);
            INSERT INTO record_repeats VALUES (2, 'render', 99), (2, 'callback', 12),
                (2, 'apns', 1882457741722325672);
            """)
        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations() == Migrations.all.map(\.name))
        let names = try Self.indexNames(store)
        #expect(names.isSuperset(of: Migrations.recordKeyIndexNames))
        #expect(!names.contains("sqlite_autoindex_apns_1"))
        // The same rows and ids; keys made again from the rows (migration 0011) whatever they were.
        func key(_ record: Record) -> Int64 {
            var batch = RowBatch(capacity: 1)
            batch.append(record)
            return Int64(bitPattern: batch.rows[0].key)
        }
        let apnsKey = key(
            .apns(
                APNSRecord(
                    apnsID: "a", sentAt: 1_795_251_600_000, status: 200, pushToken: "ab", apsTimestamp: 1_795_251_600,
                    provider: .fcm)))
        let renderKey = key(.render(RenderRecord(activityID: "r", seq: 1, renderedAt: 2)))
        let callbackKey = key(.callback(CallbackRecord(callback: .pushToStartToken, pushToken: "p", receivedAt: 4)))
        #expect(
            try Self.dump(store).filter { !$0.hasPrefix("files") && !$0.hasPrefix("record_repeats") } == [
                #"apns [7,\#(apnsKey),1,"a",1795251600000,200,null,"ab",null,null,null,1795251600,null,null,null,null,null,null,"fcm",null]"#,
                #"renders [3,\#(renderKey),1,"r",1,2,null,null,null,null,null,null,null]"#,
                #"callbacks [5,\#(callbackKey),1,"push_to_start_token",null,"p",null,null,4,null,null,null,null,null,null]"#,
            ])
        // Each repeat names its record's id (migration 0008), which finds the owner, and is counted (0012).
        #expect(
            try Self.dump(store).filter { $0.hasPrefix("record_repeats") } == [
                #"record_repeats [2,"apns",7,1]"#, #"record_repeats [2,"callback",5,1]"#,
                #"record_repeats [2,"render",3,1]"#,
            ])
        // Still one row per key.
        #expect(throws: DatabaseError.self) {
            try store.connection.execute(
                """
                INSERT INTO renders (record_key, file_id, activity_id, seq, rendered_at) VALUES (\(renderKey), 1, 's', 2, 3)
                """)
        }
    }

    @Test("A store of before contract 3.0 takes pending states after migration 0009, its rows and ids kept")
    func upgradeToPendingState() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        let old = try Connection(path: path)
        try old.execute("CREATE TABLE arrival_migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let before = try #require(Migrations.all.firstIndex { $0.name == "0009_pending_state" })
        for (name, sql) in Migrations.all.prefix(before) {
            try old.execute(sql)
            try old.execute("INSERT INTO arrival_migrations VALUES ('\(name)', 0)")
        }
        try old.execute(
            """
            INSERT INTO files VALUES (1, 'abc', '/old.jsonl', 10, 0, 2, 2, 0, 0, 0);
            INSERT INTO callbacks (id, record_key, file_id, callback, activity_id, state, received_at)
                VALUES (5, 12, 1, 'activity_state', 'a', 'ended', 4);
            INSERT INTO callbacks (id, record_key, file_id, callback, activity_id, seq, state, received_at)
                VALUES (6, 13, 1, 'content_update', 'a', 1, 'active', 5);
            """)
        // Before: the schema refuses a pending state.
        #expect(throws: DatabaseError.self) {
            try old.execute(
                "INSERT INTO callbacks (record_key, file_id, callback, activity_id, state, received_at) "
                    + "VALUES (14, 1, 'activity_state', 'a', 'pending', 6)")
        }
        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations() == Migrations.all.map(\.name))
        #expect(
            try Self.dump(store, keys: false).filter { $0.hasPrefix("callbacks") } == [
                #"callbacks [5,1,"activity_state","a",null,null,"ended",4,null,null,null,null,null,null]"#,
                #"callbacks [6,1,"content_update","a",null,1,"active",5,null,null,null,null,null,null]"#,
            ])
        try store.connection.execute(
            "INSERT INTO callbacks (record_key, file_id, callback, activity_id, state, received_at) "
                + "VALUES (14, 1, 'activity_state', 'a', 'pending', 6)")
        #expect(try Self.indexNames(store).contains("callbacks_record_key"))
        #expect(throws: DatabaseError.self) {
            try store.connection.execute(
                "INSERT INTO callbacks (record_key, file_id, callback, activity_id, state, received_at) "
                    + "VALUES (14, 1, 'activity_state', 'b', 'active', 7)")
        }
        #expect(throws: DatabaseError.self) {
            try store.connection.execute(
                "INSERT INTO callbacks (record_key, file_id, callback, activity_id, state, received_at) "
                    + "VALUES (15, 1, 'activity_state', 'b', 'paused', 7)")
        }
    }

    @Test("A store of before broadcasts takes them after migration 0010, its rows and ids kept")
    func upgradeToBroadcasts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        let old = try Connection(path: path)
        try old.execute("CREATE TABLE arrival_migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let before = try #require(Migrations.all.firstIndex { $0.name == "0010_broadcast_channels" })
        for (name, sql) in Migrations.all.prefix(before) {
            try old.execute(sql)
            try old.execute("INSERT INTO arrival_migrations VALUES ('\(name)', 0)")
        }
        try old.execute(
            """
            INSERT INTO files VALUES (1, 'abc', '/old.jsonl', 10, 0, 2, 2, 0, 0, 0);
            INSERT INTO apns (id, record_key, file_id, apns_id, sent_at, status, push_token, aps_timestamp)
                VALUES (7, 21, 1, 'a', 5, 200, 'ab', 1);
            INSERT INTO callbacks (id, record_key, file_id, callback, activity_id, state, received_at)
                VALUES (5, 12, 1, 'activity_state', 'a', 'pending', 4);
            """)
        let store = try SQLiteStore(path: path)
        #expect(try store.appliedMigrations() == Migrations.all.map(\.name))
        #expect(
            try Self.dump(store, files: false, keys: false) == [
                #"apns [7,1,"a",5,200,null,"ab",null,null,null,1,null,null,null,null,null,null,null,null]"#,
                #"callbacks [5,1,"activity_state","a",null,null,"pending",4,null,null,null,null,null,null]"#,
            ])
        #expect(try Self.indexNames(store).isSuperset(of: Migrations.recordKeyIndexNames + ["apns_broadcasts"]))
        let insert =
            "INSERT INTO apns (record_key, file_id, apns_id, sent_at, status, push_token, activity_id, "
            + "aps_timestamp, channel_id) VALUES "
        try store.connection.execute(insert + "(22, 1, 'b', 6, 200, NULL, NULL, 1, 'ch')")
        try store.connection.execute(
            "INSERT INTO callbacks (record_key, file_id, callback, activity_id, received_at, channel_id) "
                + "VALUES (13, 1, 'channel_subscription', 'a', 5, 'ch')")
        // A broadcast with a token or an activity, an empty channel, a push with neither: refused.
        for values in [
            "(23, 1, 'c', 6, 200, 'ab', NULL, 1, 'ch')", "(24, 1, 'c', 6, 200, NULL, 'a', 1, 'ch')",
            "(25, 1, 'c', 6, 200, NULL, NULL, 1, '')", "(26, 1, 'c', 6, 200, NULL, NULL, 1, NULL)",
        ] {
            #expect(throws: DatabaseError.self) { try store.connection.execute(insert + values) }
        }
        #expect(throws: DatabaseError.self) {
            try store.connection.execute(
                "INSERT INTO callbacks (record_key, file_id, callback, activity_id, received_at) "
                    + "VALUES (14, 1, 'channel_subscription', 'a', 5)")
        }
    }
}

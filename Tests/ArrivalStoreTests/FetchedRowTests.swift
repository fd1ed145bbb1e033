import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

/// The cursors' rows are copied out of SQLite on a thread of their own
/// (``Statement/forEachFetchedRow(kinds:_:)``): the same values, in the
/// same order, as reading the statement itself; errors and early stops
/// leave the connection usable.
@Suite("Rows read ahead")
struct FetchedRowTests {
    /// A table of `count` rows with integers, NULLs, empty and long texts (some longer than a batch's arena).
    func withTable(rows count: Int, _ body: (Connection) throws -> Void) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try Connection(path: directory.appendingPathComponent("t.sqlite").path)
        try connection.execute(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT, m INTEGER);
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < \(count))
            INSERT INTO t (id, n, s, m)
            SELECT i,
                   CASE WHEN i % 7 = 0 THEN NULL ELSE i * 9223372036854 % 9223372036854775807 - (i % 3) * 4611686018427387904 END,
                   CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN '' WHEN i % 997 = 0 THEN printf('%.*c', 1500000, 'x')
                        ELSE 'é-' || i || char(0x1F600) END,
                   CASE WHEN i % 5 = 0 THEN NULL ELSE -i END
            FROM k;
            """)
        try body(connection)
    }

    typealias Values = (id: Int64, n: Int64?, s: String?, m: Int64?, sBytes: [UInt8]?)

    @Test("Every row and column as the statement reads it, across many batches")
    func sameRows() throws {
        try withTable(rows: 5_000) { connection in
            let sql = "SELECT id, n, s, m FROM t ORDER BY id"
            var direct: [Values] = []
            try connection.prepare(sql).forEachRow { row in
                direct.append(
                    (
                        row.int(0), row.optionalInt(1), row.string(2), row.optionalInt(3),
                        row.string(2).map { Array($0.utf8) }
                    ))
            }
            var fetched: [Values] = []
            var repeatsPrevious = 0
            var previous: [UInt8]?
            try connection.prepare(sql).forEachFetchedRow(kinds: [.int, .int, .text, .int]) { row in
                let bytes = row.withText(2) { $0.map { Array($0) } }
                if row.text(2, equals: previous) { repeatsPrevious += 1 }
                previous = bytes
                fetched.append((row.int(0), row.optionalInt(1), row.string(2), row.optionalInt(3), bytes))
            }
            #expect(fetched.count == 5_000)
            #expect(direct.count == fetched.count)
            for (a, b) in zip(direct, fetched) {
                #expect(a.id == b.id && a.n == b.n && a.s == b.s && a.m == b.m && a.sBytes == b.sBytes)
            }
            #expect(repeatsPrevious == 0)
            // NULL reads as 0 through int(), as sqlite3_column_int64 reads it.
            try connection.prepare("SELECT n FROM t WHERE n IS NULL LIMIT 1").forEachFetchedRow(kinds: [.int]) {
                #expect($0.int(0) == 0 && $0.optionalInt(0) == nil)
            }
        }
    }

    @Test("A text equal to the row before's shares its bytes; every other text reads back as itself")
    func repeatedTexts() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try Connection(path: directory.appendingPathComponent("r.sqlite").path)
        // Runs of one device's rows (the order a store keeps), broken by NULLs, empty texts, texts
        // of the same length with other bytes, and a text that repeats two rows back, not one.
        try connection.execute(
            """
            CREATE TABLE r (id INTEGER PRIMARY KEY, a TEXT, b TEXT);
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 4000)
            INSERT INTO r (id, a, b)
            SELECT i,
                   CASE WHEN i % 29 = 0 THEN NULL WHEN i % 31 = 0 THEN '' ELSE 'device-' || (i / 10 % 10) END,
                   CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN 'ab' WHEN 2 THEN 'ba' ELSE 'ab' END
            FROM k;
            """)
        let sql = "SELECT a, b FROM r ORDER BY id"
        var direct: [[[UInt8]?]] = []
        try connection.prepare(sql).forEachRow { row in
            direct.append([row.string(0).map { Array($0.utf8) }, row.string(1).map { Array($0.utf8) }])
        }
        var fetched: [[[UInt8]?]] = []
        try connection.prepare(sql).forEachFetchedRow(kinds: [.text, .text]) { row in
            fetched.append([row.withText(0) { $0.map { Array($0) } }, row.withText(1) { $0.map { Array($0) } }])
        }
        #expect(fetched.count == 4000)
        #expect(fetched == direct)
        #expect(direct.contains { $0[0] == [] } && direct.contains { $0[0] == nil })
    }

    @Test("A body that throws stops the reading thread; the connection answers the next query")
    func stopsEarly() throws {
        struct Stop: Error {}
        try withTable(rows: 20_000) { connection in
            let scan = try connection.prepare("SELECT id, n, s, m FROM t ORDER BY id")
            var seen = 0
            #expect(throws: Stop.self) {
                try scan.forEachFetchedRow(kinds: [.int, .int, .text, .int]) { _ in
                    seen += 1
                    if seen == 1_500 { throw Stop() }
                }
            }
            #expect(seen == 1_500)
            // The statement was reset: it runs again from its first row, and so does another.
            var first: Int64?
            try scan.forEachFetchedRow(kinds: [.int, .int, .text, .int]) { row in
                if first == nil { first = row.int(0) }
            }
            #expect(first == 1)
            let count = try connection.prepare("SELECT count(*) FROM t")
            #expect(try count.step() && count.int(0) == 20_000)
            count.reset()
        }
    }

    @Test("A query that fails midway fails the cursor with SQLite's error")
    func failsLoudly() throws {
        try withTable(rows: 3_000) { connection in
            // abs() of the smallest integer overflows when the scan reaches that row.
            try connection.execute("UPDATE t SET m = -9223372036854775807 - 1 WHERE id = 2500")
            var seen = 0
            #expect(throws: DatabaseError.self) {
                try connection.prepare("SELECT id, abs(m) FROM t ORDER BY id").forEachFetchedRow(kinds: [.int, .int]) {
                    _ in seen += 1
                }
            }
            #expect(seen < 2_500)
        }
    }

    @Test("Another statement of the same connection can be run while a cursor reads ahead")
    func lookupWhileReading() throws {
        try withTable(rows: 10_000) { connection in
            let lookup = SQLiteSnapshot.lookup(try connection.prepare("SELECT s FROM t WHERE id = ?"))
            var mismatches = 0
            try connection.prepare("SELECT id, s FROM t ORDER BY id").forEachFetchedRow(kinds: [.int, .text]) { row in
                if row.int(0) % 10 == 0, try lookup.text(ofRow: row.int(0)) != (row.string(1) ?? "") {
                    mismatches += 1
                }
            }
            #expect(mismatches == 0)
        }
    }
}

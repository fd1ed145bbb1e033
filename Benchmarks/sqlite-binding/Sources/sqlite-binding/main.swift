import CSQLite3
import Foundation
import GRDB

// Inserts ROWS rows shaped like arrival's `apns` rows (17 values, a UNIQUE
// de-duplication key, WAL with synchronous=NORMAL, 16 KiB pages, a commit
// every 200,000 rows) into a fresh database, four ways, RUNS times each in
// turn, and prints the median seconds and rows per second of each:
//   c-single     the C API, one prepared single-row INSERT, strings bound without a copy
//   c-multi64    the C API, 64 rows per run of one prepared INSERT (what arrival does)
//   grdb-single  GRDB, one cached single-row statement, arguments as StatementArguments
//   grdb-multi64 GRDB, 64 rows per run of one cached statement

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rows = arguments.first ?? 2_000_000
let runs = arguments.dropFirst().first ?? 3

let schema = """
    CREATE TABLE apns (
        id INTEGER PRIMARY KEY, record_key INTEGER NOT NULL UNIQUE, file_id INTEGER NOT NULL,
        apns_id TEXT NOT NULL, sent_at INTEGER NOT NULL, status INTEGER NOT NULL, reason TEXT,
        push_token TEXT NOT NULL, activity_id TEXT, seq INTEGER,
        event TEXT CHECK (event = 'start' OR event = 'update' OR event = 'end'),
        aps_timestamp INTEGER NOT NULL, payload_bytes INTEGER, topic TEXT, push_type TEXT,
        priority INTEGER, environment TEXT, latency_ms INTEGER)
    """
let columns = "record_key, file_id, apns_id, sent_at, status, reason, push_token, activity_id, seq, event, aps_timestamp, payload_bytes, topic, push_type, priority, environment, latency_ms"
func insertSQL(rows: Int) -> String {
    let row = "(" + Array(repeating: "?", count: 17).joined(separator: ", ") + ")"
    return "INSERT OR IGNORE INTO apns (\(columns)) VALUES " + Array(repeating: row, count: rows).joined(separator: ", ")
}

let uuid = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
let token = "a3f1c9e2b7d4e6f8a3f1c9e2b7d4e6f8a3f1c9e2b7d4e6f8a3f1c9e2b7d4e6f8"
let topic = "com.example.sportsapp.push-type.liveactivity"
let base: Int64 = 1_795_000_000_000
@inline(__always) func key(_ i: Int) -> Int64 { ((base + Int64(i)) << 20) | Int64((UInt64(i) &* 2_654_435_761) & 0xF_FFFF) }

func freshPath() -> String {
    let path = NSTemporaryDirectory() + "sqlite-binding.sqlite"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

func check(_ rc: Int32, _ db: OpaquePointer?) {
    guard rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW else {
        fatalError("SQLite error \(rc): \(String(cString: sqlite3_errmsg(db)))")
    }
}

func runC(perStatement: Int) -> Double {
    let path = freshPath()
    var db: OpaquePointer?
    check(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil), db)
    check(sqlite3_exec(db, "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536; " + schema, nil, nil, nil), db)
    var statement: OpaquePointer?
    check(sqlite3_prepare_v3(db, insertSQL(rows: perStatement), -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), db)
    let start = Date()
    check(sqlite3_exec(db, "BEGIN", nil, nil, nil), db)
    uuid.utf8CString.withUnsafeBufferPointer { u in
        token.utf8CString.withUnsafeBufferPointer { t in
            topic.utf8CString.withUnsafeBufferPointer { p in
                var i = 0
                while i < rows {
                    for r in 0..<perStatement {
                        let b = Int32(r * 17)
                        let n = i + r
                        sqlite3_bind_int64(statement, b + 1, key(n))
                        sqlite3_bind_int64(statement, b + 2, 1)
                        sqlite3_bind_text(statement, b + 3, u.baseAddress, 36, nil)
                        sqlite3_bind_int64(statement, b + 4, base + Int64(n))
                        sqlite3_bind_int64(statement, b + 5, 200)
                        sqlite3_bind_null(statement, b + 6)
                        sqlite3_bind_text(statement, b + 7, t.baseAddress, 64, nil)
                        sqlite3_bind_text(statement, b + 8, u.baseAddress, 36, nil)
                        sqlite3_bind_int64(statement, b + 9, Int64(n))
                        sqlite3_bind_text(statement, b + 10, "update", 6, nil)
                        sqlite3_bind_int64(statement, b + 11, base / 1000 + Int64(n))
                        sqlite3_bind_int64(statement, b + 12, 1200)
                        sqlite3_bind_text(statement, b + 13, p.baseAddress, Int32(p.count - 1), nil)
                        sqlite3_bind_text(statement, b + 14, "liveactivity", 12, nil)
                        sqlite3_bind_int64(statement, b + 15, 10)
                        sqlite3_bind_text(statement, b + 16, "production", 10, nil)
                        sqlite3_bind_int64(statement, b + 17, 35)
                    }
                    check(sqlite3_step(statement), db)
                    sqlite3_reset(statement)
                    i += perStatement
                    if i % 200_000 == 0 { check(sqlite3_exec(db, "COMMIT; BEGIN", nil, nil, nil), db) }
                }
            }
        }
    }
    check(sqlite3_exec(db, "COMMIT", nil, nil, nil), db)
    sqlite3_finalize(statement)
    sqlite3_close_v2(db)
    return Date().timeIntervalSince(start)
}

func runGRDB(perStatement: Int) throws -> Double {
    let path = freshPath()
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA page_size=16384")
    }
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536; " + schema)
    }
    let start = Date()
    try queue.writeWithoutTransaction { db in
        let statement = try db.cachedStatement(sql: insertSQL(rows: perStatement))
        var values: [(any DatabaseValueConvertible)?] = []
        values.reserveCapacity(17 * perStatement)
        try db.execute(sql: "BEGIN")
        var i = 0
        while i < rows {
            values.removeAll(keepingCapacity: true)
            for r in 0..<perStatement {
                let n = i + r
                values.append(contentsOf: [
                    key(n), 1, uuid, base + Int64(n), 200, nil, token, uuid, Int64(n), "update",
                    base / 1000 + Int64(n), 1200, topic, "liveactivity", 10, "production", 35,
                ] as [(any DatabaseValueConvertible)?])
            }
            try statement.execute(arguments: StatementArguments(values))
            i += perStatement
            if i % 200_000 == 0 { try db.execute(sql: "COMMIT; BEGIN") }
        }
        try db.execute(sql: "COMMIT")
    }
    try queue.close()
    return Date().timeIntervalSince(start)
}

var times: [String: [Double]] = [:]
let names = ["c-single", "c-multi64", "grdb-single", "grdb-multi64"]
for _ in 0..<runs {
    times["c-single", default: []].append(runC(perStatement: 1))
    times["c-multi64", default: []].append(runC(perStatement: 64))
    times["grdb-single", default: []].append(try runGRDB(perStatement: 1))
    times["grdb-multi64", default: []].append(try runGRDB(perStatement: 64))
}
print("\(rows) rows, \(runs) runs each, interleaved; median seconds and rows/s (all runs):")
for name in names {
    let sorted = times[name]!.sorted()
    let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    let all = times[name]!.map { String(format: "%.2f", $0) }.joined(separator: " ")
    print("  \(name.padding(toLength: 13, withPad: " ", startingAt: 0)) \(String(format: "%6.2f", median)) s  \(Int(Double(rows) / median)) rows/s  (\(all))")
}

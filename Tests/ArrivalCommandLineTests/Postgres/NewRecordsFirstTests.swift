import ArrivalPostgresTestSupport
import ArrivalTestSupport
import Foundation
import Testing

/// Issue 52: a PostgreSQL batch whose records are all new goes in without
/// asking the store first; one that holds a record stored before, or a
/// record twice, is merged by asking. Either way the registry's counts, the
/// repeats and the report are SQLite's.
@Suite("PostgreSQL: new records first", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct NewRecordsFirstTests {
    static func render(_ activity: String, _ seq: Int) -> String {
        #"{"v":1,"kind":"render","activity_id":"\#(activity)","seq":\#(seq),"rendered_at":"2026-11-21T10:30:\#(String(format: "%02d", seq)).000Z"}"#
    }

    static func apns(_ seq: Int) -> String {
        #"{"v":1,"kind":"apns","apns_id":"id-\#(seq)","sent_at":"2026-11-21T10:29:\#(String(format: "%02d", seq)).000Z","status":200,"push_token":"tok","activity_id":"a","seq":\#(seq),"aps_timestamp":\#(1_795_260_540 + seq)}"#
    }

    /// What the store holds, as `arrival` prints it: every file's counts and the JSON report.
    static func holdings(_ db: String) throws -> String {
        let files = try run("arrival", ["files", "list", "--format", "json", "--db", db])
        let report = try run("arrival", ["report", "--format", "json", "--db", db])
        #expect(files.status == 0 && report.status == 0, "\(files) \(report)")
        // The files' paths and counts are the same on both engines; not when each was ingested (or skipped).
        let counts = files.stdout.replacingOccurrences(
            of: #""(ingested_at|first_seen_at)"\s*:\s*"[^"]*""#, with: #""$1":"""#, options: .regularExpression)
        return counts + report.stdout
    }

    @Test(
        "All new, a record stored before, a record twice in a batch, a file again under another name: the counts, repeats and report are SQLite's"
    )
    func fallbacks() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ lines: [String]) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        // Runs, each one `arrival ingest`: all new; a record stored before beside a new one (the try fails
        // and the batch is merged by asking); a record twice in one file and once more in another file of
        // the batch; the first file's lines again under another name; all new again (tried once more later).
        let runs: [[String]] = [
            [try write("a.jsonl", [Self.render("a", 1), Self.render("a", 2), Self.apns(1)])],
            [try write("b.jsonl", [Self.render("a", 2), Self.render("a", 3)])],
            [
                try write("c.jsonl", [Self.render("c", 1), Self.render("c", 1), Self.apns(2)]),
                try write("d.jsonl", [Self.render("c", 1), Self.render("d", 1)]),
            ],
            [try write("a-again.jsonl", [Self.render("a", 1), Self.render("a", 2), Self.apns(1), Self.apns(3)])],
            [try write("e.jsonl", [Self.render("e", 1), Self.apns(4)])],
            [try write("f.jsonl", [Self.render("f", 1)])],
        ]
        try TestDatabase.with { url in
            let sqlite = directory.appendingPathComponent("store.sqlite").path
            for files in runs {
                for db in [sqlite, url] {
                    let ingested = try run("arrival", ["ingest"] + files + ["--quiet", "--db", db])
                    #expect(ingested.status == 0, "\(ingested)")
                }
                #expect(try Self.holdings(url) == (try Self.holdings(sqlite)), "after \(files)")
            }
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.record_repeats") > 0)
            #expect(try TestDatabase.query(url, "SELECT sum(duplicate_count)::bigint FROM arrival.files") >= 5)
        }
    }

    @Test(
        "Batches merged on two connections at once: a batch holding records of the one merging waits for it; files, repeats and report are SQLite's"
    )
    func lanes() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ name: String, _ lines: some Sequence<String>) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        func renders(_ activity: String, _ seqs: ClosedRange<Int>) -> [String] {
            seqs.map {
                #"{"v":1,"kind":"render","activity_id":"\#(activity)","seq":\#($0),"rendered_at":"2026-11-21T10:30:00.\#(String(format: "%03d", $0 % 1000))Z"}"#
            }
        }
        // Each file is past a batch's rows (PostgresStore.batchRows, 16,384), so each is a batch of its
        // own, merged while the next is staged: "b2" repeats half of "b1" (it waits for b1's merge), "c"
        // is all new (merged beside "b2"), "a-again" is "a" whole under another name (claimed by bytes).
        let files = [
            try write("a.jsonl", renders("a", 1...20_000)),
            try write("b1.jsonl", renders("b", 1...20_000)),
            try write("b2.jsonl", renders("b", 10_001...30_000)),
            try write("c.jsonl", renders("c", 1...20_000) + [Self.apns(1)]),
            try write("a-again.jsonl", renders("a", 1...20_000)),
            try write("d.jsonl", renders("d", 1...100)),
        ]
        try TestDatabase.with { url in
            let sqlite = directory.appendingPathComponent("store.sqlite").path
            for db in [sqlite, url] {
                let ingested = try run("arrival", ["ingest"] + files + ["--quiet", "--db", db])
                #expect(ingested.status == 0, "\(ingested)")
            }
            #expect(try Self.holdings(url) == (try Self.holdings(sqlite)))
            #expect(try TestDatabase.query(url, "SELECT sum(duplicate_count)::bigint FROM arrival.files") == 10_000)
            // Ids follow the files' lines across the two connections.
            #expect(
                try TestDatabase.query(
                    url,
                    """
                    SELECT count(*) FROM (SELECT id, file_id, lag(file_id) OVER (ORDER BY id) AS before
                                          FROM arrival.renders) AS r WHERE r.file_id < r.before
                    """) == 0)
        }
    }
}

import ArrivalAnalysis
import ArrivalModel
import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalStore
import ArrivalTestSupport
import Foundation
import PostgresNIO
import Testing

/// The PostgreSQL store end to end, with the built `arrival` against the
/// test server (skipped, by name, without one): each test in a database of
/// its own, dropped after it.
@Suite("PostgreSQL store", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct PostgresStoreTests {
    /// The fleets of Scripts/golden.sh, and one with broadcast channels.
    static let fleets: [[String]] = [
        ["--activities", "300", "--seed", "101"],
        ["--activities", "500", "--seed", "202", "--inject", "stale-timestamps"],
        ["--activities", "400", "--seed", "303", "--inject", "large-payloads", "--inject", "lost-callbacks"],
        ["--activities", "400", "--seed", "404", "--lifecycle", "--providers"],
        ["--activities", "300", "--seed", "505", "--channels", "--lifecycle"],
    ]

    @Test("The same report, lost, tokens, activity, diff and gate from both engines, read in place; the same views")
    func sameReport() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var inputs = [packageRoot.appendingPathComponent("SampleData").path]
        for (index, fleet) in Self.fleets.enumerated() {
            let out = directory.appendingPathComponent("fleet-\(index)").path
            let simulated = try run("arrival", ["simulate", "--out", out] + fleet)
            #expect(simulated.status == 0, "\(simulated)")
            inputs.append(out)
        }
        for (index, input) in inputs.enumerated() {
            try TestDatabase.with { url in
                let sqlite = directory.appendingPathComponent("store-\(index).sqlite").path
                for db in [sqlite, url] {
                    let ingested = try run("arrival", ["ingest", input, "--quiet", "--db", db])
                    #expect(ingested.status == 0, "\(input): \(ingested)")
                    // Apple's example exports, of the sample's day (issue 54): the reports set them beside arrival's.
                    if index == 0 {
                        let imported = try run("arrival", ["apple", "import"] + appleExampleExports() + ["--db", db])
                        #expect(imported.status == 0, "\(imported)")
                    }
                }
                // The activity with the most lost updates, for `activity`.
                let lost = try run("arrival", ["lost", "--format", "json", "--db", sqlite])
                let listed = try JSONSerialization.jsonObject(with: Data(lost.stdout.utf8)) as? [String: Any]
                let activity = (listed?["updates"] as? [[String: Any]])?.first?["activity_id"] as? String
                #expect(activity != nil, "\(input): no lost update to show the activity of")
                for environment in [[:], ["ARRIVAL_PARTITION_ROWS": "97"]] {
                    // Read in place: a TMPDIR where nothing can be written does not matter to a store read whole.
                    var inPlace = environment
                    if environment.isEmpty { inPlace["TMPDIR"] = directory.appendingPathComponent("none/tmp").path }
                    for command in [
                        ["report", "--format", "json"], ["report", "--format", "markdown"],
                        ["report", "--format", "json", "--day", "2026-11-21"],
                        ["lost", "--format", "json"],
                        ["tokens", "--format", "json"],
                    ] + (activity.map { [["activity", $0, "--format", "json"]] } ?? []) {
                        let fromSQLite = try run("arrival", command + ["--db", sqlite], environment: environment)
                        let fromPostgres = try run("arrival", command + ["--db", url], environment: inPlace)
                        #expect(fromSQLite.status == 0, "\(command): \(fromSQLite)")
                        #expect(fromPostgres.status == fromSQLite.status, "\(command): \(fromPostgres)")
                        #expect(!fromSQLite.stdout.isEmpty)
                        #expect(
                            fromPostgres.stdout == fromSQLite.stdout,
                            "\(input) \(command) \(environment): the reports differ")
                    }
                }
                // diff (with its record-level part) and gate read a PostgreSQL side as they read a SQLite one.
                let twin = directory.appendingPathComponent("twin-\(index).sqlite").path
                try FileManager.default.copyItem(atPath: sqlite, toPath: twin)
                let gate = packageRoot.appendingPathComponent("gate.yml").path
                for command in [
                    ["diff", sqlite, "SIDE", "--records", "--format", "json"],
                    ["gate", "--baseline", sqlite, "--current", "SIDE", "--config", gate, "--format", "json"],
                ] {
                    let local = try run("arrival", command.map { $0 == "SIDE" ? twin : $0 })
                    let remote = try run("arrival", command.map { $0 == "SIDE" ? url : $0 })
                    #expect(local.status == remote.status, "\(command): \(remote)")
                    #expect(!local.stdout.isEmpty, "\(command): \(local)")
                    #expect(
                        remote.stdout.replacingOccurrences(of: url, with: "SIDE")
                            == local.stdout.replacingOccurrences(of: twin, with: "SIDE"),
                        "\(input) \(command): the outputs differ")
                }
                // The outcome views, for dashboards and queries, hold the same rows in both stores.
                let views = try OutcomeViewRows.columns(url)
                #expect(Set(views.keys) == Set(["apns"] + OutcomeRules.viewNames))
                for name in OutcomeRules.viewNames {
                    let columns = try #require(views[name])
                    let fromSQLite = try OutcomeViewRows.sqlite(sqlite, view: name, columns: columns)
                    let fromPostgres = try OutcomeViewRows.postgres(url, view: name, columns: columns)
                    #expect(!fromSQLite.isEmpty || name == "broadcast_requests" || name == "channel_subscriptions")
                    #expect(fromPostgres == fromSQLite, "\(input): view \(name) differs")
                }
                // Ingesting the same input again stores nothing new, from either store's point of view.
                let again = try run("arrival", ["ingest", input, "--db", url])
                #expect(again.status == 0 && again.stdout.contains("new records: 0"), "\(again)")
            }
        }
    }

    @Test(
        "The views break ties as SQLite does, in a database whose collation is not by bytes: text by its bytes, NULL first"
    )
    func viewTies() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func at(_ time: String) -> String { "2026-11-21T10:\(time).000Z" }
        let topic = #""topic":"com.example.delivery.push-type.liveactivity""#
        let sender = [
            // Equal in all but apns_id: bytes put "B-1" first (a locale, "a-1"); r1's activity is the token's owner.
            #"{"v":1,"kind":"apns","apns_id":"a-1","sent_at":"\#(at("01:00"))","status":200,"push_token":"tok1","seq":1,"aps_timestamp":101,\#(topic)}"#,
            #"{"v":1,"kind":"apns","apns_id":"B-1","sent_at":"\#(at("01:00"))","status":200,"push_token":"tok1","activity_id":"act-B","seq":1,"aps_timestamp":102,\#(topic)}"#,
            // Equal in all but priority: the one without comes first.
            #"{"v":1,"kind":"apns","apns_id":"same-2","sent_at":"\#(at("02:00"))","status":200,"push_token":"toka","activity_id":"act-B","seq":2,"aps_timestamp":200,\#(topic),"priority":10}"#,
            #"{"v":1,"kind":"apns","apns_id":"same-2","sent_at":"\#(at("02:00"))","status":200,"push_token":"toka","activity_id":"act-B","seq":2,"aps_timestamp":200,\#(topic)}"#,
            // Lost, sent with "toka": the newest token at equal times is the greatest by bytes ("toka", not "tokA").
            #"{"v":1,"kind":"apns","apns_id":"c-3","sent_at":"\#(at("03:00"))","status":200,"push_token":"toka","activity_id":"act-B","seq":3,"aps_timestamp":300,\#(topic)}"#,
        ]
        func callback(_ activity: String, _ token: String) -> String {
            #"{"v":1,"kind":"callback","callback":"push_token","activity_id":"\#(activity)","push_token":"\#(token)","received_at":"\#(at("00:00"))"}"#
        }
        func render(_ app: String) -> String {
            #"{"v":1,"kind":"render","activity_id":"act-B","seq":1,"rendered_at":"\#(at("01:30"))","app_version":"\#(app)"}"#
        }
        let devices = [
            // Two activities claim tok1 at once: the owner is the smaller id by bytes, "act-B".
            callback("act-a", "tok1"), callback("act-B", "tok1"), callback("act-B", "tokA"), callback("act-B", "toka"),
            // The device's app version at equal times: the smaller by bytes, "4.2.B".
            render("4.2.a"), render("4.2.B"),
        ]
        let input = directory.appendingPathComponent("input")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        try (sender.joined(separator: "\n") + "\n").write(
            to: input.appendingPathComponent("sender.jsonl"), atomically: true, encoding: .utf8)
        try (devices.joined(separator: "\n") + "\n").write(
            to: input.appendingPathComponent("devices.jsonl"), atomically: true, encoding: .utf8)
        let sqlite = directory.appendingPathComponent("store.sqlite").path
        try TestDatabase.with(options: "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'") {
            url in
            // This database sorts text by locale: without the views' own order, ties would fall the other way.
            #expect(try TestDatabase.query(url, "SELECT CASE WHEN 'a-1' < 'B-1' THEN 1 ELSE 0 END") == 1)
            for db in [sqlite, url] {
                let ingested = try run("arrival", ["ingest", input.path, "--quiet", "--db", db])
                #expect(ingested.status == 0, "\(ingested)")
            }
            let views = try OutcomeViewRows.columns(url)
            for name in OutcomeRules.viewNames {
                let columns = try #require(views[name])
                #expect(
                    try OutcomeViewRows.postgres(url, view: name, columns: columns)
                        == OutcomeViewRows.sqlite(sqlite, view: name, columns: columns), "view \(name) differs")
            }
            #expect(try TestDatabase.strings(url, "SELECT activity_id FROM arrival.token_owner") == ["act-B"])
            #expect(
                try TestDatabase.strings(
                    url,
                    "SELECT seq || ' ' || aps_timestamp || ' ' || coalesce(priority::text, '-') FROM arrival.updates")
                    == ["1 102 -", "2 200 -", "3 300 -"])
            #expect(try TestDatabase.strings(url, "SELECT app_version FROM arrival.activity_devices") == ["4.2.B"])
            #expect(
                try TestDatabase.strings(url, "SELECT loss_cause FROM arrival.update_outcomes WHERE seq = 3")
                    == ["device_silent"])
        }
    }

    @Test("Two ingests at once over overlapping inputs store every record once; a killed one leaves no part of a file")
    func severalWriters() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fleet = directory.appendingPathComponent("fleet").path
        #expect(try run("arrival", ["simulate", "--out", fleet, "--activities", "1500", "--seed", "7"]).status == 0)
        // Overlapping inputs: the same files under other names, and equal records in other files.
        let copy = directory.appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: fleet + "/sender", toPath: copy)
        let sqlite = directory.appendingPathComponent("one.sqlite").path
        #expect(try run("arrival", ["ingest", fleet, "--quiet", "--db", sqlite]).status == 0)
        let expected = try run("arrival", ["report", "--format", "json", "--db", sqlite])
        try TestDatabase.with { url in
            // One writer is killed mid-load, while two others write the same records.
            let killed = try ChildProcess("arrival", ["ingest", fleet, "--quiet", "--db", url])
            let first = try ChildProcess("arrival", ["ingest", fleet, "--quiet", "--db", url])
            let second = try ChildProcess("arrival", ["ingest", copy, fleet + "/devices", "--quiet", "--db", url])
            Thread.sleep(forTimeInterval: 0.4)
            _ = try killed.stop(SIGKILL)
            let (one, two) = (try first.wait(), try second.wait())
            #expect(one.status == 0, "\(one)")
            #expect(two.status == 0, "\(two)")
            // Every file is whole: each registry row's count is what its file holds in the record tables.
            let check = try TestDatabase.query(
                url,
                """
                SELECT count(*) FROM arrival.files AS f WHERE f.record_count <> (
                    (SELECT count(*) FROM arrival.requests WHERE file_id = f.id)
                  + (SELECT count(*) FROM arrival.token_requests WHERE file_id = f.id)
                  + (SELECT count(*) FROM arrival.broadcasts WHERE file_id = f.id)
                  + (SELECT count(*) FROM arrival.renders WHERE file_id = f.id)
                  + (SELECT count(*) FROM arrival.callbacks WHERE file_id = f.id)
                  + (SELECT count(*) FROM arrival.start_tokens WHERE file_id = f.id))
                """)
            #expect(check == 0, "files whose records are not all stored")
            // The killed writer's work is done again; the store then reports what one writer's does.
            let rerun = try run("arrival", ["ingest", fleet, "--quiet", "--db", url])
            #expect(rerun.status == 0, "\(rerun)")
            let report = try run("arrival", ["report", "--format", "json", "--db", url])
            #expect(report.status == 0)
            #expect(Self.totals(report.stdout) == Self.totals(expected.stdout))
            #expect(Self.totals(report.stdout) != nil)
        }
    }

    /// The record and outcome totals of a report JSON (row order between
    /// writers that ran at once is theirs, so only what order cannot change is compared).
    @Test("Two writers storing the same records in opposite orders store each record once")
    func oppositeOrders() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func render(_ index: Int) -> String {
            #"{"v":1,"kind":"render","activity_id":"act-\#(index)","seq":0,"rendered_at":"2026-11-21T10:30:00.000Z"}"#
        }
        // 300 files of 20 renders each way: ascending files of ascending records, and the same records from the
        // other end (other bytes, so both writers store their files and meet on every record).
        let (files, perFile) = (300, 20)
        for name in ["up", "down"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        for file in 0..<files {
            let up = (file * perFile..<(file + 1) * perFile).map(render)
            let down = ((files - 1 - file) * perFile..<(files - file) * perFile).reversed().map(render)
            try (up.joined(separator: "\n") + "\n").write(
                to: directory.appendingPathComponent("up/\(String(format: "%03d", file)).jsonl"), atomically: true,
                encoding: .utf8)
            try (down.joined(separator: "\n") + "\n").write(
                to: directory.appendingPathComponent("down/\(String(format: "%03d", file)).jsonl"), atomically: true,
                encoding: .utf8)
        }
        try TestDatabase.with { url in
            let first = try ChildProcess(
                "arrival", ["ingest", directory.appendingPathComponent("up").path, "--quiet", "--db", url])
            let second = try ChildProcess(
                "arrival", ["ingest", directory.appendingPathComponent("down").path, "--quiet", "--db", url])
            let (one, two) = (try first.wait(), try second.wait())
            #expect(one.status == 0, "\(one)")
            #expect(two.status == 0, "\(two)")
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.renders") == Int64(files * perFile))
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.files") == Int64(2 * files))
            #expect(
                try TestDatabase.query(url, "SELECT sum(record_count)::bigint FROM arrival.files")
                    == Int64(files * perFile))
            #expect(
                try TestDatabase.query(url, "SELECT sum(record_count + duplicate_count)::bigint FROM arrival.files")
                    == Int64(2 * files * perFile))
            // Whether they deadlocked depends on their pace; deadlockRetried() makes one happen.
        }
    }

    /// A deadlock made step by step: a transaction of the test's holds one
    /// record uncommitted, a writer's merge stores another and waits for the
    /// first, then the test's transaction stores the second and waits for the
    /// writer. The server breaks the cycle by failing the statement of the one
    /// whose wait (`deadlock_timeout`, 1 s) ends first with the cycle closed:
    /// the writer, unless the test closed it later than that (a busy machine),
    /// when the round is made again with other records.
    @Test("A writer the server fails to break a deadlock merges its batch again and stores each record once")
    func deadlockRetried() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func render(_ activity: String) -> String {
            #"{"v":1,"kind":"render","activity_id":"\#(activity)","seq":0,"rendered_at":"2026-11-21T10:30:00.000Z"}"#
                + "\n"
        }
        try TestDatabase.with { scratch in
            try TestDatabase.with { url in
                let location = try PostgresLocation(url: url)
                // The schema, made by opening the store.
                _ = try PostgresStore(location)
                let (holder, watcher) = (try PostgresSession(location), try PostgresSession(location))
                defer {
                    holder.close()
                    watcher.close()
                }
                var writerRetried = false
                for round in 0..<5 where !writerRetried {
                    let (x, y) = ("x-\(round)", "y-\(round)")
                    // The writer's file holds y, then x: its merge inserts them in that order.
                    let file = directory.appendingPathComponent("\(round).jsonl")
                    try (render(y) + render(x)).write(to: file, atomically: true, encoding: .utf8)
                    // The records' identities as arrival stores them, from a store of their own.
                    #expect(try run("arrival", ["ingest", file.path, "--quiet", "--db", scratch]).status == 0)
                    func insert(_ activity: String, id: Int) throws -> PostgresQuery {
                        let stored = "FROM arrival.renders WHERE activity_id = '\(activity)'"
                        let hash = try TestDatabase.query(scratch, "SELECT content_hash \(stored)")
                        let time = try TestDatabase.query(scratch, "SELECT rendered_at \(stored)")
                        return PostgresQuery(
                            unsafeSQL: """
                                INSERT INTO arrival.renders (id, file_id, content_hash, activity_id, seq, rendered_at)
                                VALUES (-\(id), -1, \(hash), '\(activity)', 0, \(time))
                                """)
                    }
                    let (holdX, holdY) = (try insert(x, id: 2 * round + 1), try insert(y, id: 2 * round + 2))
                    try holder.execute("BEGIN")
                    try holder.run(holdX)
                    let writer = try ChildProcess("arrival", ["ingest", file.path, "--quiet", "--db", url])
                    // Until the writer's merge, y stored, waits for the holder's x.
                    var waiting = false
                    for _ in 0..<6000 where !waiting {
                        waiting =
                            try watcher.run(
                                """
                                SELECT count(*) FROM pg_stat_activity
                                WHERE datname = current_database() AND wait_event = 'transactionid'
                                """
                            ).first?.decode(Int64.self) == 1
                        if !waiting { usleep(10_000) }
                    }
                    #expect(waiting, "the writer never waited for the held record")
                    do {
                        // Waits for the writer's y until the server fails one of the two.
                        try holder.run(holdY)
                        // The writer's statement was failed: it rolled its merge back and now waits for the holder.
                        writerRetried = true
                    } catch let error as PostgresStoreError where error.sqlState == "40P01" {
                        // The holder's was (it closed the cycle late): the writer went on without a retry.
                    }
                    try holder.execute("ROLLBACK")
                    let result = try writer.wait()
                    #expect(result.status == 0, "\(result)")
                    #expect(
                        try TestDatabase.query(
                            url, "SELECT count(*) FROM arrival.renders WHERE activity_id IN ('\(x)', '\(y)')") == 2)
                    #expect(
                        try TestDatabase.query(url, "SELECT sum(record_count)::bigint FROM arrival.files")
                            == Int64(2 * (round + 1)))
                }
                #expect(writerRetried, "the server never failed the writer's statement in five rounds")
                #expect(
                    try TestDatabase.query(url, "SELECT count(*) FROM arrival.renders WHERE id < 0") == 0,
                    "the holder's rows were rolled back")
            }
        }
    }

    static func totals(_ json: String) -> String? {
        guard let data = json.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        let picked = ["requests", "updates", "activities", "callbacks"].compactMap { key in
            object[key].map { (key, $0) }
        }
        guard !picked.isEmpty,
            let text = try? JSONSerialization.data(
                withJSONObject: Dictionary(uniqueKeysWithValues: picked), options: [.sortedKeys])
        else { return nil }
        return String(decoding: text, as: UTF8.self)
    }

    @Test(
        "A file that grew replaces its stored version on PostgreSQL as on SQLite; bytes under another name are skipped")
    func grownAndCopied() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputs = directory.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        let log = inputs.appendingPathComponent("widget.jsonl")
        let clean = inputs.appendingPathComponent("clean.jsonl")
        func render(_ seq: Int, _ activity: String = "A") -> String {
            #"{"v":1,"kind":"render","activity_id":"\#(activity)","seq":\#(seq),"#
                + #""rendered_at":"2026-11-21T10:3\#(seq):00.000Z"}"# + "\n"
        }
        try Data((render(0) + render(1) + "{not json\n").utf8).write(to: log)
        let sqlite = directory.appendingPathComponent("store.sqlite").path
        try TestDatabase.with { url in
            var outputs: [String: [String]] = [:]
            for db in [sqlite, url] {
                try Data((render(0) + render(1) + "{not json\n").utf8).write(to: log)
                try Data((render(0, "B") + render(1, "B")).utf8).write(to: clean)
                #expect(try run("arrival", ["ingest", inputs.path, "--quiet", "--db", db]).status == 0)
                // The same files, grown by two lines (one with a malformed line, one without); then the
                // first one's bytes again under another name.
                try Data((render(0) + render(1) + "{not json\n" + render(2) + render(1)).utf8).write(to: log)
                try Data((render(0, "B") + render(1, "B") + render(2, "B") + render(1, "B")).utf8).write(to: clean)
                let grown = try run("arrival", ["ingest", inputs.path, "--db", db])
                #expect(grown.status == 0, "\(grown)")
                try FileManager.default.copyItem(at: log, to: inputs.appendingPathComponent("copy.jsonl"))
                let copied = try run("arrival", ["ingest", inputs.path, "--db", db])
                try FileManager.default.removeItem(at: inputs.appendingPathComponent("copy.jsonl"))
                let files = try run("arrival", ["files", "list", "--format", "json", "--db", db])
                let report = try run("arrival", ["report", "--format", "json", "--db", db])
                outputs[db] = [grown.stdout, copied.stdout, Self.withoutTimes(files.stdout), report.stdout]
                    .map { $0.replacingOccurrences(of: db, with: "STORE") }
            }
            #expect(outputs[sqlite] == outputs[url])
            #expect(
                outputs[url]?[0].contains("new records: 6 (apns 0, render 6, callback 0)") == true,
                "\(outputs[url]?[0] ?? "")")
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.files") == 2)
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.skipped_files") == 1)
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.renders") == 6)
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.record_repeats") == 2)
        }
    }

    /// A `files list --format json` without its ingest times (they differ between two runs).
    static func withoutTimes(_ json: String) -> String {
        json.replacingOccurrences(
            of: #""(ingested_at|first_seen_at)" *: *"[^"]*""#, with: "\"$1\":\"\"", options: .regularExpression)
    }

    @Test("files remove takes a file and what it stored out of a PostgreSQL store as out of a SQLite one")
    func removeFiles() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sample = packageRoot.appendingPathComponent("SampleData").path
        let sqlite = directory.appendingPathComponent("store.sqlite").path
        try TestDatabase.with { url in
            var outputs: [String: [String]] = [:]
            for db in [sqlite, url] {
                #expect(try run("arrival", ["ingest", sample, "--quiet", "--db", db]).status == 0)
                let listed = try run("arrival", ["files", "list", "--format", "json", "--db", db])
                let files =
                    (try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]) ?? []
                // The first sender log and the first device file, by path.
                let paths = files.compactMap { $0["path"] as? String }.sorted()
                let chosen = [paths.first { $0.contains("/sender/") }, paths.first { $0.contains("/devices/") }]
                    .compactMap { $0 }
                #expect(chosen.count == 2, "\(paths.prefix(3))")
                let dry = try run("arrival", ["files", "remove", "--dry-run"] + chosen + ["--db", db])
                let removed = try run("arrival", ["files", "remove", "--yes"] + chosen + ["--db", db])
                #expect(removed.status == 0, "\(removed)")
                let report = try run("arrival", ["report", "--format", "json", "--db", db])
                let after = try run("arrival", ["files", "list", "--format", "json", "--db", db])
                outputs[db] = [dry.stdout, removed.stdout, report.stdout, Self.withoutTimes(after.stdout)]
                    .map { $0.replacingOccurrences(of: db, with: "STORE") }
            }
            #expect(outputs[sqlite] == outputs[url])
            #expect(outputs[url]?[1].contains("Removed 2 files") == true, "\(outputs[url]?[1] ?? "")")
        }
    }

    @Test(
        "A file with more malformed lines than are held, and records it repeats: the same summary and registry as SQLite"
    )
    func manyMalformedLines() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("input")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        func render(_ seq: String) -> String {
            #"{"v":1,"kind":"render","activity_id":"A","seq":\#(seq),"rendered_at":"2026-11-21T10:30:00.000Z"}"#
        }
        // 1,500 lines of a wrong type (past the 1,000 held with a file's rows), 20 records, 5 of them again.
        let good = (0..<20).map { render(String($0)) }
        let lines = (0..<1_500).map { render("\"x\($0)\"") } + good + good.suffix(5)
        try (lines.joined(separator: "\n") + "\n").write(
            to: input.appendingPathComponent("big.jsonl"), atomically: true, encoding: .utf8)
        // And a small file with a few malformed lines, held whole.
        try ([render("\"y\""), render("1"), render("1")].joined(separator: "\n") + "\n").write(
            to: input.appendingPathComponent("small.jsonl"), atomically: true, encoding: .utf8)
        let sqlite = directory.appendingPathComponent("store.sqlite").path
        try TestDatabase.with { url in
            var outputs: [String] = []
            for db in [sqlite, url] {
                let ingested = try run("arrival", ["ingest", input.path, "--db", db])
                #expect(ingested.status == 0, "\(ingested)")
                outputs.append(ingested.stdout.split(separator: "\n").dropFirst().joined(separator: "\n"))
            }
            #expect(outputs[0] == outputs[1])
            // 5 again in the big file; in the small one, its own repeat and the big file's record.
            #expect(outputs[1].contains("duplicate records ignored: 7"), "\(outputs[1])")
            let listed = try [sqlite, url].map { db in
                Self.withoutTimes(try run("arrival", ["files", "list", "--format", "json", "--db", db]).stdout)
            }
            #expect(listed[0] == listed[1])
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.malformed_lines") == 1_501)
            #expect(try TestDatabase.query(url, "SELECT sum(repeats)::int8 FROM arrival.record_repeats") == 7)
        }
    }

    @Test(
        "U+0000 in a kept field makes its line malformed (contract 3.2), as on SQLite: the file and the rest are stored"
    )
    func nulCharacter() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let render = #"{"v":1,"kind":"render","activity_id":"A","seq":0,"rendered_at":"2026-11-21T10:30:55.122Z"}"#
        try Data((render + "\n").utf8).write(to: directory.appendingPathComponent("a-good.jsonl"))
        try Data(
            (render.replacingOccurrences(of: #""A""#, with: #""B\u0000""#) + "\n"
                + render.replacingOccurrences(of: #""A""#, with: #""C""#) + "\n").utf8
        ).write(to: directory.appendingPathComponent("b-nul.jsonl"))
        try TestDatabase.with { url in
            let outcome = try run("arrival", ["ingest", directory.path, "--db", url])
            #expect(outcome.status == 0, "\(outcome)")
            #expect(outcome.stdout.contains("nul_character: 1"), "\(outcome.stdout)")
            #expect(outcome.stdout.contains("b-nul.jsonl:1: activity_id: holds U+0000"), "\(outcome.stdout)")
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.renders") == 2)
            #expect(try TestDatabase.query(url, "SELECT count(*) FROM arrival.files") == 2)
            #expect(
                try TestDatabase.query(
                    url, "SELECT count(*) FROM arrival.malformed_lines WHERE cause = 'nul_character'")
                    == 1)
        }
    }

    @Test("The password in the URL appears in no output, error or listing")
    func passwordNeverShown() throws {
        try TestDatabase.with { url in
            guard let password = TestDatabase.password(for: url) else { return }
            let withPassword = url.replacingOccurrences(of: "://arrival@", with: "://arrival:\(password)@")
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let sample = packageRoot.appendingPathComponent("SampleData").path
            for command in [
                ["ingest", sample], ["report", "--format", "markdown"], ["files", "list"], ["tokens"], ["lost"],
                ["diff", withPassword, withPassword], ["gate", "--current", withPassword],
            ] {
                let arguments = command.contains(withPassword) ? command : command + ["--db", withPassword]
                let outcome = try run("arrival", arguments, environment: ["PGPASSFILE": "/nonexistent"])
                #expect(outcome.status == 0 || command[0] == "gate", "\(command): \(outcome)")
                #expect(!outcome.stdout.contains(password) && !outcome.stderr.contains(password), "\(command)")
            }
            // A wrong password: refused, named by the URL without it.
            let wrong = url.replacingOccurrences(of: "://arrival@", with: "://arrival:not-\(password)@")
            let refused = try run("arrival", ["report", "--db", wrong], environment: ["PGPASSFILE": "/nonexistent"])
            #expect(refused.status == 1, "\(refused)")
            #expect(refused.stderr.contains("password authentication failed"), "\(refused.stderr)")
            #expect(!refused.stderr.contains(password))
        }
    }
}

import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// One bad upload never stalls the rest (issue 56), on SQLite and on
/// PostgreSQL: an upload holding U+0000 and one the store refuses (a trigger
/// of the operator's) among a fleet's uploads from both roles.
@Suite("One bad upload never stalls the rest", .serialized)
struct RefusedUploadTests {
    /// The activity the operator's trigger refuses, and what it says.
    static let refusedActivity = "refused-by-trigger"
    static let refusal = "this activity is refused by a trigger"

    /// A render of `activity` per line.
    static func renders(_ activities: [String]) -> String {
        activities.map {
            #"{"v":1,"kind":"render","activity_id":"\#($0)","seq":0,"rendered_at":"2026-11-21T10:30:00.000Z","device_id":"dev-1"}"#
        }.joined(separator: "\n") + "\n"
    }

    /// A small simulated fleet, plus the two bad uploads: `nul.jsonl` (a render whose activity holds U+0000, and a
    /// good one) and `refused.jsonl` (a render the trigger refuses). The names relative to `root`, in upload order:
    /// the bad ones in the middle.
    static func uploads(in directory: URL) async throws -> (root: String, names: [String]) {
        let fleet = directory.appendingPathComponent("fleet")
        let simulated = try await run(
            "arrival", ["simulate", "--out", fleet.path, "--activities", "40", "--seed", "56"])
        #expect(simulated.status == 0, "\(simulated)")
        let bad = fleet.appendingPathComponent("devices/bad")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        try Data(
            (#"{"v":1,"kind":"render","activity_id":"nul\u0000here","seq":0,"rendered_at":"2026-11-21T10:30:00.000Z"}"#
                + "\n" + renders(["after-the-nul"])).utf8
        ).write(to: bad.appendingPathComponent("nul.jsonl"))
        try Data(renders([refusedActivity]).utf8).write(to: bad.appendingPathComponent("refused.jsonl"))
        var names = (FileManager.default.enumerator(atPath: fleet.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.contains(".jsonl") && !$0.hasPrefix("devices/bad/") }.sorted()
        names.insert(contentsOf: ["devices/bad/nul.jsonl", "devices/bad/refused.jsonl"], at: names.count / 2)
        return (fleet.path, names)
    }

    /// The collector's answer for the upload with these bytes.
    static func state(_ base: String, _ sha: String) async -> [String: Any] {
        guard
            let (data, _) = try? await CollectorClient.request(
                "\(base)/v1/uploads/\(sha)", token: ServedCollector.reader),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return object
    }

    /// Waits until every upload of `shas` is in `state`; false after `seconds`.
    static func all(_ base: String, _ shas: [String], are state: String, within seconds: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var left = shas
        while ContinuousClock.now < deadline {
            var still: [String] = []
            for sha in left where await Self.state(base, sha)["state"] as? String != state { still.append(sha) }
            left = still
            if left.isEmpty { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// The scenario on one engine: `store` is the `--db` value, `execute` runs an operator's SQL on it.
    static func scenario(
        store: String, directory: URL, addTrigger: [String], dropTrigger: [String], execute: ([String]) throws -> Void
    ) async throws {
        let (root, names) = try await uploads(in: directory)
        let spool = directory.appendingPathComponent("spool").path
        func serve() throws -> ChildProcess {
            try ChildProcess(
                "arrival",
                ["serve", "--db", store, "--spool", spool, "--port", String(port), "--log-level", "warning"],
                environment: [
                    "ARRIVAL_DEVICE_TOKENS": ServedCollector.device, "ARRIVAL_SENDER_TOKENS": ServedCollector.sender,
                    "ARRIVAL_READ_TOKENS": ServedCollector.reader,
                ])
        }
        func ready() async throws {
            for _ in 0..<600 {
                if let (_, status) = try? await CollectorClient.request("http://127.0.0.1:\(port)/readyz"),
                    status == 200
                {
                    return
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw ProcessRunError("the collector did not start")
        }
        let port = CollectorClient.freePort()
        let base = "http://127.0.0.1:\(port)"
        try execute(addTrigger)
        var collector = try serve()
        try await ready()
        var shas: [String: String] = [:]
        for name in names {
            let token = name.hasPrefix("sender/") ? ServedCollector.sender : ServedCollector.device
            let (data, status) = try await CollectorClient.request(
                "\(base)/v1/uploads", method: "POST", token: token, name: name,
                body: FileManager.default.contents(atPath: root + "/" + name))
            #expect(status == 202 || status == 200, "\(name): \(status)")
            shas[name] = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["upload"] as? String
        }
        let refused = try #require(shas["devices/bad/refused.jsonl"])
        let nul = try #require(shas["devices/bad/nul.jsonl"])
        let good = names.filter { $0 != "devices/bad/refused.jsonl" }.compactMap { shas[$0] }
        #expect(good.count == names.count - 1)
        // Every other upload is ingested within a minute, the U+0000 one with one malformed line.
        #expect(try await all(base, good, are: "ingested", within: 60))
        #expect(await state(base, nul)["malformed_lines"] as? Int == 1)
        // The refused one is set aside with the store's reason, counted in /metrics and listed for a read token.
        #expect(try await all(base, [refused], are: "rejected", within: 30))
        let answer = await state(base, refused)
        #expect((answer["reason"] as? String)?.contains(refusal) == true, "\(answer)")
        #expect(answer["attempts"] as? Int == 3)
        let (metrics, _) = try await CollectorClient.request("\(base)/metrics")
        #expect(String(decoding: metrics, as: UTF8.self).contains(#"arrival_uploads_rejected{role="device"} 1.0"#))
        let (list, listed) = try await CollectorClient.request(
            "\(base)/v1/uploads?state=rejected", token: ServedCollector.reader)
        #expect(listed == 200)
        #expect(String(decoding: list, as: UTF8.self).contains(refused))
        let (_, forbidden) = try await CollectorClient.request(
            "\(base)/v1/uploads?state=rejected", token: ServedCollector.device)
        #expect(forbidden == 403, "a device token may not list what others uploaded")
        _ = try await collector.stop(SIGTERM)

        // Restarted with the trigger still there: tried once more, and set aside again at once.
        collector = try serve()
        try await ready()
        #expect(try await all(base, [refused], are: "rejected", within: 30))
        #expect(await state(base, refused)["attempts"] as? Int == 1)
        _ = try await collector.stop(SIGTERM)

        // The operator removes the cause and restarts: the upload is ingested.
        try execute(dropTrigger)
        collector = try serve()
        try await ready()
        #expect(try await all(base, [refused], are: "ingested", within: 60))
        let (emptied, _) = try await CollectorClient.request(
            "\(base)/v1/uploads?state=rejected", token: ServedCollector.reader)
        #expect(
            String(decoding: emptied, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                == #"{"uploads":[]}"#)
        _ = try await collector.stop(SIGTERM)

        // The report is the one `arrival ingest` of the same files gives a fresh store.
        let expectedStore = directory.appendingPathComponent("expected.sqlite").path
        let ingested = try await run("arrival", ["ingest", root, "--quiet", "--db", expectedStore])
        #expect(ingested.status == 0, "\(ingested)")
        let expected = try await run("arrival", ["report", "--format", "json", "--db", expectedStore])
        let report = try await run("arrival", ["report", "--format", "json", "--db", store])
        #expect(report.status == 0 && expected.status == 0)
        #expect(report.stdout == expected.stdout)
        #expect(report.stdout.contains(#""nul_character": 1"#))
    }

    @Test(
        "SQLite: a U+0000 upload and one a trigger refuses stall nothing; the refused one is set aside, then ingested")
    func sqlite() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        try await Self.scenario(
            store: path, directory: directory,
            addTrigger: [
                """
                CREATE TRIGGER refuse BEFORE INSERT ON renders WHEN NEW.activity_id = '\(Self.refusedActivity)'
                BEGIN SELECT RAISE(ABORT, '\(Self.refusal)'); END
                """
            ],
            dropTrigger: ["DROP TRIGGER refuse"],
            execute: { statements in
                let store = try SQLiteStore(path: path)
                for statement in statements { try store.executeOperatorSQL(statement) }
            })
    }

    @Test(
        "PostgreSQL: a U+0000 upload and one a trigger refuses stall nothing; the refused one is set aside, then ingested",
        .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
    func postgres() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestDatabase.withAsync { url in
            try Self.createPostgresSchema(url)
            try await Self.scenario(
                store: url, directory: directory, addTrigger: Self.postgresTrigger,
                dropTrigger: ["DROP TRIGGER refuse ON arrival.renders"],
                execute: { statements in try Self.executePostgres(url, statements) })
        }
    }
}

extension RefusedUploadTests {
    /// The operator's trigger on PostgreSQL: a function that refuses the activity, and the trigger that calls it.
    static let postgresTrigger = [
        """
        CREATE FUNCTION arrival.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.activity_id = '\(refusedActivity)' THEN RAISE EXCEPTION '\(refusal)'; END IF;
            RETURN NEW;
        END $$
        """,
        "CREATE TRIGGER refuse BEFORE INSERT ON arrival.renders FOR EACH ROW EXECUTE FUNCTION arrival.refuse()",
    ]

    /// The store's schema on the database at `url` (the operator's trigger is added to it).
    static func createPostgresSchema(_ url: String) throws {
        try PostgresStore(try PostgresLocation(url: url)).session.close()
    }

    /// Runs an operator's SQL statements on the database at `url`.
    static func executePostgres(_ url: String, _ statements: [String]) throws {
        let session = try PostgresSession(try PostgresLocation(url: url))
        defer { session.close() }
        for statement in statements { try session.execute(statement) }
    }
}

/// `arrival ingest` goes on past a file the store refuses (issue 56).
@Suite("arrival ingest past a refused file")
struct IngestPastRefusedFileTests {
    /// Ingests a tree with a refused file in the middle into `store`; checks every other file is stored and the
    /// run exits 1 naming it; then, the trigger dropped, the same ingest finishes the job.
    static func check(store: String, directory: URL, dropTrigger: () throws -> Void) async throws {
        let tree = directory.appendingPathComponent("tree")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        for index in 0..<9 {
            let activity = index == 4 ? RefusedUploadTests.refusedActivity : "act-\(index)"
            try Data(RefusedUploadTests.renders([activity, "\(activity)-b"]).utf8)
                .write(to: tree.appendingPathComponent("f\(index).jsonl"))
        }
        let first = try await run("arrival", ["ingest", tree.path, "--db", store])
        #expect(first.status == 1, "\(first)")
        #expect(first.stderr.contains("f4.jsonl") && first.stderr.contains(RefusedUploadTests.refusal), "\(first)")
        #expect(first.stdout.contains("new records: 16 (apns 0, render 16, callback 0)"), "\(first)")
        #expect(first.stdout.contains("refused by the store (nothing of them stored): 1"), "\(first)")
        try dropTrigger()
        let second = try await run("arrival", ["ingest", tree.path, "--db", store])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("new records: 2 (apns 0, render 2, callback 0)"), "\(second)")
        #expect(second.stdout.contains("files skipped as already ingested: 8"), "\(second)")
    }

    @Test("SQLite: the files around a refused one are stored, the run exits 1 naming it, a re-run finishes")
    func sqlite() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        try SQLiteStore(path: path).executeOperatorSQL(
            """
            CREATE TRIGGER refuse BEFORE INSERT ON renders WHEN NEW.activity_id = '\(RefusedUploadTests.refusedActivity)'
            BEGIN SELECT RAISE(FAIL, '\(RefusedUploadTests.refusal)'); END
            """)
        try await Self.check(store: path, directory: directory) {
            try SQLiteStore(path: path).executeOperatorSQL("DROP TRIGGER refuse")
        }
    }

    @Test(
        "PostgreSQL: the files around a refused one are stored, the run exits 1 naming it, a re-run finishes",
        .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
    func postgres() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestDatabase.withAsync { url in
            try RefusedUploadTests.createPostgresSchema(url)
            try RefusedUploadTests.executePostgres(url, RefusedUploadTests.postgresTrigger)
            try await Self.check(store: url, directory: directory) {
                try RefusedUploadTests.executePostgres(url, ["DROP TRIGGER refuse ON arrival.renders"])
            }
        }
    }
}

extension RefusedUploadTests {
    @Test(
        "A store that cannot take any write (a broken trigger) sets nothing aside: /readyz says it cannot be written, and once fixed everything is ingested"
    )
    func storeWideFailure() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        // A trigger that fails every insert with an error of the store's own (no such table), not a refusal.
        try SQLiteStore(path: path).executeOperatorSQL(
            "CREATE TABLE audit (x); CREATE TRIGGER broken BEFORE INSERT ON renders BEGIN INSERT INTO audit VALUES (1); END; DROP TABLE audit"
        )
        let server = try ServedCollector(directory: directory, port: CollectorClient.freePort())
        try await server.ready()
        var shas: [String] = []
        for index in 0..<4 {
            let (data, status) = try await CollectorClient.request(
                "\(server.base)/v1/uploads", method: "POST", token: ServedCollector.device, name: "u\(index).jsonl",
                body: Data(Self.renders(["store-wide-\(index)"]).utf8))
            #expect(status == 202)
            if let sha = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["upload"] as? String {
                shas.append(sha)
            }
        }
        // The store cannot be written: /readyz says so, uploads stay queued, none is set aside.
        var readiness = ""
        for _ in 0..<100 {
            let (body, status) = try await CollectorClient.request("\(server.base)/readyz")
            if status == 503 {
                readiness = String(decoding: body, as: UTF8.self)
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(readiness.contains("the store cannot be written"), "\(readiness)")
        try await Task.sleep(for: .seconds(4))
        for sha in shas { #expect(await Self.state(server.base, sha)["state"] as? String == "queued") }
        let (metrics, _) = try await CollectorClient.request("\(server.base)/metrics")
        let text = String(decoding: metrics, as: UTF8.self)
        #expect(text.contains("arrival_store_writable 0.0"))
        #expect(!text.contains(#"arrival_uploads_rejected{role="device"} 1"#))
        // Fixed: every upload is ingested within the backoff (at most 60 s), and /readyz is ready again.
        try SQLiteStore(path: path).executeOperatorSQL("DROP TRIGGER broken")
        #expect(try await Self.all(server.base, shas, are: "ingested", within: 90))
        let (_, ready) = try await CollectorClient.request("\(server.base)/readyz")
        #expect(ready == 200)
        _ = try await server.stop(SIGTERM)
    }
}

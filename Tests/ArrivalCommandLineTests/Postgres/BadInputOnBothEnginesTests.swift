import ArrivalPostgresTestSupport
import ArrivalStore
import ArrivalTestSupport
import Foundation
import Testing

/// Bad input is decided once, by the decoder, the same for every engine
/// (contract 3.2, issue 56): the project's hostile, bad-input, exchange and
/// fuzz-regression corpora, and every line of the decoder's line cases (U+0000
/// in each kind of field among them), give byte-identical reports and ingest
/// summaries on SQLite and on PostgreSQL, and no file is refused by either.
@Suite("Bad input on both engines", .enabled(if: TestPostgres.runs, Comment(rawValue: TestPostgres.skipReason)))
struct BadInputOnBothEnginesTests {
    /// The corpora, copied into one tree: files as they are, and the line cases one line each into a file.
    static func corpus(in directory: URL) throws -> URL {
        let tree = directory.appendingPathComponent("corpus")
        let files = FileManager.default
        try files.createDirectory(at: tree, withIntermediateDirectories: true)
        let sources = [
            "Tests/ArrivalTestSupport/Fixtures/hostile", "Tests/ArrivalTestSupport/Fixtures/badinput",
            "Tests/ArrivalIngestTests/Fixtures/Exchanges", "Fuzz/regressions",
        ]
        var copied = 0
        for source in sources {
            let root = packageRoot.appendingPathComponent(source)
            for name in try files.contentsOfDirectory(atPath: root.path) where name.contains(".jsonl") {
                try files.copyItem(
                    at: root.appendingPathComponent(name),
                    to: tree.appendingPathComponent(source.replacingOccurrences(of: "/", with: "-") + "-" + name))
                copied += 1
            }
        }
        #expect(copied >= 10)
        let cases = packageRoot.appendingPathComponent("Tests/ArrivalIngestTests/Fixtures/decoding/line-cases.json")
        let list = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: cases)) as? [[String: String]])
        var lines = Data()
        for item in list {
            guard let encoded = item["line_base64"], let line = Data(base64Encoded: encoded) else { continue }
            lines.append(line)
            lines.append(0x0A)
        }
        #expect(list.count > 90)
        try lines.write(to: tree.appendingPathComponent("line-cases.jsonl"))
        return tree
    }

    @Test("The corpora give the same report and ingest summary on SQLite and PostgreSQL, byte for byte")
    func sameOnBoth() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tree = try Self.corpus(in: directory).path
        let sqlite = directory.appendingPathComponent("store.sqlite").path
        try await TestDatabase.withAsync { url in
            let onSQLite = try await run("arrival", ["ingest", tree, "--db", sqlite])
            let onPostgres = try await run("arrival", ["ingest", tree, "--db", url])
            // Exit 0 on both: no file refused by either store, nothing unreadable.
            #expect(onSQLite.status == 0, "\(onSQLite)")
            #expect(onPostgres.status == 0, "\(onPostgres)")
            let summary = { (text: String) in text.split(separator: "\n").dropFirst().joined(separator: "\n") }
            #expect(summary(onSQLite.stdout) == summary(onPostgres.stdout))
            #expect(onSQLite.stdout.contains("nul_character"), "\(onSQLite.stdout)")
            // The malformed lines as stored, problems included (a problem that quotes U+0000 shows it as \u0000).
            let storedOnSQLite = Set(
                try SQLiteStore(readingAt: sqlite).read { try $0.malformedProblems() }.map {
                    "\(URL(fileURLWithPath: $0.path).lastPathComponent):\($0.line) \($0.cause) \($0.problem ?? "-")"
                })
            let storedOnPostgres = try TestDatabase.strings(
                url,
                """
                SELECT regexp_replace(f.path, '^.*/', '') || ':' || m.line || ' ' || m.cause || ' ' || coalesce(m.problem, '-')
                FROM arrival.malformed_lines AS m JOIN arrival.files AS f ON f.id = m.file_id
                """)
            #expect(storedOnSQLite == storedOnPostgres)
            #expect(storedOnSQLite.contains { $0.contains(#"event: "\u0000" is not one of"#) }, "\(storedOnSQLite)")
            for format in ["json", "markdown"] {
                let a = try await run("arrival", ["report", "--format", format, "--db", sqlite])
                let b = try await run("arrival", ["report", "--format", format, "--db", url])
                #expect(a.status == 0 && b.status == 0, "\(a) \(b)")
                #expect(a.stdout == b.stdout, "\(format) reports differ")
            }
        }
    }
}

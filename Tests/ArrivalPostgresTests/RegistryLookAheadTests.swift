import ArrivalPostgres
import ArrivalPostgresTestSupport
import ArrivalStore
import ArrivalTestSupport
import Foundation
import PostgresNIO
import Testing

/// Issue 52: the PostgreSQL registry told of the files about to be read
/// answers each file's questions as it would have asked them one by one.
@Suite("PostgreSQL registry: the files ahead asked together", .enabled(if: TestPostgres.runs))
struct RegistryLookAheadTests {
    /// Every question admission asks of `file`, as `registry` answers it.
    static func answers(_ registry: PostgresRegistry, _ file: UpcomingFile) -> String {
        var parts: [String] = []
        if let size = file.byteCount {
            parts.append("size \(size): \(registry.contains(byteCount: size))")
            let versions = registry.earlierVersions(atPath: file.name, smallerThan: size)
            parts.append(
                "versions: " + versions.map { "\($0.id) \($0.byteCount) \($0.sha256)" }.joined(separator: ", "))
        }
        if let sha256 = file.sha256 {
            parts.append(
                "stored: \(registry.contains(sha256: sha256)), refused: \(registry.hasRefusedLines(sha256: sha256))")
        }
        return parts.joined(separator: "; ")
    }

    @Test("Sizes, hashes, refused copies and earlier versions: the same answers with and without the look ahead")
    func sameAnswers() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func render(_ seq: Int) -> String {
            #"{"v":1,"kind":"render","activity_id":"a","seq":\#(seq),"rendered_at":"2026-11-21T10:30:0\#(seq).000Z"}"#
                + "\n"
        }
        // A file stored, then a grown version of it (which takes its place in the registry), and a file of
        // another name.
        let grown = directory.appendingPathComponent("grown.jsonl")
        let other = directory.appendingPathComponent("other.jsonl")
        try TestDatabase.with { url in
            try Data(render(1).utf8).write(to: grown)
            try Data((render(5) + render(6) + render(7)).utf8).write(to: other)
            #expect(try run("arrival", ["ingest", grown.path, other.path, "--quiet", "--db", url]).status == 0)
            try Data((render(1) + render(2)).utf8).write(to: grown)
            #expect(try run("arrival", ["ingest", grown.path, "--quiet", "--db", url]).status == 0)
            // The copy of `other` counts as one with lines refused for a device token.
            #expect(
                try TestDatabase.query(
                    url,
                    """
                    WITH f AS (SELECT id FROM arrival.files WHERE path = '\(other.path)')
                    INSERT INTO arrival.malformed_lines (file_id, line, cause) SELECT id, 9, 'kind_not_allowed' FROM f
                    RETURNING 1
                    """) == 1)
            let stored = try TestDatabase.strings(url, "SELECT content_sha256 FROM arrival.files")
            let sizes = try TestDatabase.strings(url, "SELECT byte_count::text FROM arrival.files").compactMap {
                Int($0)
            }
            #expect(stored.count == 2 && sizes.count == 2)
            var files: [UpcomingFile] = []
            for name in [grown.path, other.path, directory.appendingPathComponent("new.jsonl").path] {
                for size in sizes + [1, 10_000] {
                    files.append(UpcomingFile(name: name, byteCount: size, sha256: nil))
                }
                for sha256 in stored + [String(repeating: "ab", count: 32)] {
                    files.append(UpcomingFile(name: name, byteCount: 10_000, sha256: sha256))
                }
            }
            let location = try PostgresLocation(url: url)
            let expected = try files.map { Self.answers(try PostgresRegistry(location), $0) }
            let ahead = try PostgresRegistry(location)
            ahead.lookAhead(files, fresh: true)
            #expect(files.map { Self.answers(ahead, $0) } == expected)
            // Some answers say something: a stored size, a grown file's earlier version, a refused copy.
            #expect(expected.contains { $0.contains("true") && $0.contains("versions: ") })
            #expect(expected.contains { $0.contains("refused: true") })
            #expect(
                expected.contains {
                    $0.range(of: #"versions: \d+ \d+ [0-9a-f]{64}"#, options: .regularExpression) != nil
                })

            // An answer about a name is given once: asked again, the store is asked (the run may have stored a
            // version of it since).
            let probe = UpcomingFile(name: grown.path, byteCount: 10_000, sha256: nil)
            ahead.lookAhead([probe], fresh: true)
            #expect(
                try TestDatabase.query(
                    url, "UPDATE arrival.files SET path = 'moved' WHERE path = '\(grown.path)' RETURNING 1")
                    == 1)
            #expect(
                ahead.earlierVersions(atPath: grown.path, smallerThan: 10_000).count == 1, "kept from the look ahead")
            #expect(ahead.earlierVersions(atPath: grown.path, smallerThan: 10_000).isEmpty, "asked of the store")
            // A new run lets go of what an earlier one was told.
            ahead.lookAhead([UpcomingFile(name: "moved", byteCount: 10_000, sha256: nil)], fresh: true)
            #expect(ahead.earlierVersions(atPath: "moved", smallerThan: 10_000).count == 1)
        }
    }
}

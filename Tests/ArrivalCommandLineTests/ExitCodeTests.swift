import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the built `arrival` (next to the test bundle) with the tests' runner,
/// its wait off the cooperative pool. `asUnprivileged` runs it as `nobody`
/// when the tests run as root, for whom no permission bit is ever in the way.
///
/// The user is changed by `setpriv` (util-linux), in a process of its own,
/// never in a child forked from this many-threaded test process:
/// `setgroups` there can wait forever for a thread that was starting or
/// ending at the fork (glibc's set-ID broadcast), which hung CI once.
func arrival(
    _ arguments: [String], in directory: URL? = nil, asUnprivileged: Bool = false
) async throws -> ProcessOutcome {
    guard asUnprivileged, getuid() == 0 else { return try await run("arrival", arguments, in: directory) }
    let setpriv = "/usr/bin/setpriv"
    guard FileManager.default.isExecutableFile(atPath: setpriv) else {
        throw ProcessRunError("running arrival as nobody needs \(setpriv) (util-linux)")
    }
    return try await run(
        .path(setpriv),
        ["--reuid=65534", "--regid=65534", "--clear-groups", "--", try builtProduct("arrival").path] + arguments,
        in: directory)
}

/// A directory of the test's own, with a small simulated fleet on demand.
final class Workspace {
    let url: URL

    init() throws {
        url = try makeTemporaryDirectory()
        // Readable by `nobody` for the read-only directory test.
        chmod(url.path, 0o755)
    }

    deinit {
        chmod(url.path, 0o755)
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// `arrival simulate --out NAME`, one day (2026-11-21) of a few activities.
    @discardableResult
    func fleet(_ name: String, seed: Int = 7, inject: [String] = []) async throws -> String {
        let result = try await arrival(
            ["simulate", "--out", path(name), "--activities", "60", "--seed", "\(seed)"]
                + inject.flatMap { ["--inject", $0] })
        #expect(result.status == 0, "\(result)")
        return path(name)
    }

    /// A store with `fleet` ingested.
    func store(_ name: String, from fleet: String) async throws -> String {
        let result = try await arrival(["ingest", fleet, "--db", path(name), "--quiet"])
        #expect(result.status == 0, "\(result)")
        return path(name)
    }

    func write(_ text: String, to name: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    /// A copy of another program's SQLite database (one table, `notes`).
    func foreignDatabase(_ name: String) throws -> String {
        try FileManager.default.copyItem(atPath: fixture("databases/notes.db", in: .module), toPath: path(name))
        return path(name)
    }
}

/// The repository's own SampleData/.
let sampleData = packageRoot.appendingPathComponent("SampleData").path

@Suite("arrival exit codes, by subcommand")
struct ExitCodeTests {
    // MARK: - arrival

    @Test("--version prints the one version string; an unknown subcommand is bad usage")
    func root() async throws {
        let version = try await arrival(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == ArrivalVersion.current + "\n")
        let unknown = try await arrival(["frobnicate"])
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("error: 'frobnicate' is not an arrival command"), "\(unknown)")
    }

    @Test("--help, -h and help SUBCOMMAND print the help on stdout and exit 0, for the root and every subcommand")
    func help() async throws {
        for arguments in [
            ["--help"], ["-h"], ["help", "ingest"], ["ingest", "--help"], ["report", "--help"], ["diff", "-h"],
            ["gate", "--help"], ["simulate", "--help"], ["files", "remove", "--help"], ["check-payload", "--help"],
            ["demo", "--help"], ["serve", "--help"], ["prune", "--help"],
        ] {
            let help = try await arrival(arguments)
            #expect(help.status == 0, "\(arguments): \(help)")
            #expect(help.stdout.contains("USAGE:"), "\(arguments)")
            #expect(help.stderr.isEmpty, "\(arguments): \(help.stderr)")
        }
    }

    // MARK: - simulate

    @Test(
        "simulate: 0 when written; 1 when --out holds an earlier run (pass --force) or cannot be made (no --force advice); 2 for bad usage"
    )
    func simulate() async throws {
        let work = try Workspace()
        let first = try await arrival(["simulate", "--out", work.path("fleet"), "--activities", "5"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("simulated 5 activities"))

        let again = try await arrival(["simulate", "--out", work.path("fleet"), "--activities", "5"])
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("already exists"))
        #expect(again.stderr.contains("pass --force"))

        let file = try work.write("not a directory", to: "file")
        let cannot = try await arrival(["simulate", "--out", file + "/fleet", "--activities", "5"])
        #expect(cannot.status == 1, "\(cannot)")
        #expect(cannot.stderr.contains("cannot create"))
        #expect(!cannot.stderr.contains("--force"))

        let usage = try await arrival(["simulate", "--out", work.path("x"), "--activities", "0"])
        #expect(usage.status == 2, "\(usage)")
        #expect(usage.stderr.contains("--activities must be at least 1"))
    }

    // MARK: - ingest

    @Test("ingest: 0 when stored; 1 for a missing path or a malformed line under --strict; 2 without paths")
    func ingest() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let stored = try await arrival(["ingest", fleet, "--db", work.path("s.sqlite")])
        #expect(stored.status == 0, "\(stored)")
        #expect(stored.stdout.contains("new records:"))
        #expect(stored.stderr.isEmpty)

        let missing = try await arrival(["ingest", work.path("nowhere"), "--db", work.path("s.sqlite")])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("nothing to ingest: '\(work.path("nowhere"))' does not exist"), "\(missing)")

        let corrupt = try work.write("garbage\n", to: "corrupt.jsonl")
        let strict = try await arrival(["ingest", corrupt, "--db", work.path("s.sqlite"), "--strict"])
        #expect(strict.status == 1, "\(strict)")
        #expect(strict.stderr.contains("malformed line (invalid_json)"))

        let usage = try await arrival(["ingest", "--db", work.path("s.sqlite")])
        #expect(usage.status == 2, "\(usage)")
        #expect(usage.stderr.contains("Missing expected argument"))
    }

    @Test("ingest of a directory with no file warns on stderr; --require-data makes it exit 1")
    func ingestNothing() async throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("empty"), withIntermediateDirectories: true)
        let warned = try await arrival(["ingest", work.path("empty"), "--db", work.path("s.sqlite"), "--quiet"])
        #expect(warned.status == 0, "\(warned)")
        #expect(warned.stderr.contains("warning: no input files found under '\(work.path("empty"))'"))

        let required = try await arrival([
            "ingest", work.path("empty"), "--db", work.path("s.sqlite"), "--require-data",
        ])
        #expect(required.status == 1, "\(required)")
        #expect(required.stderr.contains("error: no input files found under"))

        let corrupt = try work.write("garbage\n", to: "corrupt.jsonl")
        let noRecord = try await arrival(["ingest", corrupt, "--db", work.path("s.sqlite"), "--require-data"])
        #expect(noRecord.status == 1, "\(noRecord)")
        #expect(noRecord.stderr.contains("found no valid record (1 malformed line)"))
    }

    @Test("ingest lists hidden entries it skipped, as it lists links and FIFOs")
    func ingestListsHidden() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        try FileManager.default.copyItem(atPath: fleet + "/sender", toPath: work.path("fleet/.backup"))
        let result = try await arrival(["ingest", fleet, "--db", work.path("s.sqlite")])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("entries skipped (hidden, or not regular files): 1"))
        #expect(result.stdout.contains("/fleet/.backup (hidden)"))
    }

    @Test("ingest into a --db whose directory is missing says so, not 'SQLite error 14'")
    func ingestMissingDirectory() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let result = try await arrival(["ingest", fleet, "--db", work.path("no/such/dir/s.sqlite")])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("the directory '\(work.path("no/such/dir"))' of the store"))
        #expect(result.stderr.contains("does not exist"))
        #expect(!result.stderr.contains("SQLite error"))
    }

    @Test("ingest, report, diff and gate leave another program's SQLite database untouched")
    func foreignDatabase() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let foreign = try work.foreignDatabase("notes.db")
        let before = try Data(contentsOf: URL(fileURLWithPath: foreign))

        let ingest = try await arrival(["ingest", fleet, "--db", foreign])
        #expect(ingest.status == 1, "\(ingest)")
        #expect(ingest.stderr.contains("is an SQLite database but no arrival store (it holds notes)"))
        let report = try await arrival(["report", "--db", foreign])
        #expect(report.status == 1, "\(report)")
        #expect(report.stderr.contains("no arrival store"))
        let diff = try await arrival(["diff", foreign, fleet])
        #expect(diff.status == 2, "\(diff)")
        #expect(diff.stderr.contains("no arrival store"))
        let gate = try await arrival(["gate", "--current", foreign])
        #expect(gate.status == 2, "\(gate)")

        #expect(try Data(contentsOf: URL(fileURLWithPath: foreign)) == before)
        #expect(!FileManager.default.fileExists(atPath: foreign + "-wal"))
    }

    // MARK: - lost and activity

    @Test(
        "lost and activity: 0 with a list or a timeline; 1 for an activity no record names or no store; 2 for bad usage"
    )
    func lostAndActivity() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let csv = try await arrival(["lost", "--db", store, "--format", "csv", "--limit", "3"])
        #expect(csv.status == 0, "\(csv)")
        let rows = csv.stdout.split(separator: "\r\n")
        #expect(
            rows.first
                == "activity_id,seq,app,provider,accepted_at,cause,push_token,evidence,channel_id,priority_10_last_hour"
        )
        #expect(rows.count == 4)
        let activity = try #require(rows.dropFirst().first?.split(separator: ",").first.map(String.init))
        let json = try await arrival(["activity", activity, "--db", store, "--format", "json"])
        #expect(json.status == 0, "\(json)")
        #expect(json.stdout.contains(#""schema": "arrival.activity/1""#) && json.stdout.contains(#""outcome": "lost""#))
        let text = try await arrival(["activity", activity, "--db", store])
        #expect(text.status == 0 && text.stdout.contains("Timeline") && text.stdout.contains("lost ("))

        let unknown = try await arrival(["activity", "no-such-activity", "--db", store])
        #expect(unknown.status == 1, "\(unknown)")
        #expect(unknown.stderr.contains("no request, render or callback of the store names the activity"))
        let missing = try await arrival(["lost", "--db", work.path("none.sqlite")])
        #expect(missing.status == 1, "\(missing)")
        let cause = try await arrival(["lost", "--db", store, "--cause", "gremlins"])
        #expect(cause.status == 2 && cause.stderr.contains("is not a loss cause"), "\(cause)")
        let limit = try await arrival(["lost", "--db", store, "--limit", "-1"])
        #expect(limit.status == 2, "\(limit)")
    }

    // MARK: - report

    @Test("report: 0 with a report; 1 without a store (run ingest first) or for an unwritable --out; 2 for a bad day")
    func report() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let json = try await arrival(["report", "--db", store, "--day", "2026-11-21"])
        #expect(json.status == 0, "\(json)")
        #expect(json.stdout.contains(#""schema": "arrival.report/2""#))
        #expect(json.stderr.isEmpty)

        let missing = try await arrival(["report", "--db", work.path("none.sqlite")])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("no store at '\(work.path("none.sqlite"))'"))
        #expect(missing.stderr.contains("arrival ingest"))
        #expect(!FileManager.default.fileExists(atPath: work.path("none.sqlite")))

        let out = try await arrival(["report", "--db", store, "--out", work.path("no/dir/report.json")])
        #expect(out.status == 1, "\(out)")
        #expect(out.stderr.contains("cannot write"))

        let usage = try await arrival(["report", "--db", store, "--day", "2026-13-01"])
        #expect(usage.status == 2, "\(usage)")
        #expect(usage.stderr.contains("is not a real day"))
    }

    @Test(
        "serve: 2 without tokens, for a short token, a bad port or a bad token file line; 1 for an unreadable token file"
    )
    func serve() async throws {
        let work = try Workspace()
        let store = work.path("s.sqlite")
        let none = try await arrival(["serve", "--db", store, "--spool", work.path("spool")])
        #expect(none.status == 2, "\(none)")
        #expect(none.stderr.contains("no tokens"))
        let short = try await arrival(["serve", "--db", store, "--device-token", "abc"])
        #expect(short.status == 2 && short.stderr.contains("shorter than 16"), "\(short)")
        let port = try await arrival(["serve", "--db", store, "--port", "70000", "--read-token", "r123456789abcdefgh"])
        #expect(port.status == 2 && port.stderr.contains("--port"), "\(port)")
        try Data("device 0123456789abcdef0\nwriter x\n".utf8).write(to: URL(fileURLWithPath: work.path("tokens")))
        let file = try await arrival(["serve", "--db", store, "--token-file", work.path("tokens")])
        #expect(file.status == 2 && file.stderr.contains("line 2"), "\(file)")
        let unreadable = try await arrival(["serve", "--db", store, "--token-file", work.path("missing")])
        #expect(unreadable.status == 1 && unreadable.stderr.contains("cannot read the token file"), "\(unreadable)")
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test("report on a day without data says where the data is; --require-data makes it exit 1")
    func reportEmptyWindow() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let warned = try await arrival(["report", "--db", store, "--day", "2026-11-20", "--format", "markdown"])
        #expect(warned.status == 0, "\(warned)")
        #expect(
            warned.stderr.contains("warning: the store has no requests in 2026-11-20; it holds 2026-11-21 … 2026-11-21")
        )

        let required = try await arrival(["report", "--db", store, "--day", "2026-11-20", "--require-data"])
        #expect(required.status == 1, "\(required)")
        #expect(required.stderr.contains("error: the store has no requests in 2026-11-20"))
        #expect(required.stdout.isEmpty)
    }

    @Test("report on an empty file refuses it and leaves it empty")
    func reportEmptyFile() async throws {
        let work = try Workspace()
        let empty = try work.write("", to: "empty.sqlite")
        let result = try await arrival(["report", "--db", empty])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("is empty, not an arrival store"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
    }

    @Test("report, diff and gate read a store in a directory they cannot write, and leave no file beside it")
    func readOnlyDirectory() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let directory = work.path("ro")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try await work.store("ro/s.sqlite", from: fleet)
        chmod(store, 0o644)
        #expect(chmod(directory, 0o555) == 0)
        defer { chmod(directory, 0o755) }

        let report = try await arrival(["report", "--db", store, "--format", "markdown"], asUnprivileged: true)
        #expect(report.status == 0, "\(report)")
        #expect(report.stdout.hasPrefix("# Live Activity delivery"))
        let html = try await arrival(
            ["report", "--db", store, "--format", "html", "--day", "2026-11-21"], asUnprivileged: true)
        #expect(html.status == 0, "\(html)")
        let diff = try await arrival(["diff", store, store], asUnprivileged: true)
        #expect(diff.status == 0, "\(diff)")
        let gate = try await arrival(["gate", "--current", store, "--baseline", store], asUnprivileged: true)
        #expect(gate.status == 0, "\(gate)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["s.sqlite"])
    }

    @Test("report in a writable directory leaves no -wal or -shm file behind")
    func reportLeavesNoFiles() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let report = try await arrival(["report", "--db", store])
        #expect(report.status == 0, "\(report)")
        #expect(!FileManager.default.fileExists(atPath: store + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: store + "-shm"))
    }

    // MARK: - diff

    @Test("diff: 0 compared; 1 when --out cannot be written; 2 for a side that cannot be read or bad usage")
    func diff() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let same = try await arrival(["diff", fleet, fleet, "--records"])
        #expect(same.status == 0, "\(same)")
        #expect(same.stdout.contains("0 answered differently, 0 only in A, 0 only in B"))

        let missing = try await arrival(["diff", work.path("nowhere"), fleet])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.stderr.contains("does not exist"))

        let cut = try work.write("{\n  \"schema\": \"arrival.report/1\"\n", to: "cut.json")
        let notAReport = try await arrival(["diff", cut, fleet])
        #expect(notAReport.status == 2, "\(notAReport)")
        #expect(notAReport.stderr.contains("looks like a report JSON but is not one"))

        let out = try await arrival(["diff", fleet, fleet, "--out", work.path("no/dir/diff.txt")])
        #expect(out.status == 1, "\(out)")
        #expect(out.stderr.contains("cannot write"))

        let usage = try await arrival(["diff", fleet, fleet, "--confidence", "2"])
        #expect(usage.status == 2, "\(usage)")
        #expect(usage.stderr.contains("--confidence must be between 0.5 and 1"))
    }

    // MARK: - gate

    @Test("gate: 0 passed; 1 a rule failed; 2 an unreadable side or bad usage")
    func gate() async throws {
        let work = try Workspace()
        let before = try await work.fleet("before", seed: 11)
        let after = try await work.fleet("after", seed: 11, inject: ["large-payloads"])
        let passed = try await arrival(["gate", "--baseline", before, "--current", before])
        #expect(passed.status == 0, "\(passed)")
        #expect(passed.stdout.contains("PASS"))

        let failed = try await arrival([
            "gate", "--baseline", before, "--current", after, "--rule", "requests.oversize_failures <= 0",
        ])
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.stdout.contains("FAIL"))

        let missing = try await arrival(["gate", "--baseline", work.path("nowhere"), "--current", after])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.stderr.contains("does not exist"))

        let usage = try await arrival(["gate", "--current", after, "--no-such-flag"])
        #expect(usage.status == 2, "\(usage)")
        #expect(usage.stderr.contains("Unknown option"))
    }

    @Test("gate exits 2, not 1, when every rule passed but --junit cannot be written")
    func gateJUnitUnwritable() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let result = try await arrival([
            "gate", "--baseline", fleet, "--current", fleet, "--junit", work.path("no/dir/junit.xml"),
        ])
        #expect(result.status == 2, "\(result)")
        #expect(result.stdout.contains("0 failed"))
        #expect(result.stderr.contains("cannot write '\(work.path("no/dir/junit.xml"))'"))
    }

    @Test(
        "gate refuses a floor or ceiling on a rate outside 0–1, from a flag or a config",
        arguments: [
            ">= 90", ">= -3", "<= 20",
        ])
    func gateRateOutOfRange(rule: String) async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let flag = try await arrival(["gate", "--current", fleet, "--rule", "updates.arrival_rate \(rule)"])
        #expect(flag.status == 2, "\(flag)")
        #expect(flag.stderr.contains("rates are fractions: write"))

        let check = rule.hasPrefix(">=") ? "at_least" : "at_most"
        let value = rule.split(separator: " ")[1]
        let config = try work.write(
            "rules:\n  - metric: updates.arrival_rate\n    \(check): \(value)\n", to: "gate.yml")
        let file = try await arrival(["gate", "--current", fleet, "--config", config])
        #expect(file.status == 2, "\(file)")
        #expect(file.stderr.contains("rates are fractions: write"))
        #expect(file.stderr.contains("gate.yml:2"))
    }

    @Test("gate with regression rules but no --baseline exits 2; --allow-no-baseline checks the rest")
    func gateRegressionWithoutBaseline() async throws {
        let work = try Workspace()
        let fleet = try await work.fleet("fleet")
        let refused = try await arrival(["gate", "--current", fleet, "--rule", "updates.arrival_rate drop <= 1"])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr.contains("no --baseline was given"))
        #expect(refused.stderr.contains("--allow-no-baseline"))

        let allowed = try await arrival([
            "gate", "--current", fleet, "--rule", "updates.arrival_rate drop <= 1", "--rule", "requests.total >= 1",
            "--allow-no-baseline",
        ])
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.stdout.contains("not checked: a regression rule needs --baseline"))
    }

    // MARK: - check-payload

    @Test("check-payload: 0 clean; 1 with an error; 2 for a directory, a missing file or bad usage")
    func checkPayload() async throws {
        let ok = try await arrival(["check-payload", fixture("payloads/ok.json")])
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.stdout.contains("0 errors, 0 warnings"))

        let stale = try await arrival(["check-payload", fixture("payloads/stale-date-past.json")])
        #expect(stale.status == 1, "\(stale)")
        #expect(stale.stdout.contains("error: stale_date_in_past"))

        let notJSON = try await arrival(["check-payload", fixture("payloads/not-json-multiline.json")])
        #expect(notJSON.status == 1, "\(notJSON)")
        #expect(notJSON.stdout.contains("syntax error at line 5, column 3"))

        let directory = try await arrival(["check-payload", fixture("payloads")])
        #expect(directory.status == 2, "\(directory)")
        #expect(directory.stderr.contains("is a directory"))
        #expect(!directory.stderr.contains("exists"))

        let missing = try await arrival(["check-payload", "/nonexistent/payload.json"])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.stderr.contains("no such file"))

        let usage = try await arrival(["check-payload", "--topic"])
        #expect(usage.status == 2, "\(usage)")
    }

    // MARK: - demo

    @Test("demo: html through report's own page; an unknown format refused at parse time (2); missing data 1")
    func demo() async throws {
        let html = try await arrival(["demo", "--data", sampleData, "--format", "html"])
        #expect(html.status == 0, "\(html)")
        #expect(html.stdout.hasPrefix("<!DOCTYPE html>"))

        let markdown = try await arrival(["demo", "--data", sampleData])
        #expect(markdown.status == 0, "\(markdown)")
        #expect(markdown.stdout.hasPrefix("# Live Activity delivery"))

        let unknown = try await arrival(["demo", "--data", sampleData, "--format", "pdf"])
        #expect(unknown.status == 2, "\(unknown)")
        #expect(unknown.stderr.contains("The value 'pdf' is invalid for '--format <format>'"))
        #expect(unknown.stdout.isEmpty)

        let missing = try await arrival(["demo", "--data", "/nonexistent/SampleData"])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("no sample data at '/nonexistent/SampleData'"))
    }
}

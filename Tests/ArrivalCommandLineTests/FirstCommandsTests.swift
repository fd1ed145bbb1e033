import ArrivalTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The traps of a first hour with the tool (issue 43): a mistyped path, a
/// mistyped command, a bad option value, a misspelt app, a short token, a
/// port in use. Each answers as a person expects, and leaves nothing behind.
@Suite("First commands")
struct FirstCommandsTests {
    @Test("An ingest of a path that does not exist exits 1 naming it, and makes no store; report then says so")
    func mistypedPath() async throws {
        let work = try Workspace()
        let db = work.path("arrival.sqlite")
        let ingest = try await arrival(["ingest", work.path("bacthes"), "--db", db])
        #expect(ingest.status == 1, "\(ingest)")
        #expect(ingest.stderr.contains("nothing to ingest:") && ingest.stderr.contains("bacthes' does not exist"))
        #expect(!ingest.stderr.contains("everything else was stored"))
        #expect(!FileManager.default.fileExists(atPath: db))
        let report = try await arrival(["report", "--db", db])
        #expect(report.status == 1 && report.stderr.contains("no store at"), "\(report)")

        // Beside a path that is there, the missing one is named, and the hint is true of the rest.
        let fleet = try await work.fleet("fleet")
        let some = try await arrival(["ingest", fleet, work.path("missing"), "--db", db, "--quiet"])
        #expect(some.status == 1 && some.stderr.contains("everything else was stored"), "\(some)")
        #expect(FileManager.default.fileExists(atPath: db))
    }

    @Test("A mistyped command names the one it most likely meant; a word like none lists the commands")
    func mistypedCommand() async throws {
        let reprot = try await arrival(["reprot"])
        #expect(reprot.status == 2)
        #expect(reprot.stderr.contains("'reprot' is not an arrival command; did you mean 'report'?"), "\(reprot)")
        let injest = try await arrival(["injest", "x"])
        #expect(injest.status == 2 && injest.stderr.contains("did you mean 'ingest'?"), "\(injest)")
        let other = try await arrival(["frobnicate"])
        #expect(other.status == 2 && !other.stderr.contains("did you mean"), "\(other)")
        #expect(other.stderr.contains("the commands: demo, ingest"))
    }

    @Test("lost: --limit -1 is named as a bad value; --limit's counts by cause are of every lost update")
    func lostLimit() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let negative = try await arrival(["lost", "--db", store, "--limit", "-1"])
        #expect(negative.status == 2, "\(negative)")
        #expect(negative.stderr.contains("--limit must be 0 (all) or more (got -1)"), "\(negative)")
        #expect(!negative.stderr.contains("Missing value"))

        let all = try await arrival(["lost", "--db", store])
        let two = try await arrival(["lost", "--db", store, "--limit", "2"])
        #expect(all.status == 0 && two.status == 0)
        let header = { (text: String) in String(text.split(separator: "\n").first ?? "") }
        // The same totals and causes, with "the first 2 shown" said.
        let allHeader = header(all.stdout)
        let twoHeader = header(two.stdout)
        #expect(twoHeader.contains(", the first 2 shown"), "\(twoHeader)")
        #expect(twoHeader.replacingOccurrences(of: ", the first 2 shown", with: "") == allHeader, "\(twoHeader)")
        let total = Int(allHeader.split(separator: ": ")[1].split(separator: " ")[0].filter(\.isNumber)) ?? 0
        #expect(total > 2, "the fleet must lose more than two updates for this test to say anything: \(allHeader)")
    }

    @Test("lost --app with an app no lost update names says so, with the apps that have some")
    func lostUnknownApp() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let typo = try await arrival(["lost", "--db", store, "--app", "com.exmaple.nope"])
        #expect(typo.status == 0, "\(typo)")
        #expect(typo.stderr.contains("no lost update of app 'com.exmaple.nope'"), "\(typo)")
        #expect(typo.stderr.contains("the apps with lost updates there: "), "\(typo)")
    }

    @Test(
        "serve: a short token is named for its length; a port in use is bad usage (2), said before any store or spool is made"
    )
    func serveTraps() async throws {
        let work = try Workspace()
        let short = try await arrival(["serve", "--device-token", "abc", "--db", work.path("a.sqlite")])
        #expect(short.status == 2, "\(short)")
        #expect(short.stderr.contains("shorter than 16 characters") && short.stderr.contains("openssl rand -hex 32"))
        #expect(!short.stderr.contains("give each token once"))

        // A port another socket listens on.
        let (fd, port) = CollectorClient.boundSocket(listening: true)
        defer { close(fd) }
        let busy = try await arrival([
            "serve", "--port", String(port), "--device-token", String(repeating: "d", count: 20),
            "--read-token", String(repeating: "r", count: 20), "--db", work.path("b.sqlite"), "--spool",
            work.path("spool"),
        ])
        #expect(busy.status == 2, "\(busy)")
        #expect(busy.stderr.contains("cannot listen on 127.0.0.1:\(port)") && busy.stderr.contains("in use"))
        #expect(!FileManager.default.fileExists(atPath: work.path("b.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: work.path("spool")))
    }

    @Test("gate: a rule on a breakdown key no report has (a typo) fails naming the keys there; the right key passes")
    func gateBreakdownTypo() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let config = work.path("gate.yml")
        try Data(
            """
            rules:
              - metric: breakdowns.provider.apsn.arrival_rate
                at_least: 0.5
              - metric: breakdowns.provider.apns.arrival_rate
                at_least: 0
                min_sample: 0
            """.utf8
        ).write(to: URL(fileURLWithPath: config))
        let gate = try await arrival(["gate", "--current", store, "--allow-no-baseline", "--config", config])
        #expect(gate.status == 1, "\(gate)")
        #expect(
            gate.stdout.contains("breakdowns.provider has no entry 'apsn'")
                && gate.stdout.contains("(its entries: apns)"))
        #expect(gate.stdout.contains("2 rules: 1 passed, 1 failed, 0 warned"), "\(gate.stdout)")
    }

    @Test("report without --format: markdown at a terminal, JSON into a pipe or a file")
    func reportFormatByDestination() async throws {
        let work = try Workspace()
        let store = try await work.store("s.sqlite", from: try await work.fleet("fleet"))
        let piped = try await arrival(["report", "--db", store])
        #expect(piped.status == 0 && piped.stdout.hasPrefix("{"), "\(piped)")
        // A terminal: util-linux's script(1) runs the command on a pseudo-terminal.
        let script = "/usr/bin/script"
        try #require(FileManager.default.isExecutableFile(atPath: script), "needs \(script) (bsdutils)")
        let command = "'\(try builtProduct("arrival").path)' report --db '\(store)'"
        let terminal = try await run(.path(script), ["-qec", command, "/dev/null"])
        #expect(terminal.status == 0, "\(terminal)")
        #expect(terminal.stdout.contains("# Live Activity delivery"), "\(terminal.stdout.prefix(200))")
        let file = work.path("report.out")
        let written = try await arrival(["report", "--db", store, "--out", file])
        #expect(written.status == 0)
        #expect(try String(contentsOfFile: file, encoding: .utf8).hasPrefix("{"))
    }

    @Test("demo outside a checkout simulates the sample day and prints, byte for byte, the report of SampleData/")
    func demoAnywhere() async throws {
        let work = try Workspace()
        let elsewhere = try await arrival(["demo"], in: work.url)
        #expect(elsewhere.status == 0, "\(elsewhere)")
        #expect(elsewhere.stderr.contains("No SampleData/ here (not a checkout): simulating the same day"))
        let bundled = try await arrival(["demo", "--data", sampleData])
        #expect(bundled.status == 0)
        #expect(elsewhere.stdout == bundled.stdout)
        #expect(elsewhere.stdout.contains("# Live Activity delivery"))
    }
}

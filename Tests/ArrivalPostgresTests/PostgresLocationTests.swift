import ArrivalPostgres
import ArrivalTestSupport
import Foundation
import Testing

@Suite("PostgreSQL locations and passwords")
struct PostgresLocationTests {
    @Test("A URL's parts, with libpq's defaults")
    func parts() throws {
        let full = try PostgresLocation(url: "postgres://arrival:s%40cret@db.internal:6543/reports?sslmode=require")
        #expect(full.user == "arrival")
        #expect(full.password == "s@cret")
        #expect(full.host == "db.internal")
        #expect(full.port == 6543)
        #expect(full.database == "reports")
        #expect(full.sslMode == .require)
        let short = try PostgresLocation(url: "postgresql://arrival@db")
        #expect(short.port == 5432)
        #expect(short.database == "arrival")  // the user's name, as libpq does
        #expect(short.sslMode == .prefer)
        let socket = try PostgresLocation(url: "postgres://arrival@/arrival?host=/run/postgresql&port=5433")
        #expect(socket.socketDirectory == "/run/postgresql")
        #expect(socket.host == nil)
        #expect(socket.port == 5433)
        let encodedSocket = try PostgresLocation(url: "postgres://arrival@%2Fvar%2Frun%2Fpg/arrival")
        #expect(encodedSocket.socketDirectory == "/var/run/pg")
        let v6 = try PostgresLocation(url: "postgres://arrival@[::1]:5555/a")
        #expect(v6.host == "::1")
        #expect(v6.port == 5555)
        #expect(v6.redacted == "postgres://arrival@[::1]:5555/a")
        // The last @ ends the user's part: an @ in a password need not be encoded.
        let at = try PostgresLocation(url: "postgres://arrival:p@ss@db/a")
        #expect(at.password == "p@ss")
        #expect(at.host == "db")
        // libpq's application_name and connect_timeout are taken (a timeout under 2 s as 2, 0 as none).
        #expect(short.applicationName == "arrival")
        #expect(short.connectTimeout == nil)
        let named = try PostgresLocation(url: "postgres://arrival@db/a?application_name=collector-3&connect_timeout=1")
        #expect(named.applicationName == "collector-3")
        #expect(named.connectTimeout == 2)
        #expect(try PostgresLocation(url: "postgres://arrival@db/a?connect_timeout=0").connectTimeout == 0)
    }

    @Test("ARRIVAL_DB_TIMEOUT: 300 s unless set, 0 for none; anything but a number of seconds refused by name")
    func timeout() throws {
        let location = try PostgresLocation(url: "postgres://arrival@db/a")
        #expect(try PostgresConnector(location, environment: [:]).timeout == .seconds(300))
        #expect(
            try PostgresConnector(location, environment: ["ARRIVAL_DB_TIMEOUT": "2.5"]).timeout == .milliseconds(2500))
        #expect(try PostgresConnector(location, environment: ["ARRIVAL_DB_TIMEOUT": "0"]).timeout == nil)
        for bad in ["soon", "-1", "inf"] {
            #expect {
                _ = try PostgresConnector(location, environment: ["ARRIVAL_DB_TIMEOUT": bad])
            } throws: { error in
                "\(error)".contains("ARRIVAL_DB_TIMEOUT '\(bad)'")
            }
        }
    }

    @Test("What a location says of itself never holds the password")
    func redaction() throws {
        let location = try PostgresLocation(url: "postgres://arrival:hunter2@db.internal:5432/arrival")
        #expect(location.redacted == "postgres://arrival@db.internal:5432/arrival")
        #expect(!"\(location)".contains("hunter2"))
        #expect(!String(reflecting: location).isEmpty)
        let socket = try PostgresLocation(url: "postgres://arrival:hunter2@/arrival?host=/tmp/pg")
        #expect(socket.redacted == "postgres://arrival@:5432/arrival?host=/tmp/pg")
    }

    @Test(
        "Bad URLs are refused with the reason, and never echo a password",
        arguments: [
            ("postgres://db.internal/arrival", "no user"),
            ("postgres://arrival@db:99999/a", "no port number"),
            ("postgres://arrival@db/a?sslmode=allow", "sslmode 'allow'"),
            ("postgres://arrival@db/a?password=hunter2", "password parameter"),
            ("postgres://arrival@db/a?options=-c", "parameter 'options'"),
            ("postgres://arrival@db/a?connect_timeout=soon", "connect_timeout 'soon'"),
            ("postgres://arrival:%zz@db/a", "percent-encoding"),
            ("sqlite:///tmp/a", "postgres:// URL"),
        ])
    func refused(url: String, reason: String) {
        #expect {
            _ = try PostgresLocation(url: url)
        } throws: { error in
            let text = "\(error)"
            return text.contains(reason) && !text.contains("hunter2")
        }
    }

    @Test(".pgpass lines: wildcards, escapes, comments, the first match wins")
    func pgpassMatching() {
        let file = PasswordFile.PgPass(
            text: """
                # comment
                db.internal:5432:reports:arrival:first
                *:*:*:arrival:fallback
                host\\:with\\:colons:5432:*:arrival:pa\\:ss\\\\word
                short:line
                """)
        #expect(file.password(host: "db.internal", port: 5432, database: "reports", user: "arrival") == "first")
        #expect(file.password(host: "db.internal", port: 5432, database: "other", user: "arrival") == "fallback")
        #expect(file.password(host: "elsewhere", port: 1, database: "x", user: "someone") == nil)
        let escaped = PasswordFile.PgPass(text: "host\\:with\\:colons:5432:*:arrival:pa\\:ss\\\\word")
        #expect(escaped.password(host: "host:with:colons", port: 5432, database: "d", user: "arrival") == "pa:ss\\word")
    }

    @Test("The password's sources in order: URL, PGPASSWORD, a secret file, .pgpass; a readable .pgpass is ignored")
    func passwordOrder() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pgpass = directory.appendingPathComponent("pgpass").path
        try "db:5432:*:arrival:from-pgpass\n".write(toFile: pgpass, atomically: true, encoding: .utf8)
        chmod(pgpass, 0o600)
        let secret = directory.appendingPathComponent("secret").path
        try "from-secret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let plain = try PostgresLocation(url: "postgres://arrival@db/a")
        let withPassword = try PostgresLocation(url: "postgres://arrival:from-url@db/a")
        var environment = ["PGPASSFILE": pgpass]
        #expect(try plain.resolvedPassword(environment: environment) == "from-pgpass")
        environment["ARRIVAL_DB_PASSWORD_FILE"] = secret
        #expect(try plain.resolvedPassword(environment: environment) == "from-secret")
        environment["PGPASSWORD"] = "from-environment"
        #expect(try plain.resolvedPassword(environment: environment) == "from-environment")
        #expect(try withPassword.resolvedPassword(environment: environment) == "from-url")
        // passfile= in the URL names the .pgpass file.
        let named = try PostgresLocation(url: "postgres://arrival@db/a?passfile=\(pgpass)")
        #expect(try named.resolvedPassword(environment: [:]) == "from-pgpass")
        // Readable by others: ignored, as libpq ignores it.
        chmod(pgpass, 0o644)
        #expect(try plain.resolvedPassword(environment: ["PGPASSFILE": pgpass]) == nil)
        // A secret file that cannot be read is named, and the run stops there.
        #expect(throws: PasswordFile.Problem.self) {
            _ = try plain.resolvedPassword(environment: ["ARRIVAL_DB_PASSWORD_FILE": directory.path + "/missing"])
        }
        #expect(try plain.resolvedPassword(environment: ["HOME": directory.path]) == nil)
    }
}

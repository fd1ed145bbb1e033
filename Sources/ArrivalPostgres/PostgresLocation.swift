import Foundation

/// Where a PostgreSQL store is, read from a `postgres://` (or
/// `postgresql://`) URL as libpq reads one:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMS]`, with `host=`
/// naming a Unix socket's folder (`postgres://arrival@/arrival?host=/run/postgresql`),
/// `sslmode=` (`disable`, `prefer`, the default, `require`, `verify-full`),
/// `passfile=`, `application_name=` and `connect_timeout=` (seconds).
///
/// The password is never part of what this type says of itself
/// (``description``, ``redacted``): a location goes into logs, errors and
/// `/metrics` as `postgres://arrival@db.internal:5432/arrival`. Where the
/// password comes from is settled by ``resolvedPassword(environment:)``.
package struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    package enum SSLMode: String, Sendable {
        /// Plain TCP (or a Unix socket).
        case disable
        /// TLS when the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// TLS or no connection, without checking the certificate (libpq's `require`).
        case require
        /// TLS with the server's certificate and name checked.
        case verifyFull = "verify-full"
    }

    package var user: String
    /// The password written into the URL, if any (discouraged: it shows in
    /// the shell's history and the process list).
    package var password: String?
    /// A host name or address, or nil with ``socketDirectory``.
    package var host: String?
    /// The folder of the server's Unix socket (`.s.PGSQL.PORT` inside it).
    package var socketDirectory: String?
    package var port: Int
    package var database: String
    package var sslMode: SSLMode
    /// A `.pgpass`-format file named by the URL (`passfile=`).
    package var passFile: String?
    /// The name the server shows for arrival's connections (`pg_stat_activity`).
    package var applicationName = "arrival"
    /// How long to wait for a connection, in seconds (`connect_timeout=`;
    /// nil: postgres-nio's 10 seconds; 0 or less: libpq's "wait indefinitely",
    /// taken as a day).
    package var connectTimeout: Int?

    /// Whether `text` names a PostgreSQL store rather than a SQLite file.
    package static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Why a URL could not be read. Its text never holds the password.
    package struct InvalidURL: Error, CustomStringConvertible {
        package var description: String
    }

    package init(url text: String) throws(InvalidURL) {
        guard Self.isURL(text) else {
            throw InvalidURL(description: "a PostgreSQL store is named by a postgres:// URL")
        }
        let rest = text.drop(while: { $0 != ":" }).dropFirst(3)  // after "://"
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = rest[authorityEnd...]
        var query = Substring("")
        if let mark = path.firstIndex(of: "?") {
            query = path[path.index(after: mark)...]
            path = path[..<mark]
        }
        // user[:password]@ — the last @ ends them (a password may hold one, percent-encoded or not).
        var hostPort = authority
        var userInfo: Substring?
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
        }
        func decoded(_ part: Substring, _ what: String) throws(InvalidURL) -> String {
            guard let value = String(part).removingPercentEncoding else {
                throw InvalidURL(description: "the URL's \(what) has a broken percent-encoding")
            }
            return value
        }
        var user = ""
        var password: String?
        if let userInfo {
            if let colon = userInfo.firstIndex(of: ":") {
                user = try decoded(userInfo[..<colon], "user name")
                password = try decoded(userInfo[userInfo.index(after: colon)...], "password")
            } else {
                user = try decoded(userInfo, "user name")
            }
        }
        var host: String?
        var port = 5432
        if hostPort.hasPrefix("[") {
            // An IPv6 address: [::1]:5432.
            guard let close = hostPort.firstIndex(of: "]") else {
                throw InvalidURL(description: "the URL's host opens '[' without closing it")
            }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst()) }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = try decoded(hostPort[..<colon], "host")
            port = try Self.port(hostPort[hostPort.index(after: colon)...])
        } else if !hostPort.isEmpty {
            host = try decoded(hostPort, "host")
        }
        var socketDirectory: String?
        if let name = host, name.hasPrefix("/") {
            socketDirectory = name
            host = nil
        }
        var sslMode = SSLMode.prefer
        var passFile: String?
        var databaseParameter: String?
        var userParameter: String?
        var applicationName: String?
        var connectTimeout: Int?
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try decoded(parts[0], "parameter name")
            let value = parts.count > 1 ? try decoded(parts[1], "parameter \(key)") : ""
            switch key {
            case "host":
                if value.hasPrefix("/") {
                    socketDirectory = value
                    host = nil
                } else {
                    host = value
                }
            case "port": port = try Self.port(Substring(value))
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw InvalidURL(
                        description:
                            "sslmode '\(value)' is not one arrival knows (disable, prefer, require, verify-full)")
                }
                sslMode = mode
            case "passfile": passFile = value
            case "dbname": databaseParameter = value
            case "user": userParameter = value
            case "password":
                throw InvalidURL(
                    description: "the URL carries a password parameter; give it in PGPASSWORD, a .pgpass file "
                        + "or ARRIVAL_DB_PASSWORD_FILE instead")
            case "application_name": applicationName = value
            case "connect_timeout":
                guard let seconds = Int(value) else {
                    throw InvalidURL(description: "connect_timeout '\(value)' is not a whole number of seconds")
                }
                // libpq takes a timeout under 2 seconds as 2.
                connectTimeout = seconds <= 0 ? 0 : max(seconds, 2)
            default:
                throw InvalidURL(description: "the URL's parameter '\(key)' is not one arrival knows")
            }
        }
        if let userParameter { user = userParameter }
        guard !user.isEmpty else {
            throw InvalidURL(description: "the URL names no user (postgres://USER@HOST/DATABASE)")
        }
        var database = try decoded(path.drop(while: { $0 == "/" }), "database name")
        if let databaseParameter { database = databaseParameter }
        if database.isEmpty { database = user }
        if host == nil, socketDirectory == nil { host = "localhost" }
        self.user = user
        self.password = password
        self.host = host
        self.socketDirectory = socketDirectory
        self.port = port
        self.database = database
        self.sslMode = sslMode
        self.passFile = passFile
        if let applicationName { self.applicationName = applicationName }
        self.connectTimeout = connectTimeout
    }

    private static func port(_ text: Substring) throws(InvalidURL) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw InvalidURL(description: "the URL's port '\(text)' is no port number")
        }
        return port
    }

    /// The URL without its password: what logs, errors and `/metrics` may show.
    package var redacted: String {
        let address: String
        if let socketDirectory {
            address = "@:\(port)/\(database)?host=\(socketDirectory)"
        } else {
            let name = host ?? "localhost"
            address = "@\(name.contains(":") ? "[\(name)]" : name):\(port)/\(database)"
        }
        return "postgres://\(user)\(address)"
    }

    package var description: String { redacted }

    /// The host a `.pgpass` line is matched against: the host name, or
    /// `localhost` for a Unix socket (as libpq does).
    var passFileHost: String { host ?? "localhost" }

    /// Where the password comes from, in libpq's order, and then arrival's
    /// own: the URL; `PGPASSWORD`; `ARRIVAL_DB_PASSWORD_FILE` (a file that
    /// holds the password alone, as a container secret does); the `.pgpass`
    /// file (`passfile=`, else `PGPASSFILE`, else `~/.pgpass`). Nil when none
    /// has one: the server may not ask.
    package func resolvedPassword(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(PasswordFile.Problem) -> String?
    {
        if let password { return password }
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        if let path = environment["ARRIVAL_DB_PASSWORD_FILE"], !path.isEmpty {
            return try PasswordFile.secret(at: path)
        }
        let path =
            passFile ?? environment["PGPASSFILE"]
            ?? environment["HOME"].map { ($0 as NSString).appendingPathComponent(".pgpass") }
        guard let path else { return nil }
        return try PasswordFile.pgpass(at: path)?.password(
            host: passFileHost, port: port, database: database, user: user)
    }
}

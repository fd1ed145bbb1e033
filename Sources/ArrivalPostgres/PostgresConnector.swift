package import Logging
import NIOSSL
package import PostgresNIO

/// Opens connections to a PostgreSQL store with postgres-nio, from a
/// ``PostgresLocation`` and the password it resolves.
package struct PostgresConnector: Sendable {
    package let location: PostgresLocation
    private let password: String?

    /// Why a connection could not be made, in words that name the store by
    /// its redacted URL and never hold the password.
    package struct ConnectError: Error, CustomStringConvertible {
        package var description: String
        /// What to do, when it is not the usual (check the URL, the server, the password).
        package var hint: String?
    }

    /// How long a statement's answer may take before the connection is
    /// given up (``PostgresSession``), and how long the server lets a
    /// connection sit idle inside a transaction before it ends it: a writer
    /// frozen mid-file would otherwise hold the rows other writers wait on.
    /// `ARRIVAL_DB_TIMEOUT` in seconds, 300 by default; 0: no limit.
    package let timeout: Duration?

    /// The timeout when `ARRIVAL_DB_TIMEOUT` is not set.
    package static let defaultTimeout = Duration.seconds(300)

    package init(_ location: PostgresLocation, environment: [String: String]) throws(ConnectError) {
        self.location = location
        do {
            password = try location.resolvedPassword(environment: environment)
        } catch {
            throw ConnectError(description: "\(location.redacted): \(error.description)")
        }
        timeout = try Self.timeout(environment["ARRIVAL_DB_TIMEOUT"])
    }

    static func timeout(_ text: String?) throws(ConnectError) -> Duration? {
        guard let text, !text.isEmpty else { return defaultTimeout }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
            throw ConnectError(
                description: "ARRIVAL_DB_TIMEOUT '\(text)' is not a number of seconds",
                hint: "set it to how long to wait for the server's answer, in seconds (300 when unset, 0: no limit).")
        }
        return seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// postgres-nio's configuration for this location.
    func configuration() throws(ConnectError) -> PostgresConnection.Configuration {
        var configuration = try transport()
        if let seconds = location.connectTimeout {
            configuration.options.connectTimeout = .seconds(Int64(seconds == 0 ? 86_400 : seconds))
        }
        var parameters = [("application_name", location.applicationName)]
        if let timeout {
            let milliseconds =
                timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            parameters.append(("idle_in_transaction_session_timeout", "\(max(milliseconds, 1))"))
        }
        configuration.options.additionalStartupParameters = parameters
        return configuration
    }

    /// Where and how to reach the server.
    private func transport() throws(ConnectError) -> PostgresConnection.Configuration {
        if let directory = location.socketDirectory {
            return PostgresConnection.Configuration(
                unixSocketPath: "\(directory)/.s.PGSQL.\(location.port)", username: location.user,
                password: password, database: location.database)
        }
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch location.sslMode {
            case .disable:
                tls = .disable
            case .prefer, .require:
                // libpq's prefer and require encrypt without checking the certificate.
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.certificateVerification = .none
                let context = try NIOSSLContext(configuration: configuration)
                tls = location.sslMode == .prefer ? .prefer(context) : .require(context)
            case .verifyFull:
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw ConnectError(description: "\(location.redacted): TLS cannot be set up (\(error))")
        }
        return PostgresConnection.Configuration(
            host: location.host ?? "localhost", port: location.port, username: location.user, password: password,
            database: location.database, tls: tls)
    }

    /// A new connection; the caller closes it.
    package func connect(logger: Logger) async throws(ConnectError) -> PostgresConnection {
        let configuration = try configuration()
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw ConnectError(description: "\(location.redacted): \(Self.reason(error))")
        }
    }

    /// What went wrong, from the server's message where there is one.
    /// postgres-nio's own description of its errors says nothing on purpose
    /// (it may hold a query's values), so the parts that are safe are picked.
    package static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            let code = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return message + code
        }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }
}

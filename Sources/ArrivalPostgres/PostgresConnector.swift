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
    }

    package init(_ location: PostgresLocation, environment: [String: String]) throws(ConnectError) {
        self.location = location
        do {
            password = try location.resolvedPassword(environment: environment)
        } catch {
            throw ConnectError(description: "\(location.redacted): \(error.description)")
        }
    }

    /// postgres-nio's configuration for this location.
    func configuration() throws(ConnectError) -> PostgresConnection.Configuration {
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

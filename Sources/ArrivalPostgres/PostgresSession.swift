package import ArrivalModel
import Foundation
package import Logging
package import NIOCore
package import PostgresNIO

/// What went wrong with a PostgreSQL store, in words that name it by its
/// redacted URL and never hold its password or a query's values.
package struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    package var description: String
    /// The server's SQLSTATE, when the server said why.
    package var sqlState: String?
    /// What to do, when it is not the usual for an error of its kind.
    package var hint: String?

    package init(_ description: String, sqlState: String? = nil, hint: String? = nil) {
        self.description = description
        self.sqlState = sqlState
        self.hint = hint
    }

    /// A deadlock the server broke by failing this side (40P01), or a
    /// serialization failure (40001): the statement can be tried again.
    package var isRetryable: Bool { sqlState == "40P01" || sqlState == "40001" }
}

/// One connection to a PostgreSQL store used from one ordinary thread at a
/// time: ingest's writer and reading threads and the commands are
/// synchronous, postgres-nio is not, so each call waits for its result here
/// (never on an event loop or in Swift concurrency's pool).
/// `@unchecked Sendable`: one thread at a time calls it (its owner waits for each answer); `gaveUp` is that thread's.
package final class PostgresSession: @unchecked Sendable {
    package let location: PostgresLocation
    let connection: PostgresConnection
    let logger: Logger
    /// How long an answer may take (``PostgresConnector/timeout``).
    let timeout: Duration?
    /// Set when an answer did not come in time: the connection is given up.
    private var gaveUp = false

    /// Connects to the store at `location` with the password it resolves
    /// (URL, `PGPASSWORD`, `ARRIVAL_DB_PASSWORD_FILE`, `.pgpass`).
    package init(
        _ location: PostgresLocation, environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger = Logger(label: "arrival.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        self.location = location
        self.logger = logger
        let connector: PostgresConnector
        do {
            connector = try PostgresConnector(location, environment: environment)
        } catch {
            throw PostgresStoreError(error.description, hint: error.hint)
        }
        timeout = connector.timeout
        do {
            // Bounded by the connect timeout (postgres-nio's, or the URL's connect_timeout).
            connection = try Self.wait(timeout: nil) { try await connector.connect(logger: logger) }
        } catch let error as PostgresConnector.ConnectError {
            throw PostgresStoreError(error.description)
        }
    }

    /// Runs `query` and returns its rows and command tag.
    @discardableResult
    package func run(_ query: PostgresQuery) throws -> PostgresQueryResult {
        try checkOpen()
        let answer: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
        return try awaitAnswer { try await answer.get() }
    }

    /// A query sent and not yet waited for (``send(_:)``, then ``answer(to:)``).
    struct Pending: Sendable {
        fileprivate let answer: EventLoopFuture<PostgresQueryResult>
    }

    /// Sends `query` and returns at once: the server answers queries in the
    /// order they were sent, so one sent ahead is worked on while its caller
    /// does something else (a reader's next page while it decodes this one).
    func send(_ query: PostgresQuery) throws -> Pending {
        try checkOpen()
        return Pending(answer: connection.query(query, logger: logger))
    }

    /// The answer to a query ``send(_:)`` sent, waited for as ``run(_:)`` waits.
    func answer(to pending: Pending) throws -> PostgresQueryResult {
        let answer = pending.answer
        return try awaitAnswer { try await answer.get() }
    }

    /// Runs a statement this connection prepares once (the first time) and
    /// returns its rows.
    @discardableResult
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) throws -> [Statement.Row]
    where Statement.Row: Sendable {
        try checkOpen()
        let connection = self.connection
        let logger = self.logger
        return try awaitAnswer {
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// Runs statements without parameters, one after the other (postgres-nio
    /// speaks the extended protocol only, one statement a query).
    package func execute(_ statements: String...) throws {
        for sql in statements { try run(PostgresQuery(unsafeSQL: sql)) }
    }

    /// `COPY table (columns) FROM STDIN` of `data`, rows in COPY's text format.
    package func copy(into table: String, columns: [String], _ data: ByteBuffer) throws {
        try checkOpen()
        let connection = self.connection
        let logger = self.logger
        try awaitAnswer {
            try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                try await writer.write(data)
            }
        }
    }

    /// Waits for the server's answer at most ``timeout``. A server that
    /// stopped answering without closing the connection (a machine gone, a
    /// network cut with no reset) would otherwise hold this thread, and the
    /// locks of everything waiting on it, until TCP gives up hours later: the
    /// connection is closed instead and the caller told, and connects again
    /// (a collector) or stops with the message (a command). A transaction it
    /// held is rolled back by the server.
    private func awaitAnswer<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        do {
            return try Self.wait(timeout: timeout, body)
        } catch is NoAnswer {
            gaveUp = true
            let closing: EventLoopFuture<Void> = connection.close()
            closing.whenComplete { _ in }
            let seconds = timeout.map { "\($0.components.seconds)" } ?? "?"
            throw PostgresStoreError(
                "\(location.redacted): no answer from the server in \(seconds) s (ARRIVAL_DB_TIMEOUT); "
                    + "the connection was closed", hint: Self.lostMidWork)
        } catch {
            throw failure(error)
        }
    }

    /// Throws when the server or the network closed the connection: a query
    /// written to a closed connection would wait for an answer forever
    /// (postgres-nio 1.33 drops it). The caller connects again.
    private func checkOpen() throws {
        if gaveUp {
            throw PostgresStoreError(
                "\(location.redacted): the connection was given up (no answer in time)", hint: Self.lostMidWork)
        }
        if connection.isClosed {
            throw PostgresStoreError(
                "\(location.redacted): the connection was closed (the server restarted or ended it)",
                hint: Self.lostMidWork)
        }
    }

    /// What to do when the server went away after the connection was made.
    static let lostMidWork =
        "what was committed before stays, and what was in flight was rolled back whole: run the same command "
        + "again once the server answers (an ingest skips the files it stored) (Documentation/PostgreSQL.md)."

    /// The error, with the server's reason and the store's redacted URL.
    func failure(_ error: any Error) -> PostgresStoreError {
        if let error = error as? PostgresStoreError { return error }
        let state = (error as? PSQLError)?.serverInfo?[.sqlState]
        // No answer and the connection gone: the server went away under a statement.
        let hint = state == nil && connection.isClosed ? Self.lostMidWork : nil
        return PostgresStoreError(
            "\(location.redacted): \(PostgresConnector.reason(error))", sqlState: state, hint: hint)
    }

    package func close() {
        let connection = self.connection
        _ = try? Self.wait(timeout: .seconds(10)) { try await connection.close() }
    }

    /// An answer that did not come in time.
    struct NoAnswer: Error {}

    /// Waits on this (ordinary) thread for `body`, run in a task of its own,
    /// at most `timeout` (nil: as long as it takes), then throws ``NoAnswer``
    /// and leaves the task to end on its own.
    static func wait<T: Sendable>(timeout: Duration?, _ body: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        // Not on Swift concurrency's pool: the waiting thread may be one of
        // its few threads (a test), and the pool could then have none left to run `body`.
        Task(executorPreference: DispatchExecutor.shared) {
            do {
                result.value = .success(try await body())
            } catch {
                result.value = .failure(error)
            }
            done.signal()
        }
        if let timeout {
            let nanoseconds =
                timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
            if done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .timedOut { throw NoAnswer() }
        } else {
            done.wait()
        }
        return try result.value!.get()
    }
}

/// A task's result handed to the thread that waits for it (the semaphore orders the two).
/// `@unchecked Sendable`: written by the task before it signals the semaphore, read by the waiting thread after it.
private final class ResultBox<T>: @unchecked Sendable {
    var value: Result<T, any Error>?
}

extension PostgresStoreError: DiagnosticConvertible {
    package var diagnostic: Diagnostic {
        Diagnostic(
            .store, description,
            hint: hint
                ?? (sqlState == nil
                    ? "check the URL, that the server runs and that the role may connect; the password comes from the "
                        + "URL, PGPASSWORD, ARRIVAL_DB_PASSWORD_FILE or ~/.pgpass (Documentation/PostgreSQL.md)."
                    : "the server refused a statement for the reason given; a file being stored then was rolled back "
                        + "whole (Documentation/PostgreSQL.md)."))
    }
}

/// Runs tasks' jobs on Dispatch's threads, outside Swift concurrency's pool.
private final class DispatchExecutor: TaskExecutor, Sendable {
    static let shared = DispatchExecutor()
    private let queue = DispatchQueue(label: "arrival.postgres", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

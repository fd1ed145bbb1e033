import Foundation
import Hummingbird
import Metrics
import NIOCore
import NIOHTTPTypes

/// A connection limit that passed: what the request body's reader throws
/// (``Spool/Failure/timedOut(_:)``, answered 408).
struct DeadlineExceeded: Error, Sendable {
    var message: String
}

/// The collector's time limits, per connection (Documentation/Collector.md,
/// "Limits"). Each is a flag of `arrival serve`.
package struct ConnectionLimits: Sendable, Equatable {
    /// From a connection's start, or the end of its last response, to a
    /// request's complete head. Past it: 408 (or a silent close between
    /// keep-alive requests) and the connection closes.
    package var headerTimeout: Duration = .seconds(10)
    /// Longest pause between two parts of a request body.
    package var bodyIdleTimeout: Duration = .seconds(15)
    /// From a request's head to the end of its body.
    package var uploadTimeout: Duration = .seconds(300)
    /// After SIGTERM, how long requests in flight may take before their
    /// connections are closed (those uploads were never acknowledged).
    package var shutdownGrace: Duration = .seconds(5)

    package init() {}
}

/// Enforces ``ConnectionLimits`` on one HTTP/1 connection, between
/// Hummingbird's codec and its request handling: a client that sends a byte
/// and waits, or trickles a body, holds a connection for a bounded time,
/// whatever token it has; and after SIGTERM every connection is closed
/// within the grace period, so shutdown never waits for the slowest client.
///
/// A request whose body is late gets ``DeadlineExceeded`` thrown from its
/// body (the upload is not stored, and is answered 408 if the client still
/// listens); the connection is closed once that answer is written, or a
/// second later regardless.
final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private enum Phase {
        /// Waiting for a request's head, since the given time; `served`: a
        /// response was written on this connection before.
        case waitingForHead(since: NIODeadline, served: Bool)
        /// Reading a request body.
        case readingBody(headAt: NIODeadline, lastPartAt: NIODeadline)
        /// The request was read; its response is not finished.
        case responding
    }

    private let limits: ConnectionLimits
    private var phase: Phase = .waitingForHead(since: .now(), served: false)
    /// Requests whose response is not finished (HTTP/1 pipelining allows several).
    private var unanswered = 0
    private var shutdownAt: NIODeadline?
    private var closeAfterResponse = false
    private var closed = false
    private var timer: Scheduled<Void>?
    /// The connection, for `100 Continue` (``sendContinue(on:)``).
    private var context: ChannelHandlerContext?
    /// The request being read asked `Expect: 100-continue`, and was not told yet.
    private var awaitingContinue = false

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    private static func amount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    // MARK: - Events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        phase = .waitingForHead(since: .now(), served: false)
        if context.channel.isActive { schedule(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        phase = .waitingForHead(since: .now(), served: false)
        schedule(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now()
        switch unwrapInboundIn(data) {
        case .head(let head):
            unanswered += 1
            phase = .readingBody(headAt: now, lastPartAt: now)
            awaitingContinue = head.headerFields[.expect]?.lowercased() == "100-continue"
        case .body where awaitingContinue:
            // The client sent its body without waiting for 100 Continue (as it may): nothing to tell it.
            awaitingContinue = false
            if case .readingBody(let headAt, _) = phase { phase = .readingBody(headAt: headAt, lastPartAt: now) }
        case .body:
            if case .readingBody(let headAt, _) = phase { phase = .readingBody(headAt: headAt, lastPartAt: now) }
        case .end:
            if unanswered == 0 {
                // Answered before its body was read (a refusal): the connection waits for the next head.
                phase = .waitingForHead(since: now, served: true)
                schedule(context)
            } else {
                phase = .responding
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .head(var head) = part, awaitingContinue, head.status.kind != .informational {
            // Answered before the client was told to send its body: it may never send it, so the
            // connection cannot be read on. It closes after this answer.
            awaitingContinue = false
            closeAfterResponse = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
            return
        }
        guard case .end = part else {
            context.write(data, promise: promise)
            return
        }
        unanswered = max(0, unanswered - 1)
        if closeAfterResponse || (shutdownAt != nil && unanswered == 0) {
            context.writeAndFlush(data, promise: promise)
            close(context)
            return
        }
        context.write(data, promise: promise)
        // A response ended before its request's body (an early refusal) leaves the body being read.
        if unanswered == 0, case .responding = phase {
            phase = .waitingForHead(since: .now(), served: true)
            schedule(context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, shutdownAt == nil {
            shutdownAt = .now() + Self.amount(limits.shutdownGrace)
            schedule(context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: - 100 Continue

    /// Tells the client of the request being read on `channel`, if it asked
    /// (`Expect: 100-continue`), to send its body: the handler calls it once
    /// every check that needs only the head passed. A request refused before
    /// is answered with its final status, without `100 Continue`, and its
    /// connection closed (the client may never send that body).
    static func sendContinue(on channel: any Channel) {
        channel.eventLoop.execute {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: ConnectionDeadlines.self) else {
                return
            }
            handler.writeContinue()
        }
    }

    private func writeContinue() {
        guard awaitingContinue, !closed, let context else { return }
        awaitingContinue = false
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
    }

    // MARK: - The timer

    /// When this connection's next limit passes, given its phase.
    private var deadline: NIODeadline? {
        var next: NIODeadline?
        switch phase {
        case .waitingForHead(let since, _):
            next = since + Self.amount(limits.headerTimeout)
        case .readingBody(let headAt, let lastPartAt):
            next = min(
                lastPartAt + Self.amount(limits.bodyIdleTimeout), headAt + Self.amount(limits.uploadTimeout))
        case .responding:
            next = nil
        }
        if let shutdownAt { next = min(next ?? shutdownAt, shutdownAt) }
        return next
    }

    private func schedule(_ context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        guard !closed, let deadline else { return }
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        timer = loop.scheduleTask(deadline: deadline) { [self] in
            timer = nil
            expire(context)
        }
    }

    private func expire(_ context: ChannelHandlerContext) {
        guard !closed, let deadline else { return }
        let now = NIODeadline.now()
        // Parts read since the timer was set moved the deadline on.
        guard now >= deadline else {
            schedule(context)
            return
        }
        let shuttingDown = shutdownAt.map { now >= $0 } ?? false
        switch phase {
        case .waitingForHead(let since, let served):
            if shuttingDown || served {
                close(context)
            } else {
                Self.count(.header)
                let waited = Double((now - since).nanoseconds) / 1e9
                requestTimeout(
                    context,
                    message: "no complete request head within \(Self.seconds(limits.headerTimeout)) s "
                        + "(waited \(String(format: "%.1f", waited)) s)")
            }
        case .readingBody(let headAt, let lastPartAt):
            let message: String
            if shuttingDown {
                Self.count(.shutdown)
                message = "the collector is shutting down; send the upload again"
            } else if now >= headAt + Self.amount(limits.uploadTimeout) {
                Self.count(.upload)
                message =
                    "the upload took longer than \(Self.seconds(limits.uploadTimeout)) s (--upload-timeout); "
                    + "send smaller batches"
            } else {
                Self.count(.bodyIdle)
                message =
                    "nothing of the body arrived for \(Self.seconds(limits.bodyIdleTimeout)) s "
                    + "(--body-idle-timeout; last at \(String(format: "%.1f", Double((now - lastPartAt).nanoseconds) / 1e9)) s ago)"
            }
            // The handler reading the body throws; its answer (408) closes the connection.
            closeAfterResponse = true
            phase = .responding
            context.fireErrorCaught(DeadlineExceeded(message: message))
            let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
            timer = loop.scheduleTask(in: .seconds(1)) { [self] in close(context) }
        case .responding:
            // Only shutdown sets a deadline here: the answer was not finished within the grace period.
            Self.count(.shutdown)
            close(context)
        }
    }

    /// Answers 408 to a request whose head did not arrive in time, then closes.
    private func requestTimeout(_ context: ChannelHandlerContext, message: String) {
        let body = APIError(.requestTimeout, message).jsonBody
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.utf8.count)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .requestTimeout, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        close(context)
    }

    private func close(_ context: ChannelHandlerContext) {
        guard !closed else { return }
        closed = true
        timer?.cancel()
        timer = nil
        context.close(promise: nil)
    }

    /// Which limit closed a connection, as the `limit` label of `arrival_connection_timeouts_total`.
    enum Limit: String, CaseIterable {
        case header
        case bodyIdle = "body_idle"
        case upload
        case shutdown
    }

    private static func count(_ limit: Limit) {
        Counter(label: "arrival_connection_timeouts_total", dimensions: [("limit", limit.rawValue)]).increment()
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? String(seconds) : String(format: "%.1f", Double(seconds) + Double(attoseconds) / 1e18)
    }
}

@available(*, unavailable)
extension ConnectionDeadlines: Sendable {}

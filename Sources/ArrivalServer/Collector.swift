import ArrivalAnalysis
package import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
package import ArrivalStores
import Foundation
package import Hummingbird
package import Logging
package import Metrics
import NIOCore
package import Prometheus
import ServiceLifecycle

/// `arrival serve`: where apps and senders upload (Documentation/Collector.md).
///
/// Uploads are made durable in a ``Spool`` and acknowledged; one
/// ``IngestWorker`` ingests them in arrival order into the store, each as
/// one all-or-nothing file of `arrival ingest`, and removes it from the
/// spool after its commit. Reports and upload states are read from WAL
/// snapshots, which never block the writer nor see half an upload.
package struct Collector: Sendable {
    package struct Configuration: Sendable {
        /// The store, read once from `--db` (``StoreLocation``).
        package var store = StoreLocation.sqlite(path: "arrival.sqlite")
        package var spoolPath = "arrival-spool"
        package var host = "127.0.0.1"
        package var port = 8080
        package var tokens = TokenTable()
        package var maxUploadBytes = 64 << 20
        /// What the spool may hold (queued and arriving) before uploads get 503.
        package var maxSpoolBytes = 4 << 30
        /// How often today's per-app rates in `/metrics` are recomputed, at most.
        package var ratesRefreshSeconds = 60
        /// Time limits per connection, and the shutdown grace period.
        package var limits = ConnectionLimits()
        /// Uploads in progress at once, per role and per client address
        /// (429 with `Retry-After` past either); 0 for no cap.
        package var maxUploadsPerRole: [Role: Int] = [.device: 1024, .sender: 256]
        package var maxUploadsPerAddress = 128
        /// IPv6 clients count against ``maxUploadsPerAddress`` by this many
        /// leading bits of their address (a /64: one subscriber); IPv4
        /// clients by their address.
        package var ipv6PrefixLength = 64
        /// What one upload may cost the worker once read, per role: a device
        /// token is public, so its uploads get a small allowance.
        package var uploadCostLimits: [Role: LineReader.Limits] = [.device: .device, .sender: .sender]
        /// Reports computed at once (`GET /v1/report`); past it, 503 with `Retry-After`.
        package var maxConcurrentReports = 2
        /// A header a reverse proxy in front sets to the client's address
        /// (`X-Forwarded-For`: its last entry counts); nil to use the
        /// connection's own address.
        package var clientAddressHeader: String?
        /// Days of records to retain (`--retain`): the store is pruned before
        /// now minus this many days at start and once a day; nil keeps everything.
        package var retainDays: Int?
        /// The registry `/metrics` prints: the one of the factory the process
        /// bootstrapped swift-metrics with (``Collector/prometheusMetrics()``);
        /// nil prints no metric.
        package var registry: PrometheusCollectorRegistry?

        package init() {}
    }

    package let configuration: Configuration
    let spool: Spool
    let engine: StoreEngine
    let metrics = CollectorMetrics()
    let slots: UploadSlots
    let reports: ReportCache

    /// Says, before anything is made, that another collector holds the
    /// spool (the same error as opening it would give).
    package static func checkSpoolFree(_ spoolPath: String) throws {
        let lock = URL(fileURLWithPath: spoolPath).appendingPathComponent("lock").path
        do {
            try SpoolFiles.checkNotLocked(lock, directory: spoolPath)
        } catch .inUse(let message) {
            throw spoolInUse(message, spoolPath)
        } catch {
            return  // opening the spool will say what is wrong
        }
    }

    private static func spoolInUse(_ message: String, _ spoolPath: String) -> Diagnostic {
        Diagnostic(
            .usage, message,
            hint: "one collector per spool: stop the other one, or give this one its own --spool.",
            location: Diagnostic.Location(path: spoolPath))
    }

    /// Opens (creating) the store and the spool; what a crash left in the
    /// spool is queued again.
    package init(configuration: Configuration) throws {
        self.configuration = configuration
        do {
            spool = try Spool(directory: configuration.spoolPath, maxBytes: configuration.maxSpoolBytes)
        } catch .inUse(let message) {
            throw Self.spoolInUse(message, configuration.spoolPath)
        } catch {
            throw Diagnostic(.io, Self.describe(error), hint: "check that --spool names a writable directory.")
        }
        engine = try StoreEngine(location: configuration.store)
        slots = UploadSlots(perRole: configuration.maxUploadsPerRole, perAddress: configuration.maxUploadsPerAddress)
        // Other writers of a PostgreSQL store are not seen by the change state: cached reports age out.
        reports = ReportCache(
            maxConcurrent: configuration.maxConcurrentReports, maxAge: engine.readsServer ? .seconds(30) : nil)
    }

    /// The levels `run(logLevel:)` takes.
    package static let logLevels = Logger.Level.allCases.map(\.rawValue)

    /// Serves until SIGTERM or SIGINT, with the metrics of swift-metrics in
    /// the Prometheus format (the process bootstraps it: ``prometheusMetrics()``).
    package func run(logLevel: String) async throws {
        var logger = Logger(label: "arrival.serve")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        logger.info(
            "collector starting",
            metadata: [
                "address": "\(configuration.host):\(configuration.port)", "store": "\(engine.label)",
                "spool": "\(configuration.spoolPath)",
                "tokens":
                    "\(Role.allCases.map { "\($0.rawValue) \(configuration.tokens.count(of: $0))" }.joined(separator: ", "))",
            ])
        for note in spool.recoveryNotes { logger.warning("spool: \(note)") }
        let retried = spool.setAsideBeforeCount
        if retried > 0 {
            logger.notice(
                "spool: \(retried) upload\(retried == 1 ? "" : "s") set aside by an earlier run tried once more (rejected.json)"
            )
        }
        do {
            try await application(logger: logger).runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            let address = "\(configuration.host):\(configuration.port)"
            throw error.errnoCode == EADDRINUSE
                ? Diagnostic(
                    .usage, "cannot listen on \(address): the address is already in use",
                    hint: "another process (another arrival serve?) has this port: stop it, or pass another --port.")
                : Diagnostic(
                    .usage, "cannot listen on \(address): permission denied",
                    hint: "ports below 1024 need privileges: pass --port 8080 (and put a proxy in front), "
                        + "or check --host.")
        }
    }

    /// A Prometheus registry and a swift-metrics factory that records into it,
    /// with Hummingbird's request counters named as Prometheus names them and
    /// no error counter for a status below 400 (``ErrorsOnlyFactory``).
    /// Nothing process-wide happens here: the executable bootstraps
    /// `MetricsSystem` with `factory`, once per process (`arrival serve`), and
    /// hands `registry` to ``Configuration/registry`` for `/metrics`.
    package static func prometheusMetrics() -> (factory: any MetricsFactory, registry: PrometheusCollectorRegistry) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Hummingbird's request counters, named as Prometheus names counters.
        factory.nameAndLabelSanitizer = { name, labels in
            switch name {
            case "hb.requests": ("http_server_requests_total", labels)
            case "hb.request.errors": ("http_server_request_errors_total", labels)
            default: (name, labels)
            }
        }
        return (ErrorsOnlyFactory(base: factory), registry)
    }

    /// The HTTP application with the ingest worker and the rates refresher
    /// as its services; `runService()` runs it until SIGTERM or SIGINT.
    package func application(logger: Logger) -> some ApplicationProtocol {
        let limits = configuration.limits
        return Application(
            router: router(),
            server: .http1(
                configuration: .init(additionalChannelHandlers: [ConnectionDeadlines(limits: limits)])),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "arrival"),
            services: services(logger: logger),
            logger: logger)
    }

    /// The ingest worker, the rates refresher and, with ``Configuration/retainDays``, the daily prune.
    func services(logger: Logger) -> [any Service] {
        var services: [any Service] = [
            IngestWorker(
                spool: spool, engine: engine, metrics: metrics, logger: logger,
                limits: configuration.uploadCostLimits),
            RatesRefresher(
                engine: engine, metrics: metrics, everySeconds: configuration.ratesRefreshSeconds, logger: logger),
        ]
        if let days = configuration.retainDays {
            services.append(
                Retention(
                    engine: engine, days: days, logger: logger,
                    now: { Int64(Date().timeIntervalSince1970 * 1000) },
                    pause: { try await Task.sleep(for: $0) }))
        }
        return services
    }

    func router() -> Router<CollectorContext> {
        let router = Router(context: CollectorContext.self)
        router.middlewares.add(JSONErrorMiddleware())
        router.middlewares.add(MetricsMiddleware())
        router.post("/v1/uploads") { request, context in try await upload(request, context: context) }
        router.get("/v1/uploads") { request, context in try await uploadList(request, context: context) }
        router.get("/v1/uploads/{sha256}") { request, context in try await uploadState(request, context: context) }
        router.get("/v1/report") { request, context in try await report(request, context: context) }
        router.get("/metrics") { _, _ in metricsText() }
        router.get("/healthz") { _, _ in Self.json(.ok, JSONBody.object([("status", .string("ok"))])) }
        router.get("/readyz") { _, _ in try await ready() }
        // A known path asked with another method: 405 with the methods it takes.
        for (path, allowed) in [
            ("/v1/uploads", "GET, POST"), ("/v1/uploads/{sha256}", "GET"), ("/v1/report", "GET"), ("/metrics", "GET"),
            ("/healthz", "GET"), ("/readyz", "GET"),
        ] {
            for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch]
            where !allowed.split(separator: ", ").contains(Substring(method.rawValue)) {
                router.on(RouterPath(path), method: method) { request, _ -> Response in
                    throw APIError(
                        .methodNotAllowed,
                        "\(request.uri.path) takes \(allowed.replacingOccurrences(of: ", ", with: " or ")) only",
                        headers: [.allow: allowed])
                }
            }
        }
        return router
    }

    // MARK: - Uploads

    func upload(_ request: Request, context: CollectorContext) async throws -> Response {
        let role = try authorize(request, metricsRole: true)
        guard role.mayUpload else {
            metrics.upload(role: role, result: .forbidden)
            throw APIError(.forbidden, "a read token cannot upload; use a device or sender token")
        }
        // A body in a transfer coding other than chunked (gzip, chunked): the collector does not
        // decode it (send a gzip file as the body itself, which is read as it is).
        let codings = request.headers[values: .transferEncoding].flatMap { $0.split(separator: ",") }.map {
            String($0).trimmingASCIIWhitespace.lowercased()
        }
        guard codings.isEmpty || codings == ["chunked"] else {
            metrics.upload(role: role, result: .unsupportedEncoding)
            throw APIError(
                .notImplemented,
                "Transfer-Encoding '\(codings.joined(separator: ", "))' is not supported: send the body as it is "
                    + "(chunked or with a Content-Length); a gzip file is sent as the body itself",
                headers: [.connection: "close"])
        }
        let name: String?
        do throws(UploadName.Invalid) {
            let names = request.headers[values: UploadName.header]
            guard names.count <= 1 else {
                throw UploadName.Invalid(message: "send one X-Upload-Name header, not \(names.count)")
            }
            name = try names.first.map(UploadName.validated)
        } catch {
            metrics.upload(role: role, result: .badName)
            throw APIError(.badRequest, error.message)
        }
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        guard spool.acceptsUploads else {
            metrics.upload(role: role, result: .diskFull)
            throw APIError(
                .serviceUnavailable, "the collector's disk is full; retry after \(Spool.noSpaceRetrySeconds) s",
                headers: [.retryAfter: String(Spool.noSpaceRetrySeconds)])
        }
        let address = clientAddress(request, context: context)
        if let refusal = slots.acquire(role: role, address: address) {
            metrics.upload(role: role, result: .rateLimited)
            throw APIError(
                .tooManyRequests, "\(refusal); retry after \(UploadSlots.retryAfterSeconds) s",
                headers: [.retryAfter: String(UploadSlots.retryAfterSeconds)])
        }
        defer { slots.release(role: role, address: address) }
        let engine = self.engine
        let logger = context.logger
        do {
            try spool.admit(declaredLength: declared, maxUploadBytes: configuration.maxUploadBytes)
            // Every check that needs only the head passed: a client that asked (Expect: 100-continue) may send
            // the body.
            if request.headers[.expect]?.lowercased() == "100-continue", let channel = context.channel {
                ConnectionDeadlines.sendContinue(on: channel)
            }
            // Whether these bytes were stored is asked before the upload is queued: once queued, the worker
            // may ingest it at any moment, and this very upload must not make itself a duplicate.
            let (entry, seen) = try await spool.receive(
                request.body, declaredLength: declared, name: name, role: role,
                maxUploadBytes: configuration.maxUploadBytes
            ) { sha256 in
                do {
                    guard try await engine.ingestedFile(sha256: sha256) != nil else { return false }
                    // A device token's copy of these bytes had lines refused that this token may send:
                    // this upload is ingested in its place (Documentation/Collector.md).
                    return !(role.mayUploadSenderRecords ? try await engine.hasRefusedLines(sha256: sha256) : false)
                } catch {
                    // Not known stored, then: queued, and the ingest worker finds out (skipping bytes stored already).
                    logger.warning("upload \(sha256) queued without asking the store: \(error)")
                    return false
                }
            }
            // The upload is in the spool, durable, from here on: acknowledged whatever the store answers.
            metrics.received(bytes: entry.byteCount, role: role)
            metrics.upload(role: role, result: seen.isDuplicate ? .duplicate : .queued)
            let state =
                switch seen {
                case .new: "queued"
                case .queued: "duplicate"
                case .stored: "ingested"
                }
            return Self.json(
                seen.isDuplicate ? .ok : .accepted,
                JSONBody.object([("upload", .string(entry.sha256)), ("state", .string(state))]))
        } catch {
            switch error {
            case .empty:
                metrics.upload(role: role, result: .empty)
                throw APIError(.badRequest, "the upload is empty; send one JSON Lines file (plain or gzip) as the body")
            case .tooLarge(let limit):
                metrics.upload(role: role, result: .tooLarge)
                throw APIError(
                    .contentTooLarge,
                    "the upload is over \(limit) bytes (--max-upload-bytes); send smaller batches")
            case .full(let seconds):
                metrics.upload(role: role, result: .spoolFull)
                throw APIError(
                    .serviceUnavailable, "the collector's spool is full; retry after \(seconds) s",
                    headers: [.retryAfter: String(seconds)])
            case .noSpace(let seconds):
                metrics.upload(role: role, result: .diskFull)
                context.logger.warning("upload refused: the spool's disk is full")
                throw APIError(
                    .serviceUnavailable, "the collector's disk is full; retry after \(seconds) s",
                    headers: [.retryAfter: String(seconds)])
            case .aborted(let message):
                // The client's doing, not the collector's: below error, under its own label.
                metrics.upload(role: role, result: .aborted)
                context.logger.debug("upload not stored: \(message)")
                throw APIError(.badRequest, "the upload was not stored: \(message); send it again")
            case .timedOut(let message):
                metrics.upload(role: role, result: .timedOut)
                context.logger.debug("upload not stored: \(message)")
                throw APIError(
                    .requestTimeout, "the upload was not stored: \(message)", headers: [.connection: "close"])
            case .io(let message), .inUse(let message):
                metrics.upload(role: role, result: .failed)
                context.logger.error("upload not stored: \(message)")
                throw APIError(.internalServerError, "the upload could not be stored; retry later")
            }
        }
    }

    func uploadState(_ request: Request, context: CollectorContext) async throws -> Response {
        _ = try authorize(request, metricsRole: false)
        let sha = context.parameters.get("sha256") ?? ""
        guard sha.utf8.count == 64, sha.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else {
            throw APIError(.badRequest, "name an upload by the SHA-256 of its bytes, 64 lower-case hex digits")
        }
        let stored: IngestedFile?
        do {
            stored = try await engine.ingestedFile(sha256: sha)
        } catch {
            context.logger.warning("upload state of \(sha) unknown: \(error)")
            throw APIError(
                .serviceUnavailable, "the store does not answer now; retry after 5 s", headers: [.retryAfter: "5"])
        }
        if let file = stored {
            return Self.json(
                .ok,
                JSONBody.object([
                    ("upload", .string(sha)), ("state", .string("ingested")), ("name", .string(file.path)),
                    ("lines", .int(file.lines)), ("records", .int(file.records)),
                    ("duplicate_records", .int(file.duplicates)), ("malformed_lines", .int(file.malformed)),
                ]))
        }
        if spool.queuedEntry(sha256: sha) != nil {
            return Self.json(.ok, JSONBody.object([("upload", .string(sha)), ("state", .string("queued"))]))
        }
        if let item = spool.setAsideEntry(sha256: sha) {
            return Self.json(.ok, JSONBody.object(Self.rejectedFields(item)))
        }
        throw APIError(.notFound, "no upload with these bytes was received; send it again")
    }

    /// The uploads set aside (`GET /v1/uploads?state=rejected`), for a read token: each with the store's reason.
    func uploadList(_ request: Request, context: CollectorContext) async throws -> Response {
        let role = try authorize(request, metricsRole: false)
        guard role.mayReadReports else {
            throw APIError(.forbidden, "listing uploads needs a read token; device and sender tokens only upload")
        }
        guard let state = request.uri.queryParameters.get("state") else {
            throw APIError(.badRequest, "say which uploads to list: state=rejected (the ones set aside)")
        }
        guard state == "rejected" else {
            throw APIError(.badRequest, "state must be rejected: the uploads set aside are the ones listed")
        }
        let items = spool.setAsideEntries.map { JSONBody.Value.object(Self.rejectedFields($0)) }
        return Self.json(.ok, JSONBody.object([("uploads", .array(items))]))
    }

    /// What the collector says of an upload set aside.
    static func rejectedFields(_ item: SetAside) -> [(String, JSONBody.Value)] {
        [
            ("upload", .string(item.entry.sha256)), ("state", .string("rejected")), ("name", .string(item.entry.name)),
            ("role", .string(item.entry.role.rawValue)), ("bytes", .int(item.entry.byteCount)),
            ("received_at", .string(RFC3339.format(milliseconds: item.entry.receivedAt))),
            ("rejected_at", .string(RFC3339.format(milliseconds: item.at))), ("attempts", .int(item.attempts)),
            ("reason", .string(item.reason)),
        ]
    }

    // MARK: - Reading

    func report(_ request: Request, context: CollectorContext) async throws -> Response {
        let role = try authorize(request, metricsRole: false)
        guard role.mayReadReports else {
            throw APIError(.forbidden, "reports need a read token; device and sender tokens only upload")
        }
        let query = request.uri.queryParameters
        let format =
            try query.get("format").map { value in
                guard let format = ReportOutput(rawValue: String(value)) else {
                    throw APIError(.badRequest, "format must be json, markdown or html")
                }
                return format
            } ?? .json
        let window = try ReportQuery.window(
            day: query.get("day").map { String($0) }, from: query.get("from").map { String($0) },
            to: query.get("to").map { String($0) })
        var days: Int?
        if let value = query.get("days") {
            guard let number = Int(value), (1...366).contains(number), format == .html else {
                throw APIError(.badRequest, "days adds trend lines to the HTML report: 1 to 366, with format=html")
            }
            days = number
        }
        let trendDays = days
        let engine = self.engine
        let key = ReportCache.Key(
            request:
                "\(format.rawValue) \(window.map { "\($0.from)-\($0.to)" } ?? "all") \(days.map(String.init) ?? "-")",
            state: engine.changeState)
        let text: String
        do {
            let source: ReportCache.Source
            (text, source) = try await reports.report(key) {
                try await engine.read { store in
                    try format.render(
                        try ProducedReport.of(
                            store, window: window, daily: format.showsDailyReport, trendDays: trendDays))
                }
            }
            let result: CollectorMetrics.ReportResult =
                switch source {
                case .computed: .computed
                case .cached: .cached
                case .shared: .shared
                }
            metrics.report(result)
        } catch is ReportCache.Busy {
            metrics.report(.refused)
            throw APIError(
                .serviceUnavailable,
                "\(reports.maxConcurrent) reports are being computed, the most this collector computes at once "
                    + "(--max-concurrent-reports); retry after \(ReportCache.retryAfterSeconds) s",
                headers: [.retryAfter: String(ReportCache.retryAfterSeconds)])
        }
        var headers = HTTPFields()
        headers[.contentType] = format.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func metricsText() -> Response {
        let inProgress = slots.inProgress
        for role in [Role.device, .sender] {
            Gauge(label: "arrival_uploads_in_progress", dimensions: [("role", role.rawValue)])
                .record(inProgress[role] ?? 0)
        }
        let depth = spool.depth
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        metrics.spool(
            uploads: depth.uploads, bytes: depth.bytes, oldestReceivedAt: depth.oldestReceivedAt, now: now)
        metrics.rejected(byRole: spool.setAsideByRole, storeWritable: engine.cannotWrite == nil)
        metrics.store(reachable: engine.isReachable)
        for (role, queued) in spool.depthByRole {
            metrics.queue(
                role: role, uploads: queued.uploads, bytes: queued.bytes, oldestReceivedAt: queued.oldestReceivedAt,
                now: now)
        }
        let text = CollectorMetrics.withHelp(configuration.registry?.emitToString() ?? "")
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func ready() async throws -> Response {
        guard await engine.isReadable else { throw APIError(.serviceUnavailable, "the store cannot be read") }
        if let failure = engine.cannotWrite {
            throw APIError(
                .serviceUnavailable,
                "the store cannot be written (uploads are still acknowledged into the spool, and ingested once it "
                    + "can): \(failure)")
        }
        guard spool.acceptsUploads else {
            throw APIError(
                .serviceUnavailable, "the spool's disk is full: uploads are refused until room returns",
                headers: [.retryAfter: String(Spool.noSpaceRetrySeconds)])
        }
        let probe = spool.root.appendingPathComponent("incoming/.ready-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data()) else {
            throw APIError(.serviceUnavailable, "the spool is not writable")
        }
        try? FileManager.default.removeItem(at: probe)
        return Self.json(.ok, JSONBody.object([("status", .string("ready"))]))
    }

    // MARK: - Helpers

    /// Whether `name` is a header name (an RFC 9110 token), as HTTPTypes reads one.
    package static func isHeaderName(_ name: String) -> Bool { HTTPFields.Element.Name(name) != nil }

    /// Who is uploading, for the per-address cap: the connection's address,
    /// or with ``Configuration/clientAddressHeader`` the last entry of that
    /// header (what the proxy in front saw); an IPv6 client by its
    /// ``Configuration/ipv6PrefixLength`` prefix (``ClientAddress``).
    func clientAddress(_ request: Request, context: CollectorContext) -> String {
        if let name = configuration.clientAddressHeader, let field = HTTPFields.Element.Name(name),
            let value = request.headers[values: field].last,
            let last = value.split(separator: ",").last.map({ String($0).trimmingASCIIWhitespace }), !last.isEmpty
        {
            return ClientAddress.key(last, ipv6PrefixLength: configuration.ipv6PrefixLength)
        }
        return ClientAddress.key(
            context.remoteAddress?.ipAddress ?? "unknown", ipv6PrefixLength: configuration.ipv6PrefixLength)
    }

    /// The role of the request's bearer token; 401 without one or with an unknown one.
    func authorize(_ request: Request, metricsRole: Bool) throws -> Role {
        guard let header = request.headers[.authorization] else {
            if metricsRole { metrics.upload(role: nil, result: .unauthorized) }
            throw APIError.unauthorized("send the token as 'Authorization: Bearer TOKEN'")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", let role = configuration.tokens.role(of: parts[1])
        else {
            if metricsRole { metrics.upload(role: nil, result: .unauthorized) }
            throw APIError.unauthorized("the token is not one this collector knows")
        }
        return role
    }

    static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body + "\n")))
    }

    static func describe(_ failure: Spool.Failure) -> String {
        switch failure {
        case .io(let message): message
        case .empty: "empty upload"
        case .tooLarge(let limit): "upload over \(limit) bytes"
        case .full: "spool full"
        case .noSpace: "the spool's disk is full"
        case .aborted(let message), .timedOut(let message), .inUse(let message): message
        }
    }
}

extension HTTPFields {
    /// `X-Upload-Name`: the name an upload is registered under.
    var uploadName: String? {
        get { self[UploadName.header] }
        set { self[UploadName.header] = newValue }
    }
}

/// The name an upload is registered under (`X-Upload-Name`): a relative
/// path, as the client's files are named.
enum UploadName {
    static let header = HTTPFields.Element.Name("X-Upload-Name")!

    struct Invalid: Error {
        var message: String
    }

    static func validated(_ raw: String) throws(Invalid) -> String {
        // The HTTP parser reads a header's bytes as UTF-8 and writes U+FFFD for those that are not:
        // names that differ only in such bytes would then be one name. None is taken.
        guard !raw.unicodeScalars.contains("\u{FFFD}") else {
            throw Invalid(
                message: "X-Upload-Name must be UTF-8: it held bytes that are not (or U+FFFD, which stands for them)")
        }
        var name = raw
        while name.hasPrefix("./") { name.removeFirst(2) }
        guard !name.isEmpty, name.utf8.count <= 512 else {
            throw Invalid(message: "X-Upload-Name must be a relative path of 1 to 512 bytes")
        }
        guard !name.hasPrefix("/"), !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
            !name.split(separator: "/", omittingEmptySubsequences: false).contains(where: {
                $0 == ".." || $0 == "." || $0.isEmpty
            })
        else {
            throw Invalid(
                message: "X-Upload-Name must be a relative path such as devices/abc/widget-1.jsonl: "
                    + "no leading /, no empty, . or .. segment, no control character")
        }
        return name
    }
}

/// A report window from query parameters, read as the command line reads its flags (``ReportWindow/parse(day:from:to:)``).
enum ReportQuery {
    static func window(day: String?, from: String?, to: String?) throws -> ReportWindow? {
        do {
            return try ReportWindow.parse(day: day, from: from, to: to)
        } catch {
            let message =
                switch error {
                case .dayWithRange: "give either day or from and to"
                case .notADay(let day): "day '\(day)' is not a real day; write it as YYYY-MM-DD"
                case .notATime: "from and to must be RFC 3339 times, e.g. 2026-11-21T00:00:00Z"
                case .fromNotBeforeTo: "from must be before to"
                case .halfRange: "give from and to together"
                }
            throw APIError(.badRequest, message)
        }
    }
}

/// Hummingbird's metrics middleware makes its error counter for every route
/// and status it answers, 200 included, so `/metrics` printed
/// `http_server_request_errors_total{error_type="200"} 0`. Counters of that
/// name for a status below 400 go nowhere; everything else is the
/// Prometheus factory's.
struct ErrorsOnlyFactory: MetricsFactory {
    let base: any MetricsFactory

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        if label == "hb.request.errors",
            let status = dimensions.first(where: { $0.0 == "error.type" }).flatMap({ Int($0.1) }), status < 400
        {
            return NOOPMetricsHandler.instance
        }
        return base.makeCounter(label: label, dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        base.makeMeter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        base.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if handler is NOOPMetricsHandler { return }
        base.destroyCounter(handler)
    }

    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }

    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }

    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}

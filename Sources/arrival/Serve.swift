import ArgumentParser
import ArrivalIngest
import ArrivalModel
import ArrivalServer
import Foundation
import Metrics

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the collector: apps and senders upload over HTTP, reports and metrics are read from it.",
        discussion: """
            Endpoints: POST /v1/uploads (a device or sender token), GET /v1/uploads/SHA256 (any token), \
            GET /v1/report?format=json|markdown|html&day=D (a read token), GET /metrics, GET /healthz, GET /readyz.
            A device token ships inside the app, so it is public: uploads made with it may carry render and \
            callback records only (their apns and exchange lines are counted malformed, kind_not_allowed). \
            Tokens come from --*-token, from --token-file (lines 'device|sender|read TOKEN') or from \
            ARRIVAL_DEVICE_TOKENS, ARRIVAL_SENDER_TOKENS and ARRIVAL_READ_TOKENS (comma-separated), so they \
            stay out of ps. Uploads are acknowledged once durable in --spool and ingested in arrival order; \
            one collector per spool (a second one on it exits at start, naming the first). \
            Limits a holder of the public device token cannot exhaust: a request head within --header-timeout, \
            no pause in a body over --body-idle-timeout, a whole upload within --upload-timeout (408 past \
            them), at most --max-uploads-per-address and --max-device-uploads / --max-sender-uploads at once \
            (429 with Retry-After past them); room in the spool is reserved as bytes arrive, never for a \
            Content-Length alone; IPv6 clients count by their --ipv6-prefix-length prefix. Uploads are \
            ingested in runs that alternate between device and sender uploads, so a slow device upload never \
            holds the senders'; what one upload may inflate to is bounded per role (--max-inflated-bytes-device, \
            --max-lines-device and the -sender ones). At most --max-concurrent-reports reports are computed at \
            once (503 with Retry-After past it), repeated ones served from a cache while the store is unchanged. \
            A full disk answers 503 with Retry-After (and /readyz 503) until room returns. \
            SIGTERM or SIGINT stops accepting, gives requests in flight --shutdown-grace seconds, closes what \
            is left (never acknowledged: those clients retry), stops the ingest run between batches (or \
            abandons it uncommitted 5 s later) and exits 0, leaving what is queued for the next start.
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(help: "Directory where uploads wait, durable, until they are ingested.")
    var spool = "arrival-spool"

    @Option(help: "Address to listen on (a reverse proxy in front adds TLS).")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on.")
    var port = 8080

    @Option(name: .customLong("device-token"), help: "A token apps upload with (public: render and callback only).")
    var deviceTokens: [String] = []

    @Option(name: .customLong("sender-token"), help: "A token push senders upload with (any record kind).")
    var senderTokens: [String] = []

    @Option(name: .customLong("read-token"), help: "A token that reads reports.")
    var readTokens: [String] = []

    @Option(help: "A file of tokens, one 'ROLE TOKEN' per line (ROLE: device, sender or read; # comments).")
    var tokenFile: String?

    @Option(help: "Largest upload accepted, in bytes (413 above).")
    var maxUploadBytes = 64 << 20

    @Option(help: "Bytes the spool may hold before uploads are answered 503 with Retry-After.")
    var maxSpoolBytes = 4 << 30

    @Option(help: "Seconds between recomputations of today's per-app rates in /metrics.")
    var ratesEvery = 60

    @Option(help: "Seconds a client has to send a request's head, from connecting or its last answer (408 past it).")
    var headerTimeout = 10.0

    @Option(help: "Longest pause, in seconds, between two parts of an upload's body (408 past it).")
    var bodyIdleTimeout = 15.0

    @Option(help: "Seconds one upload may take from its head to its body's end (408 past it).")
    var uploadTimeout = 300.0

    @Option(help: "Seconds requests in flight get after SIGTERM before their connections are closed.")
    var shutdownGrace = 5.0

    @Option(help: "Uploads at once from one client address (429 past it; 0: no cap).")
    var maxUploadsPerAddress = 128

    @Option(
        help: ArgumentHelp(
            "Leading bits of an IPv6 client's address that --max-uploads-per-address counts it by.",
            discussion: "64 (a /64, what one subscriber is given) by default, so a client cannot pass the cap by "
                + "changing addresses within its prefix; 128 counts each IPv6 address alone. IPv4 clients are "
                + "counted by their address."))
    var ipv6PrefixLength = 64

    @Option(help: "Uploads at once made with device tokens (429 past it; 0: no cap).")
    var maxDeviceUploads = 1024

    @Option(help: "Uploads at once made with sender tokens (429 past it; 0: no cap).")
    var maxSenderUploads = 256

    @Option(
        help: ArgumentHelp(
            "A header the reverse proxy in front sets to the client's address, e.g. X-Forwarded-For.",
            discussion: "Its last entry is the client for --max-uploads-per-address. Set it only when every "
                + "request comes through that proxy: a client that reaches the collector directly could name "
                + "any address."))
    var clientAddressHeader: String?

    @Option(
        help: "Bytes one device-token upload may inflate to (gzip) and be read as; past it the rest is not read.")
    var maxInflatedBytesDevice = LineReader.Limits.device.inflatedBytes

    @Option(help: "Lines one device-token upload may hold; past it the rest is not read.")
    var maxLinesDevice = LineReader.Limits.device.lines

    @Option(help: "Bytes one sender-token upload may inflate to (gzip) and be read as.")
    var maxInflatedBytesSender = LineReader.Limits.sender.inflatedBytes

    @Option(help: "Lines one sender-token upload may hold.")
    var maxLinesSender = LineReader.Limits.sender.lines

    @Option(
        help: ArgumentHelp(
            "Reports (GET /v1/report) computed at once; past it, 503 with Retry-After.",
            discussion: "Repeated requests are served from a cache while the store has not changed."))
    var maxConcurrentReports = 2

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(
        help: ArgumentHelp(
            "Days of records to keep: prune the store before now minus DAYS at start and once a day.",
            discussion: "As 'arrival prune' does (without a vacuum); reports of windows from then on are unchanged.",
            valueName: "days"))
    var retain: Int?

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1 to 65535.") }
        guard maxUploadBytes > 0, maxSpoolBytes >= maxUploadBytes else {
            throw ValidationError("--max-upload-bytes must be positive and at most --max-spool-bytes.")
        }
        for (flag, value, range) in [
            ("--header-timeout", headerTimeout, 0.1...3600), ("--body-idle-timeout", bodyIdleTimeout, 0.1...3600),
            ("--upload-timeout", uploadTimeout, 0.1...86_400), ("--shutdown-grace", shutdownGrace, 0...3600),
        ] where !range.contains(value) {
            throw ValidationError(
                "\(flag) must be \(Self.seconds(range.lowerBound)) to \(Self.seconds(range.upperBound)) seconds.")
        }
        for (flag, value) in [
            ("--max-uploads-per-address", maxUploadsPerAddress), ("--max-device-uploads", maxDeviceUploads),
            ("--max-sender-uploads", maxSenderUploads),
        ] where value < 0 {
            throw ValidationError("\(flag) must be 0 (no cap) or more.")
        }
        guard (1...128).contains(ipv6PrefixLength) else {
            throw ValidationError("--ipv6-prefix-length must be 1 to 128.")
        }
        for (flag, value) in [
            ("--max-inflated-bytes-device", maxInflatedBytesDevice), ("--max-lines-device", maxLinesDevice),
            ("--max-inflated-bytes-sender", maxInflatedBytesSender), ("--max-lines-sender", maxLinesSender),
            ("--max-concurrent-reports", maxConcurrentReports),
        ] where value < 1 {
            throw ValidationError("\(flag) must be 1 or more.")
        }
        if let clientAddressHeader, !Collector.isHeaderName(clientAddressHeader) {
            throw ValidationError("--client-address-header must be a header name such as X-Forwarded-For.")
        }
        if let retain, !(1...36_500).contains(retain) {
            throw ValidationError("--retain must be 1 to 36500 days.")
        }
        guard Collector.logLevels.contains(logLevel) else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical.")
        }
    }

    func run() throws {
        Self.raiseOpenFileLimit()
        var configuration = Collector.Configuration()
        configuration.store = store.location
        configuration.spoolPath = spool
        configuration.host = host
        configuration.port = port
        configuration.maxUploadBytes = maxUploadBytes
        configuration.maxSpoolBytes = maxSpoolBytes
        configuration.ratesRefreshSeconds = ratesEvery
        configuration.limits.headerTimeout = .milliseconds(Int64(headerTimeout * 1000))
        configuration.limits.bodyIdleTimeout = .milliseconds(Int64(bodyIdleTimeout * 1000))
        configuration.limits.uploadTimeout = .milliseconds(Int64(uploadTimeout * 1000))
        configuration.limits.shutdownGrace = .milliseconds(Int64(shutdownGrace * 1000))
        configuration.maxUploadsPerAddress = maxUploadsPerAddress
        configuration.ipv6PrefixLength = ipv6PrefixLength
        configuration.uploadCostLimits = [
            .device: LineReader.Limits(inflatedBytes: maxInflatedBytesDevice, lines: maxLinesDevice),
            .sender: LineReader.Limits(inflatedBytes: maxInflatedBytesSender, lines: maxLinesSender),
        ]
        configuration.maxConcurrentReports = maxConcurrentReports
        configuration.maxUploadsPerRole = [.device: maxDeviceUploads, .sender: maxSenderUploads]
        configuration.clientAddressHeader = clientAddressHeader
        configuration.tokens = try tokens()
        configuration.retainDays = retain
        // swift-metrics is process-wide: bootstrapped here, by the executable, once; the collector (a library)
        // records through it and prints the registry.
        let metrics = Collector.prometheusMetrics()
        MetricsSystem.bootstrap(metrics.factory)
        configuration.registry = metrics.registry
        // Before the store and the spool are made: a collector that cannot listen leaves nothing behind. A spool
        // another collector holds is said first: started twice, the second one names the first (not its port).
        try Collector.checkSpoolFree(spool)
        try Self.checkCanListen(host: host, port: port)
        let collector = try Collector(configuration: configuration)
        let outcome = ServeOutcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await collector.run(logLevel: logLevel)
            } catch {
                outcome.error = error
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw error }
    }

    /// Binds a socket to the address the collector will listen on, and lets
    /// it go: a port another process holds, or a host that is no address of
    /// this machine, is said before anything is made.
    static func checkCanListen(host: String, port: Int) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let address = found else {
            throw Diagnostic(
                .usage, "cannot listen on \(host):\(port): \(String(cString: gai_strerror(status)))",
                hint: "give --host an address of this machine (127.0.0.1, 0.0.0.0, ::) or a name that resolves to one.")
        }
        defer { freeaddrinfo(found) }
        let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard fd >= 0 else { return }  // no socket to try with: the collector's own bind will say why
        defer { close(fd) }
        var on: Int32 = 1
        // As the server's own socket: a port whose last connections are in TIME_WAIT is free.
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            // Bad usage (exit 2), as the collector's own bind failure always was: the address given is the fault.
            throw Diagnostic(
                .usage, "cannot listen on \(host):\(port): \(reason)",
                hint: errno == EADDRINUSE
                    ? "another process listens there (another collector?): stop it or give --port another port; "
                        + "nothing was made (no store, no spool)."
                    : "give --host and --port an address this user may listen on; nothing was made.")
        }
    }

    /// The tokens of the flags, the token file and the environment.
    private func tokens() throws -> TokenTable {
        var table = TokenTable()
        var given: [(String, Role)] =
            deviceTokens.map { ($0, .device) } + senderTokens.map { ($0, .sender) } + readTokens.map { ($0, .read) }
        let environment = ProcessInfo.processInfo.environment
        for (variable, role) in [
            ("ARRIVAL_DEVICE_TOKENS", Role.device), ("ARRIVAL_SENDER_TOKENS", .sender), ("ARRIVAL_READ_TOKENS", .read),
        ] {
            for token in (environment[variable] ?? "").split(separator: ",") { given.append((String(token), role)) }
        }
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw Diagnostic(
                    .io, "cannot read the token file '\(tokenFile)'", hint: "check that it exists and is readable.",
                    location: Diagnostic.Location(path: tokenFile))
            }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let content = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
                if fields.isEmpty { continue }
                guard fields.count == 2, let role = Role(rawValue: String(fields[0])) else {
                    throw Diagnostic(
                        .usage, "line \(index + 1) of the token file is not 'ROLE TOKEN'",
                        hint: "write one 'device|sender|read TOKEN' per line.",
                        location: Diagnostic.Location(path: tokenFile, line: index + 1))
                }
                given.append((String(fields[1]), role))
            }
        }
        for (token, role) in given {
            do {
                try table.add(token, as: role)
            } catch {
                throw Diagnostic(.usage, error.message, hint: error.hint)
            }
        }
        guard !table.isEmpty else {
            throw Diagnostic(
                .usage, "no tokens: nobody could upload or read",
                hint: "pass --device-token, --sender-token and --read-token (or --token-file, or ARRIVAL_*_TOKENS).")
        }
        return table
    }
}

extension Serve {
    /// Raises the soft limit of open files to the hard one: every client
    /// holds a descriptor until a limit closes it, and the common default of
    /// 1,024 would refuse connections long before the upload caps do.
    fileprivate static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    fileprivate static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

// `@unchecked Sendable`: the task writes `error` before `done.signal()`, `run()` reads it after `done.wait()`.
private final class ServeOutcome: @unchecked Sendable {
    var error: (any Error)?
}

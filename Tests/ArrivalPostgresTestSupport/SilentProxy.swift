import ArrivalPostgres
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay from 127.0.0.1 to the test server that can fall silent: the
/// connections open when it does stay open and take what is written to
/// them, and nothing more comes back, as when a server is gone without
/// closing its connections (a machine lost, a network cut with no reset).
/// Connections made afterwards are relayed again (the server back, or a
/// replica in its place). Only this relay's connections are touched: the
/// server and the other tests' connections go on as before.
package final class SilentProxy: @unchecked Sendable {
    package let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    /// The number of connections accepted so far.
    private var accepted = 0
    /// Connections numbered below this are silent.
    private var silentBelow = 0
    private var sockets: [Int32] = []

    package init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// The connections open now fall silent.
    package func silence() {
        lock.withLock { silentBelow = accepted }
    }

    /// Closes the relay and every connection through it.
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        lock.withLock {
            for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(client)
                close(upstream)
                continue
            }
            let number = lock.withLock {
                sockets += [client, upstream]
                accepted += 1
                return accepted - 1
            }
            let ends = Ends()
            for (source, target) in [(client, upstream), (upstream, client)] {
                Thread.detachNewThread { [self] in
                    pump(from: source, to: target, number)
                    // The second direction to end closes both sockets.
                    if ends.oneEnded() {
                        lock.withLock { sockets.removeAll { $0 == client || $0 == upstream } }
                        close(client)
                        close(upstream)
                    }
                }
            }
        }
    }

    /// The two directions of one connection, counted as they end.
    private final class Ends: @unchecked Sendable {
        private let lock = NSLock()
        private var ended = 0
        /// Whether both have ended now.
        func oneEnded() -> Bool {
            lock.withLock {
                ended += 1
                return ended == 2
            }
        }
    }

    /// Relays bytes one way until either side closes; once the connection is
    /// silent, bytes are taken and dropped.
    private func pump(from source: Int32, to target: Int32, _ number: Int) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else {
                shutdown(target, Int32(SHUT_WR))
                return
            }
            if lock.withLock({ number < silentBelow }) { continue }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes {
                    send(target, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                }
                guard written > 0 else {
                    shutdown(source, Int32(SHUT_RD))
                    return
                }
                sent += written
            }
        }
    }
}

extension SilentProxy {
    /// A relay to the test server, the URL of `url`'s database through it,
    /// and the environment to reach it with (its password, which the test
    /// server's `.pgpass` gives for its own port only).
    package static func relay(_ url: String, timeout: String) throws -> (SilentProxy, String, [String: String]) {
        let location = try PostgresLocation(url: url)
        let proxy = try SilentProxy(upstreamPort: location.port)
        var environment = ProcessInfo.processInfo.environment
        environment["ARRIVAL_DB_TIMEOUT"] = timeout
        environment["PGPASSWORD"] = TestDatabase.password(for: url)
        return (proxy, "postgres://\(location.user)@127.0.0.1:\(proxy.port)/\(location.database)", environment)
    }
}

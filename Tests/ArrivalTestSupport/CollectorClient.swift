package import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the tests of a running `arrival serve` send it over loopback.
package enum CollectorClient {
    /// One request; the body and the status (0 when there was no HTTP answer).
    package static func request(
        _ url: String, method: String = "GET", token: String? = nil, name: String? = nil, body: Data? = nil
    ) async throws -> (Data, Int) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 30
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let name { request.setValue(name, forHTTPHeaderField: "X-Upload-Name") }
        request.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago.
    package static func freePort() -> Int {
        let (fd, port) = boundSocket(listening: false)
        close(fd)
        return port
    }

    /// A socket bound to a port of 127.0.0.1 the kernel chose (listening when asked), and the port; the caller
    /// closes it.
    package static func boundSocket(listening: Bool) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        if listening { _ = listen(fd, 1) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

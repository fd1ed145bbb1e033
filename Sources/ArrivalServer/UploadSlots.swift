import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// The collector's request context: Hummingbird's, with the address of the
/// client at the other end of the connection (for the per-address cap).
struct CollectorContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The connection (nil in Hummingbird's router tests): `100 Continue` is written on it.
    let channel: (any Channel)?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}

/// Caps on uploads in progress at once, per token role and per client
/// address: past either, an upload is answered 429 with `Retry-After`
/// before its body is read. With the connection deadlines they bound what
/// one holder of the app's public token can tie up.
final class UploadSlots: Sendable {
    static let retryAfterSeconds = 5

    private let perRole: [Role: Int]
    private let perAddress: Int
    /// Uploads in progress, per role and per address.
    private let taken = NIOLockedValueBox((byRole: [Role: Int](), byAddress: [String: Int]()))

    /// Caps of 0 (or a role not named) mean none.
    init(perRole: [Role: Int], perAddress: Int) {
        self.perRole = perRole
        self.perAddress = perAddress
    }

    /// Takes a slot, or says which cap is reached (nothing is taken then).
    func acquire(role: Role, address: String) -> String? {
        taken.withLockedValue { taken in
            let roleCount = taken.byRole[role, default: 0]
            if let cap = perRole[role], cap > 0, roleCount >= cap {
                return
                    "\(cap) uploads with \(role.rawValue) tokens are in progress, the most this collector takes at once"
            }
            let addressCount = taken.byAddress[address, default: 0]
            if perAddress > 0, addressCount >= perAddress {
                return "\(perAddress) uploads from \(address) are in progress, the most one address may have at once"
            }
            taken.byRole[role] = roleCount + 1
            taken.byAddress[address] = addressCount + 1
            return nil
        }
    }

    func release(role: Role, address: String) {
        taken.withLockedValue { taken in
            taken.byRole[role, default: 1] -= 1
            taken.byAddress[address, default: 1] -= 1
            if taken.byAddress[address] == 0 { taken.byAddress[address] = nil }
        }
    }

    /// Uploads in progress, per role.
    var inProgress: [Role: Int] { taken.withLockedValue { $0.byRole } }
}

/// The key the per-address cap counts a client under: an IPv4 address
/// itself, an IPv6 address by its first `ipv6PrefixLength` bits (a /64 by
/// default: one subscriber, who may use any of its 2^64 addresses), written
/// as that prefix (`2001:db8:0:1::/64`). An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.1`) counts as its IPv4 address; anything that is no
/// address (a proxy header's odd value) counts as itself.
enum ClientAddress {
    static func key(_ address: String, ipv6PrefixLength: Int) -> String {
        var text = address.trimmingASCIIWhitespace
        // A bracketed form ([2001:db8::1]) or a zone (fe80::1%eth0) as proxies and sockets may write them.
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<end])
        }
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard text.contains(":"), bytes.withUnsafeMutableBytes({ inet_pton(AF_INET6, text, $0.baseAddress) }) == 1
        else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        let length = min(128, max(0, ipv6PrefixLength))
        for index in 0..<16 {
            let kept = min(8, max(0, length - index * 8))
            bytes[index] &= kept == 8 ? 0xFF : ~(0xFF >> UInt8(kept))
        }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard bytes.withUnsafeBytes({ inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) }) != nil
        else { return address }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            + "/\(length)"
    }
}

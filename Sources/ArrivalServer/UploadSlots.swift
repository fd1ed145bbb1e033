import Foundation
import Hummingbird
import NIOCore

/// The collector's request context: Hummingbird's, with the address of the
/// client at the other end of the connection (for the per-address cap).
struct CollectorContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Caps on uploads in progress at once, per token role and per client
/// address: past either, an upload is answered 429 with `Retry-After`
/// before its body is read. With the connection deadlines they bound what
/// one holder of the app's public token can tie up.
final class UploadSlots: @unchecked Sendable {
    static let retryAfterSeconds = 5

    private let perRole: [Role: Int]
    private let perAddress: Int
    private let lock = NSLock()
    private var byRole: [Role: Int] = [:]
    private var byAddress: [String: Int] = [:]

    /// Caps of 0 (or a role not named) mean none.
    init(perRole: [Role: Int], perAddress: Int) {
        self.perRole = perRole
        self.perAddress = perAddress
    }

    /// Takes a slot, or says which cap is reached (nothing is taken then).
    func acquire(role: Role, address: String) -> String? {
        lock.withLock {
            let roleCount = byRole[role, default: 0]
            if let cap = perRole[role], cap > 0, roleCount >= cap {
                return
                    "\(cap) uploads with \(role.rawValue) tokens are in progress, the most this collector takes at once"
            }
            let addressCount = byAddress[address, default: 0]
            if perAddress > 0, addressCount >= perAddress {
                return "\(perAddress) uploads from \(address) are in progress, the most one address may have at once"
            }
            byRole[role] = roleCount + 1
            byAddress[address] = addressCount + 1
            return nil
        }
    }

    func release(role: Role, address: String) {
        lock.withLock {
            byRole[role, default: 1] -= 1
            byAddress[address, default: 1] -= 1
            if byAddress[address] == 0 { byAddress[address] = nil }
        }
    }

    /// Uploads in progress, per role.
    var inProgress: [Role: Int] { lock.withLock { byRole } }
}

import Crypto

/// What a bearer token may do (Documentation/Collector.md, "Roles").
///
/// - `device`: upload `render` and `callback` records (its `apns` and
///   `exchange` lines are refused line by line), and ask about its uploads.
///   It ships inside the app, so anyone can extract it: it is public, and
///   may do nothing a stranger could misuse beyond adding device evidence.
/// - `sender`: upload any kind of record, and ask about its uploads.
/// - `read`: read reports, and ask about uploads.
package enum Role: String, CaseIterable, Sendable, Codable {
    case device, sender, read

    /// Whether an upload made with this role may carry `apns` and `exchange` lines.
    var mayUploadSenderRecords: Bool { self == .sender }
    var mayUpload: Bool { self != .read }
    var mayReadReports: Bool { self == .read }
}

/// The collector's tokens. Only their SHA-256 digests are kept, and a
/// presented token is compared with every one of them in full, so how long
/// a check takes says nothing about which token, or how much of one, matched.
package struct TokenTable: Sendable {
    private var entries: [(digest: [UInt8], role: Role)] = []

    package init() {}

    /// Adds a token; an empty one is refused (it would match a bare `Bearer`).
    package mutating func add(_ token: String, as role: Role) throws(TokenError) {
        let token = token.trimmingASCIIWhitespace
        let making = "make one with: openssl rand -hex 32"
        guard !token.isEmpty else {
            throw TokenError(
                message: "an empty \(role.rawValue) token", hint: "give a token of 16 characters or more; \(making).")
        }
        guard token.utf8.count >= 16 else {
            throw TokenError(
                message: "a \(role.rawValue) token shorter than 16 characters",
                hint: "a token is a secret that must not be guessed: use 16 characters or more; \(making).")
        }
        let digest = Self.digest(token)
        if let existing = entries.first(where: { $0.digest == digest }), existing.role != role {
            throw TokenError(
                message: "one token given as both \(existing.role.rawValue) and \(role.rawValue) token",
                hint: "give each token once, with its role.")
        }
        entries.append((digest, role))
    }

    package var isEmpty: Bool { entries.isEmpty }

    /// How many tokens each role has.
    package func count(of role: Role) -> Int { entries.filter { $0.role == role }.count }

    /// The role of a presented token, or nil for an unknown one.
    func role(of presented: Substring) -> Role? {
        let digest = Self.digest(String(presented))
        var found: Role?
        for entry in entries {
            var difference: UInt8 = 0
            for index in 0..<32 { difference |= entry.digest[index] ^ digest[index] }
            if difference == 0 { found = entry.role }
        }
        return found
    }

    private static func digest(_ token: String) -> [UInt8] { Array(SHA256.hash(data: Array(token.utf8))) }
}

package struct TokenError: Error, Sendable {
    package var message: String
    /// What to do about it.
    package var hint: String
}

extension String {
    var trimmingASCIIWhitespace: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" || first == "\n" || first == "\r" {
            view = view.dropFirst()
        }
        while let last = view.last, last == " " || last == "\t" || last == "\n" || last == "\r" {
            view = view.dropLast()
        }
        return String(view)
    }
}

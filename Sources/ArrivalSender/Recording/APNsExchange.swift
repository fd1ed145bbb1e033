public import Foundation

/// One HTTP/2 request to APNs and its answer, as the sender saw them.
public struct APNsExchange: Sendable, Equatable {
    public struct Request: Sendable, Equatable {
        /// The `:path`: `/3/device/<token>` for a push to one device,
        /// `/4/broadcasts/apps/<bundle id>` for a broadcast to a channel
        /// (iOS 18; the channel is the `apns-channel-id` header).
        public var path: String
        /// Request headers (`apns-id`, `apns-topic`, `apns-push-type`,
        /// `apns-priority`, …); names are matched without regard to case.
        public var headers: [String: String]
        /// The JSON payload exactly as sent.
        public var payload: Data

        public init(path: String, headers: [String: String], payload: Data) {
            self.path = path
            self.headers = headers
            self.payload = payload
        }

        /// The bundle id of a broadcast's path, `/4/broadcasts/apps/<bundle
        /// id>` (after an optional scheme and host, before any `?` or `#`),
        /// or nil when the path is not a broadcast's.
        public var broadcastBundleID: String? {
            PushExchange.apnsBroadcastBundleID(url: path).map(String.init)
        }

        /// The `apns-channel-id` header, when present and not empty.
        public var channelID: String? {
            guard let value = headers.header("apns-channel-id"), !value.isEmpty else { return nil }
            return value
        }

        /// The device (or push-to-start) token: what follows `/3/device/`.
        public var deviceToken: String {
            let prefix = "/3/device/"
            if path.hasPrefix(prefix) { return String(path.dropFirst(prefix.count)) }
            return path.split(separator: "/").last.map(String.init) ?? ""
        }
    }

    /// APNs's answer: its status, headers (`apns-id`; `apns-request-id` for a broadcast) and JSON body
    /// (`{"reason":"BadDeviceToken"}`; empty on 200). The same type as every
    /// provider's answer.
    public typealias Response = PushExchange.Response

    public var sentAt: Date
    public var request: Request
    /// nil when no answer came (timeout, connection reset): status 0.
    public var response: Response?
    /// What went wrong when there is no response (`"timeout"`, `"connection reset"`).
    public var transportError: String?
    /// Seconds from sending the request to the answer (or the failure).
    public var latency: TimeInterval?

    public init(
        sentAt: Date, request: Request, response: Response?, transportError: String? = nil, latency: TimeInterval? = nil
    ) {
        self.sentAt = sentAt
        self.request = request
        self.response = response
        self.transportError = transportError
        self.latency = latency
    }
}

extension Dictionary where Key == String, Value == String {
    /// The value of a header, its name compared without regard to case.
    func header(_ name: String) -> String? {
        if let exact = self[name] { return exact }
        let lower = name.lowercased()
        return first { $0.key.lowercased() == lower }?.value
    }
}

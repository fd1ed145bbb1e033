/// What an APNs `reason` means for a Live Activity sender, and what to do
/// about it, in one line each (Apple's "Handling notification responses from
/// APNs" table, read for Live Activity pushes).
struct APNsReason {
    var meaning: String
    var action: String

    static func explain(_ reason: String) -> APNsReason {
        if let known = catalog[reason] { return known }
        if reason.hasPrefix("HTTP") {
            return APNsReason(
                meaning: "APNs answered with this HTTP status and no reason.",
                action: "Log the response body; check the status against Apple's list of APNs responses.")
        }
        return APNsReason(
            meaning:
                "Not a reason APNs documents; the sender logged it as given (a transport error text for status 0).",
            action: "Look at the sender's logs for these requests.")
    }

    static let catalog: [String: APNsReason] = [
        "BadDeviceToken": APNsReason(
            meaning:
                "The token is not a valid token for this environment (sandbox token sent to production or the reverse, or a corrupted token).",
            action: "Check the environment the app was built for; stop sending to tokens that keep failing."),
        "DeviceTokenNotForTopic": APNsReason(
            meaning: "The token is not this topic's Live Activity push token — a device token or another app's.",
            action:
                "Send to the token from the activity's pushTokenUpdates, with topic <bundle id>.push-type.liveactivity."
        ),
        "Unregistered": APNsReason(
            meaning: "The token is no longer valid for the topic: the activity ended or the app was removed.",
            action: "Stop sending to it; wait for a new token from pushTokenUpdates."),
        "ExpiredToken": APNsReason(
            meaning: "The token has expired.",
            action: "Stop sending to it; wait for a new token from pushTokenUpdates."),
        "TooManyRequests": APNsReason(
            meaning: "Too many requests to the same token in a short time (Live Activities have an update budget).",
            action: "Back off: coalesce updates, send priority 5 for non-urgent ones."),
        "PayloadTooLarge": APNsReason(
            meaning: "The payload is over the 4,096-byte limit.",
            action: "Shrink content-state under 4,096 bytes: send identifiers, not text the widget can look up."),
        "BadTopic": APNsReason(
            meaning: "The apns-topic header is invalid.",
            action: "Use <bundle id>.push-type.liveactivity."),
        "MissingTopic": APNsReason(
            meaning: "The apns-topic header is missing and required.",
            action: "Send apns-topic: <bundle id>.push-type.liveactivity."),
        "TopicDisallowed": APNsReason(
            meaning: "Pushing to this topic is not allowed for the sender's key or certificate.",
            action: "Check the team and key the sender signs with."),
        "InvalidPushType": APNsReason(
            meaning: "The apns-push-type header is invalid.",
            action: "Send apns-push-type: liveactivity."),
        "BadPriority": APNsReason(
            meaning: "The apns-priority value is not allowed.",
            action: "Use 5 or 10."),
        "BadExpirationDate": APNsReason(
            meaning: "The apns-expiration value is bad.",
            action: "Send a Unix time in seconds, or 0."),
        "BadMessageId": APNsReason(
            meaning: "The apns-id value is bad.",
            action: "Send a canonical UUID, or none."),
        "BadCollapseId": APNsReason(
            meaning: "The apns-collapse-id is longer than 64 bytes.",
            action: "Shorten it."),
        "BadPath": APNsReason(
            meaning: "The request path is wrong.",
            action: "POST to /3/device/<token>."),
        "MethodNotAllowed": APNsReason(
            meaning: "The request method was not POST.",
            action: "Use POST."),
        "DuplicateHeaders": APNsReason(
            meaning: "A header was sent twice.",
            action: "Fix the sender's HTTP/2 client."),
        "MissingDeviceToken": APNsReason(
            meaning: "The request had no device token in its path.",
            action: "Check the sender stored the activity's token."),
        "ExpiredProviderToken": APNsReason(
            meaning: "The sender's JWT is older than an hour.",
            action: "Refresh the provider token every 20–60 minutes."),
        "InvalidProviderToken": APNsReason(
            meaning: "The sender's JWT is invalid (key id, team id or signature).",
            action: "Check the key id, team id and signing key."),
        "MissingProviderToken": APNsReason(
            meaning: "No certificate and no provider token.",
            action: "Send an authorization: bearer header."),
        "TooManyProviderTokenUpdates": APNsReason(
            meaning: "The provider token was refreshed too often.",
            action: "Reuse one JWT for 20–60 minutes."),
        "BadCertificate": APNsReason(
            meaning: "The certificate is invalid.",
            action: "Renew or fix the sender's certificate."),
        "BadCertificateEnvironment": APNsReason(
            meaning: "The certificate is for the other environment.",
            action: "Use the production certificate against production APNs."),
        "Forbidden": APNsReason(
            meaning: "The action is not allowed for this sender.",
            action: "Check the sender's credentials and topic."),
        "InternalServerError": APNsReason(
            meaning: "APNs had an internal error.",
            action: "Retry with backoff."),
        "ServiceUnavailable": APNsReason(
            meaning: "APNs is unavailable.",
            action: "Retry with backoff."),
        "Shutdown": APNsReason(
            meaning: "The APNs server was shutting down.",
            action: "Reconnect and retry."),
        "IdleTimeout": APNsReason(
            meaning: "The connection was idle too long.",
            action: "Reconnect and retry."),
        "NoResponse": APNsReason(
            meaning: "No answer from APNs (timeout or reset connection, status 0).",
            action: "Retry on a fresh connection; check the sender's network and timeouts."),
    ]
}

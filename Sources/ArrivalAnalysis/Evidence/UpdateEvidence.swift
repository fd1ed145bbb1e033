import ArrivalModel

extension DeliveryAnalysis {
    /// What decided the outcome (and, for a lost update, the loss cause) of
    /// the accepted update at `index`, in words: the times and records the
    /// rule looked at. `siblings` are the indices of the other updates of
    /// its activity (needed for `stale_timestamp` and `superseded` only).
    package func evidence(ofUpdate index: Int, siblings: [Int] = []) -> String {
        let u = updates[index]
        let activity = activities[Int(u.activity)]
        let at = Self.time(u.at)
        guard u.accepted, let outcome = u.outcome else { return "never accepted" }
        switch outcome {
        case .rendered:
            return "first rendered at \(Self.time(u.firstRenderedAt ?? u.at))"
        case .dismissed:
            return "accepted at \(at), after the activity was dismissed at \(Self.time(activity.dismissedAt ?? u.at))"
        case .ended:
            let end = activity.endedAt ?? u.at
            let how = activity.firstEndedCallbackAt == end ? "an ended callback" : "an accepted end update"
            return "accepted at \(at), after the activity ended at \(Self.time(end)) (\(how))"
        case .expired:
            let start = activity.startedAt ?? u.at
            return "accepted at \(at), \(Self.hours(u.at - start)) after the activity started at \(Self.time(start))"
        case .staleTimestamp:
            let earlier = siblings.map { updates[$0] }.filter {
                $0.accepted && ($0.at < u.at || ($0.at == u.at && $0.seq < u.seq)) && $0.apsTimestamp >= u.apsTimestamp
            }.min { ($0.at, $0.seq) < ($1.at, $1.seq) }
            return "aps.timestamp \(u.apsTimestamp) is not newer than "
                + (earlier.map { "seq \($0.seq)'s \($0.apsTimestamp), accepted earlier at \(Self.time($0.at))" }
                    ?? "an earlier accepted update's")
        case .superseded:
            let later = siblings.map { updates[$0] }.filter {
                $0.accepted && $0.firstRenderedAt != nil && ($0.at > u.at || ($0.at == u.at && $0.seq > u.seq))
            }.min { ($0.at, $0.seq) < ($1.at, $1.seq) }
            return later.map { "seq \($0.seq), accepted later at \(Self.time($0.at)), was rendered" }
                ?? "a later accepted update was rendered"
        case .lost:
            return lossEvidence(u, activity, index: index)
        }
    }

    private func lossEvidence(_ u: Update, _ activity: Activity, index: Int) -> String {
        let at = Self.time(u.at)
        switch u.lossCause ?? .unexplained {
        case .notRendered:
            return "the app reported its content_update; no render of it came back"
        case .oldToken:
            let newest = newestTokenOfLost[index]
            let sent = u.token >= 0 ? tokens[Int(u.token)].text : ""
            return "sent to token \(Self.short(sent)); the activity's newest token at \(at) was "
                + (newest.map { "\(Self.short(tokens[Int($0.token)].text)), reported at \(Self.time($0.at))" }
                    ?? "another")
        case .closedLater:
            if let dismissed = activity.dismissedAt, dismissed > u.at {
                return "accepted at \(at); the activity was dismissed at \(Self.time(dismissed))"
            }
            return
                "accepted at \(at); the activity ended on the device at \(Self.time(activity.lastEndedCallbackAt ?? u.at))"
        case .deviceSilent:
            guard let last = activity.lastDeviceAt else { return "nothing ever came from the device" }
            return "accepted at \(at); the device's last record was at \(Self.time(last))"
        case .unexplained:
            return "accepted at \(at); the device reported until \(Self.time(activity.lastDeviceAt ?? u.at)), "
                + "and neither this update nor a newer one showed"
        }
    }

    static func time(_ milliseconds: Int64) -> String { RFC3339.format(milliseconds: milliseconds) }

    /// A push token cut to its first 12 characters: enough to tell tokens apart in a sentence.
    static func short(_ token: String) -> String {
        token.isEmpty ? "(none)" : token.count > 16 ? String(token.prefix(12)) + "…" : token
    }

    static func hours(_ milliseconds: Int64) -> String {
        let minutes = milliseconds / Milliseconds.minute
        return "\(minutes / 60) h \(minutes % 60) min"
    }
}

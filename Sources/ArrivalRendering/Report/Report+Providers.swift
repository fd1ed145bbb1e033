package import ArrivalModel

extension Report {
    /// Whether a breakdown is worth a section of the markdown and HTML
    /// reports: the `provider` one only when some update went through a
    /// provider other than APNs (with APNs alone it repeats the totals).
    package func showsBreakdown(_ dimension: String) -> Bool {
        guard let rows = breakdowns[dimension], !rows.isEmpty else { return false }
        // Contract 3.1's two are shown together, in the throttling section, when it has evidence.
        if dimension == "frequent_pushes" || dimension == "priority_10_last_hour" { return showsThrottling }
        return dimension != "provider" || rows.keys.contains { $0.text != PushProvider.apns.rawValue }
    }

    /// Who accepts a push, as a report's sentences name it: APNs, or when
    /// some updates went through FCM or Tencent Cloud Chat, either.
    package var acceptor: String { providerAcceptanceNote == nil ? "APNs" : "APNs or the provider" }

    /// What "accepted" means for the providers of the `provider` breakdown
    /// other than APNs, or nil when every update went to APNs directly.
    package var providerAcceptanceNote: String? {
        let others = PushProvider.allCases.filter { provider in
            provider != .apns && breakdowns["provider"]?[ExactString(provider.rawValue)] != nil
        }
        guard !others.isEmpty else { return nil }
        return "Through " + others.map(\.displayName).joined(separator: " and ")
            + ", \"accepted\" means the provider took the push, which is all its sender can know; "
            + "arrival still counts only renders as proof."
    }
}

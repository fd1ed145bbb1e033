package import ArrivalModel

extension Report.Apple {
    /// The days of `metrics` wholly inside `window` (all of them without one): Apple counts whole UTC days,
    /// so a day the window cuts is left out rather than set beside part of arrival's day.
    package static func days(of metrics: AppleMetrics, in window: ReportWindow?) -> [Int64] {
        metrics.days.filter { day in window.map { day >= $0.from && day + Milliseconds.day <= $0.to } ?? true }
    }

    /// Apple's rows of each of `days` beside arrival's report of that day (`dayReport`); nil without days.
    /// Channels are listed for a day Apple exported broadcast rows of: the application's row first, then
    /// every channel either side names, by code point.
    package static func make(
        _ metrics: AppleMetrics, days: [Int64], dayReport: (Int64) throws -> Report
    ) rethrows -> Report.Apple? {
        guard !days.isEmpty else { return nil }
        return Report.Apple(
            days: try days.map { day in
                let report = try dayReport(day)
                let rows = metrics.broadcasts.filter { $0.day == day }
                return Day(
                    day: day,
                    delivery: metrics.delivery.filter { $0.day == day && AppleMetrics.isLiveActivity($0.pushType) },
                    requests: report.requests.total, accepted: report.requests.accepted, updates: report.updates,
                    channels: rows.isEmpty ? [] : channels(rows, report))
            })
    }

    private static func channels(_ rows: [AppleBroadcastRow], _ report: Report) -> [Channel] {
        let rendered = report.breakdowns["channel"] ?? [:]
        var channels = [
            Channel(
                channelID: nil, apple: rows.first { $0.channelID == nil }, broadcasts: report.requests.broadcasts,
                rendered: rendered.values.reduce(0) { $0 + $1.rendered })
        ]
        var ids = Set(rows.compactMap { $0.channelID.map { ExactString($0) } })
        ids.formUnion(report.channels.keys)
        ids.formUnion(rendered.keys)
        for id in ids.sorted() {
            channels.append(
                Channel(
                    channelID: id.text, apple: rows.first { $0.channelID.map { ExactString($0) } == id },
                    broadcasts: report.channels[id]?.broadcasts ?? 0, rendered: rendered[id]?.rendered ?? 0))
        }
        return channels
    }
}

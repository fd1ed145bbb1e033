package import ArrivalAnalysis
import ArrivalModel
import ArrivalStore
import Foundation
import Mustache

extension DailyReport {
    /// The report as one self-contained HTML page (inline CSS and SVG, no
    /// script, nothing fetched), rendered from the templates of
    /// `Dashboards/templates` (embedded in ``DashboardTemplates``).
    /// - Parameter generatedAt: the time to print as "generated", ms since the epoch.
    package func htmlText(generatedAt: Int64) throws -> String {
        let library = try DashboardTemplates.library()
        guard let html = library.render(page(generatedAt: generatedAt), withTemplate: "report") else {
            throw DashboardTemplates.Missing(name: "report")
        }
        return html
    }

    /// The CSS class that colours an outcome (Dashboards/templates/style.mustache).
    static func cssClass(_ outcome: Outcome) -> String {
        outcome == .staleTimestamp ? "o-stale" : "o-" + outcome.name
    }

    static let outcomeStyles: [(name: String, cls: String, meaning: String)] = Outcome.displayOrder.map {
        ($0.name, cssClass($0), $0.meaning)
    }

    static func outcomeCounts(_ u: UpdateCounts) -> [Int] {
        Outcome.displayOrder.map { u[$0] }
    }

    func page(generatedAt: Int64) -> HTMLReportPage {
        let r = report
        let windowText: String
        if let day {
            windowText = ReportFormat.day(day) + " (UTC)"
        } else if let window {
            windowText = ReportFormat.time(window.from) + " to " + ReportFormat.time(window.to)
        } else {
            windowText =
                "all data" + (sources.firstDay.map { " (" + ReportFormat.day($0) } ?? "")
                + (sources.lastDay.map { " to " + ReportFormat.day($0) + ")" } ?? "")
        }
        let (tiles, comparisonNote) = makeTiles()
        let (funnel, funnelTable) = makeFunnel()
        let (timeChart, timeTable) = makeTimeChart()
        let (reasonChart, reasons) = makeReasons()
        let (latencyChart, latencyTable) = makeLatency()
        let (trendCharts, trendTable) = makeTrend()
        let (lossSummary, lossTable) = makeLossCauses()
        let (startsSummary, startsTable) = makeStarts()
        let (deadTokensSummary, deadTokensTable) = makeDeadTokens()
        let (channelsSummary, channelsTable) = makeChannels()
        return HTMLReportPage(
            title: "Live Activity delivery — " + windowText,
            windowText: windowText,
            generated: ReportFormat.time(generatedAt - generatedAt % 1_000),
            verdict: verdict(),
            verdictPoints: verdictPoints().map { HTMLReportPage.Cell(text: $0) },
            comparisonNote: comparisonNote,
            tiles: tiles,
            sources: makeSourcesTable(),
            pathRoot: pathRoot,
            sourcesSummary:
                "\(ReportFormat.count(sources.files)) files (\(ReportFormat.count(sources.gzipFiles)) gzip, "
                + "\(ReportFormat.bytes(sources.bytes))): \(ReportFormat.count(sources.apnsRecords)) APNs records, "
                + "\(ReportFormat.count(sources.renderRecords)) render beacons, \(ReportFormat.count(sources.callbackRecords)) callbacks.",
            funnel: funnel,
            funnelTable: funnelTable,
            outcomes: Self.outcomeStyles.enumerated().map { i, style in
                let count = Self.outcomeCounts(r.updates)[i]
                return HTMLReportPage.OutcomeRow(
                    name: style.name, cls: style.cls, count: ReportFormat.count(count),
                    share: ReportFormat.percent(ratio(count, r.updates.accepted)), meaning: style.meaning)
            },
            legend: Self.outcomeStyles.map { HTMLReportPage.Legend(name: $0.name, cls: $0.cls) }
                + [HTMLReportPage.Legend(name: "not accepted by \(r.acceptor)", cls: "o-rejected")],
            timeChart: timeChart,
            timeTable: timeTable,
            timeTitle: bucketsAreHours
                ? "By hour (UTC)" : bucketDays == 1 ? "By day (UTC)" : "By \(bucketDays) days (UTC)",
            lossSummary: lossSummary,
            lossTable: lossTable,
            startsSummary: startsSummary,
            startsTable: startsTable,
            outliersSummary: r.outliersSummary, outliersTable: makeOutliers(),
            appleSummary: r.appleSummary, appleTables: makeApple(),
            deadTokensSummary: deadTokensSummary,
            deadTokensTable: deadTokensTable,
            channelsSummary: channelsSummary,
            channelsTable: channelsTable,
            reasons: reasons,
            reasonChart: reasonChart,
            rejectedTotal: ReportFormat.count(r.requests.rejected),
            latencyChart: latencyChart,
            latencyTable: latencyTable,
            latencySummary:
                "p50 \(ReportFormat.duration(r.latency.p50)) · p90 \(ReportFormat.duration(r.latency.p90)) · "
                + "p99 \(ReportFormat.duration(r.latency.p99)) over \(ReportFormat.count(r.latency.count)) rendered updates "
                + "(first render − APNs accept time).",
            breakdowns: makeBreakdowns(),
            throttlingNote: r.showsThrottling ? Report.throttlingExplanation : nil,
            throttling: makeThrottling(),
            trendCharts: trendCharts,
            trendTable: trendTable,
            activities: makeActivities(),
            activitiesNote:
                "\(ReportFormat.count(activitiesMissingUpdates)) activities had at least one update that did not show; "
                + "the \(min(worstActivities.count, DailyReport.topActivities)) with the most are listed.",
            qualitySummary: makeQualitySummary(),
            malformedTable: makeMalformedTable(),
            duplicatesTable: makeDuplicatesTable(),
            skippedTable: makeSkippedTable())
    }

    // MARK: - Verdict and tiles

    /// One sentence that answers "did our updates reach people?".
    func verdict() -> String {
        let u = report.updates
        guard u.sent > 0 else { return "No Live Activity updates were sent in this window." }
        let deliverable = u.deliverable
        var text =
            "\(ReportFormat.percent(u.arrivalRate)) of deliverable updates reached the screen "
            + "(\(ReportFormat.count(u.rendered)) of \(ReportFormat.count(deliverable)))"
        if let effective = u.effectiveArrivalRate, u.superseded > 0 {
            text += "; counting those replaced by a newer shown update, \(ReportFormat.percent(effective))"
        }
        return text + "."
    }

    /// Where the updates that did not show went, biggest first.
    func verdictPoints() -> [String] {
        let r = report
        var points: [(Int, String)] = [
            (
                r.updates.lost,
                "\(ReportFormat.count(r.updates.lost)) updates accepted by \(r.acceptor) were never shown (lost)."
            ),
            (
                r.updates.dismissed,
                "\(ReportFormat.count(r.updates.dismissed)) updates were sent after users had dismissed their activity (not counted as lost)."
            ),
            (
                r.updates.staleTimestamp,
                "\(ReportFormat.count(r.updates.staleTimestamp)) updates were dropped by devices for a stale aps.timestamp."
            ),
            (
                r.updates.ended,
                "\(ReportFormat.count(r.updates.ended)) updates were sent after their activity had ended."
            ),
            (
                r.updates.expired,
                "\(ReportFormat.count(r.updates.expired)) updates were sent more than 8 hours after their activity started."
            ),
            (
                r.updates.sent - r.updates.accepted,
                "\(ReportFormat.count(r.updates.sent - r.updates.accepted)) updates were never accepted by \(r.acceptor)"
                    // Ties go to the reason first in code-point order: a dictionary's order is no order.
                    + (r.requests.byReason.max {
                        $0.value != $1.value
                            ? $0.value < $1.value : $1.key.text.utf8.lexicographicallyPrecedes($0.key.text.utf8)
                    }.map {
                        " (most rejected requests: \($0.key.text))"
                    } ?? "") + "."
            ),
        ]
        if r.requests.toDeadTokens > 0 {
            points.append(
                (
                    r.requests.toDeadTokens,
                    "\(ReportFormat.count(r.requests.toDeadTokens)) requests went to push tokens already reported dead (see Tokens to purge)."
                ))
        }
        if r.requests.oversizeFailures > 0 {
            points.append(
                (
                    r.requests.oversizeFailures,
                    "\(ReportFormat.count(r.requests.oversizeFailures)) requests failed as oversize payloads."
                ))
        }
        if let loss = r.callbacks.callbackLossRate, loss > 0 {
            points.append(
                (0, "\(ReportFormat.percent(loss)) of rendered updates never reported their content_update callback."))
        }
        return points.filter { $0.0 > 0 || $0.1.contains("callback") }.sorted { $0.0 > $1.0 }.map(\.1)
    }

    func makeTiles() -> ([HTMLReportPage.Tile], String?) {
        let r = report
        let previousLabel = day.map { "vs " + ReportFormat.day($0 - 1) } ?? ""
        let weekLabel = "vs median of \(previousWeek.count) earlier day\(previousWeek.count == 1 ? "" : "s")"
        let details: [String] = [
            "\(ReportFormat.count(r.updates.rendered)) rendered of \(ReportFormat.count(r.updates.deliverable)) deliverable",
            "rendered, or replaced by a newer update that rendered",
            "\(ReportFormat.count(r.requests.accepted)) of \(ReportFormat.count(r.requests.total)) requests",
            "accepted updates the device ignored (\(ReportFormat.percent(ratio(r.updates.staleTimestamp, r.updates.accepted))))",
            "413 / PayloadTooLarge · \(ReportFormat.count(r.requests.oversizeRisk)) accepted within 512 bytes of 4 KB",
            "\(ReportFormat.count(r.callbacks.contentUpdateReceived)) of \(ReportFormat.count(r.callbacks.contentUpdateExpected)) rendered updates reported",
            "\(ReportFormat.count(r.callbacks.tokenReceived)) of \(ReportFormat.count(r.callbacks.tokenExpected)) activities sent a push token",
            "first render − accept, \(ReportFormat.count(r.latency.count)) rendered",
            "p99 \(ReportFormat.duration(r.latency.p99))",
        ]
        var tiles: [HTMLReportPage.Tile] = []
        for (i, metric) in HeadlineMetric.all.enumerated() {
            let now = metric.value(r)
            var deltas: [HTMLReportPage.Delta] = []
            if let previousDay,
                let d = metric.delta(now: now, before: metric.value(previousDay), against: previousLabel)
            {
                deltas.append(d)
            }
            if let d = metric.delta(now: now, before: median(previousWeek.compactMap(metric.value)), against: weekLabel)
            {
                deltas.append(d)
            }
            let tone: String
            switch metric.name {
            case "Arrival rate", "Effective arrival rate": tone = "key"
            default: tone = ""
            }
            tiles.append(
                HTMLReportPage.Tile(
                    name: metric.name, value: metric.format(now), detail: details[i], deltas: deltas, tone: tone))
        }
        let note: String?
        if day == nil {
            note = "Changes against earlier days are shown when the report covers one UTC day (--day)."
        } else if previousDay == nil && previousWeek.isEmpty {
            note = "The store holds no earlier day to compare with."
        } else {
            note = nil
        }
        return (tiles, note)
    }

    // MARK: - The device's story (contract 3.0)

    /// Why the lost updates were lost: each cause's count, share, meaning and what to do.
    func makeLossCauses() -> (String, HTMLReportPage.Table?) {
        let u = report.updates
        var summary =
            u.dismissed == 0
            ? "No update was sent after its activity was dismissed. "
            : "\(ReportFormat.counted(u.dismissed, "update")) sent after users had dismissed their activity "
                + "did not fail: they are counted as dismissed, not lost. "
        guard u.lost > 0 else {
            summary += "No accepted update was lost in this window."
            return (summary, nil)
        }
        summary +=
            "For each of the \(ReportFormat.count(u.lost)) lost updates, the first cause below that the device's "
            + "own evidence shows (evidence, not proof):"
        let table = HTMLReportPage.Table(
            caption: "Lost updates by cause",
            header: ["cause", "updates", "share of lost", "what the evidence shows", "what to do"],
            rows: LossCause.allCases.map { cause in
                let count = u.lostByCause[cause]
                return [
                    cause.name, ReportFormat.count(count), ReportFormat.percent(ratio(count, u.lost)), cause.meaning,
                    cause.advice,
                ]
            },
            note:
                "arrival lost --cause CAUSE lists the updates behind a row; arrival activity ID shows one activity's timeline."
        )
        return (summary, table)
    }

    /// Push-to-start: accepted, appeared, given an update token, and how long the token took.
    func makeStarts() -> (String, HTMLReportPage.Table?) {
        let s = report.starts
        guard s.sent > 0 else { return ("No push-to-start (event start) was sent in this window.", nil) }
        let latency = s.updateTokenLatency
        let summary =
            "A start APNs accepted must appear on the device and then give the app an update token; "
            + "a start without one is an activity the sender can never update. Update token after the accepted start: "
            + "p50 \(ReportFormat.duration(latency.p50)) · p90 \(ReportFormat.duration(latency.p90)) · "
            + "p99 \(ReportFormat.duration(latency.p99)) over \(ReportFormat.count(latency.count)) starts."
        let table = HTMLReportPage.Table(
            caption: "Push-to-start",
            header: ["step", "starts", "rate", "meaning"],
            rows: [
                ["sent", ReportFormat.count(s.sent), "", "updates with event start"],
                [
                    "accepted", ReportFormat.count(s.accepted), ReportFormat.percent(ratio(s.accepted, s.sent)),
                    "of sent: APNs took it",
                ],
                [
                    "appeared", ReportFormat.count(s.appeared), ReportFormat.percent(s.appearanceRate),
                    "of accepted: a render or callback of the activity came back (the device's start budget and attributes the app cannot decode stop the rest)",
                ],
                [
                    "update token", ReportFormat.count(s.updateTokenReceived), ReportFormat.percent(s.updateTokenRate),
                    "of appeared: the app reported the activity's push token",
                ],
            ])
        return (summary, table)
    }

    /// Per broadcast channel: its broadcasts, the subscribers they stood for,
    /// what arrived, how fast, and why the rest did not.
    func makeChannels() -> (String, HTMLReportPage.Table?) {
        let r = report
        let rows = r.breakdowns["channel"] ?? [:]
        let names = Set(rows.keys).union(r.channels.keys).sorted()
        guard !names.isEmpty else { return ("", nil) }
        var summary = Report.broadcastExplanation + " APNs's own broadcast figures are channel totals, a day late."
        if r.dataQuality.broadcastsWithoutSubscribers > 0 {
            summary +=
                " \(ReportFormat.count(r.dataQuality.broadcastsWithoutSubscribers)) of "
                + "\(ReportFormat.count(r.requests.broadcasts)) broadcasts stood for no activity: none that follows "
                + "their channel was open when they were sent."
        }
        let table = HTMLReportPage.Table(
            caption: "Broadcast channels",
            header: [
                "channel", "broadcasts", "accepted", "subscribers reached", "updates", "rendered", "arrival",
                "latency p50", "p90", "lost",
            ] + LossCause.allCases.map(\.name),
            rows: names.map { name in
                let u = rows[name] ?? UpdateCounts()
                let c = r.channels[name] ?? Report.Channel()
                return [
                    name.text, ReportFormat.count(c.broadcasts), ReportFormat.count(c.accepted),
                    ReportFormat.count(c.subscribers), ReportFormat.count(u.sent), ReportFormat.count(u.rendered),
                    ReportFormat.percent(u.arrivalRate), ReportFormat.duration(c.latency.p50),
                    ReportFormat.duration(c.latency.p90), ReportFormat.count(u.lost),
                ] + LossCause.allCases.map { ReportFormat.count(u.lostByCause[$0]) }
            },
            note: "gate rules can hold a channel to a floor: 'breakdowns.channel.<id>.arrival_rate >= 0.9'.")
        return (summary, table)
    }

    /// The devices far below the fleet (contract 3.2), the lowest ``Report/outliersShown``.
    func makeOutliers() -> HTMLReportPage.Table? {
        let rows = report.outlierRows()
        guard let outliers = report.outliers, !rows.isEmpty else { return nil }
        return HTMLReportPage.Table(
            caption: "Devices far below the fleet", header: Report.outlierHeader, rows: rows,
            note: (outliers.devices.count > rows.count
                ? "\(ReportFormat.count(outliers.devices.count - rows.count)) more: the JSON report's outliers.devices lists them all. "
                : "") + Report.followDevice)
    }

    /// Apple's numbers beside arrival's (issue 54): a table of the days, and one of the channels when
    /// Apple exported broadcast rows.
    func makeApple() -> [HTMLReportPage.Table] {
        guard report.appleSummary != nil else { return [] }
        var tables = [
            HTMLReportPage.Table(
                caption: "Apple's Live Activity pushes beside arrival's updates, by UTC day",
                header: Report.appleDeliveryHeader, rows: report.appleDeliveryRows)
        ]
        let channels = report.appleChannelRows
        if !channels.isEmpty {
            tables.append(
                HTMLReportPage.Table(
                    caption: "Broadcast channels: Apple's broadcasts beside the subscriber-updates arrival saw drawn",
                    header: Report.appleChannelHeader, rows: channels))
        }
        tables[tables.count - 1].tableNote = Report.appleNote
        return tables
    }

    /// The dead tokens the sender should stop sending to, most requests after death first.
    func makeDeadTokens() -> (String, HTMLReportPage.Table?) {
        guard !deadTokens.isEmpty else {
            return ("No push token died in this window, and none was sent to after its death.", nil)
        }
        let shown = deadTokens
        let summary =
            "\(ReportFormat.count(deadTokenCount)) push tokens are dead (410, Unregistered, BadDeviceToken, ExpiredToken, FCM:UNREGISTERED); "
            + "\(ReportFormat.count(report.requests.toDeadTokens)) requests of this window were still sent to them afterwards. "
            + "Purge them from the sender."
        let table = HTMLReportPage.Table(
            caption: "Tokens to purge",
            header: ["token", "app", "provider", "died", "reason", "requests after"],
            rows: shown.map {
                [
                    $0.pushToken, $0.app, $0.provider, ReportFormat.time($0.diedAt), $0.reason,
                    ReportFormat.count($0.requestsAfter),
                ]
            },
            note: deadTokenCount > shown.count
                ? "\(ReportFormat.count(deadTokenCount - shown.count)) more: arrival tokens --format csv lists them all."
                : nil)
        return (summary, table)
    }

    // MARK: - Funnel

    func makeFunnel() -> (SVGChart, HTMLReportPage.Table) {
        let r = report
        let u = r.updates
        var chart = SVGChart(
            id: "funnel", title: "Requests, accepted requests, updates and rendered updates", width: 960, height: 214)
        let left = 150.0
        let right = 960.0 - 20
        let barHeight = 34.0
        let scale = Double(max(r.requests.total, u.sent, 1))
        let span = right - left
        func bar(_ row: Int, _ label: String, _ segments: [(Int, String, String)]) {
            let y = 12 + Double(row) * 50
            chart.label(left - 10, y + barHeight / 2 + 5, label, anchor: "end", cls: "lbl strong")
            var x = left
            for (count, cls, name) in segments where count > 0 {
                let w = Double(count) / scale * span
                chart.rect(x, y, w, barHeight, cls, tip: "\(label): \(name) \(ReportFormat.count(count))")
                x += w
            }
            let total = segments.reduce(0) { $0 + $1.0 }
            let inside = x > right - 70
            chart.label(
                inside ? x - 6 : x + 6, y + barHeight / 2 + 5, ReportFormat.count(total),
                anchor: inside ? "end" : "start", cls: inside ? "lbl inverse" : "lbl")
        }
        bar(
            0, "APNs requests",
            [(r.requests.accepted, "o-accepted", "accepted"), (r.requests.rejected, "o-rejected", "rejected")])
        bar(1, "accepted (200)", [(r.requests.accepted, "o-accepted", "accepted")])
        bar(
            2, "updates",
            zip(Self.outcomeCounts(u), Self.outcomeStyles).map { ($0, $1.cls, $1.name) }
                + [(u.sent - u.accepted, "o-rejected", "not accepted")])
        bar(3, "rendered", [(u.rendered, "o-rendered", "rendered")])
        let rows: [(String, Int, String)] =
            [
                ("APNs requests", r.requests.total, "every HTTP/2 request the sender logged"),
                ("accepted requests", r.requests.accepted, "status 200: APNs took it, nothing more"),
                ("rejected requests", r.requests.rejected, "any other status, including no response"),
                ("updates sent", u.sent, "logical updates (activity, seq); retries merged"),
                ("updates accepted", u.accepted, "at least one request accepted"),
            ] + zip(Self.outcomeCounts(u), Self.outcomeStyles).map { ("  " + $1.name, $0, $1.meaning) }
            + [("updates not accepted", u.sent - u.accepted, "no request for it was accepted")]
        let table = HTMLReportPage.Table(
            caption: "Funnel",
            header: ["stage", "count", "meaning"],
            rows: rows.map { [$0.0, ReportFormat.count($0.1), $0.2] })
        return (chart, table)
    }

    // MARK: - Over time

    func makeTimeChart() -> (SVGChart?, HTMLReportPage.Table?) {
        guard !buckets.isEmpty else { return (nil, nil) }
        let word = bucketsAreHours ? "hour" : bucketDays == 1 ? "day" : "\(bucketDays) days"
        var chart = SVGChart(
            id: "by-time", title: "Updates per \(word) by outcome, and the arrival rate", width: 960, height: 300)
        let left = 56.0
        let right = 960.0 - 56
        let top = 16.0
        let bottom = 300.0 - 40
        let height = bottom - top
        let maxSent = Double(max(buckets.map(\.updates.sent).max() ?? 1, 1))
        let step = (right - left) / Double(buckets.count)
        let barWidth = max(1, step * 0.78)
        for tick in 0...4 {
            let y = bottom - Double(tick) / 4 * height
            chart.rule(left, y, right, y)
            chart.label(left - 6, y + 4, ReportFormat.count(Int((maxSent * Double(tick) / 4).rounded())), anchor: "end")
            chart.label(right + 6, y + 4, "\(tick * 25)%", anchor: "start", cls: "lbl rate")
        }
        var ratePoints: [(Double, Double)] = []
        let labelEvery = max(1, buckets.count / 12)
        for (i, bucket) in buckets.enumerated() {
            let x = left + Double(i) * step + (step - barWidth) / 2
            var y = bottom
            let when =
                bucketsAreHours
                ? ReportFormat.time(bucket.start).dropLast(4) + "Z"
                : Substring(ReportFormat.day(utcDay(of: bucket.start)))
            let segments =
                zip(Self.outcomeCounts(bucket.updates), Self.outcomeStyles).map { ($0, $1.cls, $1.name) }
                + [(bucket.updates.sent - bucket.updates.accepted, "o-rejected", "not accepted")]
            for (count, cls, name) in segments where count > 0 {
                let h = Double(count) / maxSent * height
                y -= h
                chart.rect(x, y, barWidth, h, cls, tip: "\(when): \(name) \(ReportFormat.count(count))")
            }
            if i % labelEvery == 0 {
                let text =
                    bucketsAreHours
                    ? String(ReportFormat.clock(bucket.start).prefix(2))
                    : String(ReportFormat.day(utcDay(of: bucket.start)).suffix(5))
                chart.label(x + barWidth / 2, bottom + 16, text, anchor: "middle")
            }
            if let rate = bucket.updates.arrivalRate {
                let point = (x + barWidth / 2, bottom - rate * height)
                ratePoints.append(point)
                chart.dot(point.0, point.1, cls: "rate-dot", tip: "\(when): arrival rate \(ReportFormat.percent(rate))")
            }
        }
        chart.line(ratePoints, cls: "rate-line")
        chart.label(left, bottom + 34, bucketsAreHours ? "hour of the day (UTC)" : "day (UTC)")
        chart.label(right, bottom + 34, "line: arrival rate (right axis)", anchor: "end", cls: "lbl rate")

        let header =
            [
                (bucketsAreHours ? "hour" : bucketDays == 1 ? "day" : "from day") + " (UTC)", "requests", "accepted",
                "updates",
            ]
            + Outcome.displayOrder.map(\.columnTitle) + ["not accepted", "arrival rate"]
        let rows = buckets.map { b -> [String] in
            let u = b.updates
            let when =
                bucketsAreHours
                ? ReportFormat.time(b.start).dropLast(4) + "Z" : Substring(ReportFormat.day(utcDay(of: b.start)))
            let values =
                [
                    String(when), ReportFormat.count(b.requests), ReportFormat.count(b.acceptedRequests),
                    ReportFormat.count(u.sent),
                ]
                + Self.outcomeCounts(u).map(ReportFormat.count) + [
                    ReportFormat.count(u.sent - u.accepted), ReportFormat.percent(u.arrivalRate),
                ]
            return values
        }
        let table = HTMLReportPage.Table(
            caption: "Requests and updates per \(word)", header: header, rows: rows,
            note:
                "Updates count in the \(word) of their accept time (or first request); requests in the \(word) of their sent_at, whole UTC \(bucketsAreHours ? "hours" : "days")."
        )
        return (chart, table)
    }

    // MARK: - Rejections

    func makeReasons() -> (SVGChart?, [HTMLReportPage.ReasonRow]) {
        let r = report
        let sorted = r.requests.byReason.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        guard !sorted.isEmpty else { return (nil, []) }
        let rows = sorted.map { reason, count in
            let explained = APNsReason.explain(reason.text)
            return HTMLReportPage.ReasonRow(
                reason: reason.text, count: ReportFormat.count(count),
                share: ReportFormat.percent(ratio(count, r.requests.rejected)),
                meaning: explained.meaning, action: explained.action)
        }
        let shown = sorted.prefix(12)
        var chart = SVGChart(
            id: "reasons", title: "Rejected requests by APNs reason", width: 960, height: 16 + shown.count * 28)
        let left = 230.0
        let right = 960.0 - 90
        let maxCount = Double(shown.first?.value ?? 1)
        for (i, (reason, count)) in shown.enumerated() {
            let y = 8 + Double(i) * 28
            let label = reason.text.count > 30 ? String(reason.text.prefix(29)) + "…" : reason.text
            chart.label(left - 8, y + 16, label, anchor: "end")
            let w = Double(count) / maxCount * (right - left)
            chart.rect(left, y, w, 22, "o-rejected", tip: "\(reason.text): \(ReportFormat.count(count))")
            chart.label(left + w + 6, y + 16, ReportFormat.count(count))
        }
        return (chart, Array(rows.prefix(40)))
    }

    // MARK: - Latency

    func makeLatency() -> (SVGChart, HTMLReportPage.Table) {
        var chart = SVGChart(id: "latency", title: "Render latency distribution", width: 960, height: 240)
        let left = 56.0
        let right = 960.0 - 16
        let top = 16.0
        let bottom = 240.0 - 36
        let maxCount = Double(max(latencyHistogram.map(\.count).max() ?? 1, 1))
        let step = (right - left) / Double(max(latencyHistogram.count, 1))
        for tick in 0...4 {
            let y = bottom - Double(tick) / 4 * (bottom - top)
            chart.rule(left, y, right, y)
            chart.label(
                left - 6, y + 4, ReportFormat.count(Int((maxCount * Double(tick) / 4).rounded())), anchor: "end")
        }
        let total = latencyHistogram.reduce(0) { $0 + $1.count }
        for (i, bin) in latencyHistogram.enumerated() {
            let h = Double(bin.count) / maxCount * (bottom - top)
            let x = left + Double(i) * step + step * 0.1
            chart.rect(
                x, bottom - h, step * 0.8, h, "o-rendered", tip: "\(bin.label): \(ReportFormat.count(bin.count))")
            chart.label(x + step * 0.4, bottom + 16, bin.label, anchor: "middle")
            if bin.count > 0 {
                chart.label(
                    x + step * 0.4, bottom - h - 4, ReportFormat.percent(ratio(bin.count, total)), anchor: "middle",
                    cls: "lbl small")
            }
        }
        let table = HTMLReportPage.Table(
            caption: "Rendered updates by latency",
            header: ["latency", "rendered updates", "share"],
            rows: latencyHistogram.map {
                [$0.label, ReportFormat.count($0.count), ReportFormat.percent(ratio($0.count, total))]
            })
        return (chart, table)
    }

    // MARK: - Breakdowns

    static let breakdownTitles = [
        "app": "By app", "priority": "By priority", "provider": "By provider", "os_version": "By OS version",
        "app_version": "By app version",
    ]
    static let breakdownLimit = 20

    func makeBreakdowns() -> [HTMLReportPage.Breakdown] {
        Report.breakdownDimensions.compactMap { dimension in
            guard report.showsBreakdown(dimension), let rows = report.breakdowns[dimension] else { return nil }
            // Most updates first, so a long tail folds into one line.
            let sorted = rows.sorted {
                $0.value.sent != $1.value.sent ? $0.value.sent > $1.value.sent : $0.key < $1.key
            }.map { (key: $0.key, counts: $0.value) }
            return breakdown(
                dimension, title: Self.breakdownTitles[dimension] ?? dimension,
                name: dimension.replacingOccurrences(of: "_", with: " "), rows: sorted,
                note: dimension == "provider" ? report.providerAcceptanceNote : nil)
        }
    }

    /// Contract 3.1's evidence (``Report/showsThrottling``): the arrival
    /// rate by recent priority-10 load, its buckets in their natural order,
    /// and by the user's "More Frequent Updates" switch.
    func makeThrottling() -> [HTMLReportPage.Breakdown] {
        guard report.showsThrottling else { return [] }
        var parts: [HTMLReportPage.Breakdown] = []
        let load = report.priority10LoadRows
        if !load.isEmpty {
            parts.append(
                breakdown(
                    "priority_10_last_hour", title: "Arrival rate by priority-10 load in the hour before",
                    name: "other priority-10 updates in the hour before", rows: load,
                    note: "Accepted priority-10 updates sent to a token (not through a channel), by how many other "
                        + "such updates their activity had accepted in the 60 minutes before."))
        }
        let switches = report.frequentPushesRows
        if !switches.isEmpty {
            parts.append(
                breakdown(
                    "frequent_pushes", title: "Arrival rate by the user's \"More Frequent Updates\" switch",
                    name: "frequent_pushes", rows: switches,
                    note: (report.frequentPushesSummary.map { $0 + " " } ?? "")
                        + "From the activity's earliest render or callback that says (ActivityAuthorizationInfo)."))
        }
        return parts
    }

    /// A breakdown's chart of arrival rates (its first 12 rows) and table
    /// (its first ``breakdownLimit`` rows, the rest summed in one), rows in the order given.
    func breakdown(
        _ dimension: String, title: String, name: String, rows sorted: [(key: ExactString, counts: UpdateCounts)],
        note: String?
    ) -> HTMLReportPage.Breakdown {
        let shown = sorted.prefix(Self.breakdownLimit)
        var rest = UpdateCounts()
        for (_, u) in sorted.dropFirst(Self.breakdownLimit) { rest.add(u) }
        let charted = shown.prefix(12)
        var chart = SVGChart(
            id: "by-" + dimension, title: "Arrival rate by \(name)", width: 960, height: 16 + charted.count * 26)
        let left = 200.0
        let right = 960.0 - 70
        for (i, (key, u)) in charted.enumerated() {
            let y = 8 + Double(i) * 26
            let label = key.text.count > 26 ? String(key.text.prefix(25)) + "…" : key.text
            chart.label(left - 8, y + 15, label, anchor: "end")
            chart.rect(left, y, right - left, 20, "track", tip: "\(key.text): \(ReportFormat.count(u.sent)) updates")
            if let rate = u.arrivalRate {
                chart.rect(
                    left, y, rate * (right - left), 20, "o-rendered",
                    tip: "\(key.text): arrival rate \(ReportFormat.percent(rate))")
            }
            chart.label(right + 6, y + 15, ReportFormat.percent(u.arrivalRate))
        }
        func cells(_ key: String, _ u: UpdateCounts) -> [String] {
            [key] + [u.sent, u.accepted].map(ReportFormat.count) + Self.outcomeCounts(u).map(ReportFormat.count)
                + [ReportFormat.percent(u.arrivalRate), ReportFormat.percent(u.effectiveArrivalRate)]
        }
        var tableRows = shown.map { cells($0.key.text, $0.counts) }
        if sorted.count > Self.breakdownLimit {
            tableRows.append(cells("\(sorted.count - Self.breakdownLimit) others", rest))
        }
        let table = HTMLReportPage.Table(
            caption: "Updates by \(name)",
            header: [name, "sent", "accepted"] + Outcome.displayOrder.map(\.columnTitle) + ["arrival", "effective"],
            rows: tableRows,
            note: note
                ?? (sorted.count > Self.breakdownLimit
                    ? "The \(Self.breakdownLimit) with the most updates; the rest summed in the last row." : nil))
        return HTMLReportPage.Breakdown(title: title, chart: chart, table: table)
    }

    // MARK: - Trend

    func makeTrend() -> ([SVGChart], HTMLReportPage.Table?) {
        guard !trend.isEmpty else { return ([], nil) }
        let days = trend.compactMap { $0.window.map { utcDay(of: $0.from) } }
        var charts: [SVGChart] = []
        for (m, metric) in HeadlineMetric.all.enumerated() {
            var chart = SVGChart(id: "trend-\(m)", title: metric.name, width: 300, height: 120)
            let left = 8.0
            let right = 292.0
            let top = 30.0
            let bottom = 100.0
            // A day without a request has no figure at all: a gap in the line, not a count of 0
            // (which drew a false drop or spike next to a real day).
            let values = trend.map { $0.requests.total > 0 ? metric.value($0) : nil }
            let present = values.compactMap { $0 }
            var low = present.min() ?? 0
            var high = present.max() ?? 1
            if metric.kind == .rate { low = min(low, max(0, high - 0.05)) }
            if high - low < 1e-9 { high = low + (metric.kind == .rate ? 0.01 : 1) }
            chart.label(left, 14, metric.name, cls: "lbl strong")
            chart.label(right, 14, "latest " + metric.format(values.last ?? nil), anchor: "end", cls: "lbl")
            chart.label(left, 116, ReportFormat.day(days.first ?? 0).suffix(5).description, cls: "lbl small")
            chart.label(
                right, 116, ReportFormat.day(days.last ?? 0).suffix(5).description, anchor: "end", cls: "lbl small")
            if let lowest = present.min(), let highest = present.max() {
                // The line is scaled to its own range: say what that range is.
                chart.label(
                    (left + right) / 2, 116, "range " + metric.format(lowest) + " – " + metric.format(highest),
                    anchor: "middle", cls: "lbl small")
            }
            chart.rule(left, bottom, right, bottom)
            let step = values.count > 1 ? (right - left) / Double(values.count - 1) : 0
            var segment: [(Double, Double)] = []
            for (i, value) in values.enumerated() {
                guard let value else {
                    chart.line(segment, cls: "trend-line")
                    segment = []
                    continue
                }
                let x = values.count > 1 ? left + Double(i) * step : (left + right) / 2
                let y = bottom - (value - low) / (high - low) * (bottom - top)
                segment.append((x, y))
                chart.dot(x, y, cls: "trend-dot", tip: "\(ReportFormat.day(days[i])): \(metric.format(value))")
            }
            chart.line(segment, cls: "trend-line")
            charts.append(chart)
        }
        let table = HTMLReportPage.Table(
            caption: "Headline metrics by day",
            header: ["day"] + HeadlineMetric.all.map(\.name),
            rows: zip(days, trend).map { day, report in
                [ReportFormat.day(day)]
                    + HeadlineMetric.all.map { $0.format(report.requests.total > 0 ? $0.value(report) : nil) }
            })
        return (charts, table)
    }

    // MARK: - Activities

    func makeActivities() -> [HTMLReportPage.Activity] {
        let styles = Dictionary(uniqueKeysWithValues: Self.outcomeStyles.map { ($0.name, $0.cls) })
        return worstActivities.map { a in
            HTMLReportPage.Activity(
                id: a.activityID, app: a.app, os: a.osVersion, appVersion: a.appVersion,
                devices: a.devices.isEmpty ? "no render beacon" : "device " + a.devices.joined(separator: ", "),
                summary: "\(ReportFormat.count(a.missed)) of \(ReportFormat.count(a.sent)) updates did not show · "
                    + "\(ReportFormat.count(a.rendered)) rendered · \(ReportFormat.count(a.superseded)) superseded",
                steps: a.steps.map { s in
                    let answers = s.requests.map { q -> String in
                        let answer =
                            q.status == 200 ? "200" : "\(q.status) \(q.reason ?? (q.status == 0 ? "NoResponse" : ""))"
                        return ReportFormat.clock(q.sentAt) + " → " + answer
                            + (q.payloadBytes.map { " · \(ReportFormat.count(Int($0))) B" } ?? "")
                    }.joined(separator: "; ")
                    let rendered =
                        s.firstRenderedAt.map {
                            ReportFormat.clock($0) + " (+" + ReportFormat.duration(max(0, $0 - s.at)) + ")"
                        } ?? ReportFormat.none
                    return HTMLReportPage.Step(
                        seq: String(s.seq), event: s.event, at: ReportFormat.clock(s.at),
                        answers: answers.isEmpty ? ReportFormat.none : answers,
                        outcome: s.outcome ?? "not accepted",
                        outcomeCls: s.outcome.flatMap { styles[$0] } ?? "o-rejected",
                        rendered: rendered, surfaces: s.surfaces.joined(separator: ", "))
                },
                more: a.stepsNotShown > 0
                    ? "\(ReportFormat.count(a.stepsNotShown)) more updates not listed (shown ones, except the one just before each that did not show)."
                    : nil)
        }
    }

    // MARK: - Sources and data quality

    /// The directory every listed file path starts with, shown once instead of on every row.
    var pathRoot: String {
        let paths =
            sources.largestFiles.map(\.path) + quality.malformedByFile.map(\.path)
            + quality.duplicatesByFile.map(\.path) + quality.skippedFiles.flatMap { [$0.path, $0.firstPath] }
        guard var prefix = paths.first.map({ Array($0.utf8) }) else { return "" }
        for path in paths.dropFirst() {
            let bytes = Array(path.utf8)
            var n = 0
            while n < prefix.count && n < bytes.count && prefix[n] == bytes[n] { n += 1 }
            prefix.removeSubrange(n...)
        }
        // Cut back to a whole directory.
        while let last = prefix.last, last != UInt8(ascii: "/") { prefix.removeLast() }
        return String(decoding: prefix, as: UTF8.self)
    }

    func short(_ path: String) -> String {
        let root = pathRoot
        guard !root.isEmpty, path.utf8.starts(with: root.utf8) else { return path }
        return String(decoding: path.utf8.dropFirst(root.utf8.count), as: UTF8.self)
    }

    func makeSourcesTable() -> HTMLReportPage.Table {
        HTMLReportPage.Table(
            caption: "Files with the most records",
            header: ["file", "records held"],
            rows: sources.largestFiles.map { [short($0.path), ReportFormat.count($0.records)] },
            note: sources.files > sources.largestFiles.count
                ? "\(ReportFormat.count(sources.files - sources.largestFiles.count)) more files." : nil)
    }

    func makeQualitySummary() -> HTMLReportPage.Table {
        let q = report.dataQuality
        let rows: [(String, Int, String)] =
            [
                (
                    "malformed lines", q.malformedLines,
                    "lines that were not a valid record (all ingested data); everything valid around them was kept"
                ),
                (
                    "duplicate records", q.duplicateRecords,
                    "records equal to one already stored (retried uploads); they change no figure"
                ),
                (
                    "files skipped as duplicate", q.filesSkippedAsDuplicate,
                    "files whose bytes were already ingested under another name"
                ),
                (
                    "unattributed requests", q.unattributed,
                    "no activity_id and no push_token callback naming the token: counted as requests, not as updates"
                ),
                (
                    "requests without seq", q.apnsWithoutSeq,
                    "cannot be matched to a render: counted as requests, not as updates"
                ),
                (
                    "negative render latency", q.clockSkewNegative,
                    "device clock behind the sender's: latency counted as 0"
                ),
            ] + q.malformedByCause.sorted { $0.key < $1.key }.map { ("  malformed: " + $0.key.text, $0.value, "") }
        return HTMLReportPage.Table(
            caption: "Data quality",
            header: ["what", "count", "meaning"],
            rows: rows.map { [$0.0, ReportFormat.count($0.1), $0.2] })
    }

    func makeMalformedTable() -> HTMLReportPage.Table? {
        guard !quality.malformedByFile.isEmpty else { return nil }
        return HTMLReportPage.Table(
            caption: "Malformed lines by file and cause",
            header: ["file", "cause", "lines"],
            rows: quality.malformedByFile.map { [short($0.path), $0.cause, ReportFormat.count($0.lines)] },
            note: quality.malformedFilesNotShown > 0
                ? "\(ReportFormat.count(quality.malformedFilesNotShown)) more (file, cause) pairs." : nil)
    }

    func makeDuplicatesTable() -> HTMLReportPage.Table? {
        guard !quality.duplicatesByFile.isEmpty else { return nil }
        return HTMLReportPage.Table(
            caption: "Files with repeated records (lines whose record is also in this file or another)",
            header: ["file", "lines repeated"],
            rows: quality.duplicatesByFile.map { [short($0.path), ReportFormat.count($0.records)] })
    }

    func makeSkippedTable() -> HTMLReportPage.Table? {
        guard !quality.skippedFiles.isEmpty else { return nil }
        return HTMLReportPage.Table(
            caption: "Files with the same bytes as another: read once, counted once",
            header: ["file", "same bytes as"],
            rows: quality.skippedFiles.map { [short($0.path), short($0.firstPath)] })
    }
}

import ArrivalBeacons
import ArrivalModel
import ArrivalSender

/// One broadcast channel of `--channels`: an event (a match, a live blog, a
/// transit line's day) whose broadcaster sends one push per update to every
/// subscriber at once.
struct SimChannel {
    /// How the broadcaster logs its requests.
    enum Logging {
        /// `apns` records with `channel_id` (no token, no activity id).
        case records
        /// Raw `exchange` lines to `/4/broadcasts/apps/<bundle id>`.
        case exchanges
        /// Records until `switchMs`, exchanges from then on (a new logger deployed mid-day).
        case both(switchMs: Int64)
    }

    let id: String
    let app: SimApp
    /// The event's start (subscribers join from 20 minutes before) and end (the `end` broadcast).
    let startMs: Int64
    let endMs: Int64
    /// Broadcasts start this early, before anyone can have subscribed.
    let preEventMs: Int64
    /// Seconds between broadcasts.
    let interval: ClosedRange<Int>
    let payloadBytes: ClosedRange<Int>
    /// Share of broadcasts within 512 bytes of the 5,120-byte limit (accepted: `oversize_risk`).
    let nearLimitShare: Double
    /// Share of broadcasts over 5,120 bytes (413 `PayloadTooLarge`).
    let oversizeShare: Double
    let priority10Share: Double
    /// A second publishing host whose clock runs behind re-sends some
    /// updates right after the first with a timestamp that is not newer.
    let staleHost: Bool
    let logging: Logging
    /// The broadcaster sets `apns-topic` on its exchanges (else the pipeline takes the bundle id).
    let setsTopic: Bool
    /// Weight among subscribers; 0 for a channel nobody follows.
    let subscriberWeight: Int
    /// The broadcaster keeps sending for a while after the `end` (a lagging worker).
    let sendsAfterEnd: Bool
}

/// A broadcast the device side may receive: accepted, and when.
struct AcceptedBroadcast {
    var seq: Int
    var event: PushPlan.Event
    var acceptMs: Int64
    var apsTimestamp: Int64
    var priority: Int
}

/// The apps that broadcast, with what their subscribers' builds do.
enum ChannelCatalog {
    static let scores = FleetCatalog.apps[2]

    static let news = SimApp(
        name: "news", idPrefix: "live-",
        versions: [
            (
                SimAppVersion(
                    "3.0.2", contentUpdateRate: 0.74, tokenCallbackLoss: 0.2, stateCallbackLoss: 0.22,
                    writesFrequentPushes: false), 4
            ),
            (SimAppVersion("3.1.0", contentUpdateRate: 0.9, tokenCallbackLoss: 0.08, stateCallbackLoss: 0.12), 6),
        ],
        pushToStartShare: 0.3, logsActivityIDShare: 1.0,
        updateInterval: 300...900, durationMinutes: 180...260, longRunShare: 0,
        payloadBytes: 2500...4400, nearLimitShare: 0, oversizeShare: 0,
        priority10Share: 0.5, staleAfterSeconds: 3600)

    static let transit = SimApp(
        name: "transit", idPrefix: "line-",
        versions: [
            (
                SimAppVersion(
                    "5.4.0", contentUpdateRate: 0.82, tokenCallbackLoss: 0.12, stateCallbackLoss: 0.18,
                    omitsVersionField: true, writesFrequentPushes: false), 5
            ),
            (SimAppVersion("5.5.1", contentUpdateRate: 0.93, tokenCallbackLoss: 0.05, stateCallbackLoss: 0.1), 5),
        ],
        pushToStartShare: 0.2, logsActivityIDShare: 1.0,
        updateInterval: 600...1500, durationMinutes: 600...900, longRunShare: 1,
        payloadBytes: 600...1200, nearLimitShare: 0, oversizeShare: 0,
        priority10Share: 0.2, staleAfterSeconds: 3600)
}

extension FleetRun {
    /// The channels of the day, drawn from the channel stream: three
    /// matches (one that nobody follows), a live blog with large payloads
    /// and a transit line broadcasting all day, whose subscribers outlive
    /// their 8 hours.
    func channelPlans(_ rng: inout SplitMix64) -> [SimChannel] {
        let hour = Milliseconds.hour
        func at(_ hours: Int64, jitterMinutes: Int) -> Int64 {
            dayStartMs + hours * hour + Int64(rng.int(0...jitterMinutes)) * Milliseconds.minute
        }
        func id() -> String {
            // APNs channel ids are base64 of 16 bytes.
            let hex = rng.hex(bytes: 16)
            return Self.base64(hex: hex)
        }
        let matchA = at(12, jitterMinutes: 90)
        let matchB = at(18, jitterMinutes: 60)
        let matchC = at(15, jitterMinutes: 60)
        let blog = at(7, jitterMinutes: 60)
        let transit = at(5, jitterMinutes: 30)
        return [
            SimChannel(
                id: id(), app: ChannelCatalog.scores, startMs: matchA, endMs: matchA + 115 * Milliseconds.minute,
                preEventMs: 45 * Milliseconds.minute, interval: 60...240, payloadBytes: 1800...3600,
                nearLimitShare: 0.06,
                oversizeShare: 0.03, priority10Share: 0.6, staleHost: false, logging: .records, setsTopic: true,
                subscriberWeight: 30, sendsAfterEnd: true),
            SimChannel(
                id: id(), app: ChannelCatalog.scores, startMs: matchB, endMs: matchB + 110 * Milliseconds.minute,
                preEventMs: 30 * Milliseconds.minute, interval: 60...200, payloadBytes: 1800...3600,
                nearLimitShare: 0.05,
                oversizeShare: 0.02, priority10Share: 0.6, staleHost: true, logging: .exchanges, setsTopic: false,
                subscriberWeight: 30, sendsAfterEnd: false),
            SimChannel(
                id: id(), app: ChannelCatalog.scores, startMs: matchC, endMs: matchC + 105 * Milliseconds.minute,
                preEventMs: 20 * Milliseconds.minute, interval: 300...600, payloadBytes: 1500...2500, nearLimitShare: 0,
                oversizeShare: 0, priority10Share: 0.5, staleHost: false, logging: .records, setsTopic: true,
                subscriberWeight: 0, sendsAfterEnd: false),
            SimChannel(
                id: id(), app: ChannelCatalog.news, startMs: blog, endMs: blog + 240 * Milliseconds.minute,
                preEventMs: 15 * Milliseconds.minute, interval: 300...900, payloadBytes: 2500...4400,
                nearLimitShare: 0.15,
                oversizeShare: 0.08, priority10Share: 0.4, staleHost: false, logging: .exchanges, setsTopic: true,
                subscriberWeight: 25, sendsAfterEnd: false),
            SimChannel(
                id: id(), app: ChannelCatalog.transit, startMs: transit, endMs: transit + 16 * hour,
                preEventMs: 10 * Milliseconds.minute, interval: 600...1500, payloadBytes: 600...1200, nearLimitShare: 0,
                oversizeShare: 0, priority10Share: 0.2, staleHost: true,
                logging: .both(switchMs: dayStartMs + 12 * hour),
                setsTopic: true, subscriberWeight: 15, sendsAfterEnd: false),
        ]
    }

    /// Standard base64 of the bytes of `hex` (APNs writes channel ids so).
    static func base64(hex: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var bytes: [UInt8] = []
        var chars = Array(hex.utf8)
        if chars.count % 2 == 1 { chars.append(UInt8(ascii: "0")) }
        func nibble(_ c: UInt8) -> UInt8 { c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : c - UInt8(ascii: "a") + 10 }
        for i in stride(from: 0, to: chars.count, by: 2) { bytes.append(nibble(chars[i]) << 4 | nibble(chars[i + 1])) }
        var out = ""
        for i in stride(from: 0, to: bytes.count, by: 3) {
            let b0 = bytes[i]
            let b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
            let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(i + 1 < bytes.count ? alphabet[Int((b1 & 15) << 2 | b2 >> 6)] : "=")
            out.append(i + 2 < bytes.count ? alphabet[Int(b2 & 63)] : "=")
        }
        return out
    }

    /// `--channels`: every channel's broadcasts (written to the sender's
    /// batches as they are sent), then the subscribers, one device each,
    /// written device by device like the fleet's.
    func simulateChannels() throws {
        var planRNG = SplitMix64(seed: config.seed, stream: 7)
        var broadcastRNG = SplitMix64(seed: config.seed, stream: 8)
        let channels = channelPlans(&planRNG)
        channelCount = channels.count
        var accepted: [[AcceptedBroadcast]] = []
        for channel in channels {
            accepted.append(try broadcast(channel, &broadcastRNG))
        }
        let weights = channels.indices.compactMap { index in
            channels[index].subscriberWeight > 0 ? (index, channels[index].subscriberWeight) : nil
        }
        let subscribers = max(40, config.activities / 2)
        for index in 0..<subscribers {
            var rng = SplitMix64(seed: config.seed, stream: 9, index: UInt64(index))
            let channelIndex = rng.weighted(weights)
            var day = makeSubscriberDevice(app: channels[channelIndex].app, rng: &rng)
            if config.budget {
                // The subscriber's switch (`--budget`), from a stream of its own: only what its kit writes.
                var budgetRNG = SplitMix64(seed: config.seed, stream: 12, index: UInt64(index))
                let value = BudgetModel.drawSwitch(&budgetRNG)
                day.device.installs[0].frequentPushes = value
                if value == .disabled { note("frequent_pushes_off_installs") }
            }
            try subscribe(&day, to: channels[channelIndex], broadcasts: accepted[channelIndex])
            var fileRNG = SplitMix64(seed: config.seed, stream: 10, index: UInt64(index))
            try deviceWriter.write(
                device: day.device, install: day.device.installs[0], events: day.events[0],
                rng: &fileRNG, garbageCursor: &garbageCursor, stats: &deviceStats)
            devices += 1
        }
    }

    // MARK: The broadcaster

    /// Sends the channel's broadcasts from before the event to its end (and
    /// beyond, for a lagging broadcaster), each with its retries, logging
    /// every request; returns the accepted ones.
    private func broadcast(_ channel: SimChannel, _ rng: inout SplitMix64) throws -> [AcceptedBroadcast] {
        note("broadcast_channels")
        if channel.subscriberWeight == 0 { note("channels_nobody_follows") }
        var result: [AcceptedBroadcast] = []
        let sendLimit = dayEndMs - 900_000
        var t = channel.startMs - channel.preEventMs
        var seq = 0
        var previous: (sendMs: Int64, apsTimestamp: Int64)?
        var endSent = false
        var afterEnd = channel.sendsAfterEnd ? rng.int(1...3) : 0
        while t < sendLimit {
            seq += 1
            var sendMs = t
            var apsTimestamp = t / 1000
            var event: PushPlan.Event = .update
            if t >= channel.endMs && !endSent {
                event = .end
                endSent = true
            } else if endSent {
                if afterEnd == 0 { break }
                afterEnd -= 1
                note("broadcasts_after_end")
            } else if channel.staleHost, let previous, rng.chance(0.12) {
                // The second host, its clock behind, repeats the update a moment later.
                sendMs = previous.sendMs + rng.int64(300...900)
                apsTimestamp = previous.apsTimestamp - Int64(rng.int(0...2))
                note("broadcasts_from_slow_host")
            }
            var payload = rng.int(channel.payloadBytes)
            if event == .update {
                if rng.chance(channel.oversizeShare) {
                    payload = rng.int(5121...6400)
                } else if rng.chance(channel.nearLimitShare) {
                    payload = rng.int(4609...5120)
                }
            } else {
                payload = rng.int(400...900)
            }
            let plan = PushPlan(
                seq: seq, logsSeq: !rng.chance(0.01), event: event, sendMs: sendMs, apsTimestamp: apsTimestamp,
                payloadBytes: payload, priority: event == .end || rng.chance(channel.priority10Share) ? 10 : 5)
            if !plan.logsSeq { note("broadcasts_logged_without_seq") }
            if let acceptMs = try sendBroadcast(plan, channel: channel, &rng) {
                result.append(
                    AcceptedBroadcast(
                        seq: seq, event: event, acceptMs: acceptMs, apsTimestamp: apsTimestamp,
                        priority: plan.priority))
            }
            previous = (sendMs, apsTimestamp)
            let next = max(t, sendMs) + Int64(rng.int(channel.interval)) * 1000 + rng.int64(0...999)
            t = endSent || next < channel.endMs ? next : max(channel.endMs, t + 1000)
        }
        return result
    }

    /// One broadcast with its retries: 413 above 5,120 bytes (trimmed and
    /// re-sent, or given up), throttling, 503s, 500s and timeouts. Returns
    /// the accept time, or nil when the broadcaster gave up.
    private func sendBroadcast(_ plan: PushPlan, channel: SimChannel, _ rng: inout SplitMix64) throws -> Int64? {
        var sendMs = plan.sendMs
        var payload = plan.payloadBytes
        var failures = 0
        while true {
            var latency: Int64? = rng.chance(0.9) ? rng.int64(10...160) : rng.int64(160...1200)
            let roll = rng.unit()
            let answer: ProviderAnswer =
                payload > PayloadCheck.maxBroadcastPayloadBytes
                ? .tooLarge
                : roll < 0.03
                    ? .throttled
                    : roll < 0.042
                        ? .unavailable
                        : roll < 0.052
                            ? .timeout
                            : roll < 0.057 ? .serverError : .ok
            let (status, reason): (Int, String?) =
                switch answer {
                case .ok: (200, nil)
                case .tooLarge: (413, "PayloadTooLarge")
                case .throttled: (429, "TooManyRequests")
                case .timeout: (0, transportError(&latency, &rng))
                case .serverError: (500, nil)
                default: (503, "ServiceUnavailable")
                }
            var attempt = SendAttempt(
                sendMs: sendMs, payloadBytes: payload, hour: (sendMs - dayStartMs) / Milliseconds.hour, answer: answer,
                latency: latency)
            attempt.latency = latency
            try logBroadcast(plan, channel: channel, attempt: attempt, status: status, reason: reason, &rng)
            switch answer {
            case .ok:
                note("broadcasts_accepted")
                if config.appleMetrics != nil { apple.broadcastPublished(channel: channel.id, acceptedAt: sendMs) }
                if payload > PayloadCheck.broadcastNearLimitBytes { note("broadcasts_accepted_near_limit") }
                return sendMs
            case .tooLarge:
                note("broadcasts_too_large")
                if rng.chance(0.3) {
                    note("broadcasts_given_up")
                    return nil
                }
                payload = rng.int(3000...4600)
                sendMs += (latency ?? 0) + rng.int64(150...900)
            default:
                failures += 1
                if failures >= 4 {
                    note("broadcasts_given_up")
                    return nil
                }
                let waited: Int64 = answer == .timeout ? 10_000 : (latency ?? 0)
                sendMs += waited + (Int64(1000) << Int64(failures - 1)) + rng.int64(0...999)
            }
        }
    }

    /// Logs one broadcast request as the channel's broadcaster does: an
    /// `apns` record with `channel_id` (the kit's `BeaconLine.apns`), or the
    /// exchange to the broadcast host (the kit's `BeaconLine.exchange`).
    private func logBroadcast(
        _ plan: PushPlan, channel: SimChannel, attempt: SendAttempt, status: Int, reason: String?,
        _ rng: inout SplitMix64
    ) throws {
        let requestID = rng.uuid()
        let event = plan.event == .end ? "end" : "update"
        let asExchange: Bool =
            switch channel.logging {
            case .records: false
            case .exchanges: true
            case .both(let switchMs): attempt.sendMs >= switchMs
            }
        var line = BeaconLine(capacity: 600)
        if asExchange {
            var headers = [
                "authorization": "bearer " + PushExchange.redacted, "apns-channel-id": channel.id,
                "apns-push-type": "liveactivity", "apns-priority": "\(plan.priority)", "apns-expiration": "0",
            ]
            if channel.setsTopic { headers["apns-topic"] = channel.app.topic }
            let url =
                "https://" + PushExchange.apnsBroadcastProductionHost + "/4/broadcasts/apps/"
                + channel.app.bundleID
            var sized = plan
            sized.payloadBytes = attempt.payloadBytes
            let body = FleetRun.payloadText(sized, bytes: attempt.payloadBytes, topic: channel.app.topic)
            let response: (status: Int, headers: [String: String], body: String?)? =
                status == 0
                ? nil
                : (
                    status, ["apns-request-id": requestID],
                    reason.map { #"{"reason":"\#($0)"}"# } ?? ""
                )
            line.exchange(
                provider: .apns, sentAt: attempt.sendMs, url: url, requestHeaders: headers, requestBody: body,
                response: response, error: status == 0 ? reason : nil, latencyMS: attempt.latency.map { Int($0) },
                activityID: nil, environment: nil)
            exchangeLines[.apns, default: 0] += 1
        } else {
            line.apns(
                apnsID: requestID, sentAt: attempt.sendMs, status: status, reason: reason, pushToken: nil,
                activityID: nil, seq: plan.logsSeq ? plan.seq : nil, event: event,
                apsTimestamp: Int(plan.apsTimestamp), payloadBytes: attempt.payloadBytes, topic: channel.app.topic,
                pushType: "liveactivity", priority: plan.priority, environment: "production",
                latencyMS: attempt.latency.map { Int($0) }, channelID: channel.id)
        }
        broadcastLines += 1
        try log(&line, attempt, &rng)
    }

    // MARK: Subscribers

    /// A device of the channel's app on iOS 18 or later (broadcasts need it).
    private func makeSubscriberDevice(app: SimApp, rng: inout SplitMix64) -> DeviceDay {
        let id = rng.hex(bytes: 8)
        let model = rng.weighted(FleetCatalog.deviceModels)
        var os = rng.weighted(FleetCatalog.osVersions)
        while os.1 < max(18, model.minimumMajorOS) { os = rng.weighted(FleetCatalog.osVersions) }
        let clockRoll = rng.int(0...99)
        let clockOffset: Int64 =
            clockRoll < 8 ? -rng.int64(300...1500) : clockRoll < 20 ? rng.int64(1000...20_000) : rng.int64(-300...300)
        let zone = rng.weighted(FleetCatalog.timeZones)
        // A commuter's phone is often underground; a stadium's network is overloaded.
        var stretches: [(from: Int64, to: Int64)] = []
        for _ in 0..<rng.weighted([(0, 20), (1, 30), (2, 30), (3, 20)]) {
            let from = dayStartMs + rng.int64(0...(Milliseconds.day - Milliseconds.hour))
            stretches.append((from, from + rng.int64(5 * Milliseconds.minute...Milliseconds.hour)))
        }
        let merged = offlineStretches(merging: stretches)
        note("subscriber_offline_stretches", merged.count)
        var deadAt = Int64.max
        if rng.chance(0.05) {
            deadAt = dayStartMs + rng.int64(28_800_000...82_800_000)
            note("subscriber_dead_batteries")
        }
        let version = app.versions[rng.weighted(app.versions.indices.map { ($0, app.versions[$0].1) })].0
        let install = SimInstall(
            app: app, version: version, upgrade: nil, pushToStartToken: rng.hex(bytes: 32),
            firstLaunchMs: dayStartMs + rng.int64(120_000...5_400_000))
        let device = SimDevice(
            id: id, model: model, osVersion: os.0, osMajor: os.1, clockOffsetMs: clockOffset,
            zoneMinutes: zone.0, zulu: zone.1, hasWatch: rng.chance(0.3), usesStandby: rng.chance(0.2),
            sandbox: false, offline: merged, deadAtMs: deadAt, installs: [install])
        return DeviceDay(device: device, rng: rng, events: [[]])
    }

    /// One subscriber: it joins while the event runs (started in the app
    /// with `pushType: .channel(id)`, or by a push-to-start carrying
    /// `input-push-channel`), reports its subscription (or loses that
    /// callback, and is then known only from its renders), and shows the
    /// channel's broadcasts as its device gets them: offline, only the
    /// newest stored one; not newer, ignored; after a dismissal or its end,
    /// nothing.
    private func subscribe(_ day: inout DeviceDay, to channel: SimChannel, broadcasts: [AcceptedBroadcast]) throws {
        let install = day.device.installs[0]
        let app = install.app
        let channelID = ChannelID(channel.id)!
        let activityID = app.idPrefix + day.rng.hex(bytes: 6)
        let span = max(600_000, (channel.endMs - channel.startMs) * 8 / 10)
        let joinMs = channel.startMs - 1_200_000 + day.rng.int64(0...span)
        let pushToStart = day.rng.chance(app.pushToStartShare)
        let subscriptionLost = day.rng.chance(0.18)
        let widgetOmitsChannel = day.rng.chance(0.08)
        let dismisses = day.rng.chance(0.14)
        let dismissFraction = Int64(day.rng.int(20...80))
        let learnsLate = day.rng.chance(0.4)
        let lateBy = day.rng.int64(Milliseconds.hour...5 * Milliseconds.hour)
        let leaves = day.rng.chance(0.06)
        let leaveFraction = Int64(day.rng.int(30...70))
        note("subscribers")
        let renderChannel = widgetOmitsChannel ? nil : channelID
        if widgetOmitsChannel { note("subscriber_widgets_without_channel_id") }
        let device = day.device

        // The app's push-to-start token, reported at first launch.
        let launch = max(dayStartMs + 1000, min(install.firstLaunchMs, joinMs - 600_000))
        if pushToStart && day.rng.chance(1 - install.version.stateCallbackLoss) {
            callback(&day, install: 0, .pushToStartToken(token: install.pushToStartToken), atMs: launch)
        }

        let deviceStartMs: Int64
        if pushToStart {
            note("subscribers_started_by_push")
            let context = SenderContext(
                activityID: activityID, logsActivityID: true, topic: app.topic, environment: "production",
                omitsPushType: false, omitsEventForUpdates: false, omitsPriority: false, neverRetries: false,
                badToken: false, unregisteredAtMs: Int64.max)
            let plan = PushPlan(
                seq: 0, logsSeq: true, event: .start, sendMs: joinMs, apsTimestamp: joinMs / 1000,
                payloadBytes: day.rng.int(900...1900), priority: 10)
            guard case .accepted(let acceptMs) = try send(plan, token: install.pushToStartToken, context: context)
            else { return }
            let arrival = device.reachable(
                at: acceptMs + deliveryDelay(priority: 10, rng: &day.rng), reconnectMs: day.rng.int64(2000...25_000))
            guard arrival.ms < device.deadAtMs, arrival.ms < dayEndMs else { return }
            deviceStartMs = arrival.ms
        } else {
            guard joinMs < device.deadAtMs else { return }
            deviceStartMs = joinMs
        }
        render(
            &day, install: 0, activityID: activityID, seq: 0, event: .start,
            atMs: deviceStartMs + day.rng.int64(80...600), channel: renderChannel)
        if subscriptionLost {
            note("subscription_callbacks_lost")
        } else {
            callback(
                &day, install: 0, .channelSubscription(activityID: activityID, channel: channelID),
                atMs: deviceStartMs + day.rng.int64(20...250))
        }
        if day.rng.chance(1 - install.version.stateCallbackLoss) {
            callback(
                &day, install: 0, .activityState(activityID: activityID, state: .active),
                atMs: deviceStartMs + day.rng.int64(30...300))
        }

        let remaining = max(Milliseconds.minute, channel.endMs - deviceStartMs)
        let dismissAt: Int64? = dismisses ? deviceStartMs + remaining * dismissFraction / 100 : nil
        let leaveAt: Int64? = leaves && !dismisses ? deviceStartMs + remaining * leaveFraction / 100 : nil
        if dismissAt != nil { note("subscriber_dismissals") }
        if leaveAt != nil { note("subscribers_ended_in_app") }
        let systemEndMs = deviceStartMs + 28_800_000
        var deviceEndMs = min(systemEndMs, min(dismissAt ?? Int64.max, leaveAt ?? Int64.max))
        var shownTimestamp = Int64.min
        var endApplied = false
        let pushes = broadcasts.filter { $0.acceptMs > deviceStartMs }
        for (k, push) in pushes.enumerated() {
            if day.rng.chance(0.02) {
                note("broadcasts_dropped_for_subscriber")
                continue
            }
            let arrival = device.reachable(
                at: push.acceptMs + deliveryDelay(priority: push.priority, rng: &day.rng),
                reconnectMs: day.rng.int64(2000...25_000))
            if k + 1 < pushes.count && pushes[k + 1].acceptMs < arrival.ms {
                note(arrival.wasOffline ? "broadcasts_replaced_while_offline" : "broadcasts_replaced_before_delivery")
                continue
            }
            if arrival.ms >= device.deadAtMs {
                note("broadcasts_after_battery_died")
                continue
            }
            if config.appleMetrics != nil { apple.broadcastDelivered(channel: channel.id, acceptedAt: push.acceptMs) }
            if arrival.ms >= deviceEndMs || arrival.ms >= dayEndMs {
                note("broadcasts_after_activity_gone")
                continue
            }
            if push.event != .end && push.apsTimestamp <= shownTimestamp {
                note("broadcasts_ignored_as_not_newer")
                continue
            }
            shownTimestamp = push.apsTimestamp
            render(
                &day, install: 0, activityID: activityID, seq: push.seq, event: push.event, atMs: arrival.ms,
                channel: renderChannel)
            if day.rng.chance(install.version.contentUpdateRate * config.faults.contentCallbackScale) {
                callback(
                    &day, install: 0, .contentUpdate(activityID: activityID, seq: push.seq),
                    atMs: arrival.ms + day.rng.int64(20...900), channel: channelID)
            }
            if push.event == .end {
                endApplied = true
                deviceEndMs = arrival.ms
                callback(
                    &day, install: 0, .activityState(activityID: activityID, state: .ended),
                    atMs: arrival.ms + day.rng.int64(10...300), lossy: true)
                break
            }
        }
        if !endApplied {
            if let dismissAt, dismissAt <= deviceEndMs {
                callback(
                    &day, install: 0, .activityState(activityID: activityID, state: .dismissed),
                    atMs: dismissAt + (learnsLate ? lateBy : 0), lossy: true)
            } else if let leaveAt, leaveAt <= deviceEndMs {
                callback(
                    &day, install: 0, .activityState(activityID: activityID, state: .ended), atMs: leaveAt, lossy: true)
            } else if systemEndMs <= deviceEndMs {
                note("subscribers_past_8_hours")
                callback(
                    &day, install: 0, .activityState(activityID: activityID, state: .ended), atMs: systemEndMs,
                    lossy: true)
            }
        }
    }
}

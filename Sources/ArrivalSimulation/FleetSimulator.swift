import ArrivalBeacons
import ArrivalModel
import ArrivalSender
import Foundation

/// A deterministic simulator of one day of a Live Activity fleet: the push
/// sender's request log and the devices' beacon files, shaped the way real
/// uploads look, with every phenomenon the arrival contract's outcome rules
/// are there to tell apart.
///
/// Output layout under the output directory:
///
///     sender/<day>/apns-<HH>.jsonl.gz          hourly batches (some with several gzip members)
///     sender/<day>/apns-<HH>.retry.jsonl.gz    the same bytes as one batch (re-upload)
///     sender/<day>/apns-1140-1220.jsonl.gz     an overlapping re-export (record duplicates)
///     sender/<day>/apns-<HH>.partial.jsonl.gz  a batch cut mid-stream (truncated gzip)
///     devices/<device>/group.<bundle id>/LiveActivityBeacons/<day>/widget-<pid>.jsonl
///     devices/<device>/group.<bundle id>/LiveActivityBeacons/<day>/app-<pid>.jsonl
///
/// **What is simulated, and what for** (each maps to a contract outcome or
/// metric; the report derives them from the files alone):
/// - *Delivered updates* render on one or more surfaces (lock screen,
///   Dynamic Island compact/minimal/expanded, StandBy, watch) a few hundred
///   milliseconds to seconds after APNs accepted them -> `rendered`, latency.
/// - *Retries*: 429 `TooManyRequests`, 503 `ServiceUnavailable`, 500 without
///   a reason and status-0 timeouts are retried with a new `apns-id`, the same
///   `seq` and `aps_timestamp`, and a later `sent_at` -> `by_reason`, and an
///   update accepted on its second or third request.
/// - *Hard rejections*: 400 `BadDeviceToken` (a token from the wrong
///   environment), 410 `Unregistered` (the user dismissed the activity),
///   413 `PayloadTooLarge` (trimmed and re-sent) -> `oversize_failures`;
///   payloads of 3585-4096 bytes that were accepted -> `oversize_risk`.
/// - *Stale timestamps*: a sender reusing the previous `aps_timestamp`, or a
///   second host with a slow clock sending right after the first; the device
///   ignores an update not newer than what it shows -> `stale_timestamp`.
/// - *Sends after `end`*: a lagging worker's update after the end push ->
///   `ended`.
/// - *All-day activities*: updates more than 8 hours after the start, which
///   the system no longer shows -> `expired`.
/// - *Offline stretches and low priority*: APNs keeps only the newest push
///   per activity while the device is unreachable (or while a priority-5
///   push waits for opportunistic delivery), so older ones never arrive ->
///   `superseded`.
/// - *Losses*: pushes dropped outright, batteries that die, activities the
///   user dismissed (APNs still answers 200 until the token is unregistered),
///   lost beacons (the widget rendered but the beacon never reached the
///   file) -> `lost`.
/// - *Callbacks*: `push_to_start_token`, `push_token` (5-30% lost depending
///   on the app version), `content_update` (60-97% received), and
///   `activity_state` (`active`, `stale`, `ended`, `dismissed`) ->
///   callback loss rates and attribution: some senders log no
///   `activity_id`, so their requests are attributed through the
///   `push_token` callback, and stay `unattributed` when it was lost; a few
///   requests are logged without `seq` (`apns_without_seq`).
/// - *Device clocks*: local offsets (`+08:00`), clocks ahead, and clocks
///   seconds behind (`clock_skew_negative`).
/// - *Bad input and duplicates*: see ``SenderLog`` and ``DeviceFileWriter``.
///
/// **Providers** (``SimulationConfig/providers``, `arrival simulate
/// --providers`). Each activity's sender is drawn (from a stream of its own)
/// among four: a quarter log `apns` records as above; the rest log every
/// HTTP request as an `exchange` line (contract section 2.6) with APNs
/// directly, Firebase Cloud Messaging HTTP v1 or Tencent Cloud Chat, written
/// by the kit's `BeaconLine.exchange`, in the same hourly batches. Each
/// provider answers in its own terms (``SenderChannel``, `ProviderSender.swift`):
/// FCM's refusals as `google.firebase.fcm.v1.FcmError` details (`UNREGISTERED`,
/// `INVALID_ARGUMENT`, `QUOTA_EXCEEDED`, `UNAVAILABLE`, and
/// `THIRD_PARTY_AUTH_ERROR` for every request in a 20-minute outage at
/// 09:00), half of them with APNs's answer relayed in an `ApnsError`, and a
/// 500 `INTERNAL` with nothing but `error.status`; Tencent's as business
/// errors (HTTP 200, `ActionStatus` `FAIL`, `ErrorCode` 70107 or none);
/// timeouts and 500s from all three; header names in mixed case. What the
/// devices then show follows what the contract derives from those lines: a
/// provider's 200 is an accepted push; Tencent Cloud Chat stamps
/// `aps.timestamp` with the second it sends, cannot start an activity, takes
/// pushes APNs then refuses (too large: accepted, never delivered) and does
/// not hear of a dismissed activity's 410.
///
/// **Lifecycle** (``SimulationConfig/lifecycle``, `arrival simulate
/// --lifecycle`). Each activity draws, from a stream of its own, what its
/// device does beyond the above: another 15% are dismissed by the user, and
/// 40% of all dismissals reach the app only when it is next opened, 2 to 10
/// hours later (or not that day); 10% are ended by the app half-way while
/// the sender goes on; 10% have their push token rotated by the system, and
/// their sender switches to the new token 1 to 20 minutes later or, for
/// half of them, never (pushes to the old token are accepted and never
/// shown); 6% run a widget build that stops drawing new content states
/// while the app still reports each one (`content_update`); a third of the
/// senders of dismissed activities keep sending after the 410; and of the
/// push-to-start activities, 5% are accepted and never appear, 8% appear and
/// never get an update token, so nothing can update them. Without the flag
/// none of it happens and no number is drawn from that stream.
///
/// **Channels** (``SimulationConfig/channels``, `arrival simulate
/// --channels`, `ChannelFleet.swift`). After the fleet, on streams of their
/// own: five iOS 18 broadcast channels (two followed matches, one nobody
/// follows, a live blog near and over the 5,120-byte broadcast limit, a
/// transit line broadcasting all day), each broadcast logged once as an
/// `apns` record with `channel_id` or as an exchange to
/// `/4/broadcasts/apps/<bundle id>`, with retries, 413s, a second host
/// whose timestamps are not newer and broadcasts before anyone subscribed;
/// then `max(40, activities / 2)` subscribers, one device each, that join
/// while the event runs (in the app, or by a push-to-start to their token),
/// report `channel_subscription` or lose it (known then only from renders
/// carrying `channel_id`), go offline (the newest stored broadcast only),
/// are dismissed, leave, or outlive their 8 hours. Without the flag nothing
/// of it is drawn or written.
///
/// **Budget** (``SimulationConfig/budget``, `arrival simulate --budget`,
/// ``BudgetModel`` in `PushBudget.swift`). Apple's budget of priority-10
/// pushes as the model has it: a fifth of the fleet's activities (all-day
/// trackers aside) get a chatty sender, priority 10 every 40-80 s; a fifth
/// of the installs have "More Frequent Updates" off; each activity's device
/// shows priority-10 updates while a refilling budget lasts (40 an hour, 10
/// carried; 10 an hour, 4 carried with the switch off) and drops the rest
/// after APNs's 200. Records carry `frequent_pushes`, except from each app's
/// oldest build. Drawn from a budget stream per device (and per subscriber,
/// whose switch is only written: broadcasts are not budgeted); without the
/// flag nothing of it is drawn or written.
///
/// **Lines.** Every line goes through the instrumentation kit's encoder, so
/// the simulator writes the contract the way the kit does: a record the kit
/// would write byte for byte (UTC times with `Z` and milliseconds, `"v":1`, no
/// extra field) comes from the kit's own encoder (`RenderBeacon`,
/// `CallbackReport`, and for `apns` the `BeaconLine.apns` that `APNsLogRecord`
/// writes through); the others (local offsets, six fraction digits, a missing
/// `v`, unknown fields, the bad lines of ``GarbageKind``) are built field by
/// field with `BeaconLine`.
///
/// **Determinism.** All randomness comes from ``SplitMix64`` streams
/// derived from the seed; times are formatted with integer arithmetic; no
/// hash-ordered collection is ever iterated. The same configuration gives a
/// byte-identical tree (file modification times aside).
///
/// **Memory.** Devices are simulated one at a time, and each device's files
/// are written before the next device starts; `apns` records stream into at
/// most 25 open gzip writers. Memory therefore does not grow with the number
/// of activities, which may go to hundreds of thousands.
package struct FleetSimulator: Sendable {
    package let config: SimulationConfig

    package init(config: SimulationConfig) {
        self.config = config
    }

    /// Writes the simulated day under `outputDirectory` (created if needed)
    /// and describes what it wrote.
    ///
    /// When `outputDirectory` already holds `sender` or `devices` (an earlier
    /// run), this fails with ``SimulationError/outputNotEmpty(_:)`` unless
    /// `replacingExisting` is true, in which case those two subdirectories,
    /// and only those, are removed first. Leftovers of an earlier run with
    /// another seed would otherwise mix with the new fleet.
    package func run(outputDirectory: String, replacingExisting: Bool = false) throws -> SimulationSummary {
        guard config.activities >= 0 else { throw SimulationError.invalidActivityCount(config.activities) }
        guard let dayIndex = SimCalendar.parseDay(config.day) else { throw SimulationError.invalidDay(config.day) }
        guard !outputDirectory.isEmpty else { throw SimulationError.cannotCreate(outputDirectory) }
        let fileManager = FileManager.default
        var root = outputDirectory
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        for name in ["sender", "devices"] {
            let path = root + "/" + name
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            guard replacingExisting else { throw SimulationError.outputNotEmpty(path) }
            do { try fileManager.removeItem(atPath: path) } catch { throw SimulationError.cannotCreate(path) }
        }
        let senderDirectory = "\(root)/sender/\(config.day)"
        do {
            try fileManager.createDirectory(atPath: senderDirectory, withIntermediateDirectories: true)
            try fileManager.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        } catch {
            throw SimulationError.cannotCreate(senderDirectory)
        }
        let fleet = FleetRun(
            config: config, root: root, dayStartMs: dayIndex * Milliseconds.day,
            senderDirectory: senderDirectory)
        var summary = try fleet.run()
        summary.outputDirectory = outputDirectory
        return summary
    }
}

// MARK: - One run

/// What the sender meant to push: one request's content before APNs answers.
struct PushPlan {
    enum Event { case start, update, end }

    var seq: Int
    /// False when the sender's logger dropped `seq` (the payload still has it).
    var logsSeq: Bool
    var event: Event
    var sendMs: Int64
    var apsTimestamp: Int64
    var payloadBytes: Int
    var priority: Int
}

/// A push APNs accepted (status 200), and when.
struct AcceptedPush {
    var plan: PushPlan
    var acceptMs: Int64
    /// Sent to a token the system had rotated away (`--lifecycle`): accepted, never shown.
    var toRotatedToken = false

    init(plan: PushPlan, acceptMs: Int64) {
        self.plan = plan
        self.acceptMs = acceptMs
    }

    /// A push accepted through `channel`. Tencent Cloud Chat stamps
    /// `aps.timestamp` itself when it sends: the device sees the whole
    /// second of the accepted request's `sent_at`, as the contract derives.
    init(plan: PushPlan, acceptMs: Int64, channel: SenderChannel) {
        var plan = plan
        if channel == .tencentChat { plan.apsTimestamp = RFC3339.floorDivide(acceptMs, 1000).quotient }
        self.init(plan: plan, acceptMs: acceptMs)
    }
}

/// The sender's per-activity habits, fixed for all of its requests.
struct SenderContext {
    let activityID: String
    /// Whether `activity_id` is logged on update and end requests.
    let logsActivityID: Bool
    let topic: String
    /// `nil`: the field is left out (production is the default).
    let environment: String?
    let omitsPushType: Bool
    let omitsEventForUpdates: Bool
    let omitsPriority: Bool
    /// An old sender that does not retry 429/503/0/500.
    let neverRetries: Bool
    /// The token belongs to the other APNs environment.
    let badToken: Bool
    /// From here APNs answers 410 Unregistered (the user dismissed it).
    let unregisteredAtMs: Int64
    /// Who the sender talks to and how it logs it (``SenderChannel/apnsRecord``
    /// unless `--providers`).
    var channel: SenderChannel = .apnsRecord
    /// How an exchange-logging sender writes its requests (`--providers` only).
    var style = ExchangeStyle()
}

/// What APNs, or a provider in between, made of one request.
enum ProviderAnswer {
    case ok, badToken, unregistered, tooLarge, throttled, unavailable, timeout, serverError, authError
}

/// What the sender makes of the answer.
enum Perceived {
    case accepted, lostAtProvider, badToken, unregistered, tooLarge, retry
}

/// One request of a send, as the sender's retry loop drew it.
struct SendAttempt {
    let sendMs: Int64
    let payloadBytes: Int
    /// The hour of the day `sendMs` falls in.
    let hour: Int64
    let answer: ProviderAnswer
    /// Milliseconds to the answer; nil when none came and the sender logged no time.
    var latency: Int64?
}

enum SendOutcome {
    case accepted(Int64)
    /// Taken by a provider (a 200) that never gets it to the device.
    case lostAtProvider
    case rejected
    case badToken
    case unregistered
}

/// One device being simulated: its random stream and the lines it logs.
struct DeviceDay {
    var device: SimDevice
    var rng: SplitMix64
    /// Events per install (index into `device.installs`).
    var events: [[BeaconEvent]]
    var order = 0
    /// The device's budget stream (`--budget` only): its users' switches,
    /// then which of its activities get a chatty sender.
    var budgetRNG: SplitMix64? = nil
    /// A device planted far below the fleet (`--outliers`): the share of the
    /// content states its widget drops, and the stream that picks them.
    var plantedDrop: Double? = nil
    var plantRNG = SplitMix64(seed: 0)

    /// Why the widget does not draw `event`'s content state arriving at `ms`
    /// (the app still sees it arrive), as a phenomenon; nil when it draws it.
    /// An end is always drawn.
    mutating func undrawn(_ event: PushPlan.Event, at ms: Int64, stopsDrawingAt: Int64?) -> String? {
        guard event != .end else { return nil }
        // A widget build that stopped drawing new content states (`--lifecycle`).
        if let stopsDrawingAt, ms >= stopsDrawingAt { return "content_states_not_drawn" }
        // A device planted far below the fleet (`--outliers`): its widget drops its share.
        if let drop = plantedDrop, plantRNG.chance(drop) { return "content_states_dropped_by_planted_devices" }
        return nil
    }
}

final class FleetRun {
    let config: SimulationConfig
    let root: String
    let dayStartMs: Int64
    let dayEndMs: Int64
    let sender: SenderLog
    let deviceWriter: DeviceFileWriter
    var garbageCursor: Int
    var deviceStats = DeviceFileWriter.Stats()
    var phenomena: [String: Int] = [:]
    var devices = 0
    /// Devices planted far below the fleet so far (`--outliers`), and the share each drops.
    var planted = 0
    var plantedDevices: [SimulationSummary.PlantedDevice] = []
    /// The sender's own stream (request outcomes, apns-ids, latencies).
    var senderRNG: SplitMix64
    /// Which provider each activity's sender uses (`--providers` only).
    var providerRNG: SplitMix64
    /// What each activity's device does in its life (`--lifecycle` only).
    var lifecycleRNG: SplitMix64
    /// `exchange` lines written, by provider.
    var exchangeLines: [PushProvider: Int] = [:]
    /// Broadcast lines written and channels simulated (`--channels` only).
    var broadcastLines = 0
    var channelCount = 0

    init(config: SimulationConfig, root: String, dayStartMs: Int64, senderDirectory: String) {
        self.config = config
        self.root = root
        self.dayStartMs = dayStartMs
        self.dayEndMs = dayStartMs + Milliseconds.day
        self.sender = SenderLog(
            directory: senderDirectory, relativeDirectory: "sender/\(config.day)",
            dayStartMs: dayStartMs, rng: SplitMix64(seed: config.seed, stream: 2))
        self.deviceWriter = DeviceFileWriter(root: root, day: config.day)
        self.garbageCursor = Int(config.seed % UInt64(GarbageKind.allCases.count))
        self.senderRNG = SplitMix64(seed: config.seed, stream: 3)
        self.providerRNG = SplitMix64(seed: config.seed, stream: 5)
        self.lifecycleRNG = SplitMix64(seed: config.seed, stream: 6)
    }

    /// Live Activities per device and day. The simulated fleet is one of
    /// heavy users (a follower of several matches, a courier's customer): a
    /// committed 200-activity sample then stays small on disk, where every
    /// device costs at least four 4 KiB directory blocks.
    static let activitiesPerDevice: [(Int, Int)] = [
        (4, 4), (6, 7), (8, 10), (10, 12), (12, 14), (14, 14), (16, 12), (18, 10), (20, 8), (22, 5),
    ]

    func note(_ phenomenon: String, _ count: Int = 1) {
        phenomena[phenomenon, default: 0] += count
    }

    /// What APNs did with the fleet's pushes, as Apple's console counts it (`--apple-metrics`).
    var apple = AppleTally()

    /// Notes `phenomenon` of a Live Activity push accepted at `acceptMs`, and (with `--apple-metrics`)
    /// counts it in Apple's `statuses`.
    func note(_ phenomenon: String, apple acceptMs: Int64, _ statuses: [AppleTally.Status]) {
        note(phenomenon)
        if config.appleMetrics != nil { apple.push(acceptedAt: acceptMs, statuses) }
    }

    /// A push a newer one replaced before it reached the device: stored while it was offline, or held
    /// back (a priority-5 push waits for the device's power).
    func noteReplaced(_ push: AcceptedPush, wasOffline: Bool) {
        note(
            wasOffline ? "pushes_replaced_while_offline" : "pushes_replaced_before_delivery", apple: push.acceptMs,
            [wasOffline ? .storedOffline : .storedPower])
    }

    /// A push APNs hands over (from storage after an offline stretch), or finds its token gone: what the
    /// device then does with it (ended, not newer, over budget, not drawn) is not APNs' to count.
    func tallyReached(_ push: AcceptedPush, wasOffline: Bool) {
        guard config.appleMetrics != nil else { return }
        apple.push(
            acceptedAt: push.acceptMs,
            push.toRotatedToken
                ? [.discardedUnregistered] : wasOffline ? [.storedOffline, .deliveredFromStorage] : [.delivered])
    }

    func run() throws -> SimulationSummary {
        var remaining = config.activities
        var deviceIndex: UInt64 = 0
        while remaining > 0 {
            var rng = SplitMix64(seed: config.seed, stream: 1, index: deviceIndex)
            let count = min(remaining, rng.weighted(FleetRun.activitiesPerDevice))
            var day = makeDevice(index: deviceIndex, rng: rng)
            if config.budget {
                drawSwitches(&day, SplitMix64(seed: config.seed, stream: 11, index: deviceIndex))
            }
            if planted < config.outliers && count >= Self.plantedMinimumActivities {
                plant(&day, SplitMix64(seed: config.seed, stream: 12, index: deviceIndex), index: deviceIndex)
            }
            try simulate(&day, activities: count)
            var fileRNG = SplitMix64(seed: config.seed, stream: 4, index: deviceIndex)
            for (index, install) in day.device.installs.enumerated() {
                try deviceWriter.write(
                    device: day.device, install: install, events: day.events[index],
                    rng: &fileRNG, garbageCursor: &garbageCursor, stats: &deviceStats)
            }
            remaining -= count
            deviceIndex += 1
            devices += 1
        }
        if config.channels { try simulateChannels() }
        let senderResult = try sender.finish()

        var summary = SimulationSummary()
        summary.day = config.day
        summary.seed = config.seed
        summary.activities = config.activities
        summary.devices = devices
        summary.plantedDevices = plantedDevices
        summary.senderFiles = senderResult.files
        summary.deviceFiles = deviceStats.files
        let exchanges = exchangeLines.values.reduce(0, +)
        summary.apnsRecords = senderResult.records - exchanges
        for (provider, count) in exchangeLines { summary.exchangeRecords[provider.rawValue] = count }
        summary.renderRecords = deviceStats.renders
        summary.callbackRecords = deviceStats.callbacks
        summary.overlapRecords = senderResult.overlapRecords
        summary.gzipMembers = senderResult.members
        for kind in deviceStats.garbage { summary.garbageLines[kind.label, default: 0] += 1 }
        summary.tornLines = deviceStats.torn
        summary.blankLines = deviceStats.blank
        summary.crlfFiles = deviceStats.crlf
        summary.broadcastLines = broadcastLines
        summary.channels = channelCount
        summary.phenomena = phenomena
        if let folder = config.appleMetrics {
            do {
                summary.appleFiles = try apple.write(into: folder)
            } catch {
                throw SimulationError.cannotCreate(folder)
            }
        }
        summary.bytesWritten = senderResult.bytes + deviceStats.bytes
        return summary
    }

    // MARK: Devices

    private func makeDevice(index: UInt64, rng seedRNG: SplitMix64) -> DeviceDay {
        var rng = seedRNG
        let id = rng.hex(bytes: 8)
        let model = rng.weighted(FleetCatalog.deviceModels)
        var os = rng.weighted(FleetCatalog.osVersions)
        while os.1 < model.minimumMajorOS { os = rng.weighted(FleetCatalog.osVersions) }
        // Device clocks: most are NTP-synced to within a few hundred ms, some
        // run seconds ahead, and one device in six (by index, so even a small
        // sample has some) runs up to 1.5 s behind.
        let clockRoll = rng.int(0...99)
        let clockOffset: Int64
        if index % 6 == 2 || clockRoll < 4 {
            clockOffset = -rng.int64(300...1500)
            note("clock_behind_devices")
        } else if clockRoll < 16 {
            clockOffset = rng.int64(1000...20_000)
        } else {
            clockOffset = rng.int64(-300...300)
        }
        let zone = rng.weighted(FleetCatalog.timeZones)
        let hasWatch = os.1 >= 18 && rng.chance(0.3)
        let usesStandby = os.1 >= 17 && rng.chance(0.25)
        let sandbox = rng.chance(0.03)

        var stretches: [(from: Int64, to: Int64)] = []
        let stretchCount = rng.weighted([(0, 12), (1, 22), (2, 25), (3, 20), (4, 12), (5, 9)])
        for _ in 0..<stretchCount {
            let from = dayStartMs + rng.int64(0...(Milliseconds.day - Milliseconds.hour))
            stretches.append((from, from + rng.int64(180_000...4_500_000)))
        }
        let merged = offlineStretches(merging: stretches)
        note("offline_stretches", merged.count)
        var deadAt = Int64.max
        if rng.chance(0.04) {
            deadAt = dayStartMs + rng.int64(21_600_000...82_800_000)
            note("dead_batteries")
        }

        var installs: [SimInstall] = []
        var usedApps: [Int] = []
        let installCount = rng.weighted([(1, 55), (2, 37), (3, 8)])
        while installs.count < installCount {
            let appIndex = rng.weighted(FleetCatalog.appWeights)
            if usedApps.contains(appIndex) { continue }
            usedApps.append(appIndex)
            let app = FleetCatalog.apps[appIndex]
            let versionIndex = rng.weighted(app.versions.indices.map { ($0, app.versions[$0].1) })
            var upgrade: (atMs: Int64, to: SimAppVersion)?
            if versionIndex + 1 < app.versions.count && rng.chance(0.08) {
                upgrade = (dayStartMs + rng.int64(28_800_000...72_000_000), app.versions[app.versions.count - 1].0)
                note("app_upgrades")
            }
            installs.append(
                SimInstall(
                    app: app, version: app.versions[versionIndex].0, upgrade: upgrade,
                    pushToStartToken: rng.hex(bytes: 32),
                    firstLaunchMs: dayStartMs + rng.int64(120_000...5_400_000)))
        }
        installs.sort { $0.app.name < $1.app.name }

        let device = SimDevice(
            id: id, model: model, osVersion: os.0, osMajor: os.1, clockOffsetMs: clockOffset,
            zoneMinutes: zone.0, zulu: zone.1, hasWatch: hasWatch, usesStandby: usesStandby, sandbox: sandbox,
            offline: merged, deadAtMs: deadAt, installs: installs)
        return DeviceDay(device: device, rng: rng, events: Array(repeating: [], count: installs.count))
    }

    /// `--budget`: the user's "More Frequent Updates" switch for each app on
    /// the device, drawn from the device's budget stream, which then goes on
    /// to pick its chatty senders.
    /// `--outliers`: a device with at least this many activities may be planted
    /// (one in four of them, until enough are), so that it has the deliverable
    /// updates the test needs.
    static let plantedMinimumActivities = 8

    /// Plants the device far below the fleet when its stream says so: its widget drops 40–90 % of what it is given.
    private func plant(_ day: inout DeviceDay, _ plantRNG: SplitMix64, index: UInt64) {
        var rng = plantRNG
        guard rng.chance(0.25) else { return }
        day.plantedDrop = 0.4 + 0.5 * rng.unit()
        day.plantRNG = SplitMix64(seed: config.seed, stream: 13, index: index)
        planted += 1
        plantedDevices.append(SimulationSummary.PlantedDevice(id: day.device.id, drop: day.plantedDrop ?? 0))
        note("outlier_devices_planted")
    }

    private func drawSwitches(_ day: inout DeviceDay, _ budgetRNG: SplitMix64) {
        var rng = budgetRNG
        for index in day.device.installs.indices {
            let value = BudgetModel.drawSwitch(&rng)
            day.device.installs[index].frequentPushes = value
            if value == .disabled { note("frequent_pushes_off_installs") }
        }
        day.budgetRNG = rng
    }

    private func simulate(_ day: inout DeviceDay, activities count: Int) throws {
        // Plan the device's activities: which app, how long, when.
        var plans: [(install: Int, startMs: Int64, longRun: Bool, durationMs: Int64)] = []
        for _ in 0..<count {
            let install = day.rng.below(day.device.installs.count)
            let app = day.device.installs[install].app
            let longRun = day.rng.chance(app.longRunShare)
            let durationMs: Int64 =
                longRun
                ? day.rng.int64(30_600_000...34_800_000)
                : Int64(day.rng.int(app.durationMinutes)) * Milliseconds.minute
            let latestStart = longRun ? 50_400_000 : Milliseconds.day - durationMs - 1_800_000
            let startMs = dayStartMs + day.rng.int64(600_000...max(600_000, latestStart))
            plans.append((install, startMs, longRun, durationMs))
        }
        plans.sort { $0.startMs < $1.startMs }

        // Each app reports its push-to-start token when it first runs today.
        for index in day.device.installs.indices {
            let install = day.device.installs[index]
            var launch = install.firstLaunchMs
            if let first = plans.first(where: { $0.install == index }) {
                launch = min(launch, first.startMs - Int64(day.rng.int(60_000...1_200_000)))
            }
            launch = max(launch, dayStartMs + 1000)
            if day.rng.chance(1 - install.version(at: launch).stateCallbackLoss) {
                callback(&day, install: index, .pushToStartToken(token: install.pushToStartToken), atMs: launch)
            }
        }

        for plan in plans {
            try simulateActivity(
                &day, install: plan.install, startMs: plan.startMs,
                longRun: plan.longRun, durationMs: plan.durationMs)
        }
    }

    // MARK: One activity

    private func simulateActivity(
        _ day: inout DeviceDay, install installIndex: Int, startMs: Int64, longRun: Bool, durationMs: Int64
    ) throws {
        let install = day.device.installs[installIndex]
        let app = install.app
        let activityID = app.idPrefix + day.rng.hex(bytes: 6)
        let updateToken = day.rng.hex(bytes: 32)
        let wantsPushToStart = day.rng.chance(app.pushToStartShare)
        let timestampBug = day.rng.chance(config.faults.timestampBugShare)
        let endRoll = day.rng.int(0...99)
        let endsByPush = longRun || endRoll < 84
        let endsInApp = !longRun && endRoll >= 84 && endRoll < 95
        let sendsAfterEnd = endsByPush && day.rng.chance(0.08)
        var dismissAt: Int64? =
            (!longRun && day.rng.chance(0.05))
            ? startMs + durationMs * Int64(day.rng.int(15...75)) / 100 : nil
        let life = config.lifecycle ? Lifecycle(&lifecycleRNG, startMs: startMs, durationMs: durationMs) : nil
        if let life, dismissAt == nil, !longRun, let extra = life.extraDismissAt { dismissAt = extra }
        // A chatty sender (`--budget`): a priority-10 update about every minute, drawn from the budget stream.
        var chatty = false
        if var budgetRNG = day.budgetRNG {
            chatty = budgetRNG.chance(BudgetModel.chattyShare) && !longRun
            day.budgetRNG = budgetRNG
        }
        let badToken = day.rng.chance(0.03)
        let sandboxEnvironment = day.device.sandbox
        var context = SenderContext(
            activityID: activityID,
            // All-day trackers come from a newer backend that logs activity ids.
            logsActivityID: longRun || day.rng.chance(app.logsActivityIDShare),
            topic: app.topic,
            environment: sandboxEnvironment ? "sandbox" : (day.rng.chance(0.6) ? "production" : nil),
            omitsPushType: day.rng.chance(0.1),
            omitsEventForUpdates: day.rng.chance(0.3),
            omitsPriority: day.rng.chance(0.01),
            neverRetries: day.rng.chance(0.1),
            badToken: badToken,
            unregisteredAtMs: dismissAt.map { $0 + day.rng.int64(120_000...900_000) } ?? Int64.max)
        if config.providers {
            context.channel = providerRNG.weighted(SenderChannel.shares)
            context.style = ExchangeStyle(rng: &providerRNG)
            note(context.channel.phenomenon)
        }
        // Tencent Cloud Chat cannot start an activity: its activities start in the app.
        let pushToStart = wantsPushToStart && context.channel != .tencentChat
        note("activities")
        if longRun { note("all_day_activities") }
        if badToken { note("bad_token_activities") }
        if dismissAt != nil { note("user_dismissals") }
        if let life {
            if life.dismissalLearnedLateMs != nil, dismissAt != nil { note("dismissals_learned_late") }
            if life.appEndsAtMs != nil { note("ended_by_app_midway") }
            if life.rotation != nil { note("tokens_rotated") }
            if life.widgetStopsDrawingAtMs != nil { note("widget_stops_drawing") }
        }
        if !context.logsActivityID { note("activities_without_logged_activity_id") }
        if chatty { note("chatty_senders") }

        let device = day.device
        var accepted: [AcceptedPush] = []
        let deviceStartMs: Int64
        var shownTimestamp = Int64.min
        let tokenKnownMs: Int64

        // Phase 1: the activity starts, by a push-to-start push or in the app.
        if pushToStart {
            note("push_to_start_activities")
            let plan = PushPlan(
                seq: 0, logsSeq: true, event: .start, sendMs: startMs, apsTimestamp: startMs / 1000,
                payloadBytes: day.rng.int(900...1900), priority: 10)
            let outcome = try send(plan, token: install.pushToStartToken, context: context)
            guard case .accepted(let acceptMs) = outcome else {
                note("starts_never_accepted")
                return
            }
            let arrival = device.reachable(
                at: acceptMs + deliveryDelay(priority: 10, rng: &day.rng),
                reconnectMs: day.rng.int64(2000...25_000))
            guard arrival.ms < device.deadAtMs, !day.rng.chance(0.01) else {
                note("starts_never_delivered")
                return
            }
            if let life, life.startNeverAppears {
                // Accepted, delivered, and refused on the device (its start budget, attributes it cannot decode).
                note("starts_accepted_never_appeared")
                return
            }
            deviceStartMs = arrival.ms
            shownTimestamp = plan.apsTimestamp
            render(&day, install: installIndex, activityID: activityID, seq: 0, event: .start, atMs: deviceStartMs)
            tokenKnownMs = deviceStartMs + day.rng.int64(1000...4000)
        } else {
            guard startMs < device.deadAtMs else {
                note("activities_not_started_battery")
                return
            }
            deviceStartMs = startMs
            render(
                &day, install: installIndex, activityID: activityID, seq: 0, event: .start,
                atMs: startMs + day.rng.int64(80...600))
            tokenKnownMs =
                device.reachable(
                    at: startMs + day.rng.int64(500...3000),
                    reconnectMs: day.rng.int64(2000...25_000)
                ).ms
        }
        let version = install.version(at: deviceStartMs)
        if day.rng.chance(1 - version.stateCallbackLoss) {
            callback(
                &day, install: installIndex, .activityState(activityID: activityID, state: .active),
                atMs: deviceStartMs + day.rng.int64(20...250))
        }
        if let life, pushToStart, life.startNeverGetsToken {
            // It shows, and no update token ever comes: the sender can never update it, and the system
            // takes it away after its 8 hours.
            note("starts_without_update_token")
            callback(
                &day, install: installIndex, .activityState(activityID: activityID, state: .ended),
                atMs: deviceStartMs + 28_800_000, lossy: true)
            return
        }
        if day.rng.chance(1 - version.tokenCallbackLoss) {
            callback(
                &day, install: installIndex, .pushToken(activityID: activityID, token: updateToken),
                atMs: deviceStartMs + day.rng.int64(250...2500))
        } else {
            note("push_token_callbacks_lost")
        }
        // The system rotates the token; the app reports the new one, and the sender takes it up late, or never.
        let rotation = life?.rotation.map { rotation in
            (
                atMs: tokenKnownMs + rotation.afterMs,
                senderSwitchesMs: rotation.senderLagMs.map { tokenKnownMs + rotation.afterMs + $0 },
                token: rotation.token
            )
        }
        if let rotation {
            callback(
                &day, install: installIndex, .pushToken(activityID: activityID, token: rotation.token),
                atMs: rotation.atMs + 200, lossy: true)
            if rotation.senderSwitchesMs == nil { note("senders_never_switch_token") }
        }

        // Phase 2: the sender's updates, then its end.
        let interval: ClosedRange<Int> =
            longRun ? 1200...1800 : chatty ? BudgetModel.chattyInterval : app.updateInterval
        let planEnd = startMs + durationMs
        let sendLimit = dayEndMs - 900_000
        let bugAt = timestampBug ? day.rng.int(2...4) : -1
        var t = tokenKnownMs + day.rng.int64(20_000...90_000)
        var seq = 0
        var previous: (sendMs: Int64, apsTimestamp: Int64)?
        var badTokenAnswers = 0
        var stopped = false
        var sendsAfter410 = 0
        while t < planEnd && t < sendLimit {
            seq += 1
            var sendMs = t
            var apsTimestamp = t / 1000
            if seq == bugAt, let previous {
                if day.rng.chance(0.5) {
                    apsTimestamp = previous.apsTimestamp  // cached timestamp reused
                    // Tencent Cloud Chat stamps the payload itself: the sender's cache is moot.
                    if context.channel != .tencentChat { note("timestamp_reused") }
                } else {
                    sendMs = previous.sendMs + day.rng.int64(300...900)  // second host, clock behind
                    apsTimestamp = previous.apsTimestamp - Int64(day.rng.int(0...2))
                    note("timestamp_from_slow_host")
                }
            }
            let plan = PushPlan(
                seq: seq, logsSeq: !day.rng.chance(0.012), event: .update, sendMs: sendMs,
                apsTimestamp: apsTimestamp, payloadBytes: payloadSize(app, rng: &day.rng),
                priority: day.rng.chance(app.priority10Share) || chatty ? 10 : 5)
            if !plan.logsSeq { note("updates_logged_without_seq") }
            // After a rotation the sender uses the old token until it switches (if it ever does).
            let oldTokenInUse =
                rotation.map { sendMs >= $0.atMs && sendMs < ($0.senderSwitchesMs ?? Int64.max) } ?? false
            let token =
                rotation.map { sendMs >= ($0.senderSwitchesMs ?? Int64.max) ? $0.token : updateToken } ?? updateToken
            switch try send(plan, token: token, context: context) {
            case .accepted(let acceptMs):
                var push = AcceptedPush(plan: plan, acceptMs: acceptMs, channel: context.channel)
                push.toRotatedToken = oldTokenInUse
                accepted.append(push)
            case .rejected, .lostAtProvider: break
            case .badToken:
                badTokenAnswers += 1
                if badTokenAnswers >= 2 { stopped = true }
            case .unregistered:
                // A sender that does not purge dead tokens goes on for a few more updates.
                if let life, life.ignores410, sendsAfter410 < life.sendsAfter410 {
                    if sendsAfter410 == 0 { note("senders_ignoring_410") }
                    sendsAfter410 += 1
                } else {
                    stopped = true
                }
            }
            if stopped { break }
            previous = (sendMs, apsTimestamp)
            t = max(t, sendMs) + Int64(day.rng.int(interval)) * 1000 + day.rng.int64(0...999)
        }
        var inAppEndMs: Int64?
        if !stopped {
            let endSend = min(max(t, planEnd), sendLimit)
            if endsByPush {
                seq += 1
                let plan = PushPlan(
                    seq: seq, logsSeq: !day.rng.chance(0.012), event: .end, sendMs: endSend,
                    apsTimestamp: endSend / 1000, payloadBytes: day.rng.int(300...900), priority: 10)
                if case .accepted(let endAccept) = try send(plan, token: updateToken, context: context) {
                    accepted.append(AcceptedPush(plan: plan, acceptMs: endAccept, channel: context.channel))
                    if sendsAfterEnd {
                        note("sends_after_end")
                        seq += 1
                        let lateMs = endAccept + day.rng.int64(2000...120_000)
                        let late = PushPlan(
                            seq: seq, logsSeq: true, event: .update, sendMs: lateMs,
                            apsTimestamp: lateMs / 1000, payloadBytes: payloadSize(app, rng: &day.rng),
                            priority: 10)
                        if case .accepted(let lateAccept) = try send(late, token: updateToken, context: context) {
                            accepted.append(AcceptedPush(plan: late, acceptMs: lateAccept, channel: context.channel))
                        }
                    }
                }
            } else if endsInApp {
                inAppEndMs = endSend
                note("ended_in_app")
            }
        }

        // Phase 3: what the device makes of the accepted pushes.
        let systemEndMs = deviceStartMs + 28_800_000
        // The app may end the activity itself half-way, while the sender goes on (`--lifecycle`).
        let appEndsMs = life?.appEndsAtMs.flatMap { $0 > deviceStartMs ? $0 : nil }
        if let appEndsMs { inAppEndMs = min(inAppEndMs ?? Int64.max, appEndsMs) }
        var deviceEndMs = min(systemEndMs, min(dismissAt ?? Int64.max, inAppEndMs ?? Int64.max))
        var lastAppliedMs = deviceStartMs
        var staleReported = false
        var endApplied = false
        // The device's priority-10 budget for this activity (`--budget`), full at its start.
        var budget = install.frequentPushes.map { PushBudget(switch: $0, fullAt: deviceStartMs) }
        let pushes = accepted.sorted { ($0.acceptMs, $0.plan.seq) < ($1.acceptMs, $1.plan.seq) }
        for (k, push) in pushes.enumerated() where push.plan.event != .start {
            if day.rng.chance(0.025) {
                note("pushes_dropped_by_apns", apple: push.acceptMs, [.discardedExpired])
                continue
            }
            let arrival = device.reachable(
                at: push.acceptMs + deliveryDelay(priority: push.plan.priority, rng: &day.rng),
                reconnectMs: day.rng.int64(2000...25_000))
            if k + 1 < pushes.count && pushes[k + 1].acceptMs < arrival.ms {
                noteReplaced(push, wasOffline: arrival.wasOffline)
                continue
            }
            if arrival.ms >= device.deadAtMs {
                note("pushes_after_battery_died", apple: push.acceptMs, [.storedOffline])
                continue
            }
            tallyReached(push, wasOffline: arrival.wasOffline)
            if arrival.ms >= deviceEndMs {
                note("pushes_after_activity_gone")
                continue
            }
            if push.plan.event != .end && push.plan.apsTimestamp <= shownTimestamp {
                note("pushes_ignored_as_not_newer")
                continue
            }
            if push.toRotatedToken {
                note("pushes_to_rotated_token")
                continue
            }
            if push.plan.event == .update && push.plan.priority == 10, var spending = budget {
                // Over budget: dropped without a trace (APNs answered 200; nothing renders, the app hears nothing).
                let shows = spending.spend(atMs: arrival.ms)
                budget = spending
                if !shows {
                    note("pushes_dropped_over_budget")
                    continue
                }
            }
            let staleMs = lastAppliedMs + app.staleAfterSeconds * 1000
            if !staleReported && staleMs < arrival.ms && day.rng.chance(0.6) {
                staleReported = true
                callback(
                    &day, install: installIndex, .activityState(activityID: activityID, state: .stale),
                    atMs: staleMs, lossy: true)
            }
            shownTimestamp = push.plan.apsTimestamp
            lastAppliedMs = arrival.ms
            let event: PushPlan.Event = push.plan.event
            if let undrawn = day.undrawn(event, at: arrival.ms, stopsDrawingAt: life?.widgetStopsDrawingAtMs) {
                note(undrawn)
            } else {
                render(
                    &day, install: installIndex, activityID: activityID, seq: push.plan.seq, event: event,
                    atMs: arrival.ms)
            }
            if day.rng.chance(install.version(at: arrival.ms).contentUpdateRate * config.faults.contentCallbackScale) {
                callback(
                    &day, install: installIndex, .contentUpdate(activityID: activityID, seq: push.plan.seq),
                    atMs: arrival.ms + day.rng.int64(20...900))
            }
            if event == .end {
                endApplied = true
                deviceEndMs = arrival.ms
                callback(
                    &day, install: installIndex, .activityState(activityID: activityID, state: .ended),
                    atMs: arrival.ms + day.rng.int64(10...300), lossy: true)
                if day.rng.chance(0.3) {
                    callback(
                        &day, install: installIndex, .activityState(activityID: activityID, state: .dismissed),
                        atMs: arrival.ms + day.rng.int64(600_000...14_400_000), lossy: true)
                }
            }
        }
        if !endApplied {
            if let dismissAt, dismissAt <= deviceEndMs {
                // The app learns of a dismissal when it runs: at once, or when next opened (`--lifecycle`).
                callback(
                    &day, install: installIndex, .activityState(activityID: activityID, state: .dismissed),
                    atMs: dismissAt + (life?.dismissalLearnedLateMs ?? 0), lossy: true)
            } else if let inAppEndMs, inAppEndMs <= deviceEndMs {
                callback(
                    &day, install: installIndex, .activityState(activityID: activityID, state: .ended),
                    atMs: inAppEndMs, lossy: true)
            } else if systemEndMs <= deviceEndMs {
                callback(
                    &day, install: installIndex, .activityState(activityID: activityID, state: .ended),
                    atMs: systemEndMs, lossy: true)
            }
        }
    }

    private func payloadSize(_ app: SimApp, rng: inout SplitMix64) -> Int {
        if rng.chance(app.oversizeShare * config.faults.oversizeScale) { return rng.int(4097...5600) }
        if rng.chance(app.nearLimitShare) { return rng.int(3585...4096) }
        return rng.int(app.payloadBytes)
    }

    /// Time from APNs accepting a push to the device having it: priority 10
    /// is delivered at once (a few hundred ms, sometimes seconds); priority 5
    /// is opportunistic (seconds to minutes).
    func deliveryDelay(priority: Int, rng: inout SplitMix64) -> Int64 {
        let roll = rng.int(0...99)
        if priority == 10 {
            if roll < 70 { return rng.int64(120...900) }
            if roll < 95 { return rng.int64(900...2500) }
            return rng.int64(2500...8000)
        }
        if roll < 45 { return rng.int64(500...5000) }
        if roll < 85 { return rng.int64(5 * Milliseconds.second...Milliseconds.minute) }
        return rng.int64(Milliseconds.minute...7 * Milliseconds.minute)
    }

    // MARK: Sender

    /// Sends one push as the sender would, retrying as it would, and logs one
    /// line per HTTP request: an `apns` record (``logAPNsRecord``), or with
    /// `--providers` most often an `exchange` line (``logExchange``). What
    /// APNs or the provider answers is drawn here, the same for every
    /// channel; the line written says what the sender makes of it.
    func send(_ plan: PushPlan, token: String, context: SenderContext) throws -> SendOutcome {
        var rng = senderRNG
        defer { senderRNG = rng }
        var sendMs = plan.sendMs
        var payload = plan.payloadBytes
        var failures = 0
        while true {
            let latency: Int64 = rng.chance(0.9) ? rng.int64(8...140) : rng.int64(140...900)
            let hour = (sendMs - dayStartMs) / Milliseconds.hour
            let answer = answer(plan, context: context, sendMs: sendMs, payload: payload, hour: hour, &rng)
            var attempt = SendAttempt(
                sendMs: sendMs, payloadBytes: payload, hour: hour, answer: answer, latency: latency)
            let perceived =
                context.channel == .apnsRecord
                ? try logAPNsRecord(plan, token: token, context: context, &attempt, &rng)
                : try logExchange(plan, token: token, context: context, &attempt, &rng)

            switch perceived {
            case .accepted:
                if context.channel.provider == .apns && payload > 3584 { note("accepted_near_payload_limit") }
                return .accepted(sendMs)
            case .lostAtProvider:
                note("pushes_taken_by_provider_never_sent")
                return .lostAtProvider
            case .badToken:
                return .badToken
            case .unregistered:
                return .unregistered
            case .tooLarge:
                note("payloads_trimmed_after_413")
                payload = rng.int(2400...3584)
                sendMs += (attempt.latency ?? 0) + rng.int64(150...900)
            case .retry:
                note(answer == .authError ? "fcm_auth_failures" : "retryable_failures")
                failures += 1
                if context.neverRetries || failures >= 4 {
                    note("updates_given_up")
                    return .rejected
                }
                let waited: Int64 = answer == .timeout ? 10_000 : (attempt.latency ?? 0)
                sendMs += waited + (Int64(1000) << Int64(failures - 1)) + rng.int64(0...999)
            }
        }
    }

    /// What APNs, or the provider in between, makes of a request sent at
    /// `sendMs` with a payload of `payload` bytes: the sender's own faults
    /// first, then throttling (more in the evening peak) and the service's
    /// failures.
    private func answer(
        _ plan: PushPlan, context: SenderContext, sendMs: Int64, payload: Int, hour: Int64, _ rng: inout SplitMix64
    ) -> ProviderAnswer {
        let tooMany = (hour >= 17 && hour <= 20) ? 0.08 : 0.03
        if context.badToken && plan.event != .start { return .badToken }
        if sendMs >= context.unregisteredAtMs { return .unregistered }
        if payload > 4096 { return .tooLarge }
        if context.channel == .fcm && fcmAuthOutage.contains(sendMs) { return .authError }
        let roll = rng.unit()
        if roll < tooMany { return .throttled }
        if roll < tooMany + 0.012 { return .unavailable }
        if roll < tooMany + 0.022 { return .timeout }
        if roll < tooMany + 0.027 { return .serverError }
        return .ok
    }

    /// Logs `attempt` as the `apns` record a sender that talks to APNs
    /// itself computes, and says what the sender makes of the answer.
    private func logAPNsRecord(
        _ plan: PushPlan, token: String, context: SenderContext, _ attempt: inout SendAttempt,
        _ rng: inout SplitMix64
    ) throws -> Perceived {
        let (status, reason, perceived): (Int, String?, Perceived) =
            switch attempt.answer {
            case .ok: (200, nil, .accepted)
            case .badToken: (400, "BadDeviceToken", .badToken)
            case .unregistered: (410, "Unregistered", .unregistered)
            case .tooLarge: (413, "PayloadTooLarge", .tooLarge)
            case .throttled: (429, "TooManyRequests", .retry)
            case .unavailable, .authError: (503, "ServiceUnavailable", .retry)
            case .timeout: (0, transportError(&attempt.latency, &rng), .retry)
            case .serverError: (500, nil, .retry)
            }
        let apnsID = rng.uuid()
        let event: String? =
            switch plan.event {
            case .start: "start"
            case .end: "end"
            case .update: context.omitsEventForUpdates ? nil : "update"
            }
        var line = BeaconLine(capacity: 400)
        line.apns(
            apnsID: apnsID, sentAt: attempt.sendMs, status: status, reason: reason, pushToken: token,
            activityID: plan.event == .start || context.logsActivityID ? context.activityID : nil,
            seq: plan.logsSeq ? plan.seq : nil, event: event, apsTimestamp: Int(plan.apsTimestamp),
            payloadBytes: attempt.payloadBytes, topic: context.topic,
            pushType: context.omitsPushType ? nil : "liveactivity",
            priority: context.omitsPriority ? nil : plan.priority, environment: context.environment,
            latencyMS: attempt.latency.map { Int($0) })
        try log(&line, attempt, &rng)
        return perceived
    }

    /// A request that got no answer: half the time the sender logs the
    /// transport error its client reported at the 10 s timeout, otherwise
    /// nothing, not even a latency.
    func transportError(_ latency: inout Int64?, _ rng: inout SplitMix64) -> String? {
        guard rng.chance(0.5) else {
            latency = nil
            return nil
        }
        let error = rng.pick(FleetCatalog.transportErrors)
        latency = 10_000
        return error
    }

    /// Appends the line of `attempt` to the sender's batches.
    func log(_ line: inout BeaconLine, _ attempt: SendAttempt, _ rng: inout SplitMix64) throws {
        // A sender release deployed at 18:00 logs which host sent the
        // request: a field the contract does not know, to be ignored.
        if attempt.hour >= 18 { line.string("sender_host", "push-\(rng.int(1...6))") }
        try sender.append(line.finish(), sentAtMs: attempt.sendMs)
    }

    // MARK: Device-side lines

    private func append(
        _ day: inout DeviceDay, install: Int, fromWidget: Bool, atMs: Int64,
        line: [UInt8], activityID: String, seq: Int
    ) {
        day.events[install].append(
            BeaconEvent(
                trueMs: atMs, order: day.order, fromWidget: fromWidget, line: line,
                activityID: activityID, seq: seq))
        day.order += 1
    }

    /// The widget renders a content state on the surfaces visible at that
    /// moment, and each surface's `onAppear` appends a render beacon.
    func render(
        _ day: inout DeviceDay, install: Int, activityID: String, seq: Int,
        event: PushPlan.Event, atMs: Int64, channel: ChannelID? = nil
    ) {
        let device = day.device
        guard atMs < device.deadAtMs, atMs < dayEndMs else { return }
        if day.rng.chance(0.015) {
            note("renders_with_all_beacons_lost")
            return
        }
        var surfaces: [String] = []
        if event == .end {
            surfaces.append("lock_screen")
            if device.model.hasIsland && day.rng.chance(0.3) { surfaces.append("island_expanded") }
        } else {
            let locked = day.rng.chance(0.6)
            if locked || !device.model.hasIsland { surfaces.append("lock_screen") }
            if device.model.hasIsland && !locked {
                surfaces.append(day.rng.chance(0.85) ? "island_compact" : "island_minimal")
                if day.rng.chance(0.15) { surfaces.append("island_expanded") }
            }
            let localMs = atMs + Int64(device.zoneMinutes) * Milliseconds.minute
            let localHour = RFC3339.floorDivide(localMs, Milliseconds.day).remainder / Milliseconds.hour
            if device.usesStandby && locked && (localHour >= 22 || localHour < 7) && day.rng.chance(0.6) {
                surfaces.append("standby")
            }
            if device.hasWatch && day.rng.chance(0.25) { surfaces.append("watch") }
        }
        var renderMs = atMs
        for surface in surfaces {
            renderMs += day.rng.int64(30...450)
            if day.rng.chance(0.03) {
                note("render_beacons_lost")
                continue
            }
            guard renderMs < device.deadAtMs, renderMs < dayEndMs else { continue }
            let version = device.installs[install].version(at: renderMs)
            let style = device.timeStyle(version)
            let info = device.info(version, withModel: !version.omitsDeviceModel)
            let frequentPushes = device.installs[install].frequentPushesField(version)
            let deviceMs = renderMs + device.clockOffsetMs
            let line: [UInt8]
            if style.isContractUTC && !version.omitsVersionField && !version.addsUnknownField {
                // Exactly what the kit writes for the widget.
                let beacon = RenderBeacon(
                    activityID: activityID, seq: seq, renderedAt: SimCalendar.date(ms: deviceMs),
                    surface: surface, channel: channel, device: info, frequentPushes: frequentPushes)
                line = BeaconLine.withoutLineEnd(beacon.jsonLine())
            } else {
                var record = BeaconLine()
                if !version.omitsVersionField { record.int("v", 1) }
                record.string("kind", "render")
                record.string("activity_id", activityID)
                record.int("seq", seq)
                record.time(
                    "rendered_at", ms: deviceMs, style: style,
                    subMillisecond: version.micros ? day.rng.int(0...999) : 0)
                record.string("surface", surface)
                record.optionalString("channel_id", channel?.rawValue)
                info.append(to: &record)
                record.optionalString("frequent_pushes", frequentPushes?.rawValue)
                if version.addsUnknownField { record.string("build", "4210.7") }
                line = record.finish()
            }
            append(
                &day, install: install, fromWidget: true, atMs: renderMs, line: line,
                activityID: activityID, seq: seq)
        }
    }

    /// The app observed an ActivityKit callback and logs it. `lossy`
    /// callbacks reach the log with the app version's state-callback rate
    /// (the app is often not running when the state changes).
    func callback(
        _ day: inout DeviceDay, install: Int, _ callback: CallbackReport.Callback, atMs: Int64,
        lossy: Bool = false, channel: ChannelID? = nil
    ) {
        let device = day.device
        guard atMs < device.deadAtMs, atMs < dayEndMs else { return }
        let version = device.installs[install].version(at: atMs)
        if lossy && day.rng.chance(version.stateCallbackLoss) {
            note("state_callbacks_lost")
            return
        }
        let style = device.timeStyle(version)
        let info = device.info(version, withModel: version.callbacksCarryDeviceModel)
        let frequentPushes = device.installs[install].frequentPushesField(version)
        let deviceMs = atMs + device.clockOffsetMs
        let line: [UInt8]
        if style.isContractUTC && !version.omitsVersionField {
            // Exactly what the kit writes for the app.
            let report = CallbackReport(
                callback, receivedAt: SimCalendar.date(ms: deviceMs), channel: channel, device: info,
                frequentPushes: frequentPushes)
            line = BeaconLine.withoutLineEnd(report.jsonLine())
        } else {
            var record = BeaconLine()
            if !version.omitsVersionField { record.int("v", 1) }
            record.string("kind", "callback")
            callback.append(to: &record)
            if callback.ownChannel == nil { record.optionalString("channel_id", channel?.rawValue) }
            record.time(
                "received_at", ms: deviceMs, style: style,
                subMillisecond: version.micros ? day.rng.int(0...999) : 0)
            info.append(to: &record)
            record.optionalString("frequent_pushes", frequentPushes?.rawValue)
            line = record.finish()
        }
        append(
            &day, install: install, fromWidget: false, atMs: atMs, line: line,
            activityID: callback.activityID ?? "", seq: callback.seq ?? 0)
    }
}

extension CallbackReport.Callback {
    fileprivate var activityID: String? {
        switch self {
        case .pushToken(let activityID, _), .contentUpdate(let activityID, _), .activityState(let activityID, _),
            .channelSubscription(let activityID, _):
            activityID
        case .pushToStartToken:
            nil
        }
    }

    fileprivate var seq: Int? {
        if case .contentUpdate(_, let seq) = self { return seq }
        return nil
    }
}

/// What one activity's device does in its life (`--lifecycle`), drawn from
/// the lifecycle stream alone, in a fixed order, whether or not a draw is
/// used.
struct Lifecycle {
    struct Rotation {
        /// From the token being known to its rotation.
        var afterMs: Int64
        /// From the rotation to the sender using the new token; nil: never.
        var senderLagMs: Int64?
        var token: String
    }

    var extraDismissAt: Int64?
    var dismissalLearnedLateMs: Int64?
    var appEndsAtMs: Int64?
    var rotation: Rotation?
    var widgetStopsDrawingAtMs: Int64?
    var ignores410: Bool
    var sendsAfter410: Int
    var startNeverAppears: Bool
    var startNeverGetsToken: Bool

    init(_ rng: inout SplitMix64, startMs: Int64, durationMs: Int64) {
        let dismisses = rng.chance(0.15)
        let dismissAt = startMs + durationMs * Int64(rng.int(15...75)) / 100
        extraDismissAt = dismisses ? dismissAt : nil
        let late = rng.chance(0.4)
        let lateBy = rng.int64(7_200_000...36_000_000)
        dismissalLearnedLateMs = late ? lateBy : nil
        let appEnds = rng.chance(0.10)
        let appEndAt = startMs + durationMs * Int64(rng.int(30...70)) / 100
        appEndsAtMs = appEnds ? appEndAt : nil
        let rotates = rng.chance(0.10)
        let rotateAfter = durationMs * Int64(rng.int(20...60)) / 100
        let switches = rng.chance(0.5)
        let lag = rng.int64(Milliseconds.minute...20 * Milliseconds.minute)
        let token = rng.hex(bytes: 32)
        rotation = rotates ? Rotation(afterMs: rotateAfter, senderLagMs: switches ? lag : nil, token: token) : nil
        let stopsDrawing = rng.chance(0.06)
        let stopsAt = startMs + durationMs * Int64(rng.int(10...60)) / 100
        widgetStopsDrawingAtMs = stopsDrawing ? stopsAt : nil
        ignores410 = rng.chance(0.33)
        sendsAfter410 = rng.int(2...6)
        startNeverAppears = rng.chance(0.05)
        startNeverGetsToken = rng.chance(0.08)
    }
}

/// Offline stretches in time order, those that overlap or lie within a
/// minute of each other made one (a phone that is back for less than a
/// minute never got to fetch anything).
func offlineStretches(merging stretches: [(from: Int64, to: Int64)]) -> [(from: Int64, to: Int64)] {
    var merged: [(from: Int64, to: Int64)] = []
    for stretch in stretches.sorted(by: { $0.from < $1.from }) {
        if let last = merged.last, stretch.from <= last.to + Milliseconds.minute {
            merged[merged.count - 1].to = max(last.to, stretch.to)
        } else {
            merged.append(stretch)
        }
    }
    return merged
}

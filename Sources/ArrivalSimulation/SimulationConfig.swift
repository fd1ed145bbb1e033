import ArrivalModel

/// What to simulate: how many Live Activities, which random seed, which day,
/// and how the fleet deviates from the normal one.
///
/// The same configuration always produces a byte-identical output tree (see
/// ``FleetSimulator``); a different seed produces a different fleet. How to
/// treat an earlier run in the output directory is not part of the fleet:
/// it is ``FleetSimulator/run(outputDirectory:replacingExisting:)``'s to say.
///
/// The initializer takes what names a fleet; ``faults`` and ``providers``
/// keep their defaults (the normal fleet, `apns` records only) unless set.
package struct SimulationConfig: Sendable, Equatable {
    /// Number of Live Activities to simulate. Each produces about ten `apns`
    /// records on average (start, updates, retries, end). 200 gives a sample
    /// tree small enough to commit; 200,000 gives about two million `apns`
    /// records for load tests (Benchmarks/README.md has the exact counts;
    /// memory stays bounded: see ``FleetSimulator``).
    package var activities: Int
    /// Seed of the simulator's own generator (SplitMix64).
    package var seed: UInt64
    /// The simulated UTC day, `YYYY-MM-DD`. Every `sent_at` falls inside it.
    package var day: String
    /// Regressions to inject (for testing diffs and gates). Default: none,
    /// the normal fleet.
    package var faults = SimulationFaults()
    /// Senders that go through push providers: most activities' requests
    /// are logged as `exchange` lines with APNs, FCM HTTP v1 or Tencent
    /// Cloud Chat, the rest as `apns` records (see ``FleetSimulator``).
    /// Default: false, which writes only `apns` records (the golden fleets'
    /// bytes depend on it).
    package var providers = false
    /// The device's side of an activity's life (contract 3.0): users who
    /// dismiss activities (the app often learning of it only when next
    /// opened, hours later), apps that end activities while the sender goes
    /// on, push tokens the system rotates (the sender switching late or
    /// never), a widget build that stops drawing new content states while
    /// the app still sees them, senders that keep sending to a token after
    /// its 410, and push-to-start activities that never appear or never get
    /// an update token (see ``FleetSimulator``). Default: false, which
    /// writes what the simulator always wrote, byte for byte.
    package var lifecycle = false
    /// iOS 18 broadcast channels (contract 3.0): after the fleet above,
    /// channels per app (matches, a live blog, a transit line) whose
    /// broadcaster logs one broadcast per update, as `apns` records with a
    /// `channel_id` or as exchanges with `/4/broadcasts/apps/<bundle id>`,
    /// and subscriber activities on devices of their own that join while the
    /// event runs (see ``FleetSimulator``). Default: false, which writes
    /// what the simulator always wrote, byte for byte.
    package var channels = false
    /// Apple's budget of priority-10 pushes, as ``BudgetModel`` models it
    /// (contract 3.1): a fifth of the senders send a priority-10 update about
    /// every minute; each device lets an activity show a limited number of
    /// priority-10 updates per hour, fewer where the user turned "More
    /// Frequent Updates" off, and drops the rest silently (APNs still
    /// answered 200); renders and callbacks carry `frequent_pushes` as the
    /// kit writes it, except from the apps' oldest builds. Default: false,
    /// which writes what the simulator always wrote, byte for byte.
    package var budget = false
    /// Devices planted far below the fleet (contract 3.2's `outliers`): each
    /// runs a widget that draws only some of the content states it is given,
    /// dropping 40–90 % of them (the app still hears of each). Drawn from
    /// streams of their own (12: which devices and how much, 13: which
    /// updates), so 0, the default, writes what the simulator always wrote.
    package var outliers = 0
    /// Write into this directory the exports Apple's Push Notifications Console would give for the
    /// fleet (issue 54): what APNs did with each push, counted where the simulator decides it. Outside
    /// the fleet's folder, which `arrival ingest` reads whole.
    package var appleMetrics: String?

    /// `activities` Live Activities from `seed` on `day`, with the normal
    /// fleet's faults and `apns` records only.
    package init(activities: Int = 200, seed: UInt64 = 1, day: String = "2026-11-21") {
        self.activities = activities
        self.seed = seed
        self.day = day
    }
}

/// Delivery regressions the simulator can inject, so that `arrival diff` and
/// `arrival gate` can be tried on a batch known to be worse. The defaults are
/// the simulator's normal fleet: with them the output is byte-identical to a
/// run without faults.
package struct SimulationFaults: Sendable, Equatable {
    /// Share of activities whose sender reuses or swaps `aps.timestamp`
    /// values (stale-timestamp drops). Normal: 0.08.
    package var timestampBugShare: Double = 0.08
    /// Factor on each app's share of payloads over 4 KB (413s). Normal: 1.
    package var oversizeScale: Double = 1
    /// Factor on the rate at which the app reports `content_update`
    /// callbacks (below 1 loses more callbacks). Normal: 1.
    package var contentCallbackScale: Double = 1

    /// The normal fleet; ``inject(_:)`` makes it worse.
    package init() {}

    /// The named regressions of `arrival simulate --inject`.
    package enum Injection: String, CaseIterable, Sendable {
        /// Half of all activities get a sender with the timestamp bug.
        case staleTimestamps = "stale-timestamps"
        /// Ten times as many payloads over 4 KB.
        case largePayloads = "large-payloads"
        /// The app reports half as many content-update callbacks.
        case lostCallbacks = "lost-callbacks"
    }

    package mutating func inject(_ injection: Injection) {
        switch injection {
        case .staleTimestamps: timestampBugShare = 0.5
        case .largePayloads: oversizeScale = 10
        case .lostCallbacks: contentCallbackScale = 0.5
        }
    }
}

/// Why a simulation could not run.
package enum SimulationError: Error, CustomStringConvertible, Sendable {
    case invalidDay(String)
    case invalidActivityCount(Int)
    case outputNotEmpty(String)
    case cannotCreate(String)
    case cannotRead(String)

    /// The diagnostic's message (`SimulationError+Diagnostic.swift` words each case once).
    package var description: String { diagnostic.message }
}

/// What a simulation wrote: files, lines by kind, planted defects and the
/// phenomena it simulated (intent counts; the report's outcome counts come
/// from the contract's rules applied to the files, not from these).
package struct SimulationSummary: Sendable, Equatable, CustomStringConvertible {
    /// The output directory as given.
    package var outputDirectory: String = ""
    package var day: String = ""
    package var seed: UInt64 = 0
    package var activities: Int = 0
    package var devices: Int = 0
    /// Sender files, relative to the output directory, sorted.
    package var senderFiles: [String] = []
    /// Number of device files (`widget-<pid>.jsonl`, `app-<pid>.jsonl`).
    package var deviceFiles: Int = 0
    /// `apns` records written to the hourly batches (copies not counted).
    package var apnsRecords: Int = 0
    /// `exchange` lines written to the hourly batches (copies not counted),
    /// by provider (`apns`, `fcm`, `tencent_chat`); empty without `--providers`.
    package var exchangeRecords: [String: Int] = [:]
    /// Valid `render` lines written (a torn last line is not counted here).
    package var renderRecords: Int = 0
    /// Valid `callback` lines written (a torn last line is not counted here).
    package var callbackRecords: Int = 0
    /// `apns` records repeated in the overlapping re-export (record duplicates).
    package var overlapRecords: Int = 0
    /// Gzip members in the hourly batches (more members than files means
    /// some files are concatenated batches).
    package var gzipMembers: Int = 0
    /// Planted bad lines, by kind of defect (`not_json`, `json_array`, ...).
    package var garbageLines: [String: Int] = [:]
    /// Records cut mid-JSON at the end of a device file (no final newline).
    package var tornLines: Int = 0
    /// Blank lines planted in device files.
    package var blankLines: Int = 0
    /// Device files written with `\r\n` line ends.
    package var crlfFiles: Int = 0
    /// Broadcast lines (`apns` records with a `channel_id` and broadcast
    /// exchanges, copies not counted), on how many channels; zero without
    /// `--channels`. The broadcast records are also among ``apnsRecords``
    /// and the exchanges among ``exchangeRecords``.
    package var broadcastLines: Int = 0
    package var channels: Int = 0
    /// Simulated phenomena and how often each was set in motion.
    package var phenomena: [String: Int] = [:]
    /// `--outliers`: the devices planted far below the fleet and the share of
    /// content states each one's widget drops, in the order planted.
    package var plantedDevices: [PlantedDevice] = []
    /// The exports written with `--apple-metrics` (`apple/*.csv`).
    package var appleFiles: [String] = []

    package struct PlantedDevice: Equatable, Sendable {
        package var id: String
        package var drop: Double
    }
    /// Bytes written (all files, copies included).
    package var bytesWritten: Int64 = 0

    package init() {}

    /// Total planted garbage lines.
    package var totalGarbageLines: Int {
        garbageLines.values.reduce(0, +)
    }

    package var description: String {
        var lines: [String] = []
        lines.append(
            "simulated \(activities) activities on \(devices) devices for \(day) (seed \(seed)) into \(outputDirectory)"
        )
        if exchangeRecords.isEmpty {
            lines.append("  records: apns \(apnsRecords), render \(renderRecords), callback \(callbackRecords)")
        } else {
            let total = exchangeRecords.values.reduce(0, +)
            let byProvider = exchangeRecords.keys.sorted().map { "\($0) \(exchangeRecords[$0] ?? 0)" }
                .joined(separator: ", ")
            lines.append(
                "  records: apns \(apnsRecords), exchange \(total) (\(byProvider)), render \(renderRecords), callback \(callbackRecords)"
            )
        }
        if channels > 0 {
            lines.append("  broadcasts: \(broadcastLines) lines on \(channels) channels")
        }
        lines.append(
            "  files: \(senderFiles.count) sender (\(gzipMembers) gzip members in hourly batches), \(deviceFiles) device; \(bytesWritten) bytes"
        )
        for file in senderFiles { lines.append("    \(file)") }
        lines.append("  duplicates planted: \(overlapRecords) apns records repeated in the overlapping re-export")
        let garbage = garbageLines.keys.sorted().map { "\($0)=\(garbageLines[$0] ?? 0)" }.joined(separator: ", ")
        lines.append(
            "  bad input planted: \(totalGarbageLines) garbage lines (\(garbage)), \(tornLines) torn last lines, \(blankLines) blank lines, \(crlfFiles) CRLF files"
        )
        let simulated = phenomena.keys.sorted().map { "\($0)=\(phenomena[$0] ?? 0)" }.joined(separator: ", ")
        lines.append("  phenomena: \(simulated)")
        if !plantedDevices.isEmpty {
            let planted = plantedDevices.map { "\($0.id) (drops \(Int(($0.drop * 100).rounded())) %)" }
            lines.append("  planted far below the fleet: " + planted.joined(separator: ", "))
        }
        if !appleFiles.isEmpty {
            let folder = appleFiles[0].split(separator: "/", omittingEmptySubsequences: false).dropLast()
                .joined(separator: "/")
            lines.append("  Apple's exports (arrival apple import): \(appleFiles.count) files in \(folder)")
        }
        return lines.joined(separator: "\n")
    }
}

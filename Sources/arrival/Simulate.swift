import ArgumentParser
import ArrivalModel
import ArrivalSimulation
import Foundation

struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a simulated day of a Live Activity fleet: sender batches, device beacon trees, callbacks."
    )

    @Option(help: "Directory to write into (created if missing).")
    var out: String

    @Option(help: "Number of Live Activities to simulate.")
    var activities: Int = 200

    @Option(help: "Random seed; the same seed writes the same bytes.")
    var seed: UInt64 = 1

    @Option(help: "The simulated UTC day, YYYY-MM-DD.")
    var day: String = "2026-11-21"

    @Flag(help: "Replace the sender/ and devices/ folders of an earlier run in --out.")
    var force = false

    @Option(
        help: ArgumentHelp(
            "Inject a delivery regression (repeatable): \(SimulationFaults.Injection.allCases.map(\.rawValue).joined(separator: ", ")).",
            discussion: "For trying 'arrival diff' and 'arrival gate' on a batch known to be worse."))
    var inject: [SimulationFaults.Injection] = []

    @Flag(
        help: ArgumentHelp(
            "Senders that go through push providers: log most requests as exchange records with APNs, FCM or Tencent Cloud Chat.",
            discussion: """
                Three activities in four get a sender that logs each HTTP exchange raw (direct APNs, Firebase \
                Cloud Messaging HTTP v1 or Tencent Cloud Chat), answered with those providers' own errors; the \
                rest log apns records as without the flag. Without it the output is what it always was.
                """))
    var providers = false

    @Flag(
        help: ArgumentHelp(
            "The device's side of each activity's life: dismissals (some learned hours later), ends by the app, token rotations, a widget that stops drawing, sends after a 410, push-to-start that never appears or never gets an update token.",
            discussion: """
                For trying the outcomes and loss causes of contract 3.0 (dismissed; not_rendered, old_token, \
                closed_later, device_silent), starts and dead tokens. Each activity draws its life from a stream \
                of its own; without the flag the output is what it always was.
                """))
    var lifecycle = false

    @Flag(
        help: ArgumentHelp(
            "iOS 18 broadcast channels: matches, a live blog and a transit line, each broadcast once to every subscriber, and subscribers joining while the event runs.",
            discussion: """
                For trying contract 3.0's broadcasts (requests.broadcasts, breakdowns.channel, \
                broadcasts_without_subscribers, the 5 KB limit). Broadcasts are logged as apns records with a \
                channel_id and as exchanges to /4/broadcasts/apps/<bundle id>; subscribers, on devices of their \
                own after the fleet's, report channel_subscription (or lose it, and are known only from their \
                renders), go offline, are dismissed, outlive their 8 hours. Combines with --lifecycle and \
                --providers, which change only the fleet's own activities; without the flag the output is what it \
                always was.
                """))
    var channels = false

    @Flag(
        help: ArgumentHelp(
            "Apple's budget of priority-10 pushes: chatty senders, a per-hour budget each device enforces (smaller with \"More Frequent Updates\" off), beacons carrying the switch.",
            discussion: """
                For trying contract 3.1's throttling evidence (breakdowns.priority_10_last_hour, \
                breakdowns.frequent_pushes). One activity in five (all-day trackers aside) gets a sender that \
                sends a priority-10 update every 40 to 80 s; one install in five has the switch off. The device \
                shows an activity's priority-10 updates while its budget lasts: 40 an hour with at most 10 \
                carried, or 10 an hour with at most 4 with the switch off, full at the start; the rest are \
                accepted (200) and never shown. Priority 5, starts, ends and broadcasts are not budgeted. \
                Renders and callbacks carry frequent_pushes as the kit writes it, except from each app's oldest \
                build. Combines with the other flags; drawn from streams of its own, so without it the output \
                is what it always was.
                """))
    var budget = false

    @Option(
        help: ArgumentHelp(
            "Plant this many devices far below the fleet: each one's widget drops 40–90% of the updates it is given.",
            discussion: """
                For trying contract 3.2's outliers (the report's "Devices far below the fleet"). Devices with \
                at least 8 activities are planted, one in four of them, until there are N (a small fleet may \
                have fewer); each drops its share of content states as a widget that fails to draw them would \
                (the app still hears of each: the loss cause is not_rendered). The summary counts \
                outlier_devices_planted. Drawn from streams of its own, so without it the output is what it \
                always was.
                """))
    var outliers = 0

    @Option(
        name: .customLong("apple-metrics"),
        help: ArgumentHelp(
            "Also write the CSV exports Apple's Push Notifications Console would give for this fleet, into DIR.",
            discussion: """
                DIR must lie outside --out (arrival ingest reads that folder whole). For trying Apple's \
                numbers beside arrival's (arrival apple import DIR/*.csv; \
                Documentation/Apple-metrics.md): per day, each Live Activity push counted by what APNs did \
                with it (received; delivered, or stored and delivered from storage; stored and never \
                delivered; discarded), and per broadcast channel the broadcasts published and delivered to \
                subscribers, rounded to the nearest ten. Counted where the simulator decides each push, with \
                no random draw of its own: the fleet itself is what it is without the option.
                """,
            valueName: "DIR"))
    var appleMetrics: String?

    func validate() throws {
        guard activities > 0 else { throw ValidationError("--activities must be at least 1.") }
        guard outliers >= 0 else { throw ValidationError("--outliers must be 0 or more.") }
        if let appleMetrics {
            let folder = URL(fileURLWithPath: appleMetrics).standardizedFileURL.path + "/"
            let fleet = URL(fileURLWithPath: out).standardizedFileURL.path + "/"
            guard !folder.hasPrefix(fleet) && !fleet.hasPrefix(folder) else {
                throw ValidationError(
                    "--apple-metrics must name a folder outside --out: arrival ingest reads '\(out)' whole, CSV files too."
                )
            }
        }
        guard ReportWindow.day(day) != nil else {
            throw ValidationError("--day '\(day)' is not a real day; write YYYY-MM-DD.")
        }
    }

    func run() throws {
        var config = SimulationConfig(activities: activities, seed: seed, day: day)
        for injection in inject { config.faults.inject(injection) }
        config.providers = providers
        config.lifecycle = lifecycle
        config.channels = channels
        config.budget = budget
        config.outliers = outliers
        config.appleMetrics = appleMetrics
        // A SimulationError says "pass --force" only when an earlier run is in the way.
        let summary = try FleetSimulator(config: config).run(outputDirectory: out, replacingExisting: force)
        print(summary.description)
    }
}

extension SimulationFaults.Injection: ExpressibleByArgument {}

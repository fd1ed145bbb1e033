/// One released version of a simulated app. Versions differ in how reliably
/// ActivityKit callbacks reach the app's log, which is exactly what the
/// report's callback metrics and `app_version` breakdown are meant to show.
struct SimAppVersion: Sendable {
    let version: String
    /// Share of applied content updates for which a `content_update`
    /// callback reaches the log (field reports: 60-97%).
    let contentUpdateRate: Double
    /// Share of activities whose `push_token` callback never reaches the log.
    let tokenCallbackLoss: Double
    /// Share of `activity_state` / `push_to_start_token` callbacks lost.
    let stateCallbackLoss: Double
    /// This build's logger omits `"v"` (absent means 1).
    let omitsVersionField: Bool
    /// This build's widget adds a field the contract does not know
    /// (`"build"`): readers must ignore it (forward compatibility).
    let addsUnknownField: Bool
    /// This build writes six fraction digits in its times.
    let micros: Bool
    /// This build's widget leaves `device_model` out of its render records
    /// (an optional field).
    let omitsDeviceModel: Bool
    /// This build's kit writes `frequent_pushes` (contract 3.1) when the
    /// fleet has a budget (`--budget`); each app's oldest build predates it.
    let writesFrequentPushes: Bool

    /// Only the newest delivery build logs `device_model` with callbacks.
    var callbacksCarryDeviceModel: Bool { version == "4.2.1" }

    /// A build whose logger has none of the quirks unless it says so.
    init(
        _ version: String, contentUpdateRate: Double, tokenCallbackLoss: Double, stateCallbackLoss: Double,
        omitsVersionField: Bool = false, addsUnknownField: Bool = false, micros: Bool = false,
        omitsDeviceModel: Bool = false, writesFrequentPushes: Bool = true
    ) {
        self.version = version
        self.contentUpdateRate = contentUpdateRate
        self.tokenCallbackLoss = tokenCallbackLoss
        self.stateCallbackLoss = stateCallbackLoss
        self.omitsVersionField = omitsVersionField
        self.addsUnknownField = addsUnknownField
        self.micros = micros
        self.omitsDeviceModel = omitsDeviceModel
        self.writesFrequentPushes = writesFrequentPushes
    }
}

/// One simulated app: a bundle id, a kind of Live Activity with its own
/// rhythm (a delivery, a ride, a match), and a sender with its own habits.
struct SimApp: Sendable {
    /// Short name, the `<app>` in `com.example.<app>`.
    let name: String
    /// Prefix of the app's own activity identifiers (`order-3f9a...`).
    let idPrefix: String
    let versions: [(SimAppVersion, Int)]
    /// Share of activities started by a push-to-start `start` push (the
    /// others are started in the app, with no start push).
    let pushToStartShare: Double
    /// Share of activities whose sender logs `activity_id` on every request;
    /// the others log only the push token and must be attributed through the
    /// app's `push_token` callback.
    let logsActivityIDShare: Double
    /// Seconds between updates.
    let updateInterval: ClosedRange<Int>
    /// Planned activity length in minutes.
    let durationMinutes: ClosedRange<Int>
    /// Share of activities that run all day, past the 8-hour limit.
    let longRunShare: Double
    /// Usual payload size in bytes.
    let payloadBytes: ClosedRange<Int>
    /// Share of updates whose payload is within 512 bytes of the 4096 limit.
    let nearLimitShare: Double
    /// Share of updates whose payload exceeds 4096 bytes (rejected with 413,
    /// then trimmed and re-sent).
    let oversizeShare: Double
    /// Share of updates sent with priority 10 (the rest priority 5).
    let priority10Share: Double
    /// The app's `staleDate`: an activity without an update for this long
    /// goes `stale`.
    let staleAfterSeconds: Int64

    var bundleID: String { "com.example." + name }
    var topic: String { bundleID + ".push-type.liveactivity" }
}

/// A device model: its `hw.machine` identifier and whether it has the
/// Dynamic Island (which decides the render surfaces).
struct SimDeviceModel: Sendable {
    let identifier: String
    let hasIsland: Bool
    /// Oldest iOS major version the model ships with.
    let minimumMajorOS: Int
}

/// The fixed catalogues the fleet is drawn from.
enum FleetCatalog {
    static let apps: [SimApp] = [
        SimApp(
            name: "delivery", idPrefix: "order-",
            versions: [
                (
                    SimAppVersion(
                        "4.1.0", contentUpdateRate: 0.64, tokenCallbackLoss: 0.28, stateCallbackLoss: 0.30,
                        writesFrequentPushes: false), 3
                ),
                (SimAppVersion("4.2.0", contentUpdateRate: 0.91, tokenCallbackLoss: 0.09, stateCallbackLoss: 0.12), 5),
                (
                    SimAppVersion(
                        "4.2.1", contentUpdateRate: 0.95, tokenCallbackLoss: 0.05, stateCallbackLoss: 0.08,
                        addsUnknownField: true), 2
                ),
            ],
            pushToStartShare: 0.5, logsActivityIDShare: 1.0,
            updateInterval: 200...520, durationMinutes: 20...60, longRunShare: 0,
            payloadBytes: 620...1500, nearLimitShare: 0.005, oversizeShare: 0.0,
            priority10Share: 0.85, staleAfterSeconds: 900
        ),
        SimApp(
            name: "rides", idPrefix: "ride-",
            versions: [
                (
                    SimAppVersion(
                        "2.7.3", contentUpdateRate: 0.78, tokenCallbackLoss: 0.16, stateCallbackLoss: 0.20,
                        omitsVersionField: true, omitsDeviceModel: true, writesFrequentPushes: false), 4
                ),
                (SimAppVersion("2.8.0", contentUpdateRate: 0.97, tokenCallbackLoss: 0.06, stateCallbackLoss: 0.10), 6),
            ],
            pushToStartShare: 0.15, logsActivityIDShare: 0.6,
            updateInterval: 80...220, durationMinutes: 10...26, longRunShare: 0,
            payloadBytes: 480...1100, nearLimitShare: 0.0, oversizeShare: 0.0,
            priority10Share: 0.95, staleAfterSeconds: 600
        ),
        SimApp(
            name: "scores", idPrefix: "match-",
            versions: [
                (
                    SimAppVersion(
                        "7.0.1", contentUpdateRate: 0.70, tokenCallbackLoss: 0.22, stateCallbackLoss: 0.25,
                        micros: true, writesFrequentPushes: false), 4
                ),
                (
                    SimAppVersion(
                        "7.1.0", contentUpdateRate: 0.88, tokenCallbackLoss: 0.10, stateCallbackLoss: 0.15,
                        micros: true), 6
                ),
            ],
            pushToStartShare: 0.7, logsActivityIDShare: 0.3,
            updateInterval: 360...840, durationMinutes: 80...130, longRunShare: 0.2,
            payloadBytes: 1700...3500, nearLimitShare: 0.08, oversizeShare: 0.02,
            priority10Share: 0.35, staleAfterSeconds: 1800
        ),
    ]

    /// Weight of each app among devices' installs.
    static let appWeights: [(Int, Int)] = [(0, 5), (1, 3), (2, 3)]

    static let deviceModels: [(SimDeviceModel, Int)] = [
        (SimDeviceModel(identifier: "iPhone14,5", hasIsland: false, minimumMajorOS: 15), 8),
        (SimDeviceModel(identifier: "iPhone14,6", hasIsland: false, minimumMajorOS: 15), 3),
        (SimDeviceModel(identifier: "iPhone14,7", hasIsland: false, minimumMajorOS: 16), 9),
        (SimDeviceModel(identifier: "iPhone15,2", hasIsland: true, minimumMajorOS: 16), 10),
        (SimDeviceModel(identifier: "iPhone15,4", hasIsland: true, minimumMajorOS: 17), 12),
        (SimDeviceModel(identifier: "iPhone16,1", hasIsland: true, minimumMajorOS: 17), 13),
        (SimDeviceModel(identifier: "iPhone16,2", hasIsland: true, minimumMajorOS: 17), 10),
        (SimDeviceModel(identifier: "iPhone17,1", hasIsland: true, minimumMajorOS: 18), 9),
        (SimDeviceModel(identifier: "iPhone17,3", hasIsland: true, minimumMajorOS: 18), 9),
    ]

    /// iOS versions with their major version and weight.
    static let osVersions: [((String, Int), Int)] = [
        (("17.5", 17), 7),
        (("17.6.1", 17), 9),
        (("18.1", 18), 22),
        (("18.1.1", 18), 8),
        (("18.2", 18), 28),
        (("18.3", 18), 6),
    ]

    /// Device clock presentations: UTC offset in minutes, `Z` or `+00:00`.
    static let timeZones: [((Int, Bool), Int)] = [
        ((0, true), 24),
        ((0, false), 4),
        ((60, false), 12),
        ((480, false), 14),
        ((540, false), 8),
        ((330, false), 5),
        ((-300, false), 18),
        ((-480, false), 12),
        ((-180, false), 3),
    ]

    /// Transport error texts a sender logs with status 0 when it has one.
    static let transportErrors: [String] = [
        "connection reset by peer",
        "request timed out after 10s",
        "stream reset: REFUSED_STREAM",
    ]
}

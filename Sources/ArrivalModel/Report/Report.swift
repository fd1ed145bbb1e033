/// The window of `sent_at` a report covers: `from` inclusive, `to` exclusive,
/// milliseconds since the Unix epoch (Documentation/Metrics.md).
public struct ReportWindow: Sendable, Equatable {
    public var from: Int64
    public var to: Int64

    public init(from: Int64, to: Int64) {
        self.from = from
        self.to = to
    }

    /// `D 00:00:00Z` to the next day's `00:00:00Z`.
    public static func day(_ text: String) -> ReportWindow? {
        guard text.utf8.count == 10, let start = RFC3339.parseDay(text) else { return nil }
        return ReportWindow(from: start, to: start + Milliseconds.day)
    }

    /// The UTC day (days since 1970-01-01) when the window is exactly one
    /// whole day, `D 00:00:00Z` to the next day's; nil otherwise.
    package var wholeDay: Int64? {
        guard to - from == Milliseconds.day, from % Milliseconds.day == 0 else { return nil }
        return utcDay(of: from)
    }

    /// Which of `from` and `to` a ``Refusal`` is about.
    package enum Bound: Sendable {
        case from, to
    }

    /// Why ``parse(day:from:to:)`` refused what it was given; the command
    /// line and the collector each word it for their own users.
    package enum Refusal: Error, Equatable, Sendable {
        /// A day and `from` or `to` given together.
        case dayWithRange
        /// The day is not a real day written `YYYY-MM-DD`.
        case notADay(String)
        /// `from` or `to` is not an RFC 3339 time.
        case notATime(Bound, String)
        /// `from` is not earlier than `to`.
        case fromNotBeforeTo
        /// Only one of `from` and `to`.
        case halfRange
    }

    /// The window a report is asked for: one UTC `day` (`YYYY-MM-DD`), or
    /// `from` (inclusive) to `to` (exclusive), RFC 3339 times; nil when none
    /// is given (all data). The one reading of `--day`/`--from`/`--to` and of
    /// the collector's `day`/`from`/`to` query parameters.
    package static func parse(day: String?, from: String?, to: String?) throws(Refusal) -> ReportWindow? {
        if let day {
            guard from == nil, to == nil else { throw .dayWithRange }
            guard let window = ReportWindow.day(day) else { throw .notADay(day) }
            return window
        }
        switch (from, to) {
        case (nil, nil):
            return nil
        case (let from?, let to?):
            guard let start = RFC3339.parseMilliseconds(from) else { throw .notATime(.from, from) }
            guard let end = RFC3339.parseMilliseconds(to) else { throw .notATime(.to, to) }
            guard start < end else { throw .fromNotBeforeTo }
            return ReportWindow(from: start, to: end)
        default:
            throw .halfRange
        }
    }
}

/// Why lost updates were lost (contract 3.0, report schema 2), in the
/// contract's order.
public struct LossCauses: Sendable, Equatable {
    public var notRendered = 0
    public var oldToken = 0
    public var closedLater = 0
    public var deviceSilent = 0
    public var unexplained = 0

    public init() {}

    /// The JSON keys, in order, and the counts they name.
    public static let keys = ["not_rendered", "old_token", "closed_later", "device_silent", "unexplained"]
    public static let paths: [any WritableKeyPath<LossCauses, Int> & Sendable] = [
        \.notRendered, \.oldToken, \.closedLater, \.deviceSilent, \.unexplained,
    ]

    package mutating func add(_ other: LossCauses) {
        for path in Self.paths { self[keyPath: path] += other[keyPath: path] }
    }
}

/// The `updates` block: logical updates and their outcomes.
public struct UpdateCounts: Sendable, Equatable {
    public var sent = 0
    public var accepted = 0
    public var rendered = 0
    /// Schema 2: accepted after the user dismissed the activity (0 in a schema-1 report).
    public var dismissed = 0
    /// Schema 2: the lost updates by cause.
    public var lostByCause = LossCauses()
    public var ended = 0
    public var expired = 0
    public var staleTimestamp = 0
    public var superseded = 0
    public var lost = 0

    public init() {}

    /// The accepted updates with `outcome`.
    public subscript(outcome: Outcome) -> Int {
        get {
            switch outcome {
            case .rendered: rendered
            case .dismissed: dismissed
            case .ended: ended
            case .expired: expired
            case .staleTimestamp: staleTimestamp
            case .superseded: superseded
            case .lost: lost
            }
        }
        set {
            switch outcome {
            case .rendered: rendered = newValue
            case .dismissed: dismissed = newValue
            case .ended: ended = newValue
            case .expired: expired = newValue
            case .staleTimestamp: staleTimestamp = newValue
            case .superseded: superseded = newValue
            case .lost: lost = newValue
            }
        }
    }

    /// The updates the device would have shown had they arrived (``Outcome/isDeliverable``):
    /// rendered + superseded + lost, the arrival rate's denominator.
    public var deliverable: Int { rendered + superseded + lost }

    /// rendered / deliverable
    public var arrivalRate: Double? {
        ratio(rendered, deliverable)
    }

    /// (rendered + superseded) / deliverable
    public var effectiveArrivalRate: Double? {
        ratio(rendered + superseded, deliverable)
    }
}

extension UpdateCounts {
    /// Adds the counts of a disjoint set of updates.
    package mutating func add(_ other: UpdateCounts) {
        sent += other.sent
        accepted += other.accepted
        lostByCause.add(other.lostByCause)
        for outcome in Outcome.allCases { self[outcome] += other[outcome] }
    }
}

/// The report of Documentation/ReportSchema.md.
public struct Report: Sendable, Equatable {
    public struct Requests: Sendable, Equatable {
        public var total = 0
        public var accepted = 0
        public var rejected = 0
        public var byReason: [ExactString: Int] = [:]
        public var oversizeFailures = 0
        public var oversizeRisk = 0
        /// Schema 2: broadcast records among the requests.
        public var broadcasts = 0
        /// Schema 2: requests sent to a token after its death.
        public var toDeadTokens = 0
        public var acceptanceRate: Double? { ratio(accepted, total) }
    }

    /// Schema 2: push-to-start, from accepted to appeared to an update token.
    public struct Starts: Sendable, Equatable {
        public var sent = 0
        public var accepted = 0
        public var appeared = 0
        /// Appeared starts whose activity is not subscribed to a broadcast
        /// channel: those expected to get an update token (contract 3.1).
        /// Not in the report JSON; a saved report's is worked back from
        /// its rate (``Report+Decoding``).
        public var updateTokenExpected = 0
        public var updateTokenReceived = 0
        public var updateTokenLatency = Latency()
        public var appearanceRate: Double? { ratio(appeared, accepted) }
        public var updateTokenRate: Double? { ratio(updateTokenReceived, updateTokenExpected) }

        public init() {}

        /// Adds the counts of a disjoint set of starts (the latency is summed apart, by value).
        package mutating func add(_ other: Starts) {
            sent += other.sent
            accepted += other.accepted
            appeared += other.appeared
            updateTokenExpected += other.updateTokenExpected
            updateTokenReceived += other.updateTokenReceived
        }
    }

    public struct Callbacks: Sendable, Equatable {
        public var contentUpdateExpected = 0
        public var contentUpdateReceived = 0
        public var tokenExpected = 0
        public var tokenReceived = 0
        public var callbackLossRate: Double? {
            lossRate(received: contentUpdateReceived, expected: contentUpdateExpected)
        }
        public var tokenCallbackLossRate: Double? { lossRate(received: tokenReceived, expected: tokenExpected) }
    }

    public struct Latency: Sendable, Equatable {
        public var count = 0
        public var p50: Int64?
        public var p90: Int64?
        public var p99: Int64?

        package init(count: Int = 0, p50: Int64? = nil, p90: Int64? = nil, p99: Int64? = nil) {
            self.count = count
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
        }
    }

    public struct DataQuality: Sendable, Equatable {
        public var malformedByCause: [ExactString: Int] = [:]
        public var duplicateRecords = 0
        public var filesSkippedAsDuplicate = 0
        public var apnsWithoutSeq = 0
        public var unattributed = 0
        public var clockSkewNegative = 0
        /// Schema 2: broadcast records that stood for no activity.
        public var broadcastsWithoutSubscribers = 0
        public var malformedLines: Int { malformedByCause.values.reduce(0, +) }
    }

    /// The dimensions of ``breakdowns``, in report order.
    public static let breakdownDimensions = ["app", "priority", "provider", "os_version", "app_version"]
    /// The dimensions that came later: schema 2's `channel`, then contract
    /// 3.1's `frequent_pushes` and `priority_10_last_hour` (a saved report
    /// may lack them: absent, never empty).
    public static let laterDimensions = ["channel", "frequent_pushes", "priority_10_last_hour"]
    /// Every dimension a report of this arrival has.
    public static let allDimensions = breakdownDimensions + laterDimensions

    /// The report schema it was read from or is written as: 1
    /// (`arrival.report/1`) or 2 (`arrival.report/2`, contract 3.0), whose
    /// figures a schema-1 report lacks (``Metric/since``).
    public var schema = 1
    public var window: ReportWindow?
    public var requests = Requests()
    /// Schema 2 only.
    public var starts = Starts()
    public var updates = UpdateCounts()
    public var callbacks = Callbacks()
    public var latency = Latency()
    /// Contract 3.2: the devices far below the fleet; nil in a report read
    /// back from JSON that has none (an earlier arrival's: absent, never empty).
    public var outliers: Outliers?
    public var dataQuality = DataQuality()
    /// Dimension → key → counts; see ``breakdownDimensions``.
    public var breakdowns: [String: [ExactString: UpdateCounts]] = [:]
    /// Per broadcast channel, what the updates block of `breakdowns.channel`
    /// does not say: its broadcasts of the window, how many subscribers they
    /// stood for, and the render latency of its updates. Not part of the
    /// report JSON (the contract's section 5 has no such key): the markdown
    /// and HTML reports show it; a report read back from JSON has none.
    public var channels: [ExactString: Channel] = [:]
    /// Apple's numbers beside arrival's (issue 54): nil unless Apple's exports were imported for a
    /// whole day of the window, so a report without them is what it was.
    public var apple: Apple?

    /// One broadcast channel's figures beside its updates (``channels``).
    public struct Channel: Sendable, Equatable {
        /// Broadcast records of the window, and those accepted.
        public var broadcasts = 0
        public var accepted = 0
        /// Activities with an update that a broadcast of this channel decided, in the window.
        public var subscribers = 0
        /// First render minus accept time over its rendered updates, as ``Report/latency``.
        public var latency = Latency()

        public init() {}
    }

    public init(window: ReportWindow?) {
        self.window = window
    }
}

@inlinable @inline(__always)
public func ratio(_ numerator: Int, _ denominator: Int) -> Double? {
    denominator == 0 ? nil : Double(numerator) / Double(denominator)
}

@inlinable @inline(__always)
public func lossRate(received: Int, expected: Int) -> Double? {
    expected == 0 ? nil : 1 - Double(received) / Double(expected)
}

/// Nearest rank: the value at position ceil(p × n) of the sorted values (1-based),
/// with p given as a fraction `numerator / 100` so the ceiling is exact.
package func nearestRank(_ sorted: [Int64], percent: Int) -> Int64? {
    guard !sorted.isEmpty else { return nil }
    let n = sorted.count
    let rank = max(1, (percent * n + 99) / 100)
    return sorted[min(rank, n) - 1]
}

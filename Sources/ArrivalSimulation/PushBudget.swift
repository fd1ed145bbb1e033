package import ArrivalBeacons
import ArrivalModel

/// `arrival simulate --budget`: the simulator's model of Apple's budget of
/// priority-10 Live Activity pushes (contract 3.1's evidence,
/// `breakdowns.priority_10_last_hour` and `breakdowns.frequent_pushes`).
///
/// Apple documents that such a budget exists, that it is larger for apps
/// that declare `NSSupportsLiveActivitiesFrequentUpdates`, and that the user
/// can take the larger one away ("More Frequent Updates" in Settings); it
/// publishes no number. The numbers here are the model's own, chosen so that
/// a fleet shows the pattern teams report (a priority-10 update every minute
/// freezes the lock screen after twenty to thirty minutes while APNs answers
/// 200):
/// - a fifth of the fleet's activities get a *chatty* sender: a priority-10
///   update every 40 to 80 seconds for the activity's whole planned length
///   (all-day trackers keep their 20-to-30-minute rhythm);
/// - every app declares frequent updates; one install in five has the
///   user's switch off, drawn once per install;
/// - the device gives each activity a refilling budget of priority-10
///   updates: with the switch on 40 an hour (one more every 90 s), at most 10
///   unspent carried; with it off 10 an hour (one every 6 minutes), at most 4
///   carried; an activity starts with its budget full. An update that finds
///   the budget empty is dropped without a trace: APNs said 200, nothing
///   renders, no `content_update` is reported. Priority-5 updates, starts
///   and ends are not budgeted, nor are broadcasts (`--channels`);
/// - the kit writes the switch on every render and callback
///   (`frequent_pushes`), except the oldest build of each app, which
///   predates it: its activities are `unknown` until the app is upgraded.
///
/// At one update a minute the switch-on budget runs dry after about 30
/// minutes and then shows two updates in three; the switch-off budget after
/// about 5 minutes, and then one in six. Every draw comes from streams of
/// the budget's own (per device, per subscriber), so a fleet without the flag
/// is byte for byte what it was.
package enum BudgetModel {
    /// Share of the fleet's activities (all-day trackers aside) with a chatty sender.
    package static let chattyShare = 0.2
    /// Seconds between a chatty sender's updates (plus up to a second).
    package static let chattyInterval: ClosedRange<Int> = 40...80
    /// Share of installs whose user turned "More Frequent Updates" off.
    package static let switchOffShare = 0.2
    /// The budget with the switch on.
    package static let switchOn = PushBudget.Rule(perHour: 40, carried: 10)
    /// The budget with the switch off.
    package static let switchOff = PushBudget.Rule(perHour: 10, carried: 4)

    /// The user's switch for one install (or subscriber), drawn from a budget stream.
    static func drawSwitch(_ rng: inout SplitMix64) -> FrequentPushes {
        rng.chance(switchOffShare) ? .disabled : .enabled
    }
}

/// One activity's priority-10 budget on its device: a bucket that refills
/// one update every `3,600,000 / perHour` ms and holds at most `carried`.
/// Integer milliseconds throughout, so the same pushes always get the same
/// answers.
package struct PushBudget: Sendable {
    package struct Rule: Sendable, Equatable {
        /// Updates the budget grants per hour once the carried ones are spent.
        package let perHour: Int
        /// The most unspent updates it keeps (and starts with).
        package let carried: Int

        /// Milliseconds to earn one update.
        package var refillMs: Int64 { Milliseconds.hour / Int64(perHour) }
    }

    package let rule: Rule
    /// Refill time banked, at most `carried * refillMs`: one update per `refillMs`.
    private var bankedMs: Int64
    private var lastMs: Int64

    /// A full budget at `startMs` (the activity's start on the device).
    package init(_ rule: Rule, fullAt startMs: Int64) {
        self.rule = rule
        bankedMs = Int64(rule.carried) * rule.refillMs
        lastMs = startMs
    }

    /// The rule for a user's switch.
    package init(switch frequentPushes: FrequentPushes, fullAt startMs: Int64) {
        self.init(frequentPushes == .disabled ? BudgetModel.switchOff : BudgetModel.switchOn, fullAt: startMs)
    }

    /// Whether a priority-10 update reaching the device at `ms` may show; if
    /// so it spends one. Times before the last one asked count as that one.
    package mutating func spend(atMs ms: Int64) -> Bool {
        let cap = Int64(rule.carried) * rule.refillMs
        if ms > lastMs {
            bankedMs = min(cap, bankedMs + (ms - lastMs))
            lastMs = ms
        }
        guard bankedMs >= rule.refillMs else { return false }
        bankedMs -= rule.refillMs
        return true
    }
}

package import ArrivalModel
import ArrivalStore

/// One device's activities (`arrival activity --device`): how a device the
/// report lists under "Devices far below the fleet" is followed to its
/// evidence, an activity at a time.
package struct DeviceActivities: Sendable, Equatable {
    package var deviceID: String
    /// The window's updates of all the device's activities: for the same
    /// window, the `updates` block the report's `outliers` gives the device.
    package var updates = UpdateCounts()
    /// In order of start (activities never seen starting last), then activity id.
    package var activities: [Activity] = []

    package struct Activity: Sendable, Equatable {
        package var activityID: String
        /// The app of its first update in the window (nil without one).
        package var app: String?
        /// Its updates of the window.
        package var updates = UpdateCounts()
        /// What its device said of itself (contract 3.1's switch included): the earliest evidence that says.
        package var osVersion: String?
        package var appVersion: String?
        package var frequentPushes: String?
        package var startedAt: Int64?
        package var endedAt: Int64?
        package var dismissedAt: Int64?
        package var lastDeviceAt: Int64?
    }
}

extension ReportBuilder {
    /// The activities whose device (contract 3.2, as the report's `outliers`:
    /// the `device_id` of the activity's earliest device evidence that has
    /// one, compared by code points) is `device`: with a window, those with
    /// an update in it; without, all. The same analysis as the report's, in
    /// partitions for a large store.
    package func deviceActivities(device: String, window: ReportWindow?) throws -> DeviceActivities {
        let wanted = ExactString(device)
        func collect(_ analysis: DeliveryAnalysis) -> [DeviceActivities.Activity] {
            var byActivity: [Int: DeviceActivities.Activity] = [:]
            func entry(_ index: Int) -> DeviceActivities.Activity {
                let activity = analysis.activities[index]
                return DeviceActivities.Activity(
                    activityID: analysis.activityNames[index].text, osVersion: activity.os?.value,
                    appVersion: activity.appVersion?.value, frequentPushes: activity.frequentPushes?.value,
                    startedAt: activity.startedAt, endedAt: activity.endedAt, dismissedAt: activity.dismissedAt,
                    lastDeviceAt: activity.lastDeviceAt)
            }
            func onDevice(_ index: Int) -> Bool {
                analysis.activities[index].device.map { ExactString($0.value) == wanted } ?? false
            }
            if window == nil {
                for index in analysis.activities.indices where onDevice(index) { byActivity[index] = entry(index) }
            }
            for index in analysis.updateIndices(in: window) {
                let update = analysis.updates[index]
                let activity = Int(update.activity)
                guard onDevice(activity) else { continue }
                if byActivity[activity] == nil { byActivity[activity] = entry(activity) }
                if byActivity[activity]?.app == nil { byActivity[activity]?.app = analysis.apps[Int(update.app)].text }
                byActivity[activity]?.updates.count(update)
            }
            return Array(byActivity.values)
        }
        let found = try collected(window: window, collect)
        var result = DeviceActivities(deviceID: device)
        for activity in found { result.updates.add(activity.updates) }
        result.activities = found.sorted {
            switch ($0.startedAt, $1.startedAt) {
            case (let a?, let b?) where a != b: return a < b
            case (.some, nil): return true
            case (nil, .some): return false
            default: return codePointOrder($0.activityID, $1.activityID)
            }
        }
        return result
    }
}

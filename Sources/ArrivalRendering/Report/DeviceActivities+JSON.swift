package import ArrivalAnalysis
package import ArrivalModel

extension DeviceActivities {
    /// `arrival activity --device ID --format json`: schema `arrival.device/1`
    /// (Documentation/CommandLine.md), activities in the list's order.
    package func jsonText(window: ReportWindow?) -> String {
        JSONWriter.document(
            [
                "schema": "arrival.device/1", "device_id": deviceID, "window": window, "updates": updates,
                "activities": activities,
            ] as JSONFields)
    }
}

extension DeviceActivities.Activity: JSONWritableObject {
    package var jsonFields: JSONFields {
        func time(_ value: Int64?) -> String? { value.map { RFC3339.format(milliseconds: $0) } }
        return [
            "activity_id": activityID, "app": app, "started_at": time(startedAt), "ended_at": time(endedAt),
            "dismissed_at": time(dismissedAt), "last_device_at": time(lastDeviceAt), "os_version": osVersion,
            "app_version": appVersion, "frequent_pushes": frequentPushes, "updates": updates,
        ]
    }
}

/// The optional device fields every `render` and `callback` record may carry
/// (`device_id`, `os_version`, `device_model`, `app_version`). Set them once
/// on the writer; a record's own values win over the writer's.
public struct DeviceInfo: Sendable, Equatable {
    /// An install identifier the app chooses (not an Apple identifier).
    public var deviceID: String?
    public var osVersion: String?
    public var deviceModel: String?
    public var appVersion: String?

    public init(
        deviceID: String? = nil, osVersion: String? = nil, deviceModel: String? = nil, appVersion: String? = nil
    ) {
        self.deviceID = deviceID
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.appVersion = appVersion
    }

    /// This record's values, each falling back to `defaults`.
    func filled(from defaults: DeviceInfo) -> DeviceInfo {
        DeviceInfo(
            deviceID: deviceID ?? defaults.deviceID,
            osVersion: osVersion ?? defaults.osVersion,
            deviceModel: deviceModel ?? defaults.deviceModel,
            appVersion: appVersion ?? defaults.appVersion
        )
    }

    /// `device_id`, `os_version`, `device_model`, `app_version`, each when it has a value.
    package func append(to line: inout BeaconLine) {
        line.optionalString("device_id", deviceID)
        line.optionalString("os_version", osVersion)
        line.optionalString("device_model", deviceModel)
        line.optionalString("app_version", appVersion)
    }
}

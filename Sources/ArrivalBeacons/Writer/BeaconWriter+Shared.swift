import Foundation

extension BeaconWriter {
    // `@unchecked Sendable`: `writer` is read and written only under `lock` (the kit has no Mutex before iOS 18).
    private final class SharedSlot: @unchecked Sendable {
        let lock = NSLock()
        var writer: BeaconWriter?
    }

    private static let slot = SharedSlot()

    /// The writer the SwiftUI modifier uses when none is passed to it. Set it
    /// once at launch (in the widget bundle's `init`); until then beacons from
    /// the modifier are not written.
    public static var shared: BeaconWriter? {
        get {
            slot.lock.lock()
            defer { slot.lock.unlock() }
            return slot.writer
        }
        set {
            slot.lock.lock()
            slot.writer = newValue
            slot.lock.unlock()
        }
    }
}

// The iOS branch is not compiled on Linux, where this package is built and tested:
// reviewed by reading against the ActivityKit API (see Documentation/Instrumenting.md,
// "What could not be compiled here"). The other branch is what Linux and macOS build.
#if canImport(ActivityKit) && os(iOS)
    import ActivityKit

    extension FrequentPushes {
        /// `ActivityAuthorizationInfo().frequentPushesEnabled` (iOS 16.2+), read
        /// afresh each time: the user can flip the switch while the app runs.
        static func fromSystem() -> FrequentPushes? {
            guard #available(iOS 16.2, *) else { return nil }
            return FrequentPushes(enabled: ActivityAuthorizationInfo().frequentPushesEnabled)
        }
    }
#else
    extension FrequentPushes {
        /// No ActivityKit here, so no switch to read: records carry no `frequent_pushes`.
        static func fromSystem() -> FrequentPushes? { nil }
    }
#endif

extension Report {
    /// Apple's numbers beside arrival's (issue 54; Documentation/Apple-metrics.md), for each UTC day wholly
    /// inside the report's window that Apple's imported exports cover. Apple's counts are of requests (pushes),
    /// aggregated and rounded by Apple; arrival's are of updates: the two are shown side by side, never
    /// combined into one rate.
    public struct Apple: Sendable, Equatable {
        public var days: [Day]

        public init(days: [Day]) {
            self.days = days
        }

        /// One day: Apple's Live Activity statuses as written, arrival's figures, and the broadcast channels.
        public struct Day: Sendable, Equatable {
            /// Midnight UTC, in milliseconds.
            public var day: Int64
            /// Apple's delivery rows of the Live Activity push type (``AppleMetrics/isLiveActivity(_:)``), as
            /// written: statuses are never added up, a hidden count stays hidden (nil).
            public var delivery: [AppleDeliveryRow]
            /// arrival's requests of the day (`sent_at`) and those APNs accepted.
            public var requests: Int
            public var accepted: Int
            /// arrival's updates of the day: rendered, lost and why, stale timestamps and the rest.
            public var updates: UpdateCounts
            /// Per channel (the application-wide row first, channel id nil), Apple's row beside arrival's.
            public var channels: [Channel]

            public init(
                day: Int64, delivery: [AppleDeliveryRow], requests: Int, accepted: Int, updates: UpdateCounts,
                channels: [Channel]
            ) {
                self.day = day
                self.delivery = delivery
                self.requests = requests
                self.accepted = accepted
                self.updates = updates
                self.channels = channels
            }
        }

        /// One broadcast channel's day (or the application's, `channelID` nil).
        public struct Channel: Sendable, Equatable {
            public var channelID: String?
            /// The row Apple exported; nil when it exported none for this channel and day.
            public var apple: AppleBroadcastRow?
            /// arrival's broadcast requests of the day to the channel (the application's: to every channel).
            public var broadcasts: Int
            /// The subscriber-updates of those broadcasts that arrival saw rendered.
            public var rendered: Int

            public init(channelID: String?, apple: AppleBroadcastRow?, broadcasts: Int, rendered: Int) {
                self.channelID = channelID
                self.apple = apple
                self.broadcasts = broadcasts
                self.rendered = rendered
            }
        }
    }
}

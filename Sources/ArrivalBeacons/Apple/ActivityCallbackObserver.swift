// iOS only. Not compiled on Linux, where this package is built and tested:
// reviewed by reading against the ActivityKit API (see Documentation/Instrumenting.md, "What could not
// be compiled here").
#if canImport(ActivityKit) && os(iOS)
    import ActivityKit
    import Foundation

    /// Reports the ActivityKit callbacks of one `ActivityAttributes` type as
    /// `callback` records: `pushToStartTokenUpdates` (`push_to_start_token`), and
    /// for every activity, existing or new, `pushTokenUpdates` (`push_token`),
    /// `contentUpdates` (`content_update`, with the `seq` your content state
    /// carries) and `activityStateUpdates` (`activity_state`: every value,
    /// `pending` and `dismissed` included, with the time the app observed it).
    ///
    /// An activity that follows a broadcast channel (iOS 18) is reported once
    /// as `channel_subscription` when it is first observed, with the channel
    /// `channelID` reads from it. ActivityKit does not hand an activity's
    /// channel back, so read it from what you put in: your attributes (a
    /// push-to-start with `input-push-channel` sends them too), or your own
    /// record of the `pushType: .channel(id)` you started it with.
    ///
    /// Start it once at app launch: `observer.start()`. Observation lasts until
    /// the returned task is cancelled.
    @available(iOS 17.2, *)
    public struct ActivityCallbackObserver<Attributes: ActivityAttributes>: Sendable {
        public let writer: BeaconWriter
        /// The update's sequence number in a content state (nil: not reported).
        public let seq: @Sendable (Attributes.ContentState) -> Int?
        /// The broadcast channel an activity follows (nil or empty: none).
        public let channelID: @Sendable (Activity<Attributes>) -> String?

        public init(
            writer: BeaconWriter, seq: @escaping @Sendable (Attributes.ContentState) -> Int?,
            channelID: @escaping @Sendable (Activity<Attributes>) -> String? = { _ in nil }
        ) {
            self.writer = writer
            self.seq = seq
            self.channelID = channelID
        }

        @discardableResult
        public func start() -> Task<Void, Never> {
            let writer = self.writer
            let seq = self.seq
            let channelID = self.channelID
            return Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await token in Activity<Attributes>.pushToStartTokenUpdates {
                            writer.write(CallbackReport(.pushToStartToken(token: CallbackReport.hex(token))))
                        }
                    }
                    group.addTask {
                        await withTaskGroup(of: Void.self) { perActivity in
                            for activity in Activity<Attributes>.activities {
                                perActivity.addTask {
                                    await Self.observe(activity, writer: writer, seq: seq, channelID: channelID)
                                }
                            }
                            for await activity in Activity<Attributes>.activityUpdates {
                                perActivity.addTask {
                                    await Self.observe(activity, writer: writer, seq: seq, channelID: channelID)
                                }
                            }
                        }
                    }
                }
            }
        }

        private static func observe(
            _ activity: Activity<Attributes>, writer: BeaconWriter,
            seq: @escaping @Sendable (Attributes.ContentState) -> Int?,
            channelID: @escaping @Sendable (Activity<Attributes>) -> String?
        ) async {
            let id = activity.id
            if let channel = channelID(activity) {
                writer.reportChannelSubscription(activityID: id, channelID: channel)
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await token in activity.pushTokenUpdates {
                        writer.write(CallbackReport(.pushToken(activityID: id, token: CallbackReport.hex(token))))
                    }
                }
                group.addTask {
                    for await content in activity.contentUpdates {
                        if let value = seq(content.state) {
                            writer.write(CallbackReport(.contentUpdate(activityID: id, seq: value)))
                        }
                    }
                }
                group.addTask {
                    for await state in activity.activityStateUpdates {
                        // When the app observed it: `received_at` (the change itself may be older).
                        let observed = Date()
                        // Every state by its case's name, `pending` (iOS 26) included; one the contract
                        // does not name yet is left out rather than misreported.
                        guard let name = CallbackReport.ActivityStateName(observed: state) else { continue }
                        writer.write(CallbackReport(.activityState(activityID: id, state: name), receivedAt: observed))
                    }
                }
            }
        }
    }

    /// Starts an activity on a broadcast channel and reports its subscription
    /// (`channel_subscription`) at once, so arrival counts the channel's
    /// broadcasts for it even if the observer never runs.
    @available(iOS 18.0, *)
    public enum ArrivalChannelActivity {
        public static func request<Attributes: ActivityAttributes>(
            attributes: Attributes, content: ActivityContent<Attributes.ContentState>, channelID: String,
            writer: BeaconWriter? = nil
        ) throws -> Activity<Attributes> {
            let activity = try Activity<Attributes>.request(
                attributes: attributes, content: content, pushType: .channel(channelID))
            (writer ?? BeaconWriter.shared)?.reportChannelSubscription(activityID: activity.id, channelID: channelID)
            return activity
        }
    }
#endif

// Apple platforms only. Not compiled on Linux, where this package is built and
// tested: reviewed by reading against the SwiftUI API (see Documentation/Instrumenting.md,
// "What could not be compiled here").
#if canImport(SwiftUI)
    import SwiftUI

    extension View {
        /// Writes a `render` beacon each time this view appears: put it on the
        /// root view of each Live Activity presentation (lock screen, each
        /// Dynamic Island region), with the `seq` of the content state it shows.
        /// Uses `writer`, or ``BeaconWriter/shared`` when nil. The write is
        /// queued and returns at once. Pass `channelID` for an activity that
        /// follows a broadcast channel (the beacon then carries `channel_id`).
        public func arrivalBeacon(
            activityID: String, seq: Int, surface: String, channelID: String? = nil, writer: BeaconWriter? = nil
        ) -> some View {
            onAppear {
                (writer ?? BeaconWriter.shared)?.render(
                    activityID: activityID, seq: seq, surface: surface, channelID: channelID)
            }
        }
    }
#endif

import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Uploads the store refused alone, attempt after attempt: set aside with
/// their bytes kept, listed in the spool's `rejected.json` so that the next
/// start tries each once more (Documentation/Collector.md, "An upload set
/// aside"). Their records stay in their segments, and the checkpoint stays
/// before the oldest of them, so a start always reads them again.
extension Spool {
    /// The file that lists the uploads set aside, with the store's reasons.
    var rejectedPath: String { root.appendingPathComponent("rejected.json").path }

    /// Reads what an earlier run set aside: those of them queued again by the recovery are tried once more.
    static func readSetAside(_ path: String) -> [SetAside] {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return [] }
        return (try? JSONDecoder().decode([SetAside].self, from: data)) ?? []
    }

    /// Sets a queued upload aside with the store's reason; false when it is no longer queued.
    @discardableResult
    func setAside(_ entry: Entry, reason: String, attempts: Int) -> Bool {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let done = state.withLockedValue { state in
            defer { state.setAsideBefore[entry.sequence] = nil }
            return state.setAside(entry, reason: reason, at: now, attempts: attempts)
        }
        if done { writeSetAside() }
        return done
    }

    /// An upload an earlier run set aside was ingested this time: it leaves the list.
    func forgetSetAside(_ entry: Entry) {
        let known = state.withLockedValue { $0.setAsideBefore.removeValue(forKey: entry.sequence) != nil }
        if known { writeSetAside() }
    }

    /// Whether an earlier run of the collector set this upload aside (it gets one more try).
    func wasSetAside(_ entry: Entry) -> Bool {
        state.withLockedValue { $0.setAsideBefore[entry.sequence] != nil }
    }

    /// How many uploads an earlier run set aside are waiting for their one more try.
    var setAsideBeforeCount: Int { state.withLockedValue { $0.setAsideBefore.count } }

    /// The set-aside upload with these bytes, if any.
    func setAsideEntry(sha256: String) -> SetAside? {
        state.withLockedValue { $0.setAsideEntry(sha256: sha256) }
    }

    /// Every upload set aside now, oldest first.
    var setAsideEntries: [SetAside] { state.withLockedValue { $0.setAsideEntries } }

    /// Uploads set aside now, per role.
    var setAsideByRole: [Role: Int] {
        state.withLockedValue { state in
            var counts: [Role: Int] = [.device: 0, .sender: 0]
            for item in state.setAsideEntries {
                counts[item.entry.role.mayUploadSenderRecords ? .sender : .device]! += 1
            }
            return counts
        }
    }

    /// Writes `rejected.json` anew (to a temporary file, synced, then renamed
    /// over it): what is set aside now and what an earlier run set aside and
    /// is not yet tried again. A failure is not fatal: the upload's bytes are
    /// in its segment whatever this file says, and only the one extra try at
    /// the next start depends on it.
    private func writeSetAside() {
        let listed = state.withLockedValue { state in
            (state.setAsideEntries + state.setAsideBefore.values).sorted { $0.entry.sequence < $1.entry.sequence }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(listed) else { return }
        let temporary = rejectedPath + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = data.withUnsafeBytes { SpoolFiles.writeAll(fd, $0, at: 0) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written, synced, rename(temporary, rejectedPath) == 0 else {
            unlink(temporary)
            return
        }
    }
}

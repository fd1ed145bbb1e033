public import Foundation

/// Ships the recorder's closed batches to an arrival collector with a
/// sender token: every visible `<directory>/<day>/*.jsonl.gz` (the batch
/// being written is hidden until it closes), each registered as
/// `sender/<day>/<file>` so a batch sent twice is counted once, and deleted
/// once the collector stored it.
public struct SenderLogShipper: Sendable {
    public var directory: URL
    public var uploader: CollectorUploader

    public init(directory: URL, uploader: CollectorUploader) {
        self.directory = directory
        self.uploader = uploader
    }

    /// What ``ship()`` did.
    public struct Summary: Sendable, Equatable {
        public var shipped: [String] = []
        public var receipts: [CollectorUploader.Receipt] = []
    }

    /// The closed batches, oldest day and name first, as paths relative to the directory.
    public func closedBatches() -> [String] {
        let files = FileManager.default
        var found: [String] = []
        for day in ((try? files.contentsOfDirectory(atPath: directory.path)) ?? []).sorted() where !day.hasPrefix(".") {
            let names = (try? files.contentsOfDirectory(atPath: directory.path + "/" + day)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") && name.hasSuffix(".jsonl.gz") {
                found.append(day + "/" + name)
            }
        }
        return found
    }

    /// Uploads each closed batch and deletes it once stored; the first
    /// failure stops the run and keeps that batch and the ones after it.
    public func ship() async throws(CollectorUploader.Failure) -> Summary {
        var summary = Summary()
        for relative in closedBatches() {
            let path = directory.path + "/" + relative
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            let receipt = try await uploader.upload(data, name: "sender/" + relative)
            summary.receipts.append(receipt)
            summary.shipped.append(relative)
            try? FileManager.default.removeItem(atPath: path)
        }
        return summary
    }
}

import CZlib
public import Foundation

/// Closed beacon files bundled for one upload: a single gzip member holding
/// the files one after the other. Upload ``gzip``; after the server has
/// stored it, pass the batch to ``BeaconCollector/confirmUpload(of:)``, which
/// deletes the files. Until then they stay, so a failed upload loses nothing.
public struct BeaconBatch: Sendable, Equatable {
    /// One file in the batch, as it was when read.
    public struct File: Sendable, Equatable {
        /// Path relative to the beacon directory: `<day>/<name>`.
        public var relativePath: String
        public var bytes: Int
        /// Whether the file ended in a torn line (a `\n` was added after it in
        /// the batch so the next file starts on a line of its own).
        public var endedTorn: Bool
    }

    /// The gzip bytes to upload (`Content-Type: application/gzip`).
    public var gzip: Data
    public var files: [File]
    /// Lines in the batch (records and any torn or blank lines).
    public var lines: Int
    /// Files that could not be read this time; they stay where they are.
    public var unreadable: [String]

    /// A name that is the same for the same bytes, for servers that store
    /// uploads as files: `beacons-<crc32>-<size>.jsonl.gz`.
    public var suggestedFileName: String {
        let crc = gzip.withUnsafeBytes { bytes in
            UInt32(crc32(0, bytes.bindMemory(to: UInt8.self).baseAddress, uInt(bytes.count)))
        }
        let hex = String(crc, radix: 16)
        return "beacons-" + String(repeating: "0", count: 8 - hex.count) + hex + "-\(gzip.count).jsonl.gz"
    }
}

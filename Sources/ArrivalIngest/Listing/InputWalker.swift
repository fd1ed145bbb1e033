import ArrivalModel
import ArrivalStore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files an ingest will read, found by walking the paths a user named.
///
/// Directories are walked recursively in sorted order; hidden entries (a name
/// starting with `.`: a sender's unfinished `.apns-…open` batch, `.DS_Store`,
/// `.git`), symbolic links, FIFOs, sockets and devices met inside a walk are
/// listed in ``skipped`` and never opened or entered, so a link cycle or a
/// pipe can neither loop nor block the walk, and nothing is left out
/// unsaid. A path named directly is read when it is a regular file or a
/// link to one.
package struct InputWalker: Sendable {
    package struct Skipped: Sendable, Hashable, CustomStringConvertible {
        package var path: String
        package var kind: String
        package var description: String { "\(path) (\(kind))" }
    }

    package private(set) var files: [String] = []
    package private(set) var skipped: [Skipped] = []
    /// Paths named that do not exist or cannot be examined, and directories
    /// that cannot be listed: nothing under them was read.
    package private(set) var unreadable: [IngestSummary.Unreadable] = []

    /// Every file under `paths`, listed before this returns.
    package init(paths: [String]) {
        var files: [String] = []
        self = Self.walk(paths: paths) {
            files.append($0)
            return true
        }
        self.files = files
    }

    private init() {}

    /// Walks `paths` in the order ``init(paths:)`` lists them, handing each
    /// file to `found` as soon as it is met (an ingest reads the first files
    /// while the rest are listed); `found` returns false to stop the walk.
    /// Returns what was skipped and what could not be read, with no
    /// ``files``.
    package static func walk(paths: [String], found: (String) -> Bool) -> InputWalker {
        var walker = InputWalker()
        var stopped = false
        for path in paths where !stopped {
            let absolute = Self.normalise(path)
            var info = stat()
            guard stat(absolute, &info) == 0 else {
                walker.unreadable.append(IngestSummary.Unreadable(path: path, reason: String(cString: strerror(errno))))
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                stopped = !found(absolute)
            case S_IFDIR:
                stopped = !walker.walk(directory: absolute, found: found)
            default:
                // Named, but a FIFO, socket or device: skipped and listed like one met in a walk.
                walker.skipped.append(Skipped(path: absolute, kind: Self.kind(of: info.st_mode)))
            }
        }
        return walker
    }

    /// The absolute, normalised form used to compare paths (Documentation/InputRecords.md).
    package static func normalise(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var result = url.path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }

    /// Returns false when `found` stopped the walk.
    private mutating func walk(directory: String, found: (String) -> Bool) -> Bool {
        guard let names = Self.entries(of: directory) else {
            unreadable.append(
                IngestSummary.Unreadable(
                    path: directory, reason: "the directory cannot be listed (\(String(cString: strerror(errno))))"))
            return true
        }
        for (name, isUTF8, type) in names {
            if name.utf8.first == UInt8(ascii: ".") {
                skipped.append(Skipped(path: (directory == "/" ? "/" : directory + "/") + name, kind: "hidden"))
                continue
            }
            guard isUTF8 else {
                skipped.append(Skipped(path: directory + "/" + name, kind: "name is not UTF-8"))
                continue
            }
            let child = directory == "/" ? "/" + name : directory + "/" + name
            // The directory listing says what most entries are; others are asked.
            if type == UInt8(DT_REG) {
                guard found(child) else { return false }
                continue
            }
            if type == UInt8(DT_DIR) {
                guard walk(directory: child, found: found) else { return false }
                continue
            }
            var info = stat()
            guard lstat(child, &info) == 0 else {
                unreadable.append(IngestSummary.Unreadable(path: child, reason: String(cString: strerror(errno))))
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: guard found(child) else { return false }
            case S_IFDIR: guard walk(directory: child, found: found) else { return false }
            default: skipped.append(Skipped(path: child, kind: Self.kind(of: info.st_mode)))
            }
        }
        return true
    }

    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFLNK: "symbolic link"
        case S_IFIFO: "FIFO"
        case S_IFSOCK: "socket"
        default: "device"
        }
    }

    /// The names in a directory but `.` and `..`, in code point order, with
    /// their `d_type` (`DT_UNKNOWN` where the file system does not say). A
    /// name that is not UTF-8 cannot be named in a Swift path: it is listed
    /// as skipped, not silently lost.
    private static func entries(of directory: String) -> [(name: String, isUTF8: Bool, type: UInt8)]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [(name: String, isUTF8: Bool, type: UInt8)] = []
        while let entry = readdir(stream) {
            let bytes: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            guard !bytes.isEmpty, bytes != [0x2E], bytes != [0x2E, 0x2E] else { continue }  // `.` and `..`
            let isUTF8 = bytes.withUnsafeBufferPointer { UTF8Validation.isValid($0) }
            names.append((String(decoding: bytes, as: UTF8.self), isUTF8, entry.pointee.d_type))
        }
        return names.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }
}

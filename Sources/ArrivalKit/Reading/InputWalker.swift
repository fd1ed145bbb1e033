import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files an ingest will read, found by walking the paths a user named.
///
/// Directories are walked recursively in sorted order; hidden entries (a name
/// starting with `.`) are left out; symbolic links, FIFOs, sockets and devices
/// met inside a walk are listed in ``skipped`` and never opened, so a link
/// cycle or a pipe can neither loop nor block the walk. A path named directly
/// is read when it is a regular file or a link to one.
public struct InputWalker: Sendable {
    public struct Skipped: Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var kind: String
        public var description: String { "\(path) (\(kind))" }
    }

    public private(set) var files: [String] = []
    public private(set) var skipped: [Skipped] = []

    public init(paths: [String]) throws(InputError) {
        for path in paths {
            let absolute = Self.normalise(path)
            var info = stat()
            guard stat(absolute, &info) == 0 else {
                throw InputError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                files.append(absolute)
            case S_IFDIR:
                walk(directory: absolute)
            default:
                throw InputError.notAFile(path: path)
            }
        }
    }

    /// The absolute, normalised form used to compare paths (contract 2.5).
    public static func normalise(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        var result = url.path
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }

    private mutating func walk(directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            skipped.append(Skipped(path: directory, kind: "unreadable directory"))
            return
        }
        for name in names.sorted() where !name.hasPrefix(".") {
            let child = directory == "/" ? "/" + name : directory + "/" + name
            var info = stat()
            guard lstat(child, &info) == 0 else {
                skipped.append(Skipped(path: child, kind: "unreadable"))
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFREG: files.append(child)
            case S_IFDIR: walk(directory: child)
            case S_IFLNK: skipped.append(Skipped(path: child, kind: "symbolic link"))
            case S_IFIFO: skipped.append(Skipped(path: child, kind: "FIFO"))
            case S_IFSOCK: skipped.append(Skipped(path: child, kind: "socket"))
            default: skipped.append(Skipped(path: child, kind: "device"))
            }
        }
    }
}

/// Problems that stop reading a path a user named.
public enum InputError: Error, CustomStringConvertible, Equatable {
    case cannotOpen(path: String, reason: String)
    case notAFile(path: String)
    case readFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason):
            "cannot open '\(path)': \(reason). Check the path exists and is readable."
        case let .notAFile(path):
            "'\(path)' is neither a regular file nor a directory. Name files or directories of JSON Lines."
        case let .readFailed(path, reason):
            "reading '\(path)' failed: \(reason). Nothing from this file was stored; run the ingest again."
        }
    }
}

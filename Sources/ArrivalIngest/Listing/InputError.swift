/// Problems that stop reading a path a user named.
package enum InputError: Error, CustomStringConvertible, Equatable {
    case cannotOpen(path: String, reason: String)
    case readFailed(path: String, reason: String)

    /// Why, without the path.
    package var reason: String {
        switch self {
        case .cannotOpen(_, let reason): "cannot be opened (\(reason))"
        case .readFailed(_, let reason): "reading failed (\(reason))"
        }
    }

    package var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open '\(path)': \(reason). Check the path exists and is readable."
        case .readFailed(let path, let reason):
            "reading '\(path)' failed: \(reason). Nothing from this file was stored; run the ingest again."
        }
    }
}

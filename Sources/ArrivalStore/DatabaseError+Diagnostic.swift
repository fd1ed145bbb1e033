import ArrivalModel
import CSQLite

extension DatabaseError: DiagnosticConvertible {
    /// The store's own advice when it has some; otherwise advice by SQLite's
    /// result code, with the raw SQLite message kept for a bug report.
    public var diagnostic: Diagnostic {
        let location = path.map { Diagnostic.Location(path: $0) }
        if let hint { return Diagnostic(.store, message, hint: hint, location: location) }
        let store = path.map { "the store '\($0)'" } ?? "the store"
        switch code {
        case SQLITE_CANTOPEN:
            return Diagnostic(
                .store, "cannot open \(store) (\(message))",
                hint: "check that the file and its directory are readable, and writable for ingest.", location: location
            )
        case SQLITE_NOTADB:
            return Diagnostic(
                .store, "\(path.map { "'\($0)'" } ?? "the file") is not an SQLite database",
                hint: "pass --db with an arrival store, or with a new file name to make one.", location: location)
        case SQLITE_READONLY:
            return Diagnostic(
                .store, "\(store) is read-only (\(message) while \(context))",
                hint: "ingest writes the store and its directory: check their permissions, or ingest into a copy.",
                location: location)
        case SQLITE_BUSY, SQLITE_LOCKED:
            return Diagnostic(
                .store, "\(store) is locked by another connection (\(message) while \(context))",
                hint: "wait for the other arrival ingest to finish, then run again.", location: location)
        case SQLITE_FULL:
            return Diagnostic(
                .store, "the disk is full (\(message) while \(context))",
                hint: "free some disk space and run again; nothing of the file being ingested was stored.",
                location: location)
        default:
            return Diagnostic(
                .store, description,
                hint: "check that the --db file is an arrival store and is writable.", location: location)
        }
    }
}

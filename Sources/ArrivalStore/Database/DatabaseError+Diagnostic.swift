public import ArrivalModel
import CSQLite

extension DatabaseError: DiagnosticConvertible {
    /// The store's own advice when it has some; otherwise advice by SQLite's
    /// result code, with the raw SQLite message kept for a bug report.
    public var diagnostic: Diagnostic {
        // Always the store, at its path when known: only the words differ.
        func advice(_ problem: String, hint: String) -> Diagnostic {
            Diagnostic(.store, problem, hint: hint, location: path.map { Diagnostic.Location(path: $0) })
        }
        if let hint { return advice(message, hint: hint) }
        let store = path.map { "the store '\($0)'" } ?? "the store"
        switch code {
        case SQLITE_CANTOPEN:
            return advice(
                "cannot open \(store) (\(message))",
                hint: "check that the file and its directory are readable, and writable for ingest.")
        case SQLITE_NOTADB:
            return advice(
                "\(path.map { "'\($0)'" } ?? "the file") is not an SQLite database",
                hint: "pass --db with an arrival store, or with a new file name to make one.")
        case SQLITE_READONLY:
            return advice(
                "\(store) is read-only (\(message) while \(context))",
                hint: "ingest writes the store and its directory: check their permissions, or ingest into a copy.")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return advice(
                "\(store) is locked by another connection (\(message) while \(context))",
                hint: "wait for the other arrival ingest to finish, then run again.")
        case SQLITE_FULL:
            return advice(
                "the disk is full (\(message) while \(context))",
                hint: "free some disk space and run again; nothing of the file being ingested was stored.")
        default:
            return advice(description, hint: "check that the --db file is an arrival store and is writable.")
        }
    }
}

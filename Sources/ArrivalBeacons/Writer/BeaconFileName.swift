/// Which process writes a beacon file: the widget extension (render
/// records) or the app (callback records).
public enum BeaconProcessRole: String, Sendable, CaseIterable {
    case widget
    case app
}

/// The name of a beacon file inside a day directory, as the simulator and
/// the pipeline expect it: `widget-<pid>.jsonl` / `app-<pid>.jsonl` for the
/// file a process is appending to, and `widget-<pid>.<n>.jsonl` for the
/// `n`-th file it rotated away (closed; it never writes to it again).
struct BeaconFileName: Equatable {
    var role: BeaconProcessRole
    var processID: Int32
    /// nil for the live file, 1, 2, … for rotated ones.
    var rotation: Int?

    var text: String {
        if let rotation { return "\(role.rawValue)-\(processID).\(rotation).jsonl" }
        return "\(role.rawValue)-\(processID).jsonl"
    }

    /// Parses a name this kit writes; any other name gives nil (and the
    /// collector leaves such files alone).
    init?(_ name: String) {
        guard name.hasSuffix(".jsonl") else { return nil }
        let stem = name.dropLast(".jsonl".count)
        guard let dash = stem.firstIndex(of: "-"),
            let role = BeaconProcessRole(rawValue: String(stem[..<dash]))
        else { return nil }
        let rest = stem[stem.index(after: dash)...]
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2,
            let pid = BeaconFileName.number(parts[0]), let pid32 = Int32(exactly: pid)
        else { return nil }
        var rotation: Int?
        if parts.count == 2 {
            guard let n = BeaconFileName.number(parts[1]), n >= 1 else { return nil }
            rotation = n
        }
        self.init(role: role, processID: pid32, rotation: rotation)
    }

    init(role: BeaconProcessRole, processID: Int32, rotation: Int? = nil) {
        self.role = role
        self.processID = processID
        self.rotation = rotation
    }

    /// Digits only (no sign, no spaces), at most 9 of them.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(text)
    }
}

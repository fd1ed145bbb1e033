/// Why a line was not accepted as a record (Documentation/InputRecords.md). A line gets one
/// cause: the first that applies, in the order of the cases below.
public enum MalformedCause: String, CaseIterable, Sendable, Comparable, Codable, Error {
    /// Longer than 1 MiB, not counting the line terminator; never held whole.
    case lineTooLong = "line_too_long"
    /// Not valid UTF-8.
    case invalidUTF8 = "invalid_utf8"
    /// Not RFC 8259 JSON (a torn last line usually lands here).
    case invalidJSON = "invalid_json"
    /// Containers nested deeper than 64 levels (the line's object is level 1).
    case tooDeep = "too_deep"
    /// An object, at any depth, repeats a key (compared after unescaping).
    case duplicateKey = "duplicate_key"
    /// Valid JSON whose top level is not an object.
    case notAnObject = "not_an_object"
    /// `v` is present and is not the integer 1.
    case unsupportedVersion = "unsupported_version"
    /// `kind` is not `apns`, `render`, `callback` or `exchange`.
    case unknownKind = "unknown_kind"
    /// A required field is absent or `null`.
    case missingField = "missing_field"
    /// A field has the wrong JSON type (an int must be an integer literal in the signed 64-bit range).
    case wrongType = "wrong_type"
    /// A time field is a string but not `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with a real date and time.
    case invalidTime = "invalid_time"
    /// `event`, `callback`, `state` or `provider` has a value outside its list.
    case invalidEnum = "invalid_enum"
    /// An `exchange` line from which no `apns` record can be derived: its
    /// request, response or body lacks what its provider needs or breaks a type.
    case invalidExchange = "invalid_exchange"
    /// (Contract 3.2) A field the record's kind reads (for an `exchange`: a
    /// field of the record derived from it) holds U+0000, written `\u0000`:
    /// no engine may store a line another cannot (PostgreSQL's `text` cannot
    /// hold it). Checked once every field is otherwise valid.
    case nulCharacter = "nul_character"
    /// An `apns` or `exchange` line uploaded to the collector with a device
    /// token, which may upload `render` and `callback` records only.
    case kindNotAllowed = "kind_not_allowed"
    /// The file's gzip stream broke off; what was decoded before the break was kept.
    case truncatedGzip = "truncated_gzip"
    /// The file passed an ingest limit (inflated bytes or lines: the
    /// collector's per-upload bounds, or `arrival ingest --max-lines` /
    /// `--max-inflated-bytes`); the lines before it were kept, and the first
    /// line not read counts once as this cause.
    case tooLarge = "too_large"

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

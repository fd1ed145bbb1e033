/// What SQLite and PostgreSQL spell differently in the outcome views
/// (``OutcomeRules/viewSQL(for:)``).
public enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// A name for a subquery in `FROM` (PostgreSQL 15 requires one).
    func alias(_ name: String) -> String {
        self == .sqlite ? "" : " AS \(name)"
    }

    /// A text column as a sort key: by its bytes, NULL first. SQLite's
    /// default collation is already that; PostgreSQL's follows the
    /// database's locale and puts NULL last.
    func text(_ column: String) -> String {
        self == .sqlite ? column : "\(column) COLLATE \"C\" NULLS FIRST"
    }

    /// A nullable number as a sort key, NULL first.
    func nullable(_ column: String) -> String {
        self == .sqlite ? column : "\(column) NULLS FIRST"
    }

    /// The last `count` characters of a text.
    func suffix(_ column: String, _ count: Int) -> String {
        self == .sqlite ? "substr(\(column), -\(count))" : "right(\(column), \(count))"
    }

    /// The smaller of two values (SQLite's two-argument `min`).
    var least: String { self == .sqlite ? "min" : "least" }

    /// False as a column value of a boolean column.
    var `false`: String { self == .sqlite ? "0" : "false" }

    /// A comparison true when either side is NULL and the other is not.
    var isDistinctFrom: String { self == .sqlite ? "IS NOT" : "IS DISTINCT FROM" }
}

package import Logging
package import PostgresNIO

/// How a schema is to be spread over a Citus cluster: which tables are
/// distributed, by which column, and which are reference tables (a copy on
/// every node).
package struct CitusLayout: Sendable {
    /// Distributed tables and their distribution column.
    package var distributed: [String: String]
    /// Reference tables.
    package var reference: Set<String>

    package init(distributed: [String: String], reference: Set<String>) {
        self.distributed = distributed
        self.reference = reference
    }
}

/// Citus's rules for a schema it can distribute, checked on a live
/// PostgreSQL catalog (Citus itself is not packaged here): a schema that
/// passes can be handed to `create_distributed_table` and
/// `create_reference_table` as laid out.
package enum CitusRules {
    /// One broken rule.
    package struct Violation: Sendable, Equatable, CustomStringConvertible {
        package var table: String
        package var rule: String

        package var description: String { "\(table): \(rule)" }
    }

    /// The rules `layout` breaks in `schema`:
    ///
    /// - every table of the schema is placed (distributed or reference);
    /// - a distributed table has its distribution column, and it is NOT
    ///   NULL (Citus refuses a row without a distribution value);
    /// - every primary key and unique index of a distributed table includes
    ///   its distribution column (uniqueness is enforced shard by shard);
    /// - no foreign key goes from a reference table into a distributed one;
    /// - a foreign key between distributed tables joins their distribution
    ///   columns (the rows it relates must be on one node).
    package static func check(
        _ layout: CitusLayout, schema: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Violation] {
        var violations: [Violation] = []
        // Tables, and each table's columns with whether they may be NULL.
        var columns: [String: [String: Bool]] = [:]
        let columnRows = try await connection.query(
            """
            SELECT c.relname, a.attname, a.attnotnull
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = \(schema) AND c.relkind IN ('r', 'p')
            """, logger: logger)
        for try await (table, column, notNull) in columnRows.decode((String, String, Bool).self) {
            columns[table, default: [:]][column] = notNull
        }
        for table in columns.keys.sorted()
        where layout.distributed[table] == nil && !layout.reference.contains(table) {
            violations.append(Violation(table: table, rule: "is neither distributed nor a reference table"))
        }
        for (table, column) in layout.distributed.sorted(by: { $0.key < $1.key }) {
            guard let tableColumns = columns[table] else {
                violations.append(Violation(table: table, rule: "is laid out as distributed but does not exist"))
                continue
            }
            guard let notNull = tableColumns[column] else {
                violations.append(Violation(table: table, rule: "has no distribution column \(column)"))
                continue
            }
            if !notNull {
                violations.append(Violation(table: table, rule: "distribution column \(column) may be NULL"))
            }
        }
        for table in layout.reference.sorted() where columns[table] == nil {
            violations.append(Violation(table: table, rule: "is laid out as a reference table but does not exist"))
        }

        // Unique indexes (primary keys and unique constraints among them), with their columns; an
        // expression or partial index counts by its plain columns.
        let uniqueRows = try await connection.query(
            """
            SELECT c.relname, i.relname,
                   coalesce(array_agg(a.attname::text) FILTER (WHERE a.attname IS NOT NULL), '{}')
            FROM pg_index x
            JOIN pg_class c ON c.oid = x.indrelid
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (x.indkey::int2[])
            WHERE n.nspname = \(schema) AND x.indisunique
            GROUP BY c.relname, i.relname
            ORDER BY c.relname, i.relname
            """, logger: logger)
        for try await (table, index, indexColumns) in uniqueRows.decode((String, String, [String]).self) {
            guard let column = layout.distributed[table], !indexColumns.contains(column) else { continue }
            violations.append(
                Violation(table: table, rule: "unique index \(index) does not include distribution column \(column)"))
        }

        // Foreign keys, with the columns on both sides in order.
        let foreignRows = try await connection.query(
            """
            SELECT con.conname, c.relname, f.relname,
                   array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
                         JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o),
                   array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o)
                         JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o)
            FROM pg_constraint con
            JOIN pg_class c ON c.oid = con.conrelid
            JOIN pg_class f ON f.oid = con.confrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(schema) AND con.contype = 'f'
            ORDER BY c.relname, con.conname
            """, logger: logger)
        for try await (name, table, target, from, to) in foreignRows.decode(
            (String, String, String, [String], [String]).self)
        {
            if layout.reference.contains(table), layout.distributed[target] != nil {
                violations.append(
                    Violation(table: table, rule: "foreign key \(name) goes from a reference table into \(target)"))
            }
            if let column = layout.distributed[table], let targetColumn = layout.distributed[target] {
                let joined = zip(from, to).contains { $0 == column && $1 == targetColumn }
                if !joined {
                    violations.append(
                        Violation(
                            table: table,
                            rule: "foreign key \(name) into \(target) does not join the distribution columns"))
                }
            }
        }
        return violations
    }
}

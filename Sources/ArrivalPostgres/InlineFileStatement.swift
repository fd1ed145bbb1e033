import ArrivalHandOff
import ArrivalModel
import ArrivalStore
import NIOCore
import PostgresNIO

/// The statement that stores a small file whose rows and malformed lines
/// were held (most device files): its rows bound as one array a column,
/// so the statement's text never changes and each connection prepares it
/// once. A statement written out with one placeholder a value was parsed
/// and planned anew for every file, which took the server about as long as
/// storing the rows did.
///
/// One `WITH` query: the file's id (given, when it took over earlier
/// versions' records, else drawn), its rows of each kind into the tables
/// they go to in line order with `ON CONFLICT DO NOTHING`, its malformed
/// lines, and the registry row last with its counts (``PostgresFile``
/// says why). Kinds the file has no rows of are empty arrays.
struct InlineFileStatement: PostgresPreparedStatement {
    typealias Row = (Int64, Int64, Int64, Int64, Int64)

    var fileID: Int64?
    /// Each kind's columns: content hash, then ``RecordKind/columns``.
    var columns: [[ColumnArray]]
    var malformed: [ColumnArray]
    var sha256: String
    var path: String
    var byteCount: Int64
    var gzip: Bool
    var lines: Int64
    var records: Int64
    var malformedCount: Int64
    var now: Int64

    static let sql: String = {
        var parameter = 1
        func next(_ type: String) -> String {
            parameter += 1
            return "$\(parameter)::\(type)"
        }
        var steps = ["file AS (SELECT coalesce($1::bigint, nextval('arrival.file_ids')) AS id)"]
        var counts: [String] = []
        for kind in RecordKind.allCases {
            steps.append(
                """
                input_\(kind.rawValue) AS MATERIALIZED (
                    SELECT nextval('arrival.\(kind.sequence)') AS id, u.* FROM \(kind.unnest(from: parameter + 1)))
                """)
            parameter += kind.columns.count + 1
            let (inserts, count) = kind.storingSteps(from: "input_\(kind.rawValue)")
            steps += inserts
            counts.append(count)
        }
        steps.append("counted AS (SELECT \(counts[0]) AS apns, \(counts[1]) AS renders, \(counts[2]) AS callbacks)")
        steps.append(
            """
            malformed AS (
                INSERT INTO arrival.malformed_lines (file_id, line, cause, problem)
                SELECT file.id, m.line, m.cause, m.problem
                FROM unnest(\(next("bigint[]")), \(next("text[]")), \(next("text[]"))) AS m(line, cause, problem)
                CROSS JOIN file
                ON CONFLICT DO NOTHING RETURNING 1)
            """)
        let p = (0..<8).map { _ in
            parameter += 1
            return "$\(parameter)"
        }
        steps.append(
            """
            claim AS (
                INSERT INTO arrival.files (content_sha256, id, path, byte_count, gzip, line_count, record_count,
                                           duplicate_count, malformed_count, ingested_at)
                SELECT \(p[0])::text, file.id, \(p[1])::text, \(p[2])::bigint, \(p[3])::boolean, \(p[4])::bigint,
                       c.apns + c.renders + c.callbacks, \(p[5])::bigint - (c.apns + c.renders + c.callbacks),
                       \(p[6])::bigint, \(p[7])::bigint
                FROM file CROSS JOIN counted AS c
                ON CONFLICT (content_sha256) DO NOTHING RETURNING id)
            """)
        return "WITH " + steps.joined(separator: ",\n")
            + "\nSELECT file.id, c.apns, c.renders, c.callbacks, (SELECT count(*) FROM claim) "
            + "FROM file CROSS JOIN counted AS c"
    }()

    func makeBindings() throws -> PostgresBindings {
        var binds = PostgresBindings(capacity: 64)
        binds.append(fileID)
        for kind in columns { for column in kind { binds.append(column) } }
        for column in malformed { binds.append(column) }
        binds.append(sha256)
        binds.append(path)
        binds.append(byteCount)
        binds.append(gzip)
        binds.append(lines)
        binds.append(records)
        binds.append(malformedCount)
        binds.append(now)
        return binds
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }

    /// The bindings of `kind`'s rows in `batch` for ``RecordKind/unnest(from:)`` at `$1`.
    static func bindings(of batch: RowBatch, kind: RecordKind) throws -> PostgresBindings {
        var binds = PostgresBindings(capacity: kind.columns.count + 1)
        for column in try columns(of: batch, kind: kind) { binds.append(column) }
        return binds
    }

    /// The columns of `kind`'s rows in `batch`, in line order. Throws, naming
    /// the line, for a text PostgreSQL cannot hold (``CopyText/storable(_:_:_:line:)``).
    static func columns(of batch: RowBatch?, kind: RecordKind) throws -> [ColumnArray] {
        var arrays =
            [ColumnArray(.int8)]
            + kind.columns.map { ColumnArray(RecordKind.integerColumns.contains($0) ? .int8 : .text) }
        guard let batch else { return arrays }
        try batch.bytes.withUnsafeBufferPointer { arena in
            for row in batch.rows where row.kind == kind {
                arrays[0].append(Int64(bitPattern: row.hash))
                for (index, cell) in batch.cells(of: row).enumerated() {
                    switch cell {
                    case .int(let value): arrays[index + 1].append(value)
                    case .noInt, .noText: arrays[index + 1].appendNull()
                    case .text(let offset, let count):
                        arrays[index + 1].append(try CopyText.storable(arena, offset, count, line: row.line))
                    }
                }
            }
        }
        return arrays
    }
}

/// A one-dimensional `bigint[]` or `text[]` parameter in PostgreSQL's
/// binary array format, NULL elements kept (postgres-nio's arrays have
/// none).
struct ColumnArray: PostgresDynamicTypeEncodable, Sendable {
    enum Element: Sendable {
        case int8
        case text
    }

    let element: Element
    private var elements = ByteBuffer()
    private var count: Int32 = 0
    private var hasNull = false

    init(_ element: Element) {
        self.element = element
    }

    mutating func append(_ value: Int64) {
        elements.writeInteger(Int32(8))
        elements.writeInteger(value)
        count += 1
    }

    mutating func append(_ text: some Collection<UInt8>) {
        elements.writeInteger(Int32(text.count))
        elements.writeBytes(text)
        count += 1
    }

    mutating func append(_ text: String) {
        append(Array(text.utf8))
    }

    mutating func appendNull() {
        elements.writeInteger(Int32(-1))
        hasNull = true
        count += 1
    }

    var psqlType: PostgresDataType { element == .int8 ? .int8Array : .textArray }
    var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        byteBuffer.writeInteger(Int32(count == 0 ? 0 : 1))  // dimensions
        byteBuffer.writeInteger(Int32(hasNull ? 1 : 0))
        byteBuffer.writeInteger((element == .int8 ? PostgresDataType.int8 : PostgresDataType.text).rawValue)
        guard count > 0 else { return }
        byteBuffer.writeInteger(count)
        byteBuffer.writeInteger(Int32(1))  // lower bound
        var copy = elements
        byteBuffer.writeBuffer(&copy)
    }
}

extension RecordKind {
    /// `unnest` of this kind's rows bound as one array a column (``ColumnArray``)
    /// at parameters `$first` on (content hash, then ``columns``), named `u`.
    func unnest(from first: Int) -> String {
        let names = ["content_hash"] + columns
        let arrays = names.enumerated().map { index, name in
            "$\(first + index)::\(RecordKind.integerColumns.contains(name) || name == "content_hash" ? "bigint" : "text")[]"
        }
        return "unnest(\(arrays.joined(separator: ", "))) AS u(\(names.joined(separator: ", ")))"
    }
}

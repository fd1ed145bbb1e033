import NIOCore
import PostgresNIO

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

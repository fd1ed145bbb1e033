import ArrivalModel

/// Decoded lines packed for the hand-off from the reading thread to the
/// writing one: every field is a fixed-size ``Cell``, every string's bytes
/// live in one arena, and lines that are not records are kept by number and
/// cause. A batch costs a handful of allocations however many records it
/// holds and is reused batch after batch; the writer binds strings straight
/// from the arena, so no per-field Swift `String` is made, retained, copied
/// or freed on either thread.
///
/// A row's cells are its contract fields in the order of the store's columns
/// (``RecordKind/columnCount``); that is also the order the de-duplication
/// hash covers them in (the test `RowBatchTests` writes the same hash out field by field).
public struct RowBatch: Sendable {
    /// One field of a row.
    public enum Cell: Equatable, Sendable {
        case int(Int64)
        /// Bytes `offset..<offset + count` of the arena.
        case text(offset: Int32, count: Int32)
        /// An absent or null integer field.
        case noInt
        /// An absent or null string field.
        case noText
    }

    public struct Row: Sendable {
        @usableFromInline var kind: RecordKind
        @usableFromInline var line: Int
        @usableFromInline var firstCell: Int
        /// The de-duplication key (``recordKey(time:hash:)``).
        @usableFromInline var key: UInt64

        @inlinable init(kind: RecordKind, line: Int, firstCell: Int, key: UInt64) {
            self.kind = kind
            self.line = line
            self.firstCell = firstCell
            self.key = key
        }
    }

    // Set only by the methods below. The decoder (another module) builds rows
    // through them, a call per field of every line: they are `@inlinable
    // public`, which the compiler inlines across modules (it does not inline
    // `@inlinable package` ones: Benchmarks/README.md).
    @usableFromInline package internal(set) var rows: [Row] = []
    @usableFromInline var cells: [Cell] = []
    /// The arena of string bytes, unescaped.
    @usableFromInline var bytes: [UInt8] = []
    @usableFromInline package internal(set) var malformed: [(line: Int, cause: MalformedCause, problem: String?)] = []

    package init(capacity: Int = 0) {
        rows.reserveCapacity(capacity)
        cells.reserveCapacity(capacity * RecordKind.apns.columnCount)
        bytes.reserveCapacity(capacity * 256)
        malformed.reserveCapacity(16)
    }

    /// Records and malformed lines held.
    @inlinable public var count: Int { rows.count + malformed.count }
    /// The bytes of the strings held. (Cells address the arena with 32-bit
    /// offsets: the ingest hands a batch on long before 2 GiB.)
    @inlinable public var byteCount: Int { bytes.count }
    package var isEmpty: Bool { rows.isEmpty && malformed.isEmpty }

    package mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
        cells.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        malformed.removeAll(keepingCapacity: true)
    }

    func cells(of row: Row) -> ArraySlice<Cell> {
        cells[row.firstCell..<row.firstCell + row.kind.columnCount]
    }

    // MARK: - Building a row

    /// Where a row being built started, to finish or abandon it.
    public struct Mark {
        @usableFromInline var cells: Int
        @usableFromInline var bytes: Int

        @inlinable init(cells: Int, bytes: Int) {
            self.cells = cells
            self.bytes = bytes
        }
    }

    @inlinable public var mark: Mark { Mark(cells: cells.count, bytes: bytes.count) }

    /// Forgets the cells and bytes appended since `mark`.
    @inlinable
    public mutating func abandon(_ mark: Mark) {
        cells.removeSubrange(mark.cells...)
        bytes.removeSubrange(mark.bytes...)
    }

    @inlinable @inline(__always)
    public mutating func append(_ cell: Cell) {
        cells.append(cell)
    }

    /// Appends a text cell holding `text`.
    @inlinable @inline(__always)
    public mutating func appendText(_ text: UnsafeBufferPointer<UInt8>) {
        let start = bytes.count
        bytes.append(contentsOf: text)
        cells.append(.text(offset: Int32(start), count: Int32(text.count)))
    }

    /// Appends a text cell holding the bytes `write` appends to the arena
    /// (the decoder unescapes JSON string content straight into it).
    @inlinable
    public mutating func appendText(writing write: (inout [UInt8]) -> Void) {
        let start = bytes.count
        write(&bytes)
        cells.append(.text(offset: Int32(start), count: Int32(bytes.count - start)))
    }

    /// Closes the row whose cells were appended since `mark`: hashes them and
    /// computes its store key from the cell at `kind.timeColumn`.
    @inlinable
    public mutating func finishRow(_ mark: Mark, kind: RecordKind, line: Int) {
        assert(cells.count - mark.cells == kind.columnCount)
        let hash = contentHash(kind: kind, firstCell: mark.cells)
        guard case .int(let time) = cells[mark.cells + kind.timeColumn] else {
            preconditionFailure("a record's time is a required integer")
        }
        rows.append(Row(kind: kind, line: line, firstCell: mark.cells, key: recordKey(time: time, hash: hash)))
    }

    /// The kind of the last row finished.
    package var lastRowKind: RecordKind? { rows.last?.kind }

    /// Takes back the last row, finished since `mark` (a record the ingest
    /// then refuses, such as an `apns` record uploaded with a device token).
    package mutating func removeLastRow(since mark: Mark) {
        rows.removeLast()
        abandon(mark)
    }

    /// Notes a malformed line, with the field and reason when one field is at fault.
    @inlinable
    public mutating func appendMalformed(line: Int, cause: MalformedCause, problem: String? = nil) {
        malformed.append((line, cause, problem))
    }

    /// Appends `record` as a row (the path of records made in code, not decoded).
    mutating func append(_ record: Record, line: Int = 0) {
        let start = mark
        func text(_ value: String?) {
            guard var value else { return append(.noText) }
            value.withUTF8 { appendText($0) }
        }
        func int(_ value: Int64?) { append(value.map(Cell.int) ?? .noInt) }
        switch record {
        case .apns(let r):
            text(r.apnsID)
            int(r.sentAt)
            int(r.status)
            text(r.reason)
            text(r.pushToken)
            text(r.activityID)
            int(r.seq)
            text(r.event)
            int(r.apsTimestamp)
            int(r.payloadBytes)
            text(r.topic)
            text(r.pushType)
            int(r.priority)
            text(r.environment)
            int(r.latencyMS)
            text(r.provider?.rawValue)
        case .render(let r):
            text(r.activityID)
            int(r.seq)
            int(r.renderedAt)
            text(r.surface)
            text(r.deviceID)
            text(r.osVersion)
            text(r.deviceModel)
            text(r.appVersion)
        case .callback(let r):
            text(r.callback.rawValue)
            text(r.activityID)
            text(r.pushToken)
            int(r.seq)
            text(r.state)
            int(r.receivedAt)
            text(r.deviceID)
            text(r.osVersion)
            text(r.deviceModel)
            text(r.appVersion)
        }
        finishRow(start, kind: record.kind, line: line)
    }

    // MARK: - Reading a row back

    /// The row as a ``Record`` (for callers that want values, not the store).
    package func record(_ row: Row) -> Record {
        var index = row.firstCell
        func next() -> Cell {
            defer { index += 1 }
            return cells[index]
        }
        func text() -> String? {
            guard case .text(let offset, let count) = next() else { return nil }
            return bytes.withUnsafeBufferPointer {
                String(decoding: UnsafeBufferPointer(rebasing: $0[Int(offset)..<Int(offset + count)]), as: UTF8.self)
            }
        }
        func int() -> Int64? {
            guard case .int(let value) = next() else { return nil }
            return value
        }
        switch row.kind {
        case .apns:
            return .apns(
                APNSRecord(
                    apnsID: text()!, sentAt: int()!, status: int()!, reason: text(), pushToken: text()!,
                    activityID: text(), seq: int(), event: text(), apsTimestamp: int()!, payloadBytes: int(),
                    topic: text(), pushType: text(), priority: int(), environment: text(), latencyMS: int(),
                    provider: text().flatMap(PushProvider.init(rawValue:))))
        case .render:
            return .render(
                RenderRecord(
                    activityID: text()!, seq: int()!, renderedAt: int()!, surface: text(), deviceID: text(),
                    osVersion: text(), deviceModel: text(), appVersion: text()))
        case .callback:
            return .callback(
                CallbackRecord(
                    callback: CallbackRecord.Kind(rawValue: text()!)!, activityID: text(), pushToken: text(),
                    seq: int(),
                    state: text(), receivedAt: int()!, deviceID: text(), osVersion: text(), deviceModel: text(),
                    appVersion: text()))
        }
    }

    /// The de-duplication hash of a record, computed from
    /// the cells: the kind's tag, then every field in column order. A null
    /// `provider` (APNs itself, the last `apns` column) is left out, so an
    /// `apns` record hashes as it did before providers existed and a store
    /// written then still finds it a repeat.
    @inlinable
    func contentHash(kind: RecordKind, firstCell: Int) -> UInt64 {
        var h = StableHash()
        h.combine(UInt64(kind.index + 1))
        var end = firstCell + kind.columnCount
        if kind == .apns, cells[end - 1] == .noText { end -= 1 }
        bytes.withUnsafeBufferPointer { arena in
            for index in firstCell..<end {
                switch cells[index] {
                case .int(let value): h.combine(value as Int64?)
                case .noInt: h.combine(nil as Int64?)
                case .noText: h.combine(nil as String?)
                case .text(let offset, let count):
                    h.combine(UnsafeBufferPointer(rebasing: arena[Int(offset)..<Int(offset + count)]))
                    h.combine(UInt64(count) | 1 << 63)
                }
            }
        }
        return h.finish()
    }
}

extension RecordKind {
    /// The table that stores records of this kind.
    var table: String {
        switch self {
        case .apns: "apns"
        case .render: "renders"
        case .callback: "callbacks"
        }
    }

    /// The contract fields of a record of this kind: the columns of its
    /// table, the cells of its rows and what its hash covers, in this order.
    var columns: [String] {
        switch self {
        case .apns:
            [
                "apns_id", "sent_at", "status", "reason", "push_token", "activity_id", "seq", "event",
                "aps_timestamp", "payload_bytes", "topic", "push_type", "priority", "environment", "latency_ms",
                "provider",
            ]
        case .render:
            ["activity_id", "seq", "rendered_at", "surface", "device_id", "os_version", "device_model", "app_version"]
        case .callback:
            [
                "callback", "activity_id", "push_token", "seq", "state", "received_at", "device_id", "os_version",
                "device_model", "app_version",
            ]
        }
    }

    /// The number of ``columns`` (a constant: the decoder checks it per row).
    @inlinable var columnCount: Int {
        switch self {
        case .apns: 16
        case .render: 8
        case .callback: 10
        }
    }

    /// The column of the time the store key begins with: `sent_at`,
    /// `rendered_at`, `received_at`.
    @inlinable var timeColumn: Int {
        switch self {
        case .apns: 1
        case .render: 2
        case .callback: 5
        }
    }
}

public import ArrivalModel

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
package struct RowBatch: Sendable {
    /// One field of a row.
    package enum Cell: Equatable, Sendable {
        case int(Int64)
        /// Bytes `offset..<offset + count` of the arena.
        case text(offset: Int32, count: Int32)
        /// An absent or null integer field.
        case noInt
        /// An absent or null string field.
        case noText
    }

    package struct Row: Sendable {
        @usableFromInline package internal(set) var kind: RecordKind
        @usableFromInline package internal(set) var line: Int
        @usableFromInline package internal(set) var firstCell: Int
        /// The de-duplication key (``recordKey(time:hash:)``).
        @usableFromInline package internal(set) var key: UInt64
        /// The whole 64-bit hash of every contract field the key keeps 20
        /// bits of: with the record's time (and the column a store with
        /// several writers distributes it by), its identity there.
        @usableFromInline package internal(set) var hash: UInt64

        @inlinable init(kind: RecordKind, line: Int, firstCell: Int, key: UInt64) {
            self.kind = kind
            self.line = line
            self.firstCell = firstCell
            self.key = key
            self.hash = 0
        }
    }

    // Set only by the methods below. The decoder (another module) builds rows
    // through them, a call per field of every line: they are `@inlinable
    // public`, which the compiler inlines across modules (it does not inline
    // `@inlinable package` ones: Benchmarks/README.md).
    @usableFromInline package internal(set) var rows: [Row] = []
    @usableFromInline package internal(set) var cells: [Cell] = []
    /// The arena of string bytes, unescaped.
    @usableFromInline package internal(set) var bytes: [UInt8] = []
    @usableFromInline package internal(set) var malformed: [(line: Int, cause: MalformedCause, problem: String?)] = []
    /// The rows before this one have their keys; those from it on wait for
    /// ``computeKeys()``.
    @usableFromInline package internal(set) var keyed = 0

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
        keyed = 0
        rows.removeAll(keepingCapacity: true)
        cells.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        malformed.removeAll(keepingCapacity: true)
    }

    package func cells(of row: Row) -> ArraySlice<Cell> {
        cells[row.firstCell..<row.firstCell + row.kind.columnCount]
    }

    // MARK: - Building a row

    /// Where a row being built started, to finish or abandon it.
    package struct Mark {
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

    /// The column, counted from `mark`, of the first text appended since
    /// `mark` that holds the byte 0 (U+0000); nil when none does.
    package func columnHoldingNul(since mark: Mark) -> Int? {
        guard bytes.count > mark.bytes else { return nil }
        return bytes.withUnsafeBufferPointer { arena -> Int? in
            guard UnsafeBufferPointer(rebasing: arena[mark.bytes...]).contains(0) else { return nil }
            for index in mark.cells..<cells.count {
                guard case .text(let offset, let count) = cells[index], count > 0 else { continue }
                if UnsafeBufferPointer(rebasing: arena[Int(offset)..<Int(offset + count)]).contains(0) {
                    return index - mark.cells
                }
            }
            return nil
        }
    }

    /// Closes the row whose cells were appended since `mark`. Its store key
    /// (from its hash and the cell at `kind.timeColumn`) is computed by
    /// ``computeKeys()``, with those of the rows around it.
    @inlinable
    public mutating func finishRow(_ mark: Mark, kind: RecordKind, line: Int) {
        assert(cells.count - mark.cells == kind.columnCount)
        guard case .int = cells[mark.cells + kind.timeColumn] else {
            preconditionFailure("a record's time is a required integer")
        }
        rows.append(Row(kind: kind, line: line, firstCell: mark.cells, key: 0))
    }

    /// Computes the store keys of the rows finished since the last call.
    /// Four rows of one kind in a row are hashed side by side
    /// (``StableHash/combine(_:_:_:_:_:_:_:_:count:)``): hashing every byte
    /// of every record is a large share of the reading thread's work on a
    /// large sender file, and four independent chains keep the CPU's
    /// pipelines full. The keys are the same as one row at a time
    /// (``contentHash(kind:firstCell:)``).
    package mutating func computeKeys() {
        var index = keyed
        while index < rows.count {
            let kind = rows[index].kind
            if index + 4 <= rows.count, rows[index + 1].kind == kind, rows[index + 2].kind == kind,
                rows[index + 3].kind == kind
            {
                let hashes = contentHashes(
                    kind: kind,
                    firstCells: (
                        rows[index].firstCell, rows[index + 1].firstCell, rows[index + 2].firstCell,
                        rows[index + 3].firstCell
                    ))
                rows[index].key = key(of: index, hash: hashes.0)
                rows[index + 1].key = key(of: index + 1, hash: hashes.1)
                rows[index + 2].key = key(of: index + 2, hash: hashes.2)
                rows[index + 3].key = key(of: index + 3, hash: hashes.3)
                rows[index].hash = hashes.0
                rows[index + 1].hash = hashes.1
                rows[index + 2].hash = hashes.2
                rows[index + 3].hash = hashes.3
                index += 4
            } else {
                let hash = contentHash(kind: kind, firstCell: rows[index].firstCell)
                rows[index].key = key(of: index, hash: hash)
                rows[index].hash = hash
                index += 1
            }
        }
        keyed = rows.count
    }

    /// Row `index`'s store key, from its time cell and `hash`.
    private func key(of index: Int, hash: UInt64) -> UInt64 {
        let row = rows[index]
        guard case .int(let time) = cells[row.firstCell + row.kind.timeColumn] else {
            preconditionFailure("a record's time is a required integer")
        }
        return recordKey(time: time, hash: hash)
    }

    /// The kind of the last row finished.
    package var lastRowKind: RecordKind? { rows.last?.kind }

    /// Takes back the last row, finished since `mark` (a record the ingest
    /// then refuses, such as an `apns` record uploaded with a device token).
    package mutating func removeLastRow(since mark: Mark) {
        rows.removeLast()
        keyed = min(keyed, rows.count)
        abandon(mark)
    }

    /// Notes a malformed line, with the field and reason when one field is at fault.
    @inlinable
    public mutating func appendMalformed(line: Int, cause: MalformedCause, problem: String? = nil) {
        malformed.append((line, cause, problem))
    }

    /// Appends `record` as a row (the path of records made in code, not decoded).
    package mutating func append(_ record: Record, line: Int = 0) {
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
            text(r.channelID)
        case .render(let r):
            text(r.activityID)
            int(r.seq)
            int(r.renderedAt)
            text(r.surface)
            text(r.deviceID)
            text(r.osVersion)
            text(r.deviceModel)
            text(r.appVersion)
            text(r.channelID)
            text(r.frequentPushes)
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
            text(r.channelID)
            text(r.frequentPushes)
        }
        finishRow(start, kind: record.kind, line: line)
        computeKeys()
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
                    apnsID: text()!, sentAt: int()!, status: int()!, reason: text(), pushToken: text(),
                    activityID: text(), seq: int(), event: text(), apsTimestamp: int()!, payloadBytes: int(),
                    topic: text(), pushType: text(), priority: int(), environment: text(), latencyMS: int(),
                    provider: text().flatMap(PushProvider.init(rawValue:)), channelID: text()))
        case .render:
            return .render(
                RenderRecord(
                    activityID: text()!, seq: int()!, renderedAt: int()!, surface: text(), deviceID: text(),
                    osVersion: text(), deviceModel: text(), appVersion: text(), channelID: text(),
                    frequentPushes: text()))
        case .callback:
            return .callback(
                CallbackRecord(
                    callback: CallbackRecord.Kind(rawValue: text()!)!, activityID: text(), pushToken: text(),
                    seq: int(),
                    state: text(), receivedAt: int()!, deviceID: text(), osVersion: text(), deviceModel: text(),
                    appVersion: text(), channelID: text(), frequentPushes: text()))
        }
    }

    /// The de-duplication hash of a record, computed from
    /// the cells: the kind's tag, then every field in column order. The
    /// columns added after the first stores (``RecordKind/laterColumns``:
    /// an `apns` record's `provider`, every kind's `channel_id`) are left
    /// out when null and marked by a tag of their own when not, so a record
    /// without them hashes as it did before they existed and a store
    /// written then still finds it a repeat.
    func contentHash(kind: RecordKind, firstCell: Int) -> UInt64 {
        var h = StableHash()
        h.combine(UInt64(kind.index + 1))
        let later = firstCell + kind.columnCount - kind.laterColumns
        bytes.withUnsafeBufferPointer { arena in
            // Only empty texts can point into an empty arena: no byte is read there.
            let base = arena.baseAddress ?? emptyArena
            for index in firstCell..<later { Self.combine(cells[index], into: &h, arena: base) }
            for index in later..<firstCell + kind.columnCount {
                Self.combineLater(cells[index], column: index - firstCell, into: &h, arena: base)
            }
        }
        return h.finish()
    }

    /// A later column's cell into a row's hash: nothing when null, else a
    /// tag for the column, then the cell. The `apns` provider (column 15,
    /// which no other kind has) gets no tag: it hashed so before the other
    /// later columns existed.
    @inline(__always)
    private static func combineLater(
        _ cell: Cell, column: Int, into h: inout StableHash, arena: UnsafePointer<UInt8>
    ) {
        guard cell != .noText else { return }
        if column != 15 { h.combine(UInt64(0xC4A0_0000 + column)) }
        combine(cell, into: &h, arena: arena)
    }

    /// ``contentHash(kind:firstCell:)`` of four rows of one kind at once.
    func contentHashes(kind: RecordKind, firstCells f: (Int, Int, Int, Int)) -> (UInt64, UInt64, UInt64, UInt64) {
        var (h0, h1, h2, h3) = (StableHash(), StableHash(), StableHash(), StableHash())
        let tag = UInt64(kind.index + 1)
        h0.combine(tag)
        h1.combine(tag)
        h2.combine(tag)
        h3.combine(tag)
        let columns = kind.columnCount
        let later = columns - kind.laterColumns
        cells.withUnsafeBufferPointer { cells in
            bytes.withUnsafeBufferPointer { arena in
                let base = arena.baseAddress ?? emptyArena
                for column in 0..<columns {
                    let (c0, c1, c2, c3) = (
                        cells[f.0 + column], cells[f.1 + column], cells[f.2 + column], cells[f.3 + column]
                    )
                    if column >= later {
                        // Left out when null, as ``contentHash(kind:firstCell:)`` does.
                        Self.combineLater(c0, column: column, into: &h0, arena: base)
                        Self.combineLater(c1, column: column, into: &h1, arena: base)
                        Self.combineLater(c2, column: column, into: &h2, arena: base)
                        Self.combineLater(c3, column: column, into: &h3, arena: base)
                        continue
                    }
                    guard case .text(let o0, let n0) = c0, case .text(let o1, let n1) = c1,
                        case .text(let o2, let n2) = c2, case .text(let o3, let n3) = c3
                    else {
                        Self.combine(c0, into: &h0, arena: base)
                        Self.combine(c1, into: &h1, arena: base)
                        Self.combine(c2, into: &h2, arena: base)
                        Self.combine(c3, into: &h3, arena: base)
                        continue
                    }
                    let (p0, p1, p2, p3) = (base + Int(o0), base + Int(o1), base + Int(o2), base + Int(o3))
                    let shared = Int(min(min(n0, n1), min(n2, n3)))
                    StableHash.combine(&h0, p0, &h1, p1, &h2, p2, &h3, p3, count: shared)
                    Self.finishText(&h0, p0, Int(n0), from: shared)
                    Self.finishText(&h1, p1, Int(n1), from: shared)
                    Self.finishText(&h2, p2, Int(n2), from: shared)
                    Self.finishText(&h3, p3, Int(n3), from: shared)
                }
            }
        }
        return (h0.finish(), h1.finish(), h2.finish(), h3.finish())
    }

    /// The bytes of a text from `shared` on, then its length, into a row's hash.
    @inline(__always)
    private static func finishText(_ h: inout StableHash, _ text: UnsafePointer<UInt8>, _ count: Int, from shared: Int)
    {
        h.combine(UnsafeBufferPointer(start: text + shared, count: count - shared))
        h.combine(UInt64(count) | 1 << 63)
    }

    /// One cell into a row's hash: the rule of ``contentHash(kind:firstCell:)``
    /// and ``contentHashes(kind:firstCells:)``.
    @inline(__always)
    private static func combine(_ cell: Cell, into h: inout StableHash, arena: UnsafePointer<UInt8>) {
        switch cell {
        case .int(let value): h.combine(value as Int64?)
        case .noInt: h.combine(nil as Int64?)
        case .noText: h.combine(nil as String?)
        case .text(let offset, let count):
            h.combine(UnsafeBufferPointer(start: arena + Int(offset), count: Int(count)))
            h.combine(UInt64(count) | 1 << 63)
        }
    }
}

extension RecordKind {
    /// The number of the store's columns of this kind (`RecordKind.columns`, a constant: the decoder checks it per row).
    @inlinable package var columnCount: Int {
        switch self {
        case .apns: 17
        case .render: 10
        case .callback: 12
        }
    }

    /// The last columns, added after the first stores, that the
    /// de-duplication hash leaves out when null: `provider` and
    /// `channel_id` of `apns` rows, `channel_id` and `frequent_pushes`
    /// (contract 3.1) of the others. Each is a text column.
    @inlinable package var laterColumns: Int {
        switch self {
        case .apns: 2
        case .render, .callback: 2
        }
    }

    /// The column of the time the store key begins with: `sent_at`,
    /// `rendered_at`, `received_at`.
    @inlinable package var timeColumn: Int {
        switch self {
        case .apns: 1
        case .render: 2
        case .callback: 5
        }
    }
}

/// One byte to point an empty arena at: only empty texts point into an empty arena, so it is never read.
nonisolated(unsafe) private let emptyArena: UnsafePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return UnsafePointer(pointer)
}()

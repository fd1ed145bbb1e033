import ArrivalHandOff
import CSQLite
public import Foundation

/// One column of a row copied out of SQLite (``FetchedRow``).
@usableFromInline
enum FetchedCell: Sendable {
    case null
    case int(Int64)
    /// Bytes of the batch's arena.
    case text(offset: UInt32, count: UInt32)
}

/// A batch of rows copied out of a query, so that the rows can be read on
/// another thread than the one stepping SQLite: each row's columns as
/// cells, their texts in one arena.
/// `@unchecked Sendable`: one owner at a time: the stepping thread fills it, sends it through a `BatchChannel`, and never touches it again.
final class FetchedBatch: @unchecked Sendable {
    var cells: [FetchedCell] = []
    var arena: [UInt8] = []
    var rowCount = 0

    init(rows: Int, columns: Int) {
        cells.reserveCapacity(rows * columns)
        arena.reserveCapacity(FetchedBatch.arenaBytes + (1 << 16))
    }

    /// A batch is sent on at this many rows…
    static let rows = 1024
    /// …or once its texts hold this many bytes (a text of up to 1 GB is still one row).
    static let arenaBytes = 1 << 20

    func removeAll() {
        cells.removeAll(keepingCapacity: true)
        arena.removeAll(keepingCapacity: true)
        rowCount = 0
    }

    /// Copies rows of `statement` (stepping it) until the batch is full;
    /// returns false when the query ended. Each column is copied as an
    /// integer or as text, as `kinds` says (what the row's readers ask of it).
    func fill(from statement: Statement, kinds: [FetchedRow.Kind]) throws(DatabaseError) -> Bool {
        // Filled as locals: a class's arrays would be checked for exclusive access on every append.
        var cells: [FetchedCell] = []
        var arena: [UInt8] = []
        var rows = rowCount
        swap(&cells, &self.cells)
        swap(&arena, &self.arena)
        defer {
            swap(&cells, &self.cells)
            swap(&arena, &self.arena)
            rowCount = rows
        }
        let handle = statement.handle
        let width = kinds.count
        while rows < Self.rows && arena.count < Self.arenaBytes {
            guard try statement.step() else { return false }
            var column: Int32 = 0
            for kind in kinds {
                defer { column += 1 }
                if sqlite3_column_type(handle, column) == SQLITE_NULL {
                    cells.append(.null)
                    continue
                }
                switch kind {
                case .int:
                    cells.append(.int(sqlite3_column_int64(handle, column)))
                case .text:
                    let text = sqlite3_column_text(handle, column)
                    let count = Int(sqlite3_column_bytes(handle, column))
                    // Rows come in the order they were stored, a device file's together: most texts
                    // (activity, versions, device) are the row before's, and then share its bytes.
                    if rows > 0, let above = Self.same(text, count, as: cells[cells.count - width], in: arena) {
                        cells.append(above)
                        continue
                    }
                    cells.append(.text(offset: UInt32(arena.count), count: UInt32(count)))
                    if let text, count > 0 {
                        arena.append(contentsOf: UnsafeRawBufferPointer(start: text, count: count))
                    }
                }
            }
            rows += 1
        }
        return true
    }
}

extension FetchedBatch {
    /// `cell` when it is a text of `arena` holding exactly the `count` bytes at `text`.
    @inline(__always)
    static func same(_ text: UnsafePointer<UInt8>?, _ count: Int, as cell: FetchedCell, in arena: [UInt8])
        -> FetchedCell?
    {
        guard case .text(let offset, let length) = cell, Int(length) == count else { return nil }
        guard count > 0 else { return cell }
        guard let text else { return nil }
        return arena.withUnsafeBufferPointer { memcmp(text, $0.baseAddress! + Int(offset), count) } == 0 ? cell : nil
    }
}

/// One row of a query, copied out of the store (``SQLiteSnapshot``'s
/// cursors read their rows a batch ahead, on a thread of their own; other
/// engines fill a ``FetchedRows``): the same
/// readers as a ``Statement`` on its current row, valid only during the call
/// that hands it over.
public struct FetchedRow {
    /// What a column is read as.
    public enum Kind: Sendable { case int, text }

    @usableFromInline let cells: UnsafePointer<FetchedCell>
    @usableFromInline let arena: UnsafePointer<UInt8>

    @usableFromInline
    init(cells: UnsafePointer<FetchedCell>, arena: UnsafePointer<UInt8>) {
        self.cells = cells
        self.arena = arena
    }

    /// The column as an integer (0 for NULL, as SQLite reads it).
    @inlinable @inline(__always)
    package func int(_ column: Int32) -> Int64 {
        if case .int(let value) = cells[Int(column)] { return value }
        return 0
    }

    @inlinable @inline(__always)
    package func optionalInt(_ column: Int32) -> Int64? {
        if case .int(let value) = cells[Int(column)] { return value }
        return nil
    }

    @inlinable @inline(__always)
    package func string(_ column: Int32) -> String? {
        guard case .text(let offset, let count) = cells[Int(column)] else { return nil }
        return String(decoding: UnsafeBufferPointer(start: arena + Int(offset), count: Int(count)), as: UTF8.self)
    }

    /// The column's text as bytes (nil: SQL NULL), valid only during `body`.
    @inlinable @inline(__always)
    package func withText<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        guard case .text(let offset, let count) = cells[Int(column)] else { return try body(nil) }
        return try body(UnsafeRawBufferPointer(start: arena + Int(offset), count: Int(count)))
    }

    /// Whether the column holds exactly `bytes` as text (`nil`: SQL NULL).
    @inlinable @inline(__always)
    package func text(_ column: Int32, equals bytes: [UInt8]?) -> Bool {
        guard case .text(let offset, let count) = cells[Int(column)] else { return bytes == nil }
        guard let bytes, bytes.count == Int(count) else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return true }  // both empty
            return memcmp(arena + Int(offset), base, Int(count)) == 0
        }
    }
}

extension Statement {
    /// Runs the query and calls `body` for each row, in order, while a
    /// thread of its own steps SQLite and copies the rows out a batch
    /// ahead: the copying and SQLite's own work (half of a report's time)
    /// run beside the caller's work on the rows.
    ///
    /// The connection is the producer's only while it holds the
    /// connection's lock (a batch at a time): anything else the caller
    /// asks of the same connection meanwhile must take it too
    /// (``RowLookup`` does). Returns only once the producer has stopped,
    /// also when `body` throws.
    @usableFromInline
    func forEachFetchedRow(kinds: [FetchedRow.Kind], _ body: (FetchedRow) throws -> Void) throws {
        let channel = BatchChannel<Result<FetchedBatch, DatabaseError>>(capacity: 4)
        let recycle = BatchChannel<FetchedBatch>(capacity: 4)
        let stopped = DispatchSemaphore(value: 0)
        let shared = UncheckedStatement(self)
        let producer = Thread {
            defer { stopped.signal() }
            shared.statement.produceBatches(kinds: kinds, into: channel, recycling: recycle)
        }
        producer.stackSize = 1 << 20
        producer.start()
        defer {
            channel.cancel()
            stopped.wait()
        }
        while let message = channel.receive() {
            let batch = try message.get()
            try batch.cells.withUnsafeBufferPointer { cells in
                try batch.arena.withUnsafeBufferPointer { arena in
                    // An empty arena has no address: no cell points into it then.
                    let base = arena.baseAddress ?? UnsafeRawPointer(emptyCString).assumingMemoryBound(to: UInt8.self)
                    let columns = kinds.count
                    for row in 0..<batch.rowCount {
                        try body(FetchedRow(cells: cells.baseAddress! + row * columns, arena: base))
                    }
                }
            }
            recycle.offer(batch)
        }
    }

    /// The producer of ``forEachFetchedRow(kinds:_:)``: steps, copies, sends; closes the channel at the end.
    private func produceBatches(
        kinds: [FetchedRow.Kind], into channel: BatchChannel<Result<FetchedBatch, DatabaseError>>,
        recycling recycle: BatchChannel<FetchedBatch>
    ) {
        defer { channel.close() }
        let lock = connection.lock
        defer { lock.withLock { reset() } }
        while true {
            let batch = recycle.poll() ?? FetchedBatch(rows: FetchedBatch.rows, columns: kinds.count)
            batch.removeAll()
            let ended: Bool
            do throws(DatabaseError) {
                lock.lock()
                defer { lock.unlock() }
                ended = try !batch.fill(from: self, kinds: kinds)
            } catch {
                _ = channel.send(.failure(error))
                return
            }
            if batch.rowCount > 0 { guard channel.send(.success(batch)) else { return } }
            if ended { return }
        }
    }
}

/// A statement handed to the producer thread, which alone steps it until it stops.
/// `@unchecked Sendable`: the statement moves to the producer thread, the only one that steps it until it stops.
private struct UncheckedStatement: @unchecked Sendable {
    let statement: Statement
    init(_ statement: Statement) { self.statement = statement }
}

/// Rows an engine other than SQLite fills cell by cell (a page of a
/// server's cursor), then hands over one ``FetchedRow`` at a time.
package struct FetchedRows: Sendable {
    private var cells: [FetchedCell] = []
    private var arena: [UInt8] = []
    private let columns: Int
    package private(set) var count = 0

    /// Rows of `columns` cells each.
    package init(columns: Int) {
        self.columns = columns
    }

    package mutating func appendNull() {
        cells.append(.null)
    }

    package mutating func append(_ value: Int64) {
        cells.append(.int(value))
    }

    package mutating func append(text: UnsafeRawBufferPointer) {
        cells.append(.text(offset: UInt32(arena.count), count: UInt32(text.count)))
        arena.append(contentsOf: text)
    }

    /// Ends a row (each has `columns` cells).
    package mutating func endRow() {
        precondition(cells.count == (count + 1) * columns, "a row of \(columns) cells")
        count += 1
    }

    package mutating func removeAll() {
        cells.removeAll(keepingCapacity: true)
        arena.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Calls `body` with each row, in order.
    package func forEach(_ body: (FetchedRow) throws -> Void) throws {
        try cells.withUnsafeBufferPointer { cells in
            try arena.withUnsafeBufferPointer { arena in
                let base = arena.baseAddress ?? UnsafeRawPointer(emptyCString).assumingMemoryBound(to: UInt8.self)
                for row in 0..<count {
                    try body(FetchedRow(cells: cells.baseAddress! + row * columns, arena: base))
                }
            }
        }
    }
}

import ArrivalModel
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalHandOff
@testable import ArrivalIngest

/// The ingest hands rows, not `Record` values, from the reading thread to the
/// writer. Stores made before that change hold keys from ``Record/contentHash``,
/// so a row's key must equal the key of the same record made as a value.
@Suite("Row batches")
struct RowBatchTests {
    @Test("Every sample record keeps its key and its values as a row")
    func sampleRowsMatchRecords() throws {
        let files = InputWalker(paths: samplePaths).files
        var decoder = RecordDecoder()
        var batch = RowBatch()
        var kinds: Set<RecordKind> = []
        var rows = 0
        // Every sample row in one batch as well, keyed together: runs of four rows of a
        // kind are hashed side by side (RowBatch.computeKeys), the others one at a time.
        var all = RowBatch()
        var expectedKeys: [UInt64] = []
        for path in files {
            _ = try LineReader().read(path: path) { line in
                guard let bytes = line.bytes else { return }
                batch.removeAll()
                guard decoder.decode(bytes, line: line.number, into: &batch) == .record else { return }
                batch.computeKeys()
                _ = decoder.decode(bytes, line: line.number, into: &all)
                let row = batch.rows[0]
                let record = batch.record(row)
                rows += 1
                kinds.insert(row.kind)
                let expectedKey: UInt64 =
                    switch record {
                    case .apns(let r): recordKey(time: r.sentAt, hash: r.contentHash)
                    case .render(let r): recordKey(time: r.renderedAt, hash: r.contentHash)
                    case .callback(let r): recordKey(time: r.receivedAt, hash: r.contentHash)
                    }
                #expect(row.key == expectedKey, "\(path):\(line.number)")
                expectedKeys.append(expectedKey)
                // The value path decodes to the same record.
                #expect(decoder.decode(bytes) == .record(record), "\(path):\(line.number)")
                // A record made in code becomes the same cells.
                var again = RowBatch()
                again.append(record)
                #expect(Array(again.cells(of: again.rows[0])) == Array(batch.cells(of: row)))
                #expect(again.rows[0].key == row.key)
            }
        }
        #expect(rows > 5_000)
        #expect(kinds == [.apns, .render, .callback])
        all.computeKeys()
        #expect(all.rows.map(\.key) == expectedKeys)
    }

    @Test("Keys hashed four rows at a time equal keys hashed one row at a time, whatever the cells")
    func keysSideBySide() {
        var random = SplitMix(seed: 14)
        var batch = RowBatch()
        var kinds: [RecordKind] = []
        // Runs of 1 to 9 rows of a kind, so that groups of four and the rows left over both occur.
        while batch.rows.count < 3_000 {
            let kind = [RecordKind.apns, .render, .callback][Int(random.next() % 3)]
            for _ in 0..<(1 + Int(random.next() % 9)) {
                let mark = batch.mark
                for column in 0..<kind.columnCount {
                    if column == kind.timeColumn {
                        batch.append(.int(Int64(bitPattern: random.next() >> 24)))
                        continue
                    }
                    switch random.next() % 5 {
                    case 0: batch.append(.int(Int64(bitPattern: random.next())))
                    case 1: batch.append(.noInt)
                    case 2: batch.append(.noText)
                    default:
                        // Lengths from 0 to 90, often equal (as IDs and tokens are), bytes of any value.
                        let count = random.next() % 2 == 0 ? 36 : Int(random.next() % 91)
                        let text = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                        text.withUnsafeBufferPointer { batch.appendText($0) }
                    }
                }
                batch.finishRow(mark, kind: kind, line: batch.rows.count + 1)
                kinds.append(kind)
            }
        }
        batch.computeKeys()
        #expect(batch.keyed == batch.rows.count)
        var mismatches = 0
        for row in batch.rows {
            guard case .int(let time) = batch.cells[row.firstCell + row.kind.timeColumn] else { continue }
            let one = recordKey(time: time, hash: batch.contentHash(kind: row.kind, firstCell: row.firstCell))
            if row.key != one { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(batch.rows.map(\.kind) == kinds)
    }

    @Test("Absent, null and empty fields stay apart in the hash and in the cells")
    func nullsAndEmpties() throws {
        var decoder = RecordDecoder()
        let absent = #"{"kind":"render","activity_id":"a","seq":1,"rendered_at":"2026-11-21T10:00:00Z"}"#
        let null = #"{"kind":"render","activity_id":"a","seq":1,"rendered_at":"2026-11-21T10:00:00Z","surface":null}"#
        let empty = #"{"kind":"render","activity_id":"a","seq":1,"rendered_at":"2026-11-21T10:00:00Z","surface":""}"#
        let escaped =
            #"{"kind":"render","activity_id":"\u0061","seq":1,"rendered_at":"2026-11-21T10:00:00Z","surface":"\u00e9\ud83d\ude00"}"#
        var batch = RowBatch()
        for line in [absent, null, empty, escaped] {
            var copy = line
            let outcome = copy.withUTF8 { decoder.decode($0, line: 1, into: &batch) }
            #expect(outcome == .record)
        }
        batch.computeKeys()  // four renders: hashed side by side
        let rows = batch.rows
        #expect(rows[0].key == rows[1].key, "absent equals null (Documentation/InputRecords.md)")
        #expect(rows[0].key != rows[2].key, "an empty string is not null")
        let surface = 3  // the column of `surface` in a render row
        #expect(batch.cells(of: rows[1])[rows[1].firstCell + surface] == .noText)
        guard case .text(_, let count) = batch.cells(of: rows[2])[rows[2].firstCell + surface] else {
            Issue.record("an empty string must be a text cell")
            return
        }
        #expect(count == 0)
        guard case .render(let r) = batch.record(rows[3]) else {
            Issue.record("not a render")
            return
        }
        #expect(r.activityID == "a" && r.surface == "é😀")
        guard case .render(let e) = batch.record(rows[2]) else {
            Issue.record("not a render")
            return
        }
        #expect(e.surface == "")
        #expect(rows[3].key == recordKey(time: r.renderedAt, hash: r.contentHash))
    }

    @Test("A malformed line leaves nothing of itself in the batch")
    func abandonedRow() {
        var decoder = RecordDecoder()
        var batch = RowBatch()
        // Valid JSON whose last checked field has the wrong type: the fields before it were appended, then dropped.
        var bad = #"{"kind":"render","activity_id":"abc","seq":1,"rendered_at":"2026-11-21T10:00:00Z","app_version":7}"#
        let outcome = bad.withUTF8 { decoder.decode($0, line: 1, into: &batch) }
        #expect(outcome == .malformed(.wrongType))
        #expect(batch.rows.isEmpty && batch.cells.isEmpty && batch.bytes.isEmpty)
    }
}

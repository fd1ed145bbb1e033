// The libFuzzer target for the line splitter, the JSON line scanner and the
// record decoder (Fuzz/README.md). Built and run by Scripts/fuzz.sh with
// `-sanitize=fuzzer,address`; every broken invariant traps, and libFuzzer
// keeps the input that broke it.

import ArrivalModel
import Foundation

@testable import ArrivalHandOff
@testable import ArrivalIngest
@testable import ArrivalStore

#if canImport(Glibc)
    import Glibc
#endif

/// Stops the run, naming the invariant and the line; libFuzzer writes the input out.
func check(_ condition: Bool, _ message: @autoclosure () -> String, line: [UInt8]? = nil) {
    guard !condition else { return }
    var text = "fuzz invariant broken: " + message()
    if let line {
        text += "\n  line (\(line.count) bytes): " + String(decoding: line.prefix(300), as: UTF8.self).debugDescription
    }
    fatalError(text)
}

/// Decoders and a batch that live across inputs, as the ingest keeps one
/// decoder per file and recycles its batches: whatever one line leaves behind
/// in them must not change the answer for the next.
nonisolated(unsafe) private var longLived = RecordDecoder()
nonisolated(unsafe) private var batch = RowBatch(capacity: 64)
/// `ARRIVAL_FUZZ_TRACE=1` prints each line's outcome and problem (for `--reproduce`).
nonisolated(unsafe) private var trace = getenv("ARRIVAL_FUZZ_TRACE") != nil
/// Where gzip inputs are written to be read back through `LineReader`.
nonisolated(unsafe) private var gzipPath: String?

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: data, count: size)
    let lines = checkSplitting(input)
    batch.removeAll()
    var decoded: [(line: Int, record: Record)] = []
    for (index, line) in lines.enumerated() {
        guard let line else { continue }  // longer than 1 MiB: the ingest's line_too_long, never decoded
        if let record = checkDecoding(line, number: index + 1) { decoded.append((index + 1, record)) }
    }
    checkBatch(decoded)
    if size >= 2 && data[0] == 0x1F && data[1] == 0x8B { checkGzip(input) }
    return 0
}

// MARK: - Lines

/// The lines of `input` as Documentation/InputRecords.md defines them: `\n`
/// ends a line and a `\r` just before it belongs to the line end; a last line
/// without `\n` keeps its `\r`; a line longer than `maxLineBytes` is `nil`.
func referenceLines(_ input: UnsafeBufferPointer<UInt8>, maxLineBytes: Int) -> [[UInt8]?] {
    var lines: [[UInt8]?] = []
    var start = 0
    for (index, byte) in input.enumerated() where byte == 0x0A {
        var end = index
        if end > start && input[end - 1] == 0x0D { end -= 1 }
        lines.append(end - start > maxLineBytes ? nil : Array(input[start..<end]))
        start = index + 1
    }
    if start < input.count {
        lines.append(input.count - start > maxLineBytes ? nil : Array(input[start...]))
    }
    return lines
}

/// `LineSplitter` fed `input` in chunks of `chunk` bytes, each chunk in an
/// allocation of its own, freed right after it was fed (so reading past a
/// chunk, or keeping a pointer into it, is an AddressSanitizer report).
func splitterLines(_ input: UnsafeBufferPointer<UInt8>, chunk: Int, maxLineBytes: Int) -> [[UInt8]?] {
    var splitter = LineSplitter(maxLineBytes: maxLineBytes)
    var lines: [[UInt8]?] = []
    let body = { (slice: LineSlice) in
        check(slice.number == lines.count + 1, "LineSplitter numbered line \(lines.count + 1) as \(slice.number)")
        lines.append(slice.bytes.map { Array($0) })
    }
    var offset = 0
    while offset < input.count {
        let count = min(chunk, input.count - offset)
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: count)
        _ = copy.initialize(from: input[offset..<offset + count])
        try! splitter.feed(UnsafeBufferPointer(copy), body)
        copy.deallocate()
        offset += count
    }
    try! splitter.finish(body)
    check(splitter.lineNumber == lines.count, "LineSplitter counted \(splitter.lineNumber) lines, gave \(lines.count)")
    return lines
}

/// Splits the input as the ingest does, whole and in chunks of several sizes,
/// with the ingest's line limit and a small one, each time against the
/// reference; returns the lines under the ingest's limit.
func checkSplitting(_ input: UnsafeBufferPointer<UInt8>) -> [[UInt8]?] {
    let ingestLimit = LineReader.defaultMaxLineBytes
    let lines = referenceLines(input, maxLineBytes: ingestLimit)
    // A chunk size and a small line limit that vary with the input but are the same for it every time.
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in input.prefix(64) { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    let chunk = 1 + Int(hash % 29)
    let smallLimit = Int((hash >> 32) % 48)
    check(splitterLines(input, chunk: max(input.count, 1), maxLineBytes: ingestLimit) == lines, "whole-input split")
    check(splitterLines(input, chunk: chunk, maxLineBytes: ingestLimit) == lines, "split in \(chunk)-byte chunks")
    if smallLimit >= 1 {
        let limited = referenceLines(input, maxLineBytes: smallLimit)
        check(
            splitterLines(input, chunk: chunk, maxLineBytes: smallLimit) == limited,
            "split in \(chunk)-byte chunks with lines limited to \(smallLimit) bytes")
    }
    return lines
}

// MARK: - Decoding

/// Decodes one line every way the code can and holds the answers against
/// each other and against the reference decoder; returns the record, if any.
func checkDecoding(_ line: [UInt8], number: Int) -> Record? {
    // The line in an allocation of exactly its size: a read past its end is an AddressSanitizer report.
    let owned = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: line.count)
    _ = owned.initialize(from: line)
    defer { owned.deallocate() }
    let bytes = UnsafeBufferPointer(owned)

    var fresh = RecordDecoder()
    let outcome = fresh.decode(bytes)
    let problem = fresh.lastProblem
    let again = fresh.decode(bytes)
    check(again == outcome && fresh.lastProblem == problem, "decoding twice: \(outcome) then \(again)", line: line)
    let reused = longLived.decode(bytes)
    check(
        reused == outcome && longLived.lastProblem == problem,
        "a decoder used before: \(reused) (\(longLived.lastProblem ?? "-")), a new one: \(outcome) (\(problem ?? "-"))",
        line: line)
    check(Array(bytes) == line, "decoding changed the line's bytes", line: line)

    // The ingest's path: straight into a batch that already holds earlier lines' rows.
    let rows = batch.rows.count
    let cells = batch.cells.count
    let arena = batch.bytes.count
    let appended = longLived.decode(bytes, line: number, into: &batch)
    check(longLived.lastProblem == problem, "the batch path's problem differs: \(longLived.lastProblem ?? "-")")
    switch (outcome, appended) {
    case (.record(let record), .record):
        check(batch.rows.count == rows + 1, "a record appended \(batch.rows.count - rows) rows", line: line)
        let row = batch.rows[rows]
        check(row.line == number && row.kind == record.kind, "the row's line or kind", line: line)
        let stored = batch.record(row)
        check(stored == record, "the batch holds \(stored), decode(_:) gave \(record)", line: line)
        check(fieldValues(stored) == fieldValues(record), "the batch's bytes differ from decode(_:)'s", line: line)
        // A record made in code and the same record decoded share their store key (the de-duplication hash).
        batch.computeKeys()
        let key = batch.rows[rows].key
        var made = RowBatch()
        made.append(record, line: number)
        check(made.rows[0].key == key, "the decoded row's key differs from the key of the same record", line: line)
        // Four of it keyed side by side (RowBatch.computeKeys) get the same key.
        var four = RowBatch()
        for _ in 0..<4 { _ = longLived.decode(bytes, line: number, into: &four) }
        four.computeKeys()
        check(
            four.rows.count == 4 && four.rows.allSatisfy { $0.key == key }, "keys hashed four at a time differ",
            line: line)
    case (.blank, .blank), (.malformed, .malformed):
        if case .malformed(let a) = outcome, case .malformed(let b) = appended {
            check(a == b, "decode(_:) says \(a), the batch path \(b)", line: line)
            batch.appendMalformed(line: number, cause: b, problem: longLived.lastProblem)
        }
        check(
            batch.rows.count == rows && batch.cells.count == cells && batch.bytes.count == arena,
            "a line that is not a record left cells or bytes in the batch", line: line)
    default:
        check(false, "decode(_:) says \(outcome), the batch path \(appended)", line: line)
    }

    if trace {
        print("line \(number): \(outcome)" + (problem.map { " — " + $0 } ?? ""))
    }
    checkAgainstReference(line, outcome, problem: problem)
    if case .record(let record) = outcome {
        checkAgainstFoundation(line, record)
        checkTimes(record, line: line)
        return record
    }
    return nil
}

func checkAgainstReference(_ line: [UInt8], _ outcome: RecordDecoder.Outcome, problem: String?) {
    let expected = ReferenceDecoder.decode(line)
    switch (expected, outcome) {
    case (.blank, .blank):
        check(problem == nil, "a blank line has a problem: \(problem!)", line: line)
    case (.record(let a), .record(let b)):
        check(fieldValues(a) == fieldValues(b), "the reference decodes \(a), the decoder \(b)", line: line)
        check(problem == nil, "a record has a problem: \(problem!)", line: line)
    case (.malformed(let a, let field), .malformed(let b)):
        check(a == b, "the reference says \(a), the decoder \(b) (\(problem ?? "-"))", line: line)
        if let field {
            check(
                problem?.hasPrefix(field + ": ") == true,
                "the problem of \(b) should name \(field): \(problem ?? "nil")", line: line)
            check(
                problem!.unicodeScalars.count < 400,
                "a problem of \(problem!.unicodeScalars.count) Unicode scalars: \(problem!.prefix(120))…", line: line)
        } else {
            check(problem == nil, "\(b) concerns the whole line, yet has a problem: \(problem!)", line: line)
        }
    case (.invalidExchange(let paths), .malformed(let b)):
        check(
            b == .invalidExchange,
            "the reference says invalid_exchange (\(paths)), the decoder \(b) (\(problem ?? "-"))", line: line)
        check(
            paths.contains { names(problem ?? "", $0) },
            "the problem of invalid_exchange should name one of \(paths): \(problem ?? "nil")", line: line)
        check(
            problem!.unicodeScalars.count < 400,
            "a problem of \(problem!.unicodeScalars.count) Unicode scalars: \(problem!.prefix(120))…", line: line)
    default:
        check(false, "the reference says \(expected), the decoder \(outcome) (\(problem ?? "-"))", line: line)
    }
}

/// Whether the problem text of an `invalid_exchange` line starts with `path` (`request.body`,
/// `request.headers.apns-id`, …) and names no deeper path after it: `request.body: not a JSON
/// object (…)` names `request.body`, `request.body: aps.timestamp: required…` does not.
/// A header whose value is not a string is named by its path and name (`request.headers.apns-id`);
/// a name the problem may shorten or escape (over 40 scalars, or with a control character) is
/// only held to the headers' path.
func names(_ problem: String, _ path: String) -> Bool {
    for headers in ["request.headers.", "response.headers.", "request.body: message.apns.headers."]
    where path.hasPrefix(headers) {
        let name = path.unicodeScalars.dropFirst(headers.unicodeScalars.count)
        if name.count > 40 || name.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return problem.hasPrefix(headers)
        }
    }
    guard problem.hasPrefix(path + ": ") else { return false }
    guard path == "request.body" else { return true }
    let rest = problem.dropFirst(path.count + 2)
    guard let colon = rest.range(of: ": ") else { return true }
    let segment = rest[..<colon.lowerBound]
    return segment.isEmpty || segment.contains(" ")
}

/// A line accepted as a record is JSON to Foundation too, and Foundation reads the same field values.
func checkAgainstFoundation(_ line: [UInt8], _ record: Record) {
    guard let object = try? JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed]) else {
        // Foundation refuses numbers beyond Double's range (`1e400`) that RFC 8259 and the contract allow
        // in fields arrival ignores; anything else it refuses must not have been accepted.
        check(hasHugeNumber(line), "accepted as a record, but JSONSerialization refuses it", line: line)
        return
    }
    guard let dictionary = object as? [String: Any] else {
        return check(false, "accepted as a record, but JSONSerialization reads \(type(of: object))", line: line)
    }
    // JSONSerialization on Linux drops a U+FEFF written raw at the start of a string or key
    // (`"\u{FEFF}device_id"` reads as `"device_id"`), and just after an escape inside one
    // (`"a\u0000\u{FEFF}b"` reads as `"a\u{0}b"`); the contract keeps it, so lines with a raw
    // U+FEFF are only held to being JSON objects here (the reference decoder checks their values).
    if hasRawBOM(line) { return }
    if dictionary["kind"] as? String == "exchange" { return checkExchangeAgainstFoundation(line, dictionary, record) }
    for (key, value) in zip(fieldKeys(record.kind), fieldValues(record)) {
        let found = dictionary[key]
        switch value {
        case .none:
            // `"provider":"apns"` is stored as no provider.
            if key == "provider" && found as? String == "apns" { continue }
            // `state` is read on activity_state callbacks only (contract 3.0): elsewhere it is not kept.
            if key == "state" && dictionary["callback"] as? String != "activity_state" { continue }
            check(found == nil || found is NSNull, "\(key) is absent in the record, \(found!) in Foundation's")
        case .text(let text):
            check(
                (found as? String).map { Array($0.utf8) } == text,
                "\(key): the record has \(String(decoding: text, as: UTF8.self).debugDescription), "
                    + "Foundation \(String(describing: found))", line: line)
        case .int(let int):
            if key.hasSuffix("_at") {
                let time = (found as? String).flatMap { RFC3339.parseMilliseconds($0) }
                check(time == int, "\(key): the record has \(int), Foundation's string reads \(time as Any)")
            } else {
                check(
                    (found as? NSNumber)?.int64Value == int,
                    "\(key): the record has \(int), Foundation \(String(describing: found))", line: line)
            }
        }
    }
}

/// The fields an `exchange` line carries over, read by Foundation, and the request body a JSON
/// object to it as well (unless Foundation's limits above concern the body).
func checkExchangeAgainstFoundation(_ line: [UInt8], _ dictionary: [String: Any], _ record: Record) {
    guard case .apns(let r) = record else { return check(false, "an exchange line decoded to \(record)", line: line) }
    let provider = dictionary["provider"] as? String
    check(
        provider == (r.provider ?? .apns).rawValue,
        "provider: the record has \(String(describing: r.provider)), Foundation \(String(describing: provider))",
        line: line)
    let sentAt = (dictionary["sent_at"] as? String).flatMap { RFC3339.parseMilliseconds($0) }
    check(sentAt == r.sentAt, "sent_at: the record has \(r.sentAt), Foundation's string reads \(sentAt as Any)")
    let latency = (dictionary["latency_ms"] as? NSNumber)?.int64Value
    check(latency == r.latencyMS, "latency_ms: the record has \(r.latencyMS as Any), Foundation \(latency as Any)")
    if let environment = dictionary["environment"] as? String {
        check(
            r.environment == environment,
            "environment: the record has \(r.environment as Any), Foundation \(environment)")
    }
    if r.provider != .tencentChat {
        check(
            r.activityID == dictionary["activity_id"] as? String,
            "activity_id: the record has \(r.activityID as Any), Foundation \(dictionary["activity_id"] as Any)")
    }
    guard let body = (dictionary["request"] as? [String: Any])?["body"] as? String else {
        return check(false, "an exchange decoded without a request.body string to Foundation", line: line)
    }
    let bytes = Array(body.utf8)
    if r.provider == nil {
        check(
            r.payloadBytes == Int64(bytes.count),
            "payload_bytes \(r.payloadBytes as Any), Foundation's body \(bytes.count)")
    }
    // As for lines: Foundation refuses huge numbers and drops some raw U+FEFF.
    if hasHugeNumber(bytes) || hasRawBOM(bytes) { return }
    check(
        (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any],
        "the request body of an exchange is no JSON object to Foundation", line: line)
}

/// Whether the bytes hold a U+FEFF written raw (`ef bb bf`).
func hasRawBOM(_ bytes: [UInt8]) -> Bool {
    bytes.count >= 3
        && (0...bytes.count - 3).contains { bytes[$0] == 0xEF && bytes[$0 + 1] == 0xBB && bytes[$0 + 2] == 0xBF }
}

/// Whether the line holds a number literal whose magnitude a `Double` cannot hold.
func hasHugeNumber(_ line: [UInt8]) -> Bool {
    guard case .json(let value, _, _) = ReferenceParser.parse(line) else { return false }
    func huge(_ value: ReferenceJSON) -> Bool {
        switch value {
        case .number(let literal): Double(String(decoding: literal, as: UTF8.self))?.isFinite != true
        case .array(let elements): elements.contains(where: huge)
        case .object(let members): members.contains { huge($0.value) }
        default: false
        }
    }
    return huge(value)
}

/// A decoded time written back by `RFC3339.format` reads as the same instant
/// (within the years a time may have, 0001 to 9999, contract 3.0: a time of
/// 0001-01-01 with a positive offset is an instant of year 0000 in UTC, which
/// no line may spell).
func checkTimes(_ record: Record, line: [UInt8]) {
    let time: Int64
    switch record {
    case .apns(let r): time = r.sentAt
    case .render(let r): time = r.renderedAt
    case .callback(let r): time = r.receivedAt
    }
    let first: Int64 = -62_135_596_800_000  // 0001-01-01T00:00:00Z
    let last: Int64 = 253_402_300_799_999  // 9999-12-31T23:59:59.999Z
    guard time >= first && time <= last else { return }
    let text = RFC3339.format(milliseconds: time)
    check(RFC3339.parseMilliseconds(text) == time, "\(time) formats as \(text), which reads back differently")
}

/// Every row of the input's batch still reads as the record its line decoded
/// to, in line order, after the later lines were appended and abandoned.
func checkBatch(_ decoded: [(line: Int, record: Record)]) {
    check(batch.rows.count == decoded.count, "the batch holds \(batch.rows.count) rows for \(decoded.count) records")
    for (row, expected) in zip(batch.rows, decoded) {
        check(row.line == expected.line, "row of line \(expected.line) says line \(row.line)")
        check(
            fieldValues(batch.record(row)) == fieldValues(expected.record),
            "the row of line \(expected.line) changed after later lines were decoded")
    }
}

// MARK: - Gzip

/// A gzip input goes through `LineReader` as a file: read with 16-byte and
/// with the default 256 KiB chunks, it gives the same lines, the same
/// summary, and hands every byte of the file to `raw` once, in order.
func checkGzip(_ input: UnsafeBufferPointer<UInt8>) {
    if gzipPath == nil {
        var template = Array((NSTemporaryDirectory() + "/arrival-fuzz-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        // Scripts/fuzz.sh points TMPDIR at a directory it removes afterwards.
        gzipPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/input.jsonl.gz"
    }
    let path = gzipPath!
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    check(fd >= 0, "cannot write \(path)")
    check(write(fd, input.baseAddress, input.count) == input.count, "short write to \(path)")
    close(fd)

    func read(chunkSize: Int) -> (ReadSummary, [[UInt8]?], [UInt8]) {
        var lines: [[UInt8]?] = []
        var raw: [UInt8] = []
        let reader = LineReader(chunkSize: chunkSize)
        let summary = try! reader.read(
            path: path, raw: { raw.append(contentsOf: $0) },
            { slice in
                check(slice.number == lines.count + 1, "LineReader numbered line \(lines.count + 1) as \(slice.number)")
                lines.append(slice.bytes.map { Array($0) })
            })
        return (summary, lines, raw)
    }
    let (small, smallLines, smallRaw) = read(chunkSize: 16)
    let (large, largeLines, largeRaw) = read(chunkSize: LineReader.defaultChunkSize)
    check(small == large, "LineReader's summary with 16-byte chunks \(small), with 256 KiB \(large)")
    check(smallLines == largeLines, "LineReader's lines differ between 16-byte and 256 KiB chunks")
    check(small.gzip && small.lines == smallLines.count, "LineReader's summary \(small) for \(smallLines.count) lines")
    check(small.bytesOnDisk == input.count && small.changedWhileRead == nil, "LineReader's summary \(small)")
    check(smallRaw == Array(input) && largeRaw == Array(input), "raw did not see the file's bytes once, in order")

    // Decode what was inflated, as long as a small input did not inflate to megabytes.
    guard smallLines.reduce(0, { $0 + ($1?.count ?? 0) }) <= 1 << 16 else { return }
    batch.removeAll()
    var decoded: [(line: Int, record: Record)] = []
    for (index, line) in smallLines.enumerated() {
        guard let line else { continue }
        if let record = checkDecoding(line, number: index + 1) { decoded.append((index + 1, record)) }
    }
    checkBatch(decoded)
}

import ArrivalModel
import Testing

@testable import ArrivalAnalysis

/// The analysis numbers activities, apps and versions by their bytes
/// (``Interner``): the same number for the same code points whether a String
/// or the row's bytes ask, in order of first appearance.
@Suite("Interner")
struct InternerTests {
    func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes(body)
    }

    @Test("Numbers in order of first appearance, found again by String or by bytes, through many growths")
    func manyValues() {
        var interner = Interner()
        let names = (0..<20_000).map { "order-\(String($0 * 7919, radix: 16))" } + ["", "é", "😀", "e\u{301}"]
        for (index, name) in names.enumerated() {
            let id =
                index % 2 == 0
                ? interner.intern(name) : withBytes(Array(name.utf8)) { interner.intern(bytes: $0) }
            #expect(id == Int32(index))
        }
        for (index, name) in names.enumerated() {
            #expect(interner.id(of: name) == Int32(index))
            #expect(withBytes(Array(name.utf8)) { interner.id(ofBytes: $0) } == Int32(index))
            #expect(interner.intern(name) == Int32(index))
            #expect(interner[index].text == name)
        }
        // "é" and "e" + U+0301 are two values (code points, not characters).
        #expect(interner.id(of: "é") != interner.id(of: "e\u{301}"))
        #expect(interner.id(of: "order-x") == nil)
        #expect(withBytes(Array("order-".utf8)) { interner.id(ofBytes: $0) } == nil)
    }

    @Test("Bytes that are not UTF-8 find the value of the String made of them")
    func invalidUTF8() {
        var interner = Interner()
        let bad: [UInt8] = [0x61, 0xFF, 0x62]  // "a", a byte UTF-8 never has, "b"
        let decoded = String(decoding: bad, as: UTF8.self)  // "a\u{FFFD}b"
        let id = withBytes(bad) { interner.intern(bytes: $0) }
        #expect(interner[Int(id)].text == decoded)
        #expect(interner.id(of: decoded) == id)
        #expect(withBytes(bad) { interner.id(ofBytes: $0) } == id)
        #expect(withBytes([0x61, 0xFE, 0x62]) { interner.intern(bytes: $0) } == id)  // decodes alike
        #expect(interner.intern("a\u{FFFD}b") == id)
        #expect(interner.values.count == 1)
    }
}

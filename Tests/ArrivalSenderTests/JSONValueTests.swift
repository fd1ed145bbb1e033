import Foundation
import Testing

@testable import ArrivalSender

@Suite("JSONValue")
struct JSONValueTests {
    func parse(_ text: String, rejectingRepeatedKeys: Bool = false) -> JSONValue? {
        JSONValue.parse(Data(text.utf8), rejectingRepeatedKeys: rejectingRepeatedKeys)
    }

    @Test("An integer is one written as an integer in the signed 64-bit range; 1.0, 1e3 and 2^63 are other numbers")
    func integers() {
        #expect(
            parse("[1,-0,9223372036854775807,-9223372036854775808]")
                == .array([.int(1), .int(0), .int(.max), .int(.min)]))
        #expect(
            parse("[1.0,1e3,9223372036854775808]")
                == .array([.number(1), .number(1000), .number(9.223372036854775808e18)]))
    }

    @Test("Strings decode every escape, surrogate pairs included; a lone surrogate becomes U+FFFD")
    func strings() {
        #expect(parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00z""#) == .string("a\"\\/\u{8}\u{C}\n\r\té😀z"))
        #expect(parse(#""\ud83dx""#) == .string("\u{FFFD}x"))
        #expect(parse(#""\ude00""#) == .string("\u{FFFD}"))
        #expect(parse(#""é""#) == .string("é"))
    }

    @Test("Members keep their order; a repeated name is kept, or refused when asked; text that is not RFC 8259 is nil")
    func objects() {
        let value = parse(#" { "b" : [ true , false , null ] , "a" : {} , "b" : 2 } "#)
        #expect(value?.members.map(\.key) == ["b", "a", "b"])
        #expect(value?["b"] == .array([.bool(true), .bool(false), .null]))
        #expect(parse(#"{"b":1,"b":2}"#, rejectingRepeatedKeys: true) == nil)
        #expect(parse(#"{"a":{"b":1},"b":2}"#, rejectingRepeatedKeys: true) != nil)
        for text in [#"{"a":1,}"#, "{'a':1}", #"{"a":NaN}"#, "", "[1] [2]"] { #expect(parse(text) == nil, "\(text)") }
    }
}

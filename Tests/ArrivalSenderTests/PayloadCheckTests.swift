import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalSender

@Suite("PayloadCheck")
struct PayloadCheckTests {
    /// 2026-11-21T08:00:00Z, the payloads' own timestamp.
    static let now = Date(timeIntervalSince1970: 1_795_248_000)
    static let topic = "com.example.delivery.push-type.liveactivity"

    func codes(_ file: String, topic: String? = PayloadCheckTests.topic) throws -> [String] {
        PayloadCheck.check(payload: try fixtureData("payloads/" + file), topic: topic, now: Self.now)
            .map { "\($0.level.rawValue):\($0.code.rawValue)" }
    }

    /// Each payload fixture and the findings it must give (level:code).
    static let payloadCases: [(String, [String])] = [
        ("ok.json", []),
        ("start.json", []),
        ("near-limit.json", ["warning:payload_near_limit"]),
        ("too-large.json", ["error:payload_too_large"]),
        ("milliseconds.json", ["error:timestamp_in_milliseconds"]),
        ("future.json", ["error:timestamp_in_future"]),
        ("fractional-timestamp.json", ["error:timestamp_not_integer"]),
        ("missing-event.json", ["error:missing_event"]),
        ("invalid-event.json", ["error:invalid_event"]),
        ("missing-timestamp.json", ["error:missing_timestamp"]),
        ("missing-content-state.json", ["error:missing_content_state"]),
        ("missing-seq.json", ["warning:missing_seq"]),
        ("start-without-attributes.json", ["error:missing_start_attributes"]),
        ("no-aps.json", ["error:missing_aps"]),
        ("not-json.json", ["error:not_json"]),
        ("not-json-multiline.json", ["error:not_json"]),
        ("stale-date-past.json", ["error:stale_date_in_past"]),
        ("stale-date-fraction.json", ["error:stale_date_not_integer"]),
        ("dismissal-date-string.json", ["error:dismissal_date_not_integer"]),
        ("dismissal-date-past.json", ["warning:dismissal_date_in_past"]),
    ]

    @Test(
        "Each mistake is flagged with its level; good payloads have no findings",
        arguments: payloadCases)
    func findings(file: String, expected: [String]) throws {
        #expect(try codes(file) == expected)
    }

    @Test("A topic without .push-type.liveactivity is an error; without a topic it is not checked")
    func topic() throws {
        #expect(try codes("ok.json", topic: "com.example.delivery") == ["error:topic_without_suffix"])
        #expect(try codes("ok.json", topic: nil) == [])
    }

    @Test("The limits are exact: 3584 bytes is fine, 3585 a warning, 4096 a warning, 4097 an error")
    func limits() {
        func payload(_ size: Int) -> Data {
            let head = #"{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":1,"pad":""#
            let tail = #""}}}"#
            return Data((head + String(repeating: "p", count: size - head.utf8.count - tail.utf8.count) + tail).utf8)
        }
        func codes(_ size: Int) -> [PayloadCheck.Code] {
            let data = payload(size)
            #expect(data.count == size)
            return PayloadCheck.check(payload: data, now: Self.now).map(\.code)
        }
        #expect(codes(3584) == [])
        #expect(codes(3585) == [.payloadNearLimit])
        #expect(codes(4096) == [.payloadNearLimit])
        #expect(codes(4097) == [.payloadTooLarge])
    }

    @Test(
        "Stale and dismissal dates are Unix seconds after aps.timestamp; one before it is judged against the push, not the clock"
    )
    func dates() {
        func codes(_ aps: String, now: Date = PayloadCheckTests.now) -> [String] {
            let data = Data(#"{"aps":{"event":"end","timestamp":1795248000,\#(aps)"content-state":{"seq":1}}}"#.utf8)
            return PayloadCheck.check(payload: data, now: now).map { "\($0.level.rawValue):\($0.code.rawValue)" }
        }
        #expect(codes(#""stale-date":1795251600,"dismissal-date":1795251600,"#) == [])
        #expect(codes(#""stale-date":1795247999,"#) == ["error:stale_date_in_past"])
        #expect(codes(#""stale-date":"1795251600","#) == ["error:stale_date_not_integer"])
        #expect(codes(#""stale-date":1795251600000,"#) == ["error:stale_date_in_milliseconds"])
        #expect(codes(#""dismissal-date":1,"#) == ["warning:dismissal_date_in_past"])
        #expect(codes(#""dismissal-date":null,"#) == [])
        // A day later by the clock, the push's own timestamp is still what the dates are compared with.
        #expect(codes(#""stale-date":1795251600,"#, now: Self.now.addingTimeInterval(86_400)) == [])
        let message = PayloadCheck.check(
            payload: Data(
                #"{"aps":{"event":"update","timestamp":1795248000,"stale-date":1,"content-state":{"seq":1}}}"#.utf8),
            now: Self.now)
        #expect(message.first?.message.contains("is 20778 days before aps.timestamp (1795248000)") == true)
    }

    @Test("Text that is not JSON is reported with the line and column of its first syntax error")
    func syntaxPosition() throws {
        let multiline = PayloadCheck.check(payload: try fixtureData("payloads/not-json-multiline.json"), now: Self.now)
        #expect(multiline.map(\.code) == [.notJSON])
        #expect(multiline.first?.message.contains("syntax error at line 5, column 3") == true)
        let cut = PayloadCheck.check(payload: Data("{\"aps\": {\"event\": \"upd".utf8), now: Self.now)
        #expect(cut.first?.message.contains("the text ends too early, at line 1, column 23") == true)
    }

    @Test("8 hours ahead is allowed, a second more is not")
    func futureBoundary() {
        func codes(_ timestamp: Int) -> [PayloadCheck.Code] {
            let data = Data(#"{"aps":{"event":"update","timestamp":\#(timestamp),"content-state":{"seq":1}}}"#.utf8)
            return PayloadCheck.check(payload: data, now: Self.now).map(\.code)
        }
        #expect(codes(1_795_248_000 + 28_800) == [])
        #expect(codes(1_795_248_000 + 28_801) == [.timestampInFuture])
    }
}

@Suite("StrictJSON")
struct StrictJSONTests {
    @Test("RFC 8259 text passes; what Foundation lets through but the grammar forbids does not")
    func grammar() {
        let valid = [
            #"{}"#, #" {"a":[1,-0.5,2e10,true,false,null,"\u00e9\n"]} "#, #"{"a":{"b":[]}}"#, "[]", "0", #""x""#,
        ]
        let invalid = [
            #"{"a":1,}"#, "[1,]", #"{'a':1}"#, #"{"a":NaN}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":"\x"}"#,
            "{\"a\":\"\u{01}\"}", #"{"a":1} x"#, #"{"a""#, "", #"{"a":tru}"#,
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ]
        for text in valid { #expect(StrictJSON.isValid(Array(text.utf8)), "\(text)") }
        for text in invalid { #expect(!StrictJSON.isValid(Array(text.utf8)), "\(text)") }
    }

    @Test("The first syntax error's place: byte offset, line and column in characters")
    func errorPosition() {
        func place(_ text: String) -> [Int]? {
            StrictJSON.firstError(in: Array(text.utf8)).map { [$0.offset, $0.line, $0.column] }
        }
        #expect(place(#"{"a":1}"#) == nil)
        #expect(place(#"{"a":1,}"#) == [7, 1, 8])
        #expect(place("{\n  \"a\": 1,\n}") == [12, 3, 1])
        #expect(place(#"{"é":x}"#) == [6, 1, 6])  // é is two bytes, one column
        #expect(place("{\"a\":\"\u{01}\"}") == [6, 1, 7])  // at the control character
        #expect(place(#"{"a":1} x"#) == [8, 1, 9])
        #expect(StrictJSON.firstError(in: Array(#"{"a""#.utf8))?.atEnd == true)
    }
}

import ArrivalTestSupport
import Foundation
import Testing

@Suite("arrival check-payload")
struct CheckPayloadCommandTests {
    @Test("Exit 0 without errors (warnings printed), 1 with an error, each finding printed with its level")
    func exitCodes() throws {
        let ok = try run(
            "arrival",
            ["check-payload", "--topic", "com.example.delivery.push-type.liveactivity", fixture("payloads/ok.json")])
        #expect(ok.status == 0)
        #expect(ok.stdout.hasSuffix("ok.json: 111 bytes, 0 errors, 0 warnings\n"))
        let near = try run("arrival", ["check-payload", fixture("payloads/near-limit.json")])
        #expect(near.status == 0)
        #expect(near.stdout.hasPrefix("warning: payload_near_limit: payload is 3721 bytes"))
        let large = try run("arrival", ["check-payload", fixture("payloads/too-large.json")])
        #expect(large.status == 1)
        #expect(large.stdout.hasPrefix("error: payload_too_large: payload is 4221 bytes"))
        let topic = try run(
            "arrival", ["check-payload", "--topic", "com.example.delivery", fixture("payloads/ok.json")])
        #expect(topic.status == 1)
        #expect(topic.stdout.contains("error: topic_without_suffix"))
    }

    @Test("- reads the payload from standard input")
    func standardInput() throws {
        let result = try run("arrival", ["check-payload", "-"], stdin: try fixtureData("payloads/milliseconds.json"))
        #expect(result.status == 1)
        #expect(result.stdout.contains("error: timestamp_in_milliseconds"))
        #expect(result.stdout.contains("<stdin>: 114 bytes, 1 error, 0 warnings"))
    }

    @Test("Exit 2 for an unreadable file or bad usage, with a message that says what to do")
    func usage() throws {
        let missing = try run("arrival", ["check-payload", "/nonexistent/payload.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read '/nonexistent/payload.json'"))
        let noFile = try run("arrival", ["check-payload"])
        #expect(noFile.status == 2)
        #expect(noFile.stderr.contains("Missing expected argument"))
    }
}

import ArrivalTestSupport
import Foundation
import Testing

@Suite("arrival check-payload --provider")
struct CheckPayloadProviderCommandTests {
    static let fcm = Data(
        #"{"message":{"token":"t","apns":{"live_activity_token":"5f2c","headers":{"apns-push-type":"liveactivity"},"payload":{"aps":{"event":"update","timestamp":1795248000,"content-state":{"seq":1}}}}}}"#
            .utf8)

    @Test("fcm and tencent_chat: exit 0 without errors, 1 with one, findings in the usual form with the summary line")
    func providers() throws {
        let ok = try run("arrival", ["check-payload", "--provider", "fcm", "-"], stdin: Self.fcm)
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.stdout == "<stdin>: \(Self.fcm.count) bytes, 0 errors, 0 warnings\n")
        // The same body checked as a bare APNs payload has no aps: the default is apns.
        let asAPNs = try run("arrival", ["check-payload", "-"], stdin: Self.fcm)
        #expect(asAPNs.status == 1)
        #expect(asAPNs.stdout.hasPrefix("error: missing_aps:"))
        let noToken = try run(
            "arrival", ["check-payload", "--provider", "fcm", "-"],
            stdin: Data(
                String(decoding: Self.fcm, as: UTF8.self).replacingOccurrences(of: #""5f2c""#, with: "\"\"").utf8))
        #expect(noToken.status == 1)
        #expect(
            noToken.stdout.hasPrefix("error: missing_live_activity_token: message.apns.live_activity_token is empty"))
        let cut = try run(
            "arrival", ["check-payload", "--provider", "tencent_chat", "-"],
            stdin: Data("{\"OfflinePushInfo\":\n{\"ApnsInfo\":".utf8))
        #expect(cut.status == 1)
        #expect(
            cut.stdout.hasPrefix(
                "error: not_json: the Tencent Cloud Chat request body is not JSON by RFC 8259: the text ends too early, at line 2, column 13"
            ))
        let tencent = try run(
            "arrival", ["check-payload", "--provider", "tencent_chat", "-"],
            stdin: Data(
                #"{"OfflinePushInfo":{"ApnsInfo":{"LiveActivity":{"LaId":"order-1","Event":"update","ContentState":{}}}}}"#
                    .utf8))
        #expect(tencent.status == 0)
        #expect(tencent.stdout.hasPrefix("warning: missing_seq: OfflinePushInfo.ApnsInfo.LiveActivity.ContentState"))
        #expect(tencent.stdout.hasSuffix("1 warning\n"))
    }

    @Test("An unknown provider, or --topic with tencent_chat, is bad usage (2) with a message that says what to do")
    func usage() throws {
        let unknown = try run("arrival", ["check-payload", "--provider", "gcm", "-"], stdin: Data("{}".utf8))
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("'gcm' is no provider; use apns, fcm, tencent_chat."))
        let topic = try run(
            "arrival", ["check-payload", "--provider", "tencent_chat", "--topic", "com.example.x", "-"],
            stdin: Data("{}".utf8))
        #expect(topic.status == 2)
        #expect(topic.stderr.contains("--topic does not apply to --provider tencent_chat"))
    }
}

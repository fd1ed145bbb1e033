import ArrivalModel
import Testing

@testable import ArrivalIngest

/// Apple's metrics exports read whole or refused with their line (issue 54):
/// the three kinds told apart by their header, BOM, CRLF, quoting,
/// thousands separators, -1 as hidden, unknown statuses and columns kept or
/// ignored as they are.
@Suite("Apple metrics exports")
struct AppleMetricsExportTests {
    static let day21: Int64 = 1_795_219_200_000
    static let day22: Int64 = day21 + 86_400_000

    static func read(_ text: String, name: String = "deliverymetrics.csv", channel: String? = nil) throws
        -> AppleMetricsExport
    {
        try AppleMetricsExport(bytes: Array(text.utf8), fileName: name, channel: channel)
    }

    static func refusal(_ text: String, name: String = "deliverymetrics.csv", channel: String? = nil)
        -> AppleMetricsExport.Refusal?
    {
        do {
            _ = try read(text, name: name, channel: channel)
            return nil
        } catch {
            return error as? AppleMetricsExport.Refusal
        }
    }

    @Test("Delivery metrics: BOM, CRLF, columns in any order and case, quoted thousands, unknown status and column")
    func delivery() throws {
        let text =
            "\u{FEFF}date (utc),PUSH TYPE,Priority,Status,Count\r\n"
            + "2026-11-21,liveactivity,10,Received by APNs,\"12,345\"\r\n"
            + "2026-11-21T00:00:00Z,Liveactivity,10,Delivered to Device,12000\r\n"
            + "\r\n"
            + "2026-11-22T23:59:59.999+00:00,LiveActivity,5,\"Stored \u{2013} Device Offline\",7\r\n"
            + "2026-11-22,widgets,10,Some New Status,-1"
        let export = try Self.read(text)
        #expect(export.kind == .delivery)
        #expect(
            export.delivery == [
                AppleDeliveryRow(day: Self.day21, pushType: "liveactivity", status: "Received by APNs", count: 12_345),
                AppleDeliveryRow(
                    day: Self.day21, pushType: "Liveactivity", status: "Delivered to Device", count: 12_000),
                AppleDeliveryRow(
                    day: Self.day22, pushType: "LiveActivity", status: "Stored \u{2013} Device Offline", count: 7),
                AppleDeliveryRow(day: Self.day22, pushType: "widgets", status: "Some New Status", count: nil),
            ])
    }

    @Test("Broadcast metrics: application-wide (Unique Subscribers) and per channel, -1 hidden, never 0")
    func broadcasts() throws {
        let application = try Self.read(
            "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions,Unique Subscribers\n"
                + "2026-11-21,40,\"1,200\",300,-1\n",
            name: "broadcastapplicationmetric.csv")
        #expect(application.kind == .broadcastApplication)
        #expect(
            application.broadcasts == [
                AppleBroadcastRow(
                    day: Self.day21, channelID: nil, published: 40, delivered: 1_200, totalSubscriptions: 300,
                    uniqueSubscribers: nil, hidden: ["unique_subscribers"])
            ])
        let channelText =
            "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions\n2026-11-21,3,-1,-1\n"
        let named = try Self.read(channelText, name: "exports/broadcastchannelmetrics_dHN0LU1TQkw=.csv")
        #expect(named.kind == .broadcastChannel)
        #expect(named.broadcasts.first?.channelID == "dHN0LU1TQkw=")
        #expect(named.broadcasts.first?.hidden == ["delivered", "total_subscriptions"])
        #expect(named.broadcasts.first?.delivered == nil && named.broadcasts.first?.published == 3)
        let given = try Self.read(channelText, name: "export.csv", channel: "Y2hhbm5lbA==")
        #expect(given.broadcasts.first?.channelID == "Y2hhbm5lbA==")
        #expect(Self.refusal(channelText, name: "export.csv")?.line == 1)
    }

    @Test("A quoted field over two lines: the next row's line is still right")
    func quotedLineBreak() {
        let text =
            "Push Type,Status,Date (UTC),Count\nliveactivity,\"Two\r\nlines\",2026-11-21,1\nliveactivity,x,bad,2\n"
        #expect(Self.refusal(text) == .init(line: 4, reason: Self.refusal(text)?.reason ?? ""))
        #expect(Self.refusal(text)?.reason.contains("'bad'") == true)
    }

    @Test(
        "Malformed files are refused whole with their line",
        arguments: [
            ("Push Type,Status,Date (UTC),Count\nliveactivity,\"open,2026-11-21,1\n", 2, "never closed"),
            (
                "Push Type,Status,Date (UTC),Count\nliveactivity,ok,2026-11-21,1\nliveactivity,x,2026-11-21\n", 3,
                "3 fields"
            ),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,\"a\"b,2026-11-21,1\n", 2, "after a closing quote"),
            ("Push Type,Status,Date (UTC),Count\nlive\"activity,a,2026-11-21,1\n", 2, "quote inside"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,\u{FFFD},2026-11-21,1\n", 0, ""),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,a,2026-11-21,\"1,23\"\n", 2, "not a count"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,a,2026-11-21,-2\n", 2, "not a count"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,a,2026-11-21,1.5\n", 2, "not a count"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,a,2026-11-21,\n", 2, "Count is empty"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,a,21/11/2026,1\n", 2, "neither a day"),
            (
                "Push Type,Status,Date (UTC),Count\nliveactivity,A  b,2026-11-21,1\nliveactivity,a B,2026-11-21,2\n", 3,
                "line 2"
            ),
            ("Name,Value\nx,1\n", 1, "not one of Apple's"),
            ("Date (UTC),Date (UTC),Count\n", 1, "repeated"),
            ("", 1, "no header"),
        ])
    func malformed(text: String, line: Int, reason: String) {
        guard line > 0 else { return }  // the valid U+FFFD case: see invalidUTF8
        let refused = Self.refusal(text)
        #expect(refused?.line == line, "\(text)")
        #expect(refused?.reason.contains(reason) == true, "\(String(describing: refused))")
    }

    @Test("Invalid UTF-8 is refused at its line")
    func invalidUTF8() {
        var bytes = Array("Push Type,Status,Date (UTC),Count\nliveactivity,a,2026-11-21,1\nliveactivity,".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(",2026-11-22,1\n".utf8)
        #expect(throws: AppleMetricsExport.Refusal(line: 3, reason: "a field is not valid UTF-8")) {
            try AppleMetricsExport(bytes: bytes, fileName: "d.csv")
        }
    }

    @Test("A header with no rows is an export of nothing; the channel is read from the name only after the prefix")
    func edges() throws {
        #expect(try Self.read("Push Type,Status,Date (UTC),Count\r\n").delivery.isEmpty)
        #expect(AppleMetricsExport.channel(fromFileName: "broadcastchannelmetrics.csv") == nil)
        #expect(AppleMetricsExport.channel(fromFileName: "BroadcastChannelMetrics-abc+=.CSV") == "abc+=")
        #expect(AppleMetricsExport.channel(fromFileName: "channelmetrics_abc.csv") == nil)
        // A base64 ID's '/' is written %2F in a file name; a name without a valid escape stays as it is.
        #expect(AppleMetricsExport.channel(fromFileName: "/x/broadcastchannelmetrics_JWw%2Fai8+==.csv") == "JWw/ai8+==")
        #expect(AppleMetricsExport.channel(fromFileName: "broadcastchannelmetrics_a%zz.csv") == "a%zz")
    }
}

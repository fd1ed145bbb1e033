import ArgumentParser
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Foundation

/// `arrival tokens`: the dead push tokens to purge (not the collector's
/// bearer tokens, which are ArrivalServer's `TokenTable`).
struct DeadTokens: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokens",
        abstract: "List the dead push tokens your sender should purge, and what was still sent to them.",
        discussion: """
            A token is dead from the sent_at of its earliest request answered 410, or with the reason \
            Unregistered, BadDeviceToken, ExpiredToken or FCM:UNREGISTERED (contract 3.0). Each is listed with \
            its app, provider, when it died, why, and the requests sent to it afterwards: sends a purge would \
            have saved. With a window (--day, or --from and --to), the tokens that died in it and those still \
            sent to in it, counting the requests of the window only (their sum is the report's \
            requests.to_dead_tokens); without one, every token that ever died. Most requests after death first. \
            The store is opened read-only.
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, csv, json, markdown
    }

    @OptionGroup var store: StoreOptions
    @OptionGroup var window: WindowOptions

    @Option(help: "Output format: text (an aligned table), csv, json (schema arrival.tokens/1) or markdown.")
    var format: Format = .text

    @Option(help: "Write the list to this file instead of standard output.")
    var out: String?

    func validate() throws {
        _ = try window.resolved()
    }

    func run() throws {
        let database = try store.reading()
        let window = try self.window.resolved()
        let tokens = try database.deadTokens(from: window?.from, to: window?.to)
        let text: String
        switch format {
        case .text: text = Self.text(tokens, window: window)
        case .csv: text = Self.csv(tokens)
        case .json: text = Self.json(tokens, window: window)
        case .markdown: text = Self.markdown(tokens, window: window)
        }
        try write(text, to: out)
    }

    static let columns = ["push_token", "app", "provider", "died_at", "reason", "requests_after", "last_sent_at"]

    static func cells(_ token: DeadToken) -> [String] {
        [
            token.pushToken, token.app, token.provider, RFC3339.format(milliseconds: token.diedAt), token.reason,
            String(token.requestsAfter), token.lastSentAt.map { RFC3339.format(milliseconds: $0) } ?? "",
        ]
    }

    static func text(_ tokens: [DeadToken], window: ReportWindow?) -> String {
        let wasted = tokens.reduce(0) { $0 + $1.requestsAfter }
        var lines = [
            "Dead tokens (\(WindowOptions.scope(window))): \(ReportFormat.count(tokens.count)); "
                + "\(ReportFormat.counted(wasted, "request")) sent to them after they died"
        ]
        if !tokens.isEmpty {
            var table = TextTable(
                ["push token", "app", "provider", "died at", "reason", "requests after", "last sent at"],
                alignments: [.left, .left, .left, .left, .left, .right, .left])
            for token in tokens {
                var row = cells(token)
                row[5] = ReportFormat.count(token.requestsAfter)
                if row[6].isEmpty { row[6] = ReportFormat.none }
                table.add(row)
            }
            lines.append(table.render(color: false))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// RFC 4180: a field with a comma, a quote or a line break is quoted, quotes doubled; CRLF line ends.
    static func csv(_ tokens: [DeadToken]) -> String {
        csvText([columns] + tokens.map(cells))
    }

    static func json(_ tokens: [DeadToken], window: ReportWindow?) -> String {
        let w = JSONWriter()
        w.object {
            w.field("schema") { w.string("arrival.tokens/1") }
            w.field("window") { window.write(to: w) }
            w.field("requests_after_death") { w.int(tokens.reduce(0) { $0 + $1.requestsAfter }) }
            w.field("tokens") {
                w.array {
                    for token in tokens {
                        w.element {
                            w.object {
                                w.field("push_token") { w.string(token.pushToken) }
                                w.field("app") { w.string(token.app) }
                                w.field("provider") { w.string(token.provider) }
                                w.field("died_at") { w.string(RFC3339.format(milliseconds: token.diedAt)) }
                                w.field("reason") { w.string(token.reason) }
                                w.field("requests_after") { w.int(token.requestsAfter) }
                                w.field("last_sent_at") {
                                    if let last = token.lastSentAt {
                                        w.string(RFC3339.format(milliseconds: last))
                                    } else {
                                        w.null()
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return w.text + "\n"
    }

    static func markdown(_ tokens: [DeadToken], window: ReportWindow?) -> String {
        let wasted = tokens.reduce(0) { $0 + $1.requestsAfter }
        var out = [
            "### Dead tokens to purge (\(WindowOptions.scope(window)))", "",
            "\(ReportFormat.count(tokens.count)) tokens; \(ReportFormat.counted(wasted, "request")) sent to them "
                + "after they died.",
        ]
        if !tokens.isEmpty {
            out.append("")
            out += Markdown.table(
                ["push token", "app", "provider", "died at", "reason", "requests after", "last sent at"],
                alignments: [.left, .left, .left, .left, .left, .right, .left],
                rows: tokens.map { token in
                    var row = cells(token).map { Markdown.escaped($0) }
                    if row[6].isEmpty { row[6] = ReportFormat.none }
                    return row
                })
        }
        return out.joined(separator: "\n") + "\n"
    }
}

import ArgumentParser
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import ArrivalStores
import Foundation

/// `arrival apple`: Apple's own numbers beside arrival's (issue 54; Documentation/Apple-metrics.md).
struct Apple: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import Apple's Push Notifications Console exports into the store, and show them.",
        discussion: """
            Apple's console exports what APNs saw as daily CSV files: delivery metrics (a count per day, push \
            type and status) and broadcast metrics (the application's, and one channel's). arrival keeps them \
            beside what the devices drew. Documentation/Apple-metrics.md says how to export them and what each \
            status means.
            """,
        subcommands: [Import.self, Show.self]
    )
}

extension Apple {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store Apple's exports; a later export of a day replaces that day's rows.",
            discussion: """
                Each FILE is told apart by its header: Push Type, Status, Date (UTC), Count (delivery metrics); \
                Date (UTC), Broadcasts Published, Broadcasts Delivered, Total Subscriptions and Unique \
                Subscribers (the application's broadcasts); the same without Unique Subscribers (one channel's, \
                whose id comes from --channel or the file's name, broadcastchannelmetrics_ID.csv). Column order \
                and case, a UTF-8 byte order mark, CRLF line ends, quoted fields and commas between thousands are \
                all read; unknown columns are ignored, unknown statuses and push types kept as written. -1 (Apple's \
                placeholder where too few subscribers would be shown) is stored as hidden, never as a count. A \
                file that cannot be read exactly is refused whole, with its line and the reason, and stores \
                nothing; the files before it stay stored. Importing the same file again stores nothing twice; a \
                later export of a day (Apple revises its numbers) replaces that day's rows and says so.
                Exit codes: 0 imported, 1 a file was refused or the store failed, 2 bad usage.
                """
        )

        @Argument(help: "Apple's CSV exports.")
        var files: [String]

        @Option(help: "The broadcast channel of a per-channel export (its base64 channel id), for every FILE given.")
        var channel: String?

        @OptionGroup var store: StoreOptions

        func run() throws {
            let location = store.location
            for path in files { print(try Self.importFile(path, channel: channel, into: location)) }
        }

        /// Reads one export whole (or refuses it with its line, storing nothing), stores it, and says what it did.
        static func importFile(_ path: String, channel: String?, into location: StoreLocation) throws -> String {
            let bytes: [UInt8]
            do {
                bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                throw Diagnostic(
                    .io, "cannot read '\(path)': \(error.localizedDescription)",
                    hint: "give the path of a CSV file the console exported.", path: path)
            }
            let export: AppleMetricsExport
            do {
                export = try AppleMetricsExport(bytes: bytes, fileName: path, channel: channel)
            } catch {
                throw Diagnostic(
                    .input, "\(error.reason); nothing of this file was stored",
                    hint: "Documentation/Apple-metrics.md describes the three exports arrival reads.",
                    location: Diagnostic.Location(path: path, line: error.line))
            }
            let (sha256, _) = try ContentHash.sha256(of: path)
            let outcome = try location.importAppleMetrics(
                kind: export.kind, AppleMetrics(delivery: export.delivery, broadcasts: export.broadcasts),
                sha256: sha256, at: Int64(Date().timeIntervalSince1970 * 1000))
            return Self.summary(path: path, kind: export.kind, outcome: outcome)
        }

        static func days(_ days: [Int64]) -> String {
            days.sorted().map { String(RFC3339.format(milliseconds: $0).prefix(10)) }.joined(separator: ", ")
        }

        static func summary(path: String, kind: AppleMetricsKind, outcome: AppleImportOutcome) -> String {
            var parts: [String] = []
            if !outcome.newDays.isEmpty { parts.append("new: \(days(outcome.newDays))") }
            if !outcome.revisedDays.isEmpty {
                parts.append("replaced by this later export: \(days(outcome.revisedDays))")
            }
            if !outcome.unchangedDays.isEmpty { parts.append("already stored as is: \(days(outcome.unchangedDays))") }
            let what =
                switch kind {
                case .delivery: "delivery metrics"
                case .broadcastApplication: "the application's broadcast metrics"
                case .broadcastChannel: "a channel's broadcast metrics"
                }
            return "\(path): \(what), \(ReportFormat.counted(outcome.rows, "row"))"
                + (parts.isEmpty ? " (no day)" : "; " + parts.joined(separator: "; "))
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the Apple numbers stored: per day, delivery counts and broadcast rows.",
            discussion: """
                JSON: {"delivery": [{"date", "push_type", "status", "count"}...], "broadcasts": [{"date", \
                "channel_id" (null for the application's), "published", "delivered", "total_subscriptions", \
                "unique_subscribers", "hidden": [the fields Apple gave as -1]}...]}, sorted by date, then push type \
                or channel (the application's first), then status; a hidden or absent value is null. The store is \
                opened read-only.
                """
        )

        enum Format: String, ExpressibleByArgument, CaseIterable {
            case json, markdown
        }

        @OptionGroup var store: StoreOptions
        @OptionGroup var window: WindowOptions

        @Option(help: "Output format: json or markdown.")
        var format: Format = .json

        func validate() throws { _ = try window.resolved() }

        func run() throws {
            let window = try self.window.resolved()
            // A window's days: those that start in it, or whose day it starts in.
            let from = window.map { utcDay(of: $0.from) * Milliseconds.day }
            let to = window.map { $0.to }
            let rows = try store.location.appleMetrics(from: from, to: to)
            print(
                format == .json
                    ? Self.json(rows.delivery, rows.broadcasts) : Self.markdown(rows.delivery, rows.broadcasts),
                terminator: "")
        }

        static func date(_ day: Int64) -> String { appleDate(day) }

        static func json(_ delivery: [AppleDeliveryRow], _ broadcasts: [AppleBroadcastRow]) -> String {
            JSONWriter.document(["delivery": delivery, "broadcasts": broadcasts] as JSONFields)
        }

        static func markdown(_ delivery: [AppleDeliveryRow], _ broadcasts: [AppleBroadcastRow]) -> String {
            func value(_ n: Int?, hidden: Bool = false) -> String {
                n.map { ReportFormat.count($0) } ?? (hidden ? "hidden" : "—")
            }
            var lines = ["# Apple's numbers", ""]
            if delivery.isEmpty && broadcasts.isEmpty {
                lines.append("No Apple export is stored for these days (`arrival apple import FILE`).")
            }
            if !delivery.isEmpty {
                lines += ["## Delivery metrics", "", "| date | push type | status | count |", "|---|---|---|---:|"]
                for row in delivery {
                    lines.append(
                        "| \(date(row.day)) | \(Markdown.escaped(row.pushType)) | \(Markdown.escaped(row.status)) | "
                            + "\(value(row.count, hidden: true)) |")
                }
                lines.append("")
            }
            if !broadcasts.isEmpty {
                lines += [
                    "## Broadcast metrics", "",
                    "| date | channel | published | delivered | total subscriptions | unique subscribers |",
                    "|---|---|---:|---:|---:|---:|",
                ]
                for row in broadcasts {
                    let hidden = Set(row.hidden)
                    lines.append(
                        "| \(date(row.day)) | \(row.channelID.map(Markdown.escaped) ?? "(application)") | "
                            + "\(value(row.published, hidden: hidden.contains("published"))) | "
                            + "\(value(row.delivered, hidden: hidden.contains("delivered"))) | "
                            + "\(value(row.totalSubscriptions, hidden: hidden.contains("total_subscriptions"))) | "
                            + "\(value(row.uniqueSubscribers, hidden: hidden.contains("unique_subscribers"))) |")
                }
                lines.append("")
                lines.append(
                    "Apple's counts are rounded and per request; \"hidden\" is Apple's -1: too few subscribers to show."
                )
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }
}

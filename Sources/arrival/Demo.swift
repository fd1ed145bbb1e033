import ArgumentParser
import ArrivalIngest
import ArrivalModel
import ArrivalStore
import Foundation

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ingest the bundled SampleData/ into a throwaway store and print its report (markdown, json or html)."
    )

    @Option(help: "The sample data directory.")
    var data: String = "SampleData"

    @Option(help: "Output format: markdown, json, or html (the page 'arrival report --format html' writes).")
    var format: ReportCommand.Format = .markdown

    func run() throws {
        guard FileManager.default.fileExists(atPath: data) else {
            throw Diagnostic(
                .input, "no sample data at '\(data)'", hint: "run this from the project's root, or pass --data DIR.")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("arrival-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("demo.sqlite").path
        let store = try SQLiteStore(path: path)
        // The data folders (a note a user put beside them, a .md file, is no JSON Lines file).
        let entries = try FileManager.default.contentsOfDirectory(atPath: data).sorted()
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
            .map { (data as NSString).appendingPathComponent($0) }
        let summary = try IngestPipeline(store: store).ingest(paths: entries)
        FileHandle.standardError.write(Data((summary.text(database: "a temporary store") + "\n\n").utf8))
        // The same rendering as 'arrival report', so every format it offers works here too.
        try write(try renderReport(of: store, window: nil, format: format).text, to: nil)
    }
}

import ArgumentParser
import ArrivalIngest
import ArrivalModel
import ArrivalSimulation
import ArrivalStore
import ArrivalStores
import Foundation

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ingest the bundled SampleData/ into a throwaway store and print its report (markdown, json or html)."
    )

    @Option(
        help: ArgumentHelp(
            "The sample data directory.",
            discussion:
                "Without it: SampleData/ of a checkout; elsewhere (an installed binary), the same day simulated in a "
                + "temporary directory, byte for byte what SampleData/ holds."))
    var data: String?

    /// How SampleData/ was made (Documentation/SampleData.md): simulated again where there is none.
    static let sample = SimulationConfig(activities: 200, seed: 1, day: "2026-11-21")

    @Option(help: "Output format: markdown, json, or html (the page 'arrival report --format html' writes).")
    var format: ReportCommand.Format = .markdown

    @Option(
        name: .customLong("apple-metrics"),
        help: ArgumentHelp(
            "Also import the Apple console exports (*.csv) in DIR, so the report sets Apple's numbers beside arrival's.",
            discussion:
                "As 'arrival apple import DIR/*.csv' would; 'arrival simulate --apple-metrics DIR' writes them.",
            valueName: "DIR"))
    var appleMetrics: String?

    func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("arrival-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try self.data ?? sampleData(in: directory)
        guard FileManager.default.fileExists(atPath: data) else {
            throw Diagnostic(
                .input, "no sample data at '\(data)'",
                hint: "pass a directory 'arrival simulate --out DIR' wrote (or your own batches) as --data DIR.")
        }
        let path = directory.appendingPathComponent("demo.sqlite").path
        let store = try SQLiteStore(path: path)
        // The data folders (a note a user put beside them, a .md file, is no JSON Lines file).
        let entries = try FileManager.default.contentsOfDirectory(atPath: data).sorted()
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
            .map { (data as NSString).appendingPathComponent($0) }
        let summary = try IngestPipeline(store: store).ingest(paths: entries)
        FileHandle.standardError.write(Data((summary.text(database: "a temporary store") + "\n\n").utf8))
        if let appleMetrics {
            let exports = try FileManager.default.contentsOfDirectory(atPath: appleMetrics).sorted()
                .filter { $0.lowercased().hasSuffix(".csv") }.map {
                    (appleMetrics as NSString).appendingPathComponent($0)
                }
            for export in exports {
                let said = try Apple.Import.importFile(export, channel: nil, into: .sqlite(path: path))
                FileHandle.standardError.write(Data((said + "\n").utf8))
            }
        }
        // The same rendering as 'arrival report', so every format it offers works here too.
        try write(try renderReport(of: store, window: nil, format: format).text, to: nil)
    }

    /// SampleData/ of a checkout; elsewhere the same day, simulated into `directory`.
    private func sampleData(in directory: URL) throws -> String {
        if FileManager.default.fileExists(atPath: "SampleData") { return "SampleData" }
        let out = directory.appendingPathComponent("SampleData").path
        let config = Self.sample
        FileHandle.standardError.write(
            Data(
                ("No SampleData/ here (not a checkout): simulating the same day, as 'arrival simulate --activities "
                    + "\(config.activities) --seed \(config.seed) --day \(config.day)' would.\n").utf8))
        _ = try FleetSimulator(config: config).run(outputDirectory: out, replacingExisting: false)
        return out
    }
}

import ArrivalAnalysis
import ArrivalIngest
import ArrivalModel
import ArrivalRendering
import ArrivalTestSupport
import Foundation
import Testing

@testable import ArrivalStore

/// The Grafana dashboard reads the store through the SQLite data source;
/// every panel's SQL must run against the current schema and find data.
@Suite("Grafana dashboard")
struct GrafanaDashboardTests {
    static let dashboard = packageRoot.appendingPathComponent(
        "Dashboards/grafana/arrival-dashboard.json")

    /// (panel title, SQL) of every panel target.
    static func panelQueries() throws -> [(String, String)] {
        let data = try Data(contentsOf: dashboard)
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(root["panels"] as? [[String: Any]])
        var queries: [(String, String)] = []
        for panel in panels {
            let title = panel["title"] as? String ?? "untitled"
            let targets = try #require(panel["targets"] as? [[String: Any]], "panel '\(title)' has no targets")
            let datasource = panel["datasource"] as? [String: Any]
            #expect(datasource?["type"] as? String == "frser-sqlite-datasource", "panel '\(title)'")
            for target in targets {
                let sql = try #require(target["queryText"] as? String, "panel '\(title)' has no queryText")
                #expect(target["rawQueryText"] as? String == sql, "panel '\(title)': rawQueryText and queryText differ")
                queries.append((title, sql))
            }
        }
        return queries
    }

    @Test("Every panel's SQL runs on a store built from SampleData/ and a broadcast fleet, and returns rows")
    func everyPanelQueryRuns() throws {
        let queries = try Self.panelQueries()
        #expect(queries.count >= 10)
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("sample.sqlite").path)
        // The sample has no broadcast channel; the broadcast fixture fills the channel panel.
        _ = try IngestPipeline(store: store).ingest(paths: samplePaths + [fixture("broadcasts")])
        for (title, sql) in queries {
            // Grafana's time-range macros (seconds since the epoch), here covering all data.
            let resolved =
                sql
                .replacingOccurrences(of: "$__unixEpochFrom()", with: "0")
                .replacingOccurrences(of: "$__unixEpochTo()", with: "4102444800")
            #expect(!resolved.contains("$__"), "panel '\(title)' uses a macro the test does not know")
            var rows = 0
            var nonNull = false
            do {
                let statement = try store.connection.prepare(resolved)
                try statement.forEachRow { row in
                    rows += 1
                    if row.string(0) != nil { nonNull = true }
                }
            } catch {
                Issue.record("panel '\(title)': \(error)")
                continue
            }
            #expect(rows > 0, "panel '\(title)' returned no rows")
            #expect(nonNull, "panel '\(title)' returned only NULL in its first column")
        }
    }

    @Test("A panel whose SQL names a column the schema lacks is caught")
    func brokenQueryIsCaught() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: directory.appendingPathComponent("empty.sqlite").path)
        #expect(throws: DatabaseError.self) {
            _ = try store.connection.prepare("SELECT no_such_column FROM update_outcomes")
        }
    }
}

import ArrivalAnalysis
import ArrivalModel
import ArrivalRendering
import ArrivalStore
import Benchmark
import Foundation

// The hot paths of arrival as ordo-one/benchmark benchmarks, run by Scripts/benchmarks.sh and
// checked against the thresholds in Benchmarks/Thresholds (Benchmarks/README.md, "Benchmarks
// with thresholds"). Each benchmark runs in a process of its own; its setup simulates the
// fleet (Pipeline.swift) and prepares what it does not measure.

/// What each benchmark measures, and what is checked: allocations (malloc calls) alone, the
/// same on every run of the same code and input but for a few the benchmark's own sampling
/// thread makes while it runs (a few hundred a second): a run's p90 may be 3 % above the p90
/// recorded in Benchmarks/Thresholds (`mallocTolerance`); fewer is reported, never a failure.
/// Peak resident memory (sampled, and moved by the allocator's and threads' timing), CPU time
/// and wall-clock time are the machine's: measured and printed, never checked.
///
/// Dictionaries hash with a random seed per process unless SWIFT_DETERMINISTIC_HASHING is set
/// (Scripts/benchmarks.sh sets it), and the report's allocations depend on their order.
func configuration(
    iterations: Int, scalingFactor: BenchmarkScalingFactor = .one, timeUnits: BenchmarkTimeUnits = .milliseconds,
    mallocTolerance: Double = 3
) -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.mallocCountTotal, .peakMemoryResident, .cpuTotal, .wallClock],
        timeUnits: timeUnits, warmupIterations: 1, scalingFactor: scalingFactor, maxDuration: .seconds(10),
        maxIterations: iterations,
        // Checked: what the code does, whatever the machine (allocations). Peak memory, CPU and
        // wall time are measured and printed, never checked: a busier, a slower or a faster machine
        // than the one that recorded them would fail the run for nothing the code did.
        thresholds: [
            .mallocCountTotal: BenchmarkThresholds(relative: [.p90: mallocTolerance])
        ])
}

/// The fleet, decoded, stored and analysed once per process, for the benchmarks that start
/// from there.
struct Prepared {
    let fleet: Fleet
    let decoded: [DecodedFile]
    let records: Int

    init() throws {
        fleet = try Fleet.make()
        (decoded, records) = Pipeline.decodeAll(fleet)
    }
}

/// A store holding the fleet, in a temporary directory removed by the teardown.
struct StoredFleet {
    let directory: TemporaryDirectory
    let store: SQLiteStore

    init() throws {
        let prepared = try Prepared()
        directory = try TemporaryDirectory("store")
        store = try Pipeline.openStore(at: directory.path + "/fleet.sqlite")
        guard try Pipeline.insert(prepared.decoded, into: store) > 0 else { throw CocoaError(.fileReadCorruptFile) }
    }
}

/// The report's generation time printed in the HTML page: fixed, so every run renders the same bytes.
let generatedAt = Int64(1_795_305_600_000)

func benchmarks() {
    // Lines in memory → row batches: the scanner, the field checks, the exchange derivation
    // and the de-duplication keys, no file and no store. Decoding reuses its batch and
    // allocates little (under 3,000 calls for the whole fleet), so the calls made elsewhere in
    // the process while it runs, which grow with its time, are a large share: beside a release
    // build they added 13 % (3,047 calls). 50 % still fails on one allocation per line (57,714
    // sender lines alone) and on any machine's pace passes.
    Benchmark("Decode", configuration: configuration(iterations: 10, mallocTolerance: 50)) {
        (benchmark: Benchmark, fleet: Fleet) in
        blackHole(Pipeline.decodeCounting(fleet))
    } setup: {
        try Fleet.make()
    }

    // Row batches → a new store in a temporary directory: one file transaction per file, the
    // commits, and the close, which checkpoints the log into the store.
    var insertDirectory: TemporaryDirectory?
    Benchmark("Insert", configuration: configuration(iterations: 5)) { (benchmark: Benchmark, prepared: Prepared) in
        let path = insertDirectory!.path + "/insert-\(benchmark.currentIteration).sqlite"
        do {
            var store: SQLiteStore? = try Pipeline.openStore(at: path)
            benchmark.startMeasurement()
            blackHole(try Pipeline.insert(prepared.decoded, into: store!))
            store = nil
            benchmark.stopMeasurement()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        } catch {
            benchmark.error("insert: \(error)")
        }
    } setup: {
        insertDirectory = try TemporaryDirectory("insert")
        return try Prepared()
    } teardown: {
        insertDirectory?.remove()
    }

    // The analysis of a store the size of one partition (the contract's report, all data):
    // what each partition of a large store costs.
    var analysisStore: StoredFleet?
    Benchmark("Analysis", configuration: configuration(iterations: 10)) { benchmark in
        do {
            blackHole(try ReportBuilder(store: analysisStore!.store).build(window: nil))
        } catch {
            benchmark.error("analysis: \(error)")
        }
    } setup: {
        analysisStore = try StoredFleet()
    } teardown: {
        analysisStore?.directory.remove()
    }

    // The same store analysed in 4 partitions, as a store too large to analyse at once is
    // (`ARRIVAL_PARTITION_ROWS`): the pass that writes each partition's rows to a file, and
    // the analyses of the partitions read back, two at a time.
    var partitionedStore: StoredFleet?
    var partitionRows = 0
    Benchmark("AnalysisPartitioned", configuration: configuration(iterations: 10)) { benchmark in
        do {
            var builder = ReportBuilder(store: partitionedStore!.store)
            builder.partitioning = PartitionPolicy(rowsPerPartition: partitionRows)
            blackHole(try builder.build(window: nil))
        } catch {
            benchmark.error("analysis in partitions: \(error)")
        }
    } setup: {
        let stored = try StoredFleet()
        let report = try ReportBuilder(store: stored.store).build(window: nil)
        partitionRows = report.requests.total / 4 + 1
        partitionedStore = stored
    } teardown: {
        partitionedStore?.directory.remove()
    }

    // The report of the fleet's day with a 7-day trend, built once: its JSON (the contract's
    // report object) and its HTML page (templates, charts, tables).
    var reportStore: StoredFleet?
    var daily: DailyReport?
    // Rendering the JSON takes under a millisecond: 1,000 renderings an iteration (shown per
    // rendering, in microseconds; the thresholds hold the iteration's totals).
    Benchmark(
        "ReportJSON", configuration: configuration(iterations: 5, scalingFactor: .kilo, timeUnits: .microseconds)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(daily!.report.jsonText())
        }
    } setup: {
        reportStore = try StoredFleet()
        daily = try DailyReportBuilder(store: reportStore!.store).build(window: .day(Fleet.day), trendDays: 7)
    } teardown: {
        reportStore?.directory.remove()
    }

    Benchmark("ReportHTML", configuration: configuration(iterations: 20)) { benchmark in
        do {
            blackHole(try daily!.htmlText(generatedAt: generatedAt))
        } catch {
            benchmark.error("report html: \(error)")
        }
    } setup: {
        reportStore = try StoredFleet()
        daily = try DailyReportBuilder(store: reportStore!.store).build(window: .day(Fleet.day), trendDays: 7)
    } teardown: {
        reportStore?.directory.remove()
    }
}

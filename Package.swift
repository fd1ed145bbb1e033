// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // Imports say what a file depends on: a member is visible only where its
    // module is imported (MemberImportVisibility), and an import is internal
    // unless written `public import` or `package import` (InternalImportsByDefault).
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// A test target (`Tests/NAME`) with the project's Swift settings; with `fixtures`, its own `Fixtures/` folder
/// is copied into its bundle (read with `fixture(_:in: .module)`).
func testTarget(_ name: String, dependencies: [Target.Dependency], fixtures: Bool = false) -> Target {
    .testTarget(
        name: name, dependencies: dependencies, resources: fixtures ? [.copy("Fixtures")] : [],
        swiftSettings: swiftSettings)
}

let package = Package(
    name: "arrival",
    // The kit runs in iOS apps and widgets: Live Activities need iOS 16.1, and the kit's
    // ActivityKit observer (push-to-start tokens) marks itself iOS 17.2. The tool runs on
    // macOS 14+ and Linux.
    platforms: [.macOS(.v14), .iOS("16.1")],
    products: [
        .executable(name: "arrival", targets: ["arrival"]),
        // The instrumentation kit: ArrivalBeacons for the app and widget (Foundation, system
        // zlib and the first-party, dependency-free ArrivalModel for RFC 3339 times),
        // ArrivalSender for the push sender. The kit brings no third-party code.
        .library(name: "ArrivalBeacons", targets: ["ArrivalBeacons"]),
        .library(name: "ArrivalSender", targets: ["ArrivalSender"]),
        // Sends the app's beacon batches and the sender's closed logs to the collector with
        // URLSession; a product of its own so that the command-line tool, which uploads
        // nothing, links no FoundationNetworking (and so no libcurl) on Linux.
        .library(name: "ArrivalUpload", targets: ["ArrivalUpload"]),
    ],
    // Ranges, not exact pins: an app that adds this package for the kit resolves it
    // beside its own swift-log, swift-crypto or SwiftNIO, which an exact pin would
    // fight. The lower bounds are the versions this project builds and tests with.
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // The collector (`arrival serve`): HTTP, lifecycle, logging, metrics in the Prometheus format.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // SwiftNIO itself, which Hummingbird runs on: the collector's connection deadlines are a channel handler.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // PostgreSQL as a shared store (issue 31): the maintained Swift client, and TLS to managed servers.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // The system's own libsqlite3 and zlib (Debian: libsqlite3-dev, zlib1g-dev).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Intel's ISA-L (Debian: libisal-dev): inflates large gzip files about twice as fast as zlib.
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"]), .brew(["isa-l"])]),
        // The pipeline, one target per stage; each depends only on the stages before it:
        // Model <- Store <- Ingest and Analysis; Analysis <- Rendering; Ingest, Analysis and
        // Rendering <- Compare; Simulation on Model and the kit's encoders; the CLI on all.
        .target(
            name: "ArrivalModel",
            swiftSettings: swiftSettings
        ),
        // What one stage hands the next: decoded rows (decode -> write) and the bounded channel between threads.
        .target(
            name: "ArrivalHandOff",
            dependencies: ["ArrivalModel"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalStore",
            dependencies: ["ArrivalModel", "ArrivalHandOff", "CSQLite"],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL as the shared store: its location, credentials and connections (the only owner of postgres-nio).
        .target(
            name: "ArrivalPostgres",
            dependencies: [
                "ArrivalModel", "ArrivalHandOff", "ArrivalStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Its ByteBuffer, in which postgres-nio reads and writes rows; its locked box for shared state.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Where the store is (`StoreLocation`, read once from --db): the one place that knows the
        // engines, and opens each one's roles for the command line and the collector.
        .target(
            name: "ArrivalStores",
            dependencies: ["ArrivalModel", "ArrivalStore", "ArrivalPostgres"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalIngest",
            dependencies: [
                "ArrivalModel",
                "ArrivalHandOff",
                "ArrivalStore",
                "CZlib",
                "CISAL",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalAnalysis",
            dependencies: ["ArrivalModel", "ArrivalStore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalRendering",
            dependencies: [
                "ArrivalModel",
                // The daily report's dead tokens are the store's `DeadToken` rows.
                "ArrivalStore",
                "ArrivalAnalysis",
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalCompare",
            dependencies: [
                "ArrivalModel",
                "ArrivalStore",
                "ArrivalIngest",
                "ArrivalAnalysis",
                "ArrivalRendering",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalSimulation",
            dependencies: ["ArrivalModel", "ArrivalBeacons", "ArrivalSender"],
            swiftSettings: swiftSettings
        ),
        // The collector: uploads into a spool, one worker ingesting them, reports and metrics over HTTP.
        .target(
            name: "ArrivalServer",
            dependencies: [
                "ArrivalModel",
                "ArrivalStore",
                "ArrivalIngest",
                "ArrivalAnalysis",
                "ArrivalRendering",
                "ArrivalStores",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // NIOLockedValueBox: state shared between requests, Sendable without `@unchecked`.
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "arrival",
            dependencies: [
                "ArrivalServer",
                "ArrivalModel",
                "ArrivalStore",
                "ArrivalIngest",
                "ArrivalAnalysis",
                "ArrivalRendering",
                "ArrivalCompare",
                "ArrivalSimulation",
                "ArrivalSender",
                "ArrivalStores",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `arrival serve` bootstraps swift-metrics: the process's to do, not the collector library's.
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalBeacons",
            dependencies: ["ArrivalModel", "CZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalSender",
            dependencies: ["ArrivalBeacons", "ArrivalModel", "CZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalUpload",
            dependencies: ["ArrivalBeacons"],
            swiftSettings: swiftSettings
        ),
        // Spawned by ArrivalBeaconsTests (concurrent and killed writers); also the append benchmark.
        .executableTarget(
            name: "beacon-stress",
            dependencies: ["ArrivalBeacons"],
            swiftSettings: swiftSettings
        ),
        // Tests: one target per library module, named after it, testing it through its API (Documentation/Testing.md).
        // Each depends on its module, ArrivalTestSupport and what it needs to make its fixtures or read its results
        // back; only ArrivalCommandLineTests runs the built `arrival`, and ArrivalUploadTests, for its collector.
        //
        // What the test targets share: temporary folders, the real pipeline as a fixture builder (ingest and
        // report, a file's decoded lines), the runner of built executables, the fixtures several targets read.
        .target(
            name: "ArrivalTestSupport",
            dependencies: ["ArrivalModel", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis"],
            path: "Tests/ArrivalTestSupport",
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        // A database of a test's own on the PostgreSQL test server, and a relay that falls silent: for the two
        // targets that run against one (ArrivalPostgresTests, ArrivalCommandLineTests), so that no other test
        // target links postgres-nio.
        .target(
            name: "ArrivalPostgresTestSupport",
            dependencies: [
                "ArrivalPostgres", "ArrivalTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/ArrivalPostgresTestSupport",
            swiftSettings: swiftSettings
        ),
        testTarget(
            "ArrivalModelTests",
            dependencies: ["ArrivalModel"]
        ),
        testTarget(
            "ArrivalHandOffTests",
            // ArrivalIngest: the decoder turns the sample day's lines into the row batches under test.
            dependencies: ["ArrivalHandOff", "ArrivalModel", "ArrivalIngest", "ArrivalTestSupport"]
        ),
        testTarget(
            "ArrivalStoreTests",
            dependencies: [
                "ArrivalStore", "ArrivalModel", "ArrivalHandOff", "ArrivalTestSupport",
                // Stores are filled by the real ingest, and read back as reports (figures, JSON bytes).
                "ArrivalIngest", "ArrivalAnalysis", "ArrivalRendering",
            ]
        ),
        testTarget(
            "ArrivalIngestTests",
            dependencies: [
                "ArrivalIngest", "ArrivalModel", "ArrivalHandOff", "ArrivalStore", "ArrivalTestSupport",
                // ArrivalBeacons: the kit's gzip writer makes gzip inputs (members, levels); what was ingested
                // is read back as reports (figures, JSON and HTML bytes).
                "ArrivalBeacons", "ArrivalAnalysis", "ArrivalRendering",
            ],
            fixtures: true
        ),
        testTarget(
            "ArrivalAnalysisTests",
            dependencies: [
                "ArrivalAnalysis", "ArrivalModel", "ArrivalStore", "ArrivalTestSupport",
                // Stores are filled by the real ingest, some from simulated fleets; reports are compared as
                // their JSON, markdown and HTML bytes.
                "ArrivalIngest", "ArrivalSimulation", "ArrivalRendering",
            ],
            fixtures: true
        ),
        testTarget(
            "ArrivalRenderingTests",
            dependencies: [
                "ArrivalRendering", "ArrivalModel", "ArrivalAnalysis", "ArrivalTestSupport",
                // Stores to render are filled by the real ingest, some with simulated days.
                "ArrivalStore", "ArrivalIngest", "ArrivalSimulation",
            ]
        ),
        testTarget(
            "ArrivalCompareTests",
            dependencies: [
                "ArrivalCompare", "ArrivalModel", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis",
                "ArrivalRendering", "ArrivalTestSupport",
                // The simulator writes the days that diff and gate compare (a baseline, regressions, noise).
                "ArrivalSimulation",
            ],
            fixtures: true
        ),
        testTarget(
            "ArrivalSimulationTests",
            dependencies: [
                "ArrivalSimulation", "ArrivalModel", "ArrivalBeacons", "ArrivalTestSupport",
                // What the simulator wrote is read back by the real reader and decoder.
                "ArrivalIngest",
            ]
        ),
        testTarget(
            "ArrivalBeaconsTests",
            dependencies: [
                "ArrivalBeacons", "ArrivalModel", "ArrivalTestSupport",
                // What the kit wrote is read back by the real pipeline; beacon-stress is the writer in
                // other processes (concurrent and killed writers).
                "ArrivalIngest", "beacon-stress",
            ],
            fixtures: true
        ),
        testTarget(
            "ArrivalSenderTests",
            dependencies: [
                "ArrivalSender", "ArrivalBeacons", "ArrivalModel", "ArrivalTestSupport",
                // What the recorder wrote is read back by the real pipeline.
                "ArrivalIngest",
            ],
            fixtures: true
        ),
        testTarget(
            "ArrivalUploadTests",
            dependencies: [
                "ArrivalUpload", "ArrivalBeacons", "ArrivalTestSupport",
                // The collector the uploaders talk to is `arrival serve` (ServedCollector), a process of its own:
                // the collector's metrics are process-wide (swift-metrics takes one bootstrap a process), and
                // every test target runs in one process, where ArrivalServerTests' collectors count too.
                // ArrivalStore: a store held open by another writer.
                "arrival", "ArrivalStore",
            ]
        ),
        testTarget(
            "ArrivalServerTests",
            dependencies: [
                "ArrivalServer", "ArrivalModel", "ArrivalStore", "ArrivalStores", "ArrivalIngest", "ArrivalAnalysis",
                "ArrivalRendering", "ArrivalTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The PostgreSQL engine through its API: URLs and password files on their own; against a real
        // server when ARRIVAL_TEST_POSTGRES_URL names one (Scripts/postgres-cluster.sh; CI requires it).
        testTarget(
            "ArrivalPostgresTests",
            dependencies: [
                "ArrivalPostgres", "ArrivalModel", "ArrivalStore", "ArrivalTestSupport", "ArrivalPostgresTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The built `arrival`: every subcommand's exit codes, wording and payload checks, the release product,
        // `arrival serve` as a deployment runs it (kill -9), a kit batch through `arrival ingest`, and the
        // commands on a PostgreSQL store (Postgres/: several processes at once, killed writers).
        testTarget(
            "ArrivalCommandLineTests",
            dependencies: [
                "arrival", "ArrivalModel", "ArrivalTestSupport", "ArrivalPostgresTestSupport",
                // The results the commands print are checked against the libraries' own: ingest and reports of
                // the same inputs, a batch the kit made, the store's and the outcome views' rows, and the
                // diagnostics every stage's errors become.
                "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis", "ArrivalRendering", "ArrivalCompare",
                "ArrivalSimulation", "ArrivalBeacons", "ArrivalPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            fixtures: true
        ),
    ]
)

// Benchmarks as code (Benchmarks/README.md, "Benchmarks with thresholds"): the hot paths as
// ordo-one/benchmark benchmarks, with thresholds in Benchmarks/Thresholds/, run by
// Scripts/benchmarks.sh. Only when ARRIVAL_BENCHMARKS is set: an app that adds this package for
// its kit resolves no benchmark package (nor its malloc interposer), and the default
// `swift build` and `swift test` are unchanged. The benchmarks are a target of this package,
// not a package of their own, because they call the stages' `package` declarations.
if Context.environment["ARRIVAL_BENCHMARKS"] != nil {
    package.dependencies.append(
        // The MallocInterposer trait alone: it counts allocations, which the thresholds hold.
        // Its default RuntimeInterposer trait (ARC counts) would need a package this project
        // does not use.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"])
    )
    package.targets.append(
        .executableTarget(
            name: "ArrivalBenchmarks",
            dependencies: [
                "ArrivalModel", "ArrivalHandOff", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis",
                "ArrivalRendering", "ArrivalSimulation",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ArrivalBenchmarks",
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    )
}

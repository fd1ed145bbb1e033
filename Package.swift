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
        // Spawned by the instrumentation tests (concurrent and killed writers); also the append benchmark.
        .executableTarget(
            name: "beacon-stress",
            dependencies: ["ArrivalBeacons"],
            swiftSettings: swiftSettings
        ),
        // Helpers both test targets share (temporary folders, ingest-and-report, running built products).
        .target(
            name: "ArrivalTestSupport",
            dependencies: ["ArrivalModel", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis"],
            path: "Tests/ArrivalTestSupport",
            swiftSettings: swiftSettings
        ),
        // The kit: beacons, callbacks, the sender's recorder and payload checks, uploads.
        .testTarget(
            name: "ArrivalInstrumentationTests",
            dependencies: [
                "ArrivalBeacons", "ArrivalSender", "ArrivalModel", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis",
                // `arrival`: a kit batch is also ingested by the command line (BeaconCollectorTests).
                "beacon-stress", "arrival", "ArrivalTestSupport",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        // The built `arrival` binary: every subcommand's exit codes, wording, payload checks, the release product.
        .testTarget(
            name: "ArrivalCommandLineTests",
            dependencies: ["arrival", "ArrivalModel", "ArrivalTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ArrivalServerTests",
            dependencies: [
                "ArrivalServer", "ArrivalModel", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis", "ArrivalRendering",
                "ArrivalTestSupport", "arrival", "ArrivalBeacons", "ArrivalSender", "ArrivalUpload", "ArrivalStores",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL: URLs and password files on their own; against a real server when
        // ARRIVAL_TEST_POSTGRES_URL names one (Scripts/postgres-cluster.sh; CI requires it).
        .testTarget(
            name: "ArrivalPostgresTests",
            dependencies: [
                "ArrivalAnalysis", "ArrivalModel", "ArrivalPostgres", "ArrivalStore", "ArrivalTestSupport", "arrival",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The pipeline, stage by stage: reading, decoding, ingest, store, rules, analysis, reports, compare, simulation.
        .testTarget(
            name: "ArrivalPipelineTests",
            dependencies: [
                "ArrivalModel", "ArrivalHandOff", "ArrivalStore", "ArrivalIngest", "ArrivalAnalysis",
                "ArrivalRendering", "ArrivalCompare", "ArrivalSimulation", "ArrivalTestSupport", "ArrivalBeacons",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
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

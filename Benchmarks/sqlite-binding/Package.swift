// swift-tools-version:6.0
// A standalone benchmark, outside arrival's package so that arrival does not
// depend on GRDB: the same inserts through SQLite's C API and through
// GRDB.swift 7.10.0, to justify the choice in arrival's README.
//
//   cd Benchmarks/sqlite-binding && swift run -c release sqlite-binding [ROWS] [RUNS]
import PackageDescription

let package = Package(
    name: "sqlite-binding",
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite3", path: "Sources/CSQLite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "sqlite-binding",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift"), "CSQLite3"]
        ),
    ]
)

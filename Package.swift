// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "arrival",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "arrival", targets: ["arrival"]),
        .library(name: "ArrivalKit", targets: ["ArrivalKit"]),
        // The instrumentation kit: ArrivalBeacons for the app and widget (Foundation only),
        // ArrivalSender for the push sender (Foundation + system zlib).
        .library(name: "ArrivalBeacons", targets: ["ArrivalBeacons"]),
        .library(name: "ArrivalSender", targets: ["ArrivalSender"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
    ],
    targets: [
        // The system's own libsqlite3 and zlib (Debian: libsqlite3-dev, zlib1g-dev).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "ArrivalKit",
            dependencies: [
                "CSQLite",
                "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "arrival",
            dependencies: [
                "ArrivalKit",
                "ArrivalSender",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "arrival-bench",
            dependencies: ["ArrivalKit"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalBeacons",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ArrivalSender",
            dependencies: ["ArrivalBeacons", "CZlib"],
            swiftSettings: swiftSettings
        ),
        // Spawned by the instrumentation tests (concurrent and killed writers); also the append benchmark.
        .executableTarget(
            name: "beacon-stress",
            dependencies: ["ArrivalBeacons"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ArrivalInstrumentationTests",
            dependencies: ["ArrivalBeacons", "ArrivalSender", "ArrivalKit", "beacon-stress", "arrival"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ArrivalKitTests",
            dependencies: ["ArrivalKit"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
    ]
)

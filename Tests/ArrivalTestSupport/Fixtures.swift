package import Foundation

// The fixtures several test targets read, in `Tests/ArrivalTestSupport/Fixtures`
// (copied into this target's bundle); a target's own fixtures stay in its
// folder, in its own bundle, read with `fixture(_:in: .module)`.

/// A file or folder of the shared fixtures (`Tests/ArrivalTestSupport/Fixtures`).
package func fixture(_ relative: String) -> String {
    fixture(relative, in: Bundle.module)
}

/// A file or folder of the fixtures in `bundle`: a test target's own, as `fixture("x", in: .module)`.
package func fixture(_ relative: String, in bundle: Bundle) -> String {
    guard let url = bundle.url(forResource: "Fixtures", withExtension: nil) else {
        fatalError("Fixtures folder missing from \(bundle.bundlePath)")
    }
    return url.appendingPathComponent(relative).path
}

/// The bytes of a shared fixture.
package func fixtureData(_ relative: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: fixture(relative)))
}

/// The bytes of a fixture in `bundle`.
package func fixtureData(_ relative: String, in bundle: Bundle) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: fixture(relative, in: bundle)))
}

/// The package's root folder (for SampleData/, Dashboards/ and golden files).
package let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The sample day's data folders (as `arrival demo` ingests them: not the README).
package let samplePaths = ["sender", "devices"].map {
    packageRoot.appendingPathComponent("SampleData").appendingPathComponent($0).path
}

/// Documentation/examples/apple's exports (issue 54), one of each kind, by name.
package func appleExampleExports() throws -> [String] {
    let folder = packageRoot.appendingPathComponent("Documentation/examples/apple")
    return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        .map { folder.appendingPathComponent($0).path }
}

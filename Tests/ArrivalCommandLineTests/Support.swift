@_exported import ArrivalTestSupport
import Foundation

/// A fixture of the kit's tests, in the source tree: the command line is
/// run on the same payloads and files the kit's own tests check, so there is
/// one copy of each (`Tests/ArrivalInstrumentationTests/Fixtures/`).
func fixture(_ relative: String) -> String {
    packageRoot.appendingPathComponent("Tests/ArrivalInstrumentationTests/Fixtures").appendingPathComponent(relative)
        .path
}

func fixtureData(_ relative: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: fixture(relative)))
}
